"""``onparse distill``: a thin shell over :meth:`onparse.api.Parser.distill`
(:mod:`onparse.student.distill`).  Defaults live in :class:`onparse.student.distill.DistillSettings` and
:class:`onparse.student.model.StudentConfig`; here they are only shown."""
import click

from ..files.safeio import dumps
from .common import (INT_MAX, SEED_RANGE, device_option, force_option, line_limit_option, load_parser,
                     members_options, model_option, pretokenized_option, punct_option, quiet_option,
                     refuse_model, refuse_overwrite, threads_option, check_writable)

#: Student sizes: option -> StudentConfig field.
SIZES = {"embedding_size": "word embedding size", "hidden_size": "BiLSTM units per direction",
         "n_layers": "BiLSTM layers", "mlp_size": "span scorer's hidden units"}
#: Training settings with an option: DistillSettings field -> help.
SETTINGS = {"epochs": "passes over the text", "batch_size": "sentences per batch",
            "max_words": "longest sentence learnt from (longer ones are parsed by the teacher, not learnt)",
            "valid_every": "hold out every N-th sentence to measure agreement with the teacher",
            "save_every": "batches between saves of RUN/last.pt"}


def _sized(command):
    from dataclasses import fields

    from ..student.config import MIN_WORDS, DistillSettings

    defaults = {f.name: f.default for f in fields(DistillSettings)}
    for name, text in reversed(list(SETTINGS.items())):
        least = MIN_WORDS if name == "max_words" else 1
        command = click.option("--" + name.replace("_", "-"), name, type=click.IntRange(least, INT_MAX), default=None,
                               help=f"{text[:1].upper()}{text[1:]}  [default: {defaults[name]}]")(command)
    command = click.option("--lr", type=click.FloatRange(0, min_open=True), default=None,
                           help=f"Adam's learning rate  [default: {defaults['lr']}]")(command)
    command = click.option("--max-unknown", type=click.FloatRange(0, 1), default=None,
                           help="Refuse text whose share of words unknown to the teacher is higher  "
                                f"[default: {defaults['max_unknown']}]")(command)
    command = click.option("--seed", type=SEED_RANGE, default=None,
                           help=f"Seed of the weights and batch order  [default: {defaults['seed']}]")(command)
    return command


def _student_sizes(command):
    from dataclasses import fields

    from ..student.config import StudentConfig

    defaults = {f.name: f.default for f in fields(StudentConfig)}
    for name, text in reversed(list(SIZES.items())):
        flag = "--student-layers" if name == "n_layers" else "--" + name.replace("_", "-")
        command = click.option(flag, name, type=click.IntRange(1, INT_MAX), default=None,
                               help=f"Student: {text}  [default: {defaults[name]}]")(command)
    return command


@click.command("distill")
@click.argument("text", type=click.Path(allow_dash=True, dir_okay=False))
@model_option(help_text="Teacher: a checkpoint, bundle or student (repeatable: their members' trees are averaged) "
                        "[default: the bundled model].")
@members_options
@click.option("--out", "-o", "student_path", required=True, type=click.Path(dir_okay=False),
              help="Where to write the student (e.g. student.pt).")
@click.option("--run-dir", type=click.Path(file_okay=False), default=None,
              help="The run folder: teacher trees, last.pt, epoch snapshots, metrics.jsonl  "
                   "[default: OUT with .run for .pt].")
@click.option("--resume", is_flag=True, help="Continue the run in the run folder (exactly where it stopped).")
@click.option("--overwrite", is_flag=True, help="Start afresh even if the run folder holds a run.")
@click.option("--keep-epochs", is_flag=True, help="Keep each epoch's student as RUN/epoch-NNN.pt.")
@_sized
@_student_sizes
@pretokenized_option
@punct_option
@device_option
@threads_option
@force_option
@quiet_option
@line_limit_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def distill_command(text, model_paths, no_verify, layer, decoder, voter, ties, student_path, run_dir, resume,
                    overwrite, keep_epochs, pretokenized, punct, device, threads, force, quiet, max_line_bytes,
                    as_json, **options):
    """Train a fast student parser on the trees the teacher (-m, its members, voters and tie
    rule) gives for the lines of TEXT: raw text, one sentence per line, read as `induce`
    reads it; never evaluation text.  The student is a span-based BiLSTM parser with a tree-CRF
    loss and CYK decoding; it reads the teacher's first model's vocabulary.  Use it as any model:
    -m student.pt in induce, eval, show, info, agreement and bundles, alone or averaged with
    language models.

    After each epoch the student's agreement with its teacher on held-out lines is logged.
    Runs are resumable (--resume) and locked like `train` runs.

    \b
    onparse distill news.txt -m bundle.pt --out student.pt
    onparse distill news.txt -m bundle.pt --out student.pt --resume --epochs 5
    onparse induce corpus.txt -m student.pt > trees.txt
    """
    from ..devices import torch_threads
    from ..student.distill import default_run_dir
    from ..student.config import DistillSettings

    check_writable(student_path, "--out")
    refuse_overwrite(student_path, "--out", [("input", text)] + [("model", p) for p in model_paths])
    refuse_model(student_path, "--out", force)
    if resume and overwrite:
        raise click.UsageError("--resume continues a run and --overwrite replaces it: give one of them")
    sizes = {k: options.pop(k) for k in SIZES if options.get(k) is not None}
    settings = DistillSettings(**{k: v for k, v in options.items() if v is not None})
    parser = load_parser(model_paths, device, layer, decoder, voter=voter, ties=ties, no_verify=no_verify)
    try:
        with torch_threads(threads):
            result = parser.distill(text, student_path, run_dir=run_dir, sizes=sizes, settings=settings,
                                    resume=resume, overwrite=overwrite, keep_epochs=keep_epochs,
                                    tokenize=not pretokenized, punct=punct, max_line_bytes=max_line_bytes, quiet=quiet)
    except KeyboardInterrupt:
        folder = run_dir or default_run_dir(student_path)
        click.echo(f"interrupted; {folder} keeps the run: give the same command with --resume to continue it",
                   err=True)
        raise SystemExit(130) from None
    if as_json:
        click.echo(dumps({"student": result.student, "run_dir": result.run_dir, "sentences": result.sentences,
                          "held_out": result.held_out, "epochs": result.epochs}))
        return
    last = result.epochs[-1] if result.epochs else {}
    agreement = last.get("agreement")
    click.echo(f"wrote {result.student}: learnt from {result.sentences:,} sentences in {len(result.epochs)} "
               f"epoch(s)" + ("" if agreement is None else
                              f"; agreement with the teacher on {result.held_out:,} held-out sentences "
                              f"{100 * agreement:.1f}%"))


def register(group: click.Group) -> None:
    """Add ``distill`` to the ``onparse`` command group."""
    group.add_command(distill_command)

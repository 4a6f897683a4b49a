"""``onparse distill``: a thin shell over :func:`onparse.distill`.
Defaults live in :class:`onparse.DistillSettings` and :class:`onparse.StudentConfig`; here they
are only shown."""
import click

from ..files.safeio import dumps
from .common import (INT_MAX, SEED_RANGE, device_option, force_option, line_limit_option, load_parser,
                     members_options, model_name, model_option, pretokenized_option, punct_option, quiet_option,
                     refuse_model, refuse_overwrite, sentence_splitter, sentences_options, threads_option,
                     check_writable)
from .training import _Duration

#: Student sizes with an option (help and default: :class:`onparse.StudentConfig`).
SIZES = ("embedding_size", "hidden_size", "n_layers", "mlp_size")
#: Training settings with an option (:class:`onparse.DistillSettings`).
SETTINGS = ("epochs", "batch_size", "max_words", "valid_every", "save_every", "lr", "max_unknown", "seed")


def _option_type(f):
    """The click type of a setting, from its declared check and bounds."""
    meta = f.metadata
    if meta["check"] == "count":
        return click.IntRange(meta["least"] or 1, meta["most"] or INT_MAX)
    if meta["check"] == "fraction":
        return click.FloatRange(0, 1)
    if meta["check"] == "positive":
        return click.FloatRange(0, min_open=True)
    return SEED_RANGE if f.name == "seed" else click.FloatRange(0)


def _options(command, config_class, names, prefix=""):
    """One option per setting of ``names``, its help and default read from ``config_class``."""
    from dataclasses import fields

    by_name = {f.name: f for f in fields(config_class)}
    for name in reversed(names):
        f = by_name[name]
        flag = "--student-layers" if (prefix and name == "n_layers") else "--" + name.replace("_", "-")
        text = f.metadata["help"]
        command = click.option(flag, name, type=_option_type(f), default=None,
                               help=f"{prefix}{text[:1].upper() if not prefix else text[:1]}{text[1:]}  "
                                    f"[default: {f.default}]")(command)
    return command


def _sized(command):
    from .. import DistillSettings

    return _options(command, DistillSettings, SETTINGS)


def _student_sizes(command):
    from .. import StudentConfig

    return _options(command, StudentConfig, SIZES, prefix="Student: ")


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
@click.option("--teacher-trees", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The teacher's trees of TEXT as `onparse induce TEXT -m ...` wrote them (brackets; its --shard "
                   "parts concatenated), read instead of parsing TEXT: parse once, on several machines, and share "
                   "the trees between the students of several seeds.  Each tree is checked against its sentence.")
@click.option("--resume", is_flag=True, help="Continue the run in the run folder (exactly where it stopped).")
@click.option("--overwrite", is_flag=True, help="Start afresh even if the run folder holds a run.")
@click.option("--keep-epochs", is_flag=True, help="Keep each epoch's student as RUN/epoch-NNN.pt.")
@click.option("--max-time", type=_Duration(), default=None,
              help="Stop after this much time in this invocation, the teacher's parse included (3600, 45m, 2h30m; "
                   "checked after each batch): last.pt is saved, the student so far written, and --resume continues.")
@_sized
@_student_sizes
@pretokenized_option
@punct_option
@sentences_options(output="Each is learnt from as a sentence of its own; the student records the Punkt parameters "
                          "used, and its own --split-sentences (induce -m student.pt) uses them.")
@device_option
@threads_option
@force_option
@quiet_option
@line_limit_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def distill_command(text, model_paths, no_verify, layer, decoder, voter, ties, reading, student_path, run_dir,
                    teacher_trees, resume, overwrite, keep_epochs, max_time, pretokenized, punct, split_sentences, punkt, device, threads,
                    force, quiet, max_line_bytes, as_json, **options):
    """Train a fast student parser on the trees the teacher (-m, its members, voters and tie
    rule) gives for the lines of TEXT: raw text, one sentence per line (or paragraphs, with
    --split-sentences), read as `induce` reads it; never evaluation text.  The student is a small
    BiLSTM parser that scores spans of words (trained with a tree-CRF loss, trees by CYK:
    docs/glossary.md); it reads the teacher's first model's vocabulary.  Use it as any model:
    -m student.pt in induce, eval, show, info, agreement and bundles, alone or averaged with
    language models.

    After each epoch the student's agreement with its teacher on held-out lines is logged.
    Runs are resumable (--resume) and locked like `train` runs.

    \b
    onparse distill news.txt -m bundle.pt --out student.pt
    onparse distill news.txt -m bundle.pt --out student.pt --resume --epochs 5
    onparse induce news.txt -m bundle.pt --shard 1/2 > t1.txt   # and 2/2 > t2.txt, side by side
    cat t1.txt t2.txt > trees.txt
    onparse distill news.txt -m bundle.pt --teacher-trees trees.txt --out student.pt --seed 2
    onparse induce corpus.txt -m student.pt > trees.txt
    """
    from ..progress import reading as reading_note      # --reading arrives as `reading`

    reading_note(f"the text {text}" + (" and the teacher's trees" if teacher_trees else ""), quiet)
    from .. import DistillSettings, distill
    from ..devices import torch_threads
    from ..student.run_folder import default_run_dir, run_file_clash, written_by_run

    if resume and overwrite:
        raise click.UsageError("--resume continues a run and --overwrite replaces it: give one of them")
    folder = run_dir or default_run_dir(student_path)
    check_writable(student_path, "--out")
    refuse_overwrite(student_path, "--out", [("input", text)] + [("model", p) for p in model_paths]
                     + ([("input", teacher_trees)] if teacher_trees else []))
    clash = run_file_clash(student_path, folder)
    if clash:
        raise click.BadParameter(clash, param_hint="--out")
    if not (resume and written_by_run(student_path, folder)):     # a run's --resume replaces its own student
        refuse_model(student_path, "--out", force)
    sizes = {k: options.pop(k) for k in SIZES if options.get(k) is not None}
    settings = DistillSettings(**{k: v for k, v in options.items() if v is not None})
    parser = load_parser(model_paths, device, layer, decoder, voter=voter, ties=ties, no_verify=no_verify,
                         reading=reading)
    splitter = sentence_splitter(split_sentences, punkt, parser, model_name(model_paths), text)
    try:
        with torch_threads(threads):
            result = distill(parser, text, student_path, run_dir=run_dir, sizes=sizes, settings=settings,
                             resume=resume, overwrite=overwrite, keep_epochs=keep_epochs,
                             tokenize=not pretokenized, punct=punct, max_line_bytes=max_line_bytes, quiet=quiet,
                             split=splitter, teacher_trees=teacher_trees, max_time=max_time)
    except KeyboardInterrupt:
        click.echo(f"interrupted; {folder} keeps the run: give the same command with --resume to continue it",
                   err=True)
        raise SystemExit(130) from None
    if as_json:
        click.echo(dumps({"student": result.student, "run_dir": result.run_dir, "sentences": result.sentences,
                          "held_out": result.held_out, "epochs": result.epochs, "stopped": result.stopped}))
        return
    last = result.epochs[-1] if result.epochs else {}
    agreement = last.get("agreement")
    click.echo(f"wrote {result.student}: learnt from {result.sentences:,} sentences in {len(result.epochs)} "
               f"epoch(s)" + ("" if agreement is None else
                              f"; agreement with the teacher on {result.held_out:,} held-out sentences "
                              f"{100 * agreement:.1f}%")
               + ("; stopped by --max-time: --resume continues" if result.stopped == "max-time" else ""))


def register(group: click.Group) -> None:
    """Add ``distill`` to the ``onparse`` command group."""
    group.add_command(distill_command)

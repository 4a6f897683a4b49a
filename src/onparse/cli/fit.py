"""``onparse fit``: raw text in, a chosen and bundled parser out, no gold tree anywhere
(:mod:`onparse.fitting.pipeline`)."""
import signal
import threading
from contextlib import contextmanager

import click

from ..files.safeio import dumps
from .common import INT_MAX, THREADS_RANGE, check_writable, force_option, quiet_option, renamed, renamed_option
from .. import GRAMMAR_PRESETS, GRAMMAR_RULE_FORMS, PRESETS
from .training import _Duration


@click.command("fit")
@click.argument("text", type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), metavar="BUNDLE",
              help="The bundle file to write (the chosen language models, members, voter and ties).")
@click.option("--run-dir", type=click.Path(file_okay=False), default=None, metavar="RUN",
              help="The run folder of the whole pipeline  [default: BUNDLE's name with .fit, beside it].")
@click.option("--resume", is_flag=True, help="Continue a stopped fit where it stopped (same TEXT; the options it "
                                             "was started with are kept: give only --max-time or --cores to change "
                                             "its budget or the cores it uses).")
@click.option("--seeds", type=click.IntRange(0, 64), default=3, show_default=True,
              help="ON-LSTM language models to train (seeds 1..N); runs train side by side, one per CPU core.")
@click.option("--preset", type=click.Choice(tuple(PRESETS)), default="small", show_default=True,
              help="onparse train's preset of the language models (tiny: a quick try; small: the measured figures).")
@click.option("--grammars", type=click.IntRange(0, 64), default=0, show_default=True,
              help="Neural PCFGs to train too (seeds 1..N, onparse train --family grammar); they are candidates "
                   "like the language models.")
@click.option("--grammar-preset", type=click.Choice(tuple(GRAMMAR_PRESETS)), default="small", show_default=True,
              help="The grammars' preset (onparse train --family grammar --preset).")
@click.option("--grammar-vocab", type=click.IntRange(0, INT_MAX), default=None, metavar="N",
              help="The grammars' largest vocabulary (onparse train --max-vocab; 0: no limit)  [default: onparse "
                   "train's].  2000 kept Dutch and Spanish grammars off right-branching trees on their 5,000-line "
                   "texts (research/RESULTS.md).")
@click.option("--grammar-curriculum", type=click.IntRange(2, INT_MAX), default=None, metavar="WORDS",
              help="The grammars' longest sentence in their first epoch, one word more each epoch (onparse train "
                   "--curriculum-start)  [default: onparse train's].")
@click.option("--grammar-form", type=click.Choice(GRAMMAR_RULE_FORMS), default=None,
              help="The form of the grammars' binary rules (onparse train --rule-form; docs/pcfg.md)  [default: "
                   "the preset's, simple]")
@click.option("--epochs", type=click.IntRange(1, INT_MAX), default=None,
              help="Most epochs per seed  [default: the preset's]; --max-time may stop them sooner.")
@click.option("--max-time", type=_Duration(), default=None,
              help="Time for the whole fit (3600, 90m, 2h), its start-up included: 10% is kept for choosing and "
                   "bundling (and 25% for --student); the runs share the rest, each its own start-up (reading "
                   "TEXT) included, and a run still going at the end of its share is stopped (it saves).  The plan "
                   "says about how many epochs that buys, and warns when it is too few.")
@click.option("--cores", type=THREADS_RANGE, default=None,
              help="CPU cores to use in all: seeds train side by side at one thread each up to this "
                   "[default: every usable core].  (Elsewhere --threads is the threads of one process.)")
@renamed_option("--threads", "--cores", "threads_old", type=THREADS_RANGE)
@click.option("--pretokenized", is_flag=True,
              help="TEXT is already tokenised (one sentence a line, tokens separated by spaces), such as the text "
                   "onparse gold-text writes: every token is kept, as induce --pretokenized and eval -m read "
                   "them, instead of tokenising the lines and dropping tokens without a letter or digit.")
@click.option("--limit", type=click.IntRange(10, INT_MAX), default=1000, show_default=True,
              help="Held-out sentences (3 words or more) that the choice is measured on.")
@click.option("--weights", type=click.Choice(["float32", "float16", "int8"]), default="float16", show_default=True,
              help="How the bundle stores its weights.")
@click.option("--student", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Also distil a student from the bundle on TEXT's training part and write it here.")
@click.option("--stop-after", type=click.Choice(["plan", "train", "choose", "bundle"]), default=None,
              help="Stop once this stage is done (continue later with --resume).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@force_option
@quiet_option
def fit_command(text, out, run_dir, resume, seeds, preset, grammars, grammar_preset, grammar_vocab, grammar_curriculum,
                grammar_form, epochs, max_time, cores, threads_old, pretokenized, limit, weights, student, stop_after,
                as_json, force, quiet):
    """Turn raw text into a parser with no gold tree: train several ON-LSTM seeds (and
    --grammars PCFGs) on TEXT (a file of raw lines, or a plain-text corpus name such as news),
    take each run's epoch of lowest validation perplexity, read at layers 2 and 3 with the
    paper's decoder (a grammar: its MBR tree), leave out any whose trees are just right- or
    left-branching ones, add a voter of the way their average leans on a held-out 5% of TEXT,
    and write them as one bundle (--out).  Words: docs/glossary.md.

    Recommended: --seeds 2 --grammars 7 --max-time 3h20m, which scored best on test in Dutch,
    Spanish, Portuguese and English (news), ahead of fewer grammars or none: grammar seeds that
    fail disagree with each other, and those that find structure share it.  On a small text
    (about 5,000 lines) add --grammar-vocab 2000 --grammar-curriculum 10: in Dutch it lifted
    the score from 38.1 to 43.8 (it did not help English or Portuguese).  Measured on 2 cores
    with that budget (--max-time 3h20m), a 5,000-line Dutch text took 26 minutes; English news (a
    million words) the whole budget (research/RESULTS.md).  A language model given fewer than 3
    epochs rarely beats right-branching trees (fit warns).  To try the workflow in minutes:
    --preset tiny --grammar-preset tiny --max-time 5m (its trees are no better than
    right-branching ones).  These figures were measured with the grammars' earlier recipe
    (low-rank rules, twice today's learning step); today's grammars (simple rules, the
    published recipe; --grammar-form) have not been scored in a fit yet, and a grammar that
    learns less than counting words is left out.

    Stages: plan, train, choose, bundle (and student with --student), each recorded in the run
    folder: a stopped fit continues with --resume.  Prints what it chose and the gold-free
    figures it chose by; progress on stderr.

    \b
    onparse fit my-text.txt --out mine.pt --max-time 2h
    onparse fit my-text.txt --out mine.pt --resume
    onparse induce new-text.txt -m mine.pt
    """
    from ..progress import reading, started

    began = started()
    reading(f"the corpus {text}" if not resume else f"the fit of {text}", quiet)
    from .. import FitSettings, OnparseError, fit

    cores = renamed(cores, threads_old, "--threads", "--cores")
    given = dict(seeds=seeds, preset=preset, grammars=grammars, grammar_preset=grammar_preset,
                 grammar_vocab=grammar_vocab, grammar_curriculum=grammar_curriculum, grammar_form=grammar_form,
                 epochs=epochs, max_time=max_time, cores=cores, limit=limit, weights=weights, pretokenized=pretokenized)
    if resume:
        # --resume alone continues the fit as it was started: an option not given again keeps
        # its recorded value (one given differently is refused by the fit, as other settings).
        ctx = click.get_current_context()
        typed = {name for name in given if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT}
        typed |= {"cores"} if threads_old is not None else set()
        recorded = FitSettings.recorded(out, run_dir)
        given = {**given, **{k: v for k, v in recorded.items() if k not in typed}}
    if given["seeds"] + given["grammars"] == 0:
        raise click.UsageError("nothing to train: give --seeds or --grammars of at least 1")
    settings = FitSettings(**given)
    try:
        settings.grammar_training()
    except OnparseError as err:
        raise click.UsageError(f"--grammar-vocab, --grammar-curriculum or --grammar-form: {err}")
    try:
        # The API's homes of these rules (--max-time 0, --out R/fit.json ...): options, so usage.
        # And the one check of the bundle and student paths (a resumed fit's too: it may write
        # again only what it wrote).
        settings.check(out, student, run_dir, text=text, force=force, resume=resume)
    except OnparseError as err:
        raise click.UsageError(str(err))
    check_writable(out, "--out")
    if student is not None:
        check_writable(student, "--student")
    if student is not None and stop_after is not None:
        raise click.UsageError("--stop-after stops before the student; give --student when you resume")
    say = (lambda _: None) if quiet else (lambda line: click.echo(line, err=True))
    try:
        with _stopped_by_sigterm():
            result = fit(text, out, settings, run_dir=run_dir, resume=resume, student=student, stop_after=stop_after,
                         say=say, began=began, force=force)
    except _Terminated:
        # As on Ctrl-C: each run saved, the stage's time is counted; 143 as for a SIGTERM.
        click.echo(f"stopped (SIGTERM): continue with onparse fit {text} --out {out} --resume"
                   + (f" --run-dir {run_dir}" if run_dir else ""), err=True)
        raise click.exceptions.Exit(143)
    except KeyboardInterrupt:
        # Each training run saved its state on the way out (fit passed Ctrl-C on): say how to go on.
        click.echo(f"interrupted: continue with onparse fit {text} --out {out} --resume"
                   + (f" --run-dir {run_dir}" if run_dir else ""), err=True)
        raise click.exceptions.Exit(130)
    if as_json:
        click.echo(dumps(result.to_dict()))
        return
    if not result.choice:
        click.echo(f"fit stopped after {stop_after}; continue with: onparse fit {text} --out {out} --resume")
        return
    click.echo(report(result.choice, result.left_out))
    click.echo(f"bundle: {result.out}" + (f"\nstudent: {result.student}" if result.student else ""))


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's, ``kill``'s) raised in fit as Ctrl-C is: each run stops and saves,
    and the stage's time is counted, where the default action ended fit with nothing saved."""


@contextmanager
def _stopped_by_sigterm():
    """Within it, the first SIGTERM raises :class:`_Terminated` (later ones are ignored while fit
    stops); the handler before is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Terminated
    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def report(choice, left_out=()) -> str:
    """What fit chose and the gold-free scores it chose by, as text (``left_out``: the runs that
    completed no epoch)."""
    ppl = choice.get("perplexity", {})
    lines = ["chosen epochs (lowest validation perplexity): " + ", ".join(
        f"{run} epoch {e}" + (f" ({ppl[run]:.1f})" if isinstance(ppl.get(run), (int, float)) else "")
        for run, e in choice["epochs"].items())]
    if left_out:
        lines.append(f"left out (no epoch within its share of --max-time): {', '.join(left_out)}")
    for m in choice.get("baselines", []):
        agree = m["agreement"]
        lines.append(f"left out as a baseline: {m['run']} epoch {m['epoch']} layer {m['layer']} {m['decoder']} "
                     f"(agrees {agree.get('right', 0):.3f} with right-branching trees, {agree.get('left', 0):.3f} "
                     "with left-branching ones)")
    for m in choice.get("collapsed", []):
        lines.append(f"left out, not learning: {m['run']} epoch {m['epoch']} ({m['alarm']})")
    lines.append(f"members (and their agreement with the other runs' members on {choice['sentences']:,} held-out "
                 "sentences):")
    scores = {(m["run"], m["epoch"], m["layer"], m["decoder"]): m["agreement"] for m in choice["member_scores"]}
    for m in choice["members"]:
        key = (m["run"], m["epoch"], m["layer"], m["decoder"])
        lines.append(f"  {m['run']} epoch {m['epoch']} layer {m['layer']} {m['decoder']}\t{scores[key]:.4f}")
    lean = choice.get("lean", {})
    how = f"a {choice['voter']}-branching voter" if choice["voter"] else "no voter"
    lines.append(f"voter: {how}, ties {choice['ties']} (the members' average agrees {lean.get('right', 0):.3f} "
                 f"with right-branching trees, {lean.get('left', 0):.3f} with left-branching ones)")
    return "\n".join(lines)


def register(main) -> None:
    main.add_command(fit_command)


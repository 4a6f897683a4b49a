"""Rule v14 (PROTOCOL.md 79): `onparse fit TEXT --seeds 2 --grammars 3 --max-time 2h` over runs
already trained with the commands that fit runs (nothing is trained again).

    python research/refit_v14.py alpino       # runs/fit-alpino-v14.fit -> runs/fit-alpino-v14.pt

1. The fit's plan stage runs for real (`--stop-after plan`): runs lm-1, lm-2, grammar-1..3 in
   three waves, 36 minutes each.
2. Its run folders are links: lm-S to rule v10's fit runs (runs/fit-L.fit/lm-S), grammar-S to
   rule 71's runs (runs/grammar-fit-L-sS).  Each is checked to have trained on the fit's text,
   to have finished its epochs, and to have taken less than the plan's share.
3. The fit resumes: training finds every run finished, and the choose and bundle stages run with
   onparse fit's rule (v14).

`research/refit_v21.py` is the same with seven grammars (rule v21); both go through `refit`.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "runs")
#: Rule 79's settings.
SETTINGS = ["--seeds", "2", "--grammars", "3", "--preset", "small", "--max-time", "2h", "--threads", "2"]


def sources(language):
    """Fit run name -> the trained run folder it links to."""
    out = {f"lm-{s}": os.path.join(RUNS, f"fit-{language}.fit", f"lm-{s}") for s in (1, 2)}
    out.update({f"grammar-{s}": os.path.join(RUNS, f"grammar-fit-{language}-s{s}") for s in (1, 2, 3)})
    return out


def check(run, folder, plan, timed=True):
    """The run trained on the fit's text, finished its epochs and (``timed``) took less than its
    share."""
    from onparse.fitting.pipeline import _epoch_seconds, _finished

    same_text(run, folder, plan)
    assert _finished(folder), f"{run}: {folder} did not finish its epochs"
    spent = sum(_epoch_seconds(folder))
    assert not timed or spent < plan["seconds_per_run"], f"{run}: {spent:.0f} s of training, more than the plan's share"
    print(f"{run} -> {folder}: {spent / 60:.1f} min of epochs (share {plan['seconds_per_run'] / 60:.0f} min"
          f"{'' if timed else ', not checked'})", file=sys.stderr)


def same_text(run, folder, plan):
    """The run trained on the fit's text."""
    from onparse.files.training_log import read_log

    corpus = read_log(folder).corpus
    assert corpus == plan["corpus"], f"{run}: trained on {corpus}, not {plan['corpus']}"


def carried_seconds(run, folder, plan):
    """A run an earlier fit trained under the same share (its folder sits in that fit's run folder):
    the training seconds that fit recorded for it, so the resumed fit counts them as spent and
    trains it no further.  The run must have trained on this fit's text."""
    with open(os.path.join(os.path.dirname(folder), "fit.json"), encoding="utf-8") as handle:
        earlier = json.load(handle)
    same_text(run, folder, plan)
    share = earlier["plan"]["seconds_per_run"]
    assert share == plan["seconds_per_run"], f"{run}: trained under a share of {share:.0f} s, not {plan['seconds_per_run']:.0f}"
    seconds = earlier["train_seconds"][os.path.basename(folder)]
    print(f"{run} -> {folder}: {seconds / 60:.1f} min spent by an earlier fit (share {share / 60:.0f} min)",
          file=sys.stderr)
    return seconds


def refit(language, name, settings, links, carried=(), trained=(), untimed=()):
    """Plan ``onparse fit`` for real with ``settings`` into runs/fit-L-NAME.fit, link ``links``
    (fit run -> folder) into it after checking each, and resume it.  ``carried``: the runs among
    ``links`` that an earlier fit trained under the same share (their seconds are carried over;
    the others must have finished); ``trained``: the plan's runs left for the fit to train;
    ``untimed``: linked runs whose time is not checked.  The plan's runs must be exactly
    ``links`` and ``trained``."""
    text = os.path.join("runs", f"fit-text-{language}.txt") if language != "english" else "news"
    out = os.path.join(RUNS, f"fit-{language}-{name}.pt")
    run_dir = os.path.join(RUNS, f"fit-{language}-{name}.fit")
    base = ["onparse", "fit", text, "--out", out, "--run-dir", run_dir]
    state_path = os.path.join(run_dir, "fit.json")
    if not os.path.exists(state_path):
        subprocess.run(base + ["--stop-after", "plan"] + settings, cwd=ROOT, check=True)
    with open(state_path, encoding="utf-8") as handle:
        state = json.load(handle)
    plan = state["plan"]
    assert plan["runs"] == [*links, *trained], (plan["runs"], list(links), trained)
    spent = state.setdefault("train_seconds", {})
    for run, folder in links.items():
        if run in carried:
            spent[run] = carried_seconds(run, folder, plan)
        else:
            check(run, folder, plan, timed=run not in untimed)
        link = os.path.join(run_dir, run)
        if not os.path.islink(link):
            os.symlink(folder, link)
    if spent:
        from onparse.files.safeio import atomic_output, dumps

        # As fit writes its own state: whole or not at all.
        with atomic_output(state_path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(dumps(state, indent=1) + "\n")
    command = base + ["--resume"] + settings
    print(" ".join(command), file=sys.stderr)
    return subprocess.call(command, cwd=ROOT)


def main(language):
    links = sources(language)
    return refit(language, "v14", SETTINGS, links)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

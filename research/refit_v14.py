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
"""
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


def check(run, folder, plan):
    """The run trained on the fit's text, finished its epochs and took less than its share."""
    from onparse.files.training_log import read_log
    from onparse.fitting.pipeline import _epoch_seconds, _finished

    corpus = read_log(folder).corpus
    assert corpus == plan["corpus"], f"{run}: trained on {corpus}, not {plan['corpus']}"
    assert _finished(folder), f"{run}: {folder} did not finish its epochs"
    spent = sum(_epoch_seconds(folder))
    assert spent < plan["seconds_per_run"], f"{run}: {spent:.0f} s of training, more than the plan's share"
    print(f"{run} -> {folder}: {spent / 60:.1f} min of epochs (share {plan['seconds_per_run'] / 60:.0f} min)",
          file=sys.stderr)


def main(language):
    import json

    text = os.path.join("runs", f"fit-text-{language}.txt")        # as rule v10's fits named it
    out = os.path.join(RUNS, f"fit-{language}-v14.pt")
    run_dir = os.path.join(RUNS, f"fit-{language}-v14.fit")
    base = ["onparse", "fit", text, "--out", out, "--run-dir", run_dir]
    if not os.path.exists(os.path.join(run_dir, "fit.json")):
        subprocess.run(base + ["--stop-after", "plan"] + SETTINGS, cwd=ROOT, check=True)
    with open(os.path.join(run_dir, "fit.json"), encoding="utf-8") as handle:
        plan = json.load(handle)["plan"]
    links = sources(language)
    assert plan["runs"] == list(links), plan["runs"]
    for run, folder in links.items():
        check(run, folder, plan)
        link = os.path.join(run_dir, run)
        if not os.path.islink(link):
            os.symlink(folder, link)
    command = base + ["--resume"] + SETTINGS
    print(" ".join(command), file=sys.stderr)
    return subprocess.call(command, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""Rule v12 (PROTOCOL.md 68): `onparse fit`'s choose and bundle stages again, with this version's
rule, over the models rule v10's fit trained (nothing is trained again).

    python research/rechoose_v12.py english     # runs/fit-english-v12.fit -> runs/fit-english-v12.pt

A new run folder gets rule v10's fit.json without its choose, bundle and student stages, and
links to its trained runs; then `onparse fit TEXT ... --resume` (rule 57's settings) runs the
stages left.  The text is the one the fit recorded.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "runs")
#: Rule 57's settings, as the fits were run.
SETTINGS = ["--seeds", "2", "--preset", "small", "--max-time", "1h", "--threads", "2"]


def main(language):
    old = os.path.join(RUNS, f"fit-{language}.fit")
    new = os.path.join(RUNS, f"fit-{language}-v12.fit")
    with open(os.path.join(old, "fit.json"), encoding="utf-8") as handle:
        state = json.load(handle)
    os.makedirs(new, exist_ok=True)
    for run in state["train"]["epochs"]:
        link = os.path.join(new, run)
        if not os.path.islink(link):
            os.symlink(os.path.join(old, run), link)
    kept = {k: v for k, v in state.items() if k not in ("choose", "bundle", "student")}
    kept["seconds"] = {k: v for k, v in state["seconds"].items() if k in ("plan", "train")}
    if not os.path.exists(os.path.join(new, "fit.json")):
        with open(os.path.join(new, "fit.json"), "w", encoding="utf-8") as handle:
            json.dump(kept, handle, indent=1)
    command = ["onparse", "fit", state["text"], "--out", os.path.join(RUNS, f"fit-{language}-v12.pt"),
               "--run-dir", new, "--resume", *SETTINGS]
    print(" ".join(command), file=sys.stderr)
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

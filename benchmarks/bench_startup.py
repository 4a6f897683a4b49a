"""The start-up of ``onparse induce`` for one sentence against ``python -c "import torch"``, on the
same machine, in fresh processes (issue 54.6: one sentence took 12.8 s on a busy machine, of
which ``import torch`` 7.7-10 s).

Rounds alternate A B A B (torch alone, then ``echo SENTENCE | onparse induce -``, each its own
process); the medians are compared and their ratio printed: what ``induce`` costs beyond
importing torch, whatever the machine's load.  ``--importtime`` adds one ``python -X importtime``
run of the command and lists the slowest imports (cumulative) that are not torch's own.

Runs from a fresh clone: the command is ``python -m onparse`` with this checkout's ``src`` on
``PYTHONPATH`` (an installed onparse is not needed, torch and nltk are).

    python benchmarks/bench_startup.py --rounds 5
    python benchmarks/bench_startup.py --quick            # one round: does it run?

What it found (2-core machine, load about 4 from two training runs, 5 rounds): ``import torch``
1.4 s, ``induce`` of one sentence 1.9-2.2 s, a ratio of about 1.4-1.5.  The 0.5-0.8 s beyond
torch: nltk 0.26 s (importing any of its modules imports the whole package, and the tokenizer and
nltk's ParserI need it), the command line and click 0.18 s, reading the bundled model and parsing
the rest.  The command line already imports nothing heavy before a command runs (``onparse
--help`` imports neither torch nor numpy), and every command that reads a corpus now prints its
first line before importing torch; no further lazy import would save more than nltk's share,
which the parse itself needs.  The 12.8 s of the issue was the machine's load: torch alone took
7.7-10 s of it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The cat sat on the mat."


def environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def timed(command, stdin=None) -> float:
    """Wall seconds of one fresh process; SystemExit with its error when it fails."""
    began = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=environment())
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds


def slowest_imports(limit: int = 8):
    """The slowest imports of one ``induce`` run by cumulative time, torch's own left out."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "onparse", "induce", "-"], input=SENTENCE + "\n",
                          capture_output=True, text=True, env=environment())
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit() and not name.startswith("torch."):
            rows.append((int(cumulative) / 1e6, name))
    return sorted(rows, reverse=True)[:limit]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="one round, to check that it runs")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports of induce")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else max(1, args.rounds)
    torch_alone = [sys.executable, "-c", "import torch"]
    induce = [sys.executable, "-m", "onparse", "induce", "-"]
    times = {"import torch": [], "onparse induce, one sentence": []}
    for _ in range(rounds):
        times["import torch"].append(timed(torch_alone))
        times["onparse induce, one sentence"].append(timed(induce, SENTENCE + "\n"))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"rounds: {rounds} (alternating); load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    for name, value in medians.items():
        print(f"{name}: median {value:.2f} s (rounds: {', '.join(f'{v:.2f}' for v in times[name])})")
    ratio = medians["onparse induce, one sentence"] / medians["import torch"]
    print(f"ratio induce / import torch: {ratio:.2f}x")
    if args.importtime:
        for seconds, name in slowest_imports():
            print(f"  import {name}: {seconds:.2f} s (cumulative)")


if __name__ == "__main__":
    main()

"""How many CPU threads should `onparse train` use?  Training steps of the `small` preset (the
CPU recipe: batch 20, BPTT 70, 4.9M parameters), measured side by side in one run:

* 1 process of 1 thread; 1 process of 2 threads; 2 processes of 1 thread each, together;
* the same single runs on a *busy* machine (another process keeps one core busy), with
  OpenMP's default wait policy and with ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep at a barrier
  instead of spinning on a core that another process needs).

Each setup is a fresh process (thread settings are per process), timed after a warm-up; setups
alternate over ``--rounds`` rounds and the medians are compared.  Prints tokens/s and ratios.

    python benchmarks/bench_threads.py --rounds 3 --seconds 10
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SETUPS = {
    "1 thread": dict(threads=1),
    "2 threads": dict(threads=2),
    "2 threads, OMP_WAIT_POLICY=PASSIVE": dict(threads=2, env={"OMP_WAIT_POLICY": "PASSIVE"}),
    "2 threads, GOMP_SPINCOUNT=10000": dict(threads=2, env={"GOMP_SPINCOUNT": "10000"}),
    "2 processes x 1 thread": dict(threads=1, processes=2),
    "busy: 1 thread": dict(threads=1, busy=True),
    "busy: 2 threads": dict(threads=2, busy=True),
    "busy: 2 threads, OMP_WAIT_POLICY=PASSIVE": dict(threads=2, busy=True, env={"OMP_WAIT_POLICY": "PASSIVE"}),
    "busy: 2 threads, GOMP_SPINCOUNT=10000": dict(threads=2, busy=True, env={"GOMP_SPINCOUNT": "10000"}),
}


def worker(threads: int, seconds: float) -> None:
    """Train steps for ``seconds`` after a warm-up; print tokens/s as JSON."""
    import torch

    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
    from onparse.lm.training.recipe import objective

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    config = ModelConfig(vocab_size=10000, embedding_size=200, hidden_size=400, n_layers=3, chunk_size=10)
    model = ONLSTMLanguageModel(config).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=30.0, weight_decay=1.2e-6)
    data = torch.randint(0, config.vocab_size, (71, 20))

    def step():
        out = model(data[:-1], model.init_state(20))
        loss, _ = objective(model, out, data[1:], 2.0, 1.0)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()

    for _ in range(2):
        step()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    print(json.dumps({"tokens_per_s": steps * 70 * 20 / (time.perf_counter() - start)}))


def busy_loop() -> None:
    while True:
        pass


def run_setup(setup: dict, seconds: float) -> float:
    env = {**os.environ, **setup.get("env", {})}
    hog = subprocess.Popen([sys.executable, __file__, "--busy"]) if setup.get("busy") else None
    try:
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(setup["threads"]), str(seconds)],
                                  env=env, stdout=subprocess.PIPE, text=True)
                 for _ in range(setup.get("processes", 1))]
        rates = [json.loads(p.communicate()[0])["tokens_per_s"] for p in procs]
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    return sum(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0, help="timed seconds per setup and round")
    ap.add_argument("--only", nargs="+", choices=sorted(SETUPS), default=None, metavar="SETUP",
                    help="measure these setups only (1 thread is always measured: it is the base)")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--busy", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.busy:
        busy_loop()
    if args.worker:
        worker(int(args.worker[0]), float(args.worker[1]))
        return
    chosen = ["1 thread"] + [s for s in (args.only or SETUPS) if s != "1 thread"]
    results = {name: [] for name in SETUPS if name in chosen}
    for r in range(args.rounds):
        for name, setup in SETUPS.items():
            if name not in results:
                continue
            results[name].append(run_setup(setup, args.seconds))
            print(f"round {r + 1}: {name}: {results[name][-1]:,.0f} tok/s", file=sys.stderr)
    base = statistics.median(results["1 thread"])
    print(f"{'setup':44} {'tok/s (median)':>15} {'vs 1 thread':>12}")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:44} {median:15,.0f} {median / base:11.2f}x")


if __name__ == "__main__":
    main()

"""Training speed of onparse's ON-LSTM against the reference implementation, side by side.

Both run in this process on the same random token stream with the same step: forward, mean
cross-entropy + AR (alpha 2, dropped output) + TAR (beta 1, raw output), backward, gradient
clipping at 0.25, SGD (lr 30, weight decay 1.2e-6).  onparse's side computes the loss with the
trainer's own objective (``onparse.lm.training.train.objective``), so it measures what ``onparse train``
runs (in fp32: the trainer's bf16 autocast on CUDA is not used here).  Rounds alternate A B A B; the medians are
compared.  Also printed: model GFLOP/s (matrix products only, forward + backward counted as
3x forward) next to this machine's fp32 matmul peak (a 2048-cube ``torch.mm``), and peak memory.

    python benchmarks/bench_train.py --config small --rounds 4 --batches 2
    python benchmarks/bench_train.py --config paper --rounds 3 --batches 1
    python benchmarks/bench_train.py --mode parse --config paper      # distances only, no grad
    python benchmarks/bench_train.py --mode cell --config small --compile   # one layer's recurrence

The reference is ``../shared/bench/reference_onlstm.py`` beside the repository (``--reference``
points elsewhere).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from common import best_peak, load_reference, matmul_peak_gflops, peak_rss_mib, sync

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "bench" / "reference_onlstm.py"

CONFIGS = {
    # vocab, embedding, hidden, layers, chunk, batch, bptt
    "small": dict(vocab=10000, emsize=200, nhid=400, layers=3, chunk=10, batch=64, bptt=70),
    "paper": dict(vocab=10000, emsize=400, nhid=1150, layers=3, chunk=10, batch=20, bptt=70),
    "tiny": dict(vocab=1000, emsize=40, nhid=60, layers=3, chunk=10, batch=8, bptt=20),
}

LR, CLIP, ALPHA, BETA, WDECAY = 30.0, 0.25, 2.0, 1.0, 1.2e-6


def flops_per_token(c):
    """Multiply-adds x 2 of the matrix products per token: input and recurrent projections of
    every layer and the decoder, forward only."""
    sizes = [c["emsize"]] + [c["nhid"]] * (c["layers"] - 1) + [c["emsize"]]
    total = 0
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        gates = 4 * n_out + 2 * (n_out // c["chunk"])
        total += 2 * (n_in + n_out) * gates
    return total + 2 * c["emsize"] * c["vocab"]


# --- the two contenders ---------------------------------------------------------------------

class ReferenceRunner:
    name = "reference"

    def __init__(self, ref, c, data, device, seed):
        torch.manual_seed(seed)
        self.model = ref.OrderedLM(c["vocab"], c["emsize"], c["nhid"], c["layers"], c["chunk"]).to(device)
        self.steps = ref.train_steps(self.model, data, c["bptt"], lr=LR, clip=CLIP, alpha=ALPHA,
                                     beta=BETA, wdecay=WDECAY)

    def step(self):
        return next(self.steps)


class OnparseRunner:
    name = "onparse"

    def __init__(self, c, data, device, seed, implementation="fast"):
        from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
        from onparse.lm.training.recipe import objective

        torch.manual_seed(seed)
        cfg = ModelConfig(vocab_size=c["vocab"], embedding_size=c["emsize"], hidden_size=c["nhid"],
                          n_layers=c["layers"], chunk_size=c["chunk"])
        self.model = ONLSTMLanguageModel(cfg).to(device)
        self.model.implementation = implementation
        self.params = list(self.model.parameters())
        self.opt = torch.optim.SGD(self.params, lr=LR, weight_decay=WDECAY)
        self.data, self.bptt, self.batch_index = data, c["bptt"], 0
        self.state = self.model.init_state(data.size(1))
        self.objective = objective

    def step(self):
        b, bptt = self.batch_index, self.bptt
        self.batch_index += 1
        x, y = self.data[b * bptt:(b + 1) * bptt], self.data[b * bptt + 1:(b + 1) * bptt + 1]
        self.model.train()
        self.state = [(h.detach(), c.detach()) for h, c in self.state]
        self.opt.zero_grad(set_to_none=True)
        out = self.model(x, self.state)
        self.state = out.state
        loss, _ = self.objective(self.model, out, y, ALPHA, BETA)   # cross-entropy + AR + TAR, as trained
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, CLIP)
        self.opt.step()
        return loss.detach()


def make_runner(which, ref, c, data, device, seed):
    if which == "reference":
        return ReferenceRunner(ref, c, data, device, seed)
    return OnparseRunner(c, data, device, seed)


def time_batches(runner, n, device):
    sync(device)
    start = time.perf_counter()
    for _ in range(n):
        runner.step()
    sync(device)
    return time.perf_counter() - start


# --- memory probe: one implementation alone in a fresh process ------------------------------

def memory_probe(args):
    """Child process: build one runner, run two steps, print its peak memory as JSON."""
    ref = load_reference(args.reference)
    c = config_of(args)
    device = args.device
    data = ref.random_stream(c["vocab"], c["batch"], c["bptt"], 3, seed=args.seed).to(device)
    before = peak_rss_mib()
    runner = make_runner(args.probe, ref, c, data, device, args.seed)
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    runner.step()
    runner.step()
    sync(device)
    result = {"rss_mib": peak_rss_mib(), "rss_before_mib": before}
    if torch.device(device).type == "cuda":
        result["cuda_mib"] = torch.cuda.max_memory_allocated() / 2 ** 20
    print(json.dumps(result))


def measure_memory(args, which):
    cmd = [sys.executable, __file__, "--config", args.config, "--device", args.device,
           "--reference", str(args.reference), "--seed", str(args.seed), "--probe", which,
           "--batch", str(args.batch)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- modes ----------------------------------------------------------------------------------

def config_of(args):
    """The configuration's sizes, with ``--batch`` (if given) replacing its batch size."""
    c = dict(CONFIGS[args.config])
    if args.batch:
        c["batch"] = args.batch
    return c


def bench_train(args, ref):
    c = config_of(args)
    device = args.device
    tokens_per_batch = c["batch"] * c["bptt"]
    total = 1 + args.rounds * args.batches
    data = ref.random_stream(c["vocab"], c["batch"], c["bptt"], total, seed=args.seed).to(device)
    print(f"config {args.config}: {c}; device {device}, {torch.get_num_threads()} threads, "
          f"{args.rounds} rounds x {args.batches} batches of {tokens_per_batch} tokens", file=sys.stderr)
    peak_before = matmul_peak_gflops(device)
    runners = {which: make_runner(which, ref, c, data, device, args.seed) for which in ("reference", "onparse")}
    for runner in runners.values():          # warm-up step, not timed
        runner.step()
    rates = {which: [] for which in runners}
    for r in range(args.rounds):
        for which, runner in runners.items():                       # A B A B ...
            seconds = time_batches(runner, args.batches, device)
            rates[which].append(args.batches * tokens_per_batch / seconds)
        print(f"round {r + 1}: reference {rates['reference'][-1]:8.1f} tok/s   "
              f"onparse {rates['onparse'][-1]:8.1f} tok/s   "
              f"ratio {rates['onparse'][-1] / rates['reference'][-1]:.2f}", file=sys.stderr, flush=True)
    peak = best_peak(peak_before, matmul_peak_gflops(device))
    flops = 3 * flops_per_token(c)
    med = {which: statistics.median(v) for which, v in rates.items()}
    print(f"train {args.config} ({device}, {torch.get_num_threads()} threads, batch {c['batch']}, "
          f"bptt {c['bptt']}, median of {args.rounds} rounds):")
    print(f"  matmul peak (2048^3 torch.mm, best before/after the rounds): {peak:.1f} GFLOP/s")
    memory = {}
    if not args.no_memory:
        memory = {which: measure_memory(args, which) for which in ("reference", "onparse")}
    for which in ("reference", "onparse"):
        gflops = med[which] * flops / 1e9
        line = (f"  {which:9s} {med[which]:9.1f} tokens/s  {gflops:6.1f} GFLOP/s "
                f"({100 * gflops / peak:4.1f}% of peak)")
        if which in memory:
            m = memory[which]
            line += f"  peak RSS {m['rss_mib']:.0f} MiB ({m['rss_mib'] - m['rss_before_mib']:.0f} for the run)"
            if "cuda_mib" in m:
                line += f", peak CUDA {m['cuda_mib']:.0f} MiB"
        print(line)
    print(f"  ratio onparse/reference: {med['onparse'] / med['reference']:.2f}x "
          f"(per-round: {', '.join(f'{a / b:.2f}' for a, b in zip(rates['onparse'], rates['reference']))})")


def bench_parse(args, ref):
    """Distances of single sentences: reference parse_one (batch 1, no grad) vs onparse
    distances() one sentence at a time and batched (tree building excluded on our side)."""
    c = CONFIGS[args.config]
    device = args.device
    n = args.sentences
    sents = ref.random_sentences(c["vocab"], n + 5, 5, 40, seed=args.seed)
    torch.manual_seed(args.seed)
    ref_model = ref.OrderedLM(c["vocab"], c["emsize"], c["nhid"], c["layers"], c["chunk"]).to(device).eval()
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel

    cfg = ModelConfig(vocab_size=c["vocab"], embedding_size=c["emsize"], hidden_size=c["nhid"],
                      n_layers=c["layers"], chunk_size=c["chunk"])
    model = ONLSTMLanguageModel(cfg).to(device).eval()

    def run_ref(batch):
        with torch.no_grad():
            for s in batch:
                ref.parse_one(ref_model, s)

    def run_ours(batch):
        for s in batch:
            ids = torch.tensor([0] + list(s) + [0], device=device)[:, None]
            model.distances(ids, n_layers=2)[1, 0, 1:-1, 0].tolist()

    def run_ours_batched(batch, size=64):
        for i in range(0, len(batch), size):
            group = batch[i:i + size]
            width = max(len(s) for s in group) + 2
            ids = torch.zeros(width, len(group), dtype=torch.long)
            for j, s in enumerate(group):
                ids[1:len(s) + 1, j] = torch.tensor(s)
            model.distances(ids.to(device), n_layers=2).cpu()

    contenders = {"reference": run_ref, "onparse": run_ours, "onparse-batched": run_ours_batched}
    for fn in contenders.values():
        fn(sents[:5])
    rates = {k: [] for k in contenders}
    for r in range(args.rounds):
        for name, fn in contenders.items():
            sync(device)
            start = time.perf_counter()
            fn(sents[5:])
            sync(device)
            rates[name].append(n / (time.perf_counter() - start))
        print(f"round {r + 1}: " + "  ".join(f"{k} {v[-1]:.1f}/s" for k, v in rates.items()),
              file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"parse {args.config} ({device}, {n} sentences of 5-40 words, median of {args.rounds} rounds):")
    for k, v in med.items():
        print(f"  {k:16s} {v:9.1f} sentences/s  ({v / med['reference']:.2f}x)")


def bench_cell(args):
    """One layer of the configuration, forward + backward over a BPTT window: onparse's fused
    recurrence vs the readable reference cell in an autograd loop, and with --compile that loop
    with its step (recurrent addmm + cell) compiled by torch.compile (slow to compile; skipped
    with a message if compilation fails)."""
    from onparse.lm import cell
    from onparse.lm.model import reference_cell

    c = CONFIGS[args.config]
    device = args.device
    steps, batch, hidden, chunk = c["bptt"], c["batch"], c["nhid"], c["chunk"]
    gates = 4 * hidden + 2 * (hidden // chunk)
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(steps, batch, gates, generator=g).to(device).requires_grad_()
    weight = (torch.randn(gates, hidden, generator=g) * 0.05).to(device).requires_grad_()
    zeros = torch.zeros(batch, hidden, device=device)

    def step(x_t, h, w, c_prev):
        h, c_new, mf, mi = reference_cell(torch.addmm(x_t, h, w.t()), c_prev, chunk)
        return h, c_new, 1.0 - mf.mean(1), mi.mean(1)

    def loop(fn):
        h, c_state, hs = zeros, zeros, []
        for t in range(steps):
            h, c_state, _, _ = fn(x[t], h, weight, c_state)
            hs.append(h)
        return torch.stack(hs), c_state

    def fused():
        hs, (_, c_last), _ = cell.recurrence(x, weight, zeros, zeros, chunk)
        return hs, c_last

    contenders = {"fused": fused, "reference-cell": lambda: loop(step)}
    if args.compile:
        compiled = torch.compile(step, dynamic=False)
        start = time.perf_counter()
        try:
            loop(compiled)
            contenders["compiled-step"] = lambda: loop(compiled)
            print(f"torch.compile took {time.perf_counter() - start:.1f} s", file=sys.stderr)
        except Exception as err:  # the compiler's failures are many and varied
            print(f"torch.compile failed, skipped: {type(err).__name__}: {str(err)[:200]}", file=sys.stderr)

    def run(fn):
        hs, c_last = fn()
        (hs.sum() + c_last.sum()).backward()

    for fn in contenders.values():
        run(fn)
    times = {k: [] for k in contenders}
    for _ in range(args.rounds):
        for name, fn in contenders.items():
            sync(device)
            start = time.perf_counter()
            run(fn)
            sync(device)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["reference-cell"])
    print(f"cell {args.config} layer (T {steps}, B {batch}, H {hidden}; {device}, "
          f"{torch.get_num_threads()} threads; forward + backward, median of {args.rounds}):")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:15s} {1000 * med:8.1f} ms  ({base / med:.2f}x the reference cell)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="small")
    ap.add_argument("--mode", choices=["train", "parse", "cell"], default="train",
                    help="train: tokens/s of a training step; parse: distances of sentences; "
                         "cell: one layer's recurrence, fused vs reference cell")
    ap.add_argument("--compile", action="store_true", help="cell mode: also time a torch.compile'd step")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", type=int, default=0, help="batch size (0: the configuration's)")
    ap.add_argument("--rounds", type=int, default=4, help="A B rounds; medians are compared")
    ap.add_argument("--batches", type=int, default=2, help="training batches per round and contender")
    ap.add_argument("--sentences", type=int, default=50, help="sentences per round (parse mode)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--seed", type=int, default=1111)
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                    help="path of reference_onlstm.py")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory probes")
    ap.add_argument("--probe", choices=["reference", "onparse"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    sys.path.insert(0, str(ROOT / "src"))
    if args.probe:
        return memory_probe(args)
    if args.mode == "cell":
        return bench_cell(args)
    ref = load_reference(args.reference)
    if args.mode == "train":
        bench_train(args, ref)
    else:
        bench_parse(args, ref)


if __name__ == "__main__":
    main()

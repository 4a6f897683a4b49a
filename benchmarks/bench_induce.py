"""Tree induction speed: ``onparse induce``'s pipeline against the reference, side by side.

Both contenders parse the same random sentences (5-40 words, the reference's own generator) with
the same weights (copied from the reference model into onparse's layout), in this process:

* reference: ``parse_one`` -- one sentence at a time, batch of one, all layers, recursive split;
* onparse: the streaming pipeline of ``onparse induce`` from text lines to bracket strings
  (tokenise, normalise, look up, length-sorted batches through layers 1..2 only, O(n) decoder,
  formatting).

Rounds alternate A B A B and the medians are compared; the trees are checked to be identical.
onparse also streams a longer run of the same generator (the first sentences being the shared
ones), which is how ``onparse induce`` meets a corpus: a few sentences leave batches
half-padded, a corpus sorted within 4096-line windows hardly pads at all.
Also printed: achieved GFLOP/s (matrix products only) next to this machine's fp32 matmul peak
(a 2048-cube ``torch.mm``), peak RSS, and a memory check: the peak RSS of a fresh process
streaming N short sentences through the pipeline, for two values of N (it must not grow).

    python benchmarks/bench_induce.py                          # paper and small, memory check
    python benchmarks/bench_induce.py --configs small --rounds 3 --no-memory
    python benchmarks/bench_induce.py --memory-only --memory-sentences 10000,100000

The reference is ``../shared/bench/reference_onlstm.py`` beside the repository (``--reference``
points elsewhere).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from common import best_peak, load_reference, matmul_peak_gflops, peak_rss_mib, sync, word

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "bench" / "reference_onlstm.py"
sys.path.insert(0, str(ROOT / "src"))

CONFIGS = {
    # the paper's sizes, and a small model; parse reads layer 2 of 3
    "paper": dict(vocab=10000, emsize=400, nhid=1150, layers=3, chunk=10, sentences=120, stream=1000),
    "small": dict(vocab=10000, emsize=200, nhid=400, layers=3, chunk=10, sentences=400, stream=2000),
    "tiny": dict(vocab=1000, emsize=40, nhid=60, layers=3, chunk=10, sentences=200, stream=1000),
}
LAYER = 2  # the paper's parsing layer (1-based); the reference's parse_one reads index 1


def layer_flops_per_step(c, n_layers):
    """2 x multiply-adds of the input and recurrent projections per time step, first n layers."""
    sizes = [c["emsize"]] + [c["nhid"]] * (c["layers"] - 1) + [c["emsize"]]
    total = 0
    for n_in, n_out in list(zip(sizes[:-1], sizes[1:]))[:n_layers]:
        total += 2 * (n_in + n_out) * (4 * n_out + 2 * (n_out // c["chunk"]))
    return total


# --- vocabulary and weights shared by the two contenders ----------------------------------------

def build_vocab(size):
    """Id 0 is <eos> (the reference's eos), the last id is <unk>, every other id a word."""
    from onparse.text.vocab import Vocabulary

    return Vocabulary(["<eos>"] + [word(i) for i in range(1, size - 1)] + ["<unk>"])


def copy_weights(ref_model, model):
    """Reference layout per layer: rows [mi | mf | o | g | i | f]; onparse: [mf | mi | o | f | i | g]."""
    with torch.no_grad():
        model.embedding.weight.copy_(ref_model.embed.weight)
        model.decoder_bias.copy_(ref_model.out_bias)
        for cell, layer in zip(ref_model.layers, model.layers):
            n, h = cell.levels, cell.n_hid

            def reorder(t):
                mi, mf = t[:n], t[n:2 * n]
                o, g, i, f = t[2 * n:2 * n + h], t[2 * n + h:2 * n + 2 * h], t[2 * n + 2 * h:2 * n + 3 * h], t[2 * n + 3 * h:]
                return torch.cat([mf, mi, o, f, i, g])

            lin_in, lin_rec = cell.proj_in[0], cell.proj_rec
            layer.weight_ih.copy_(reorder(lin_in.weight))
            layer.bias_ih.copy_(reorder(lin_in.bias))
            layer.weight_hh.copy_(reorder(lin_rec.weight))
            layer.bias_hh.copy_(reorder(lin_rec.bias))


def reference_parse(ref, model, words, device, layer):
    """``ref.parse_one`` on any device: the same batch-of-one forward and recursive split, with the
    ids moved to the model's device and the distances read back (``parse_one`` itself is CPU-only)."""
    if torch.device(device).type == "cpu":
        return ref.parse_one(model, words, eos=0, layer=layer)
    ids = torch.tensor([0] + list(words) + [0], device=device)[:, None]
    model(ids, model.zero_state(1))
    dist = model.distances[0].squeeze(-1).cpu().numpy()
    return ref.split_greedy(dist[layer][1:-1], words)


def to_tuple(tree, vocab):
    if isinstance(tree, list):
        return tuple(to_tuple(t, vocab) for t in tree)
    return vocab.itos[int(tree)]


# --- the benchmark -------------------------------------------------------------------------------

def padded_steps(lengths, options):
    """Time steps x sentences that the pipeline computes for these sentence lengths."""
    from onparse.lm.distances import plan_batches

    total = 0
    for first in range(0, len(lengths), options.window):
        window = lengths[first:first + options.window]
        for batch in plan_batches(window, options.batch_size, options.max_tokens):
            total += len(batch) * (window[batch[-1]] + 1)
    return total


def bench_config(name, args, ref, peak):
    from types import SimpleNamespace

    from onparse import Parser
    from onparse import Member
    from onparse.lm.distances import sentence_distances
    from onparse.induce import WINDOW, induce_lines
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
    from onparse.trees.tree import parse_brackets

    c = CONFIGS[name]
    n = args.sentences or c["sentences"]
    n_stream = max(n, args.stream or c["stream"])
    # random_sentences draws sentence by sentence: the first n of the stream are the n sentences.
    sents = [[int(x) for x in s] for s in ref.random_sentences(c["vocab"], n_stream, 5, 40, seed=args.seed)]
    vocab = build_vocab(c["vocab"])
    lines = [" ".join(vocab.itos[i] for i in s) for s in sents]

    torch.manual_seed(args.seed)
    ref_model = ref.OrderedLM(c["vocab"], c["emsize"], c["nhid"], c["layers"], c["chunk"]).eval()
    model = ONLSTMLanguageModel(ModelConfig(vocab_size=c["vocab"], embedding_size=c["emsize"],
                                            hidden_size=c["nhid"], n_layers=c["layers"],
                                            chunk_size=c["chunk"])).eval()
    copy_weights(ref_model, model)
    device = args.device
    ref_model.to(device)
    model.to(device)
    # The public API, as `onparse induce --pretokenized` runs it (the reference reads ids, so
    # onparse is given whitespace-separated words and skips NLTK's tokenizer).
    parser = Parser.from_model(model, vocab, [Member(0, LAYER, "onlstm")], batch_size=args.batch_size)
    options = SimpleNamespace(window=WINDOW, batch_size=parser.batch_size, max_tokens=parser.max_tokens)

    def run_reference(batch):
        with torch.no_grad():
            return [reference_parse(ref, ref_model, s, device, LAYER - 1) for s in batch]

    def run_onparse(batch):
        return [t for chunk in induce_lines(batch, parser, tokenize=False) for t in chunk]

    # Warm-up (not timed); the distances must agree (trees may differ only at near-ties).
    max_diff = 0.0
    with torch.no_grad():
        for s, d in zip(sents[:10], sentence_distances(model, sents[:10], 0, LAYER)):
            reference_parse(ref, ref_model, s, device, LAYER - 1)
            ref_d = ref_model.distances[0][LAYER - 1, 1:-1, 0].cpu().numpy()
            max_diff = max(max_diff, float(abs(ref_d - d[LAYER - 1, 0]).max()))
    run_onparse(lines[:64])

    def timed(fn, batch):
        sync(device)
        start = time.perf_counter()
        out = fn(batch)
        sync(device)
        return len(batch) / (time.perf_counter() - start), out

    rates = {"reference": [], "onparse": [], "stream": []}
    print(f"[{name}] {n} sentences ({n_stream} streamed), {device}, {torch.get_num_threads()} threads, "
          f"batch {args.batch_size}", file=sys.stderr)
    for r in range(args.rounds):                       # A B A B ...
        rate, out_ref = timed(run_reference, sents[:n])
        rates["reference"].append(rate)
        rate, out_ours = timed(run_onparse, lines[:n])
        rates["onparse"].append(rate)
        rates["stream"].append(timed(run_onparse, lines)[0])
        print(f"[{name}] round {r + 1}: reference {rates['reference'][-1]:8.2f}/s  onparse "
              f"{rates['onparse'][-1]:8.2f}/s (stream {rates['stream'][-1]:8.2f}/s)  ratio "
              f"{rates['onparse'][-1] / rates['reference'][-1]:.1f}", file=sys.stderr, flush=True)
    same = sum(to_tuple(a, vocab) == parse_brackets(b) for a, b in zip(out_ref, out_ours))
    peak = best_peak(peak, matmul_peak_gflops(device))  # the larger of the readings before and after the rounds

    med = {k: statistics.median(v) for k, v in rates.items()}
    # Work actually done (matrix products): the reference runs every layer on n + 2 steps per
    # sentence; onparse layers 1..2 on its padded batches of n + 1 steps (the closing <eos>
    # cannot change the kept distances, so it is not computed).
    lengths = [len(s) for s in sents]
    ref_flops = sum(l + 2 for l in lengths[:n]) * layer_flops_per_step(c, c["layers"]) / n
    our_flops = padded_steps(lengths[:n], options) * layer_flops_per_step(c, LAYER) / n
    stream_flops = padded_steps(lengths, options) * layer_flops_per_step(c, LAYER) / n_stream
    gf = {"reference": med["reference"] * ref_flops / 1e9, "onparse": med["onparse"] * our_flops / 1e9,
          "stream": med["stream"] * stream_flops / 1e9}
    pad = {"onparse": padded_steps(lengths[:n], options) / sum(l + 1 for l in lengths[:n]) - 1,
           "stream": padded_steps(lengths, options) / sum(l + 1 for l in lengths) - 1}
    result = {
        "config": name, "device": str(device), "sentences": n, "stream_sentences": n_stream, "threads": torch.get_num_threads(),
        "batch_size": args.batch_size, "sentences_per_s": med, "gflops": gf, "padding": pad,
        "ratio": med["onparse"] / med["reference"], "stream_ratio": med["stream"] / med["reference"],
        "round_ratios": [a / b for a, b in zip(rates["onparse"], rates["reference"])],
        "rounds": rates, "peak_gflops": peak, "identical_trees": same, "max_abs_distance_difference": max_diff,
    }
    print(f"induce {name} (emb {c['emsize']}, hidden {c['nhid']}, {c['layers']} layers, chunk {c['chunk']}, "
          f"vocab {c['vocab']}; sentences of 5-40 words; {device}, {torch.get_num_threads()} threads; "
          f"median of {args.rounds} rounds)")
    print(f"  reference parse_one, {n} sentences     {med['reference']:9.2f} sentences/s  "
          f"{gf['reference']:6.1f} GFLOP/s")
    for key, label in (("onparse", f"onparse induce, same {n} sentences"),
                       ("stream", f"onparse induce, stream of {n_stream}")):
        print(f"  {label:37s}{med[key]:9.2f} sentences/s  {gf[key]:6.1f} GFLOP/s "
              f"({100 * gf[key] / peak:.0f}% of peak; padding {100 * pad[key]:.1f}%)  "
              f"{med[key] / med['reference']:6.1f}x the reference")
    print(f"  per-round ratio (same sentences): {', '.join(f'{x:.1f}' for x in result['round_ratios'])}")
    print(f"  same weights: identical trees {same}/{n}; max |d_f(reference) - d_f(onparse)| = {max_diff:.1e} "
          f"(random weights give near-equal distances, so rounding may flip a near-tie)")
    return result


# --- memory: a fresh process streams N sentences through the pipeline --------------------------

def memory_child(n, args):
    """Stream ``n`` random short sentences through induce_lines into /dev/null; print peak RSS."""
    from onparse import Parser
    from onparse.induce import induce_lines, steady_memory, write_stream
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel

    if not args.no_steady:
        steady_memory()  # as the CLI does

    c = CONFIGS[args.memory_config]
    torch.manual_seed(args.seed)
    model = ONLSTMLanguageModel(ModelConfig(vocab_size=c["vocab"], embedding_size=c["emsize"],
                                            hidden_size=c["nhid"], n_layers=c["layers"],
                                            chunk_size=c["chunk"])).eval()
    vocab = build_vocab(c["vocab"])
    rng = random.Random(args.seed)

    def lines():  # generated lazily: the input itself takes no memory
        for _ in range(n):
            yield " ".join(vocab.itos[rng.randrange(1, c["vocab"] - 1)] for _ in range(rng.randint(5, 15)))

    done, curve = 0, {}  # peak RSS so far after each tenth of the stream

    def progress(count):
        nonlocal done
        done += count
        tenth = 10 * done // n
        if tenth and tenth not in curve:
            curve[tenth] = peak_rss_mib()

    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        parser = Parser.from_model(model, vocab, batch_size=256, max_tokens=32768)
        chunks = induce_lines(lines(), parser, tokenize=False)
        written = write_stream(chunks, sink, progress)
    seconds = time.perf_counter() - start
    print(json.dumps({"sentences": written, "seconds": seconds, "peak_rss_mib": peak_rss_mib(),
                      "curve": [curve[k] for k in sorted(curve)]}))


def memory_check(args):
    results = []
    for n in args.memory_sentences:
        cmd = [sys.executable, __file__, "--memory-child", str(n), "--memory-config", args.memory_config,
               "--seed", str(args.seed)]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.no_steady:
            cmd += ["--no-steady"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    c = CONFIGS[args.memory_config]
    print(f"memory: peak RSS of a fresh process streaming N sentences of 5-15 words through induce "
          f"({args.memory_config} model, emb {c['emsize']}, hidden {c['nhid']}; "
          f"{'glibc defaults' if args.no_steady else 'steady_memory() as in the CLI'}):")
    for r in results:
        print(f"  N = {r['sentences']:>8,}: peak RSS {r['peak_rss_mib']:7.1f} MiB  "
              f"({r['sentences'] / r['seconds']:.0f} sentences/s); peak so far after each tenth: "
              f"{' '.join(f'{x:.0f}' for x in r['curve'])}")
    if len(results) >= 2:
        print(f"  growth from the smallest to the largest N: "
              f"{results[-1]['peak_rss_mib'] - results[0]['peak_rss_mib']:+.1f} MiB")
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--configs", default="paper,small", help="comma-separated: " + ", ".join(CONFIGS))
    ap.add_argument("--sentences", type=int, default=0,
                    help="sentences both contenders parse per round (0: per-config default)")
    ap.add_argument("--stream", type=int, default=0,
                    help="onparse also streams this many (0: per-config default), the first ones the same")
    ap.add_argument("--rounds", type=int, default=2, help="A B rounds; medians are compared")
    ap.add_argument("--device", default="cpu", help="cpu or cuda: both contenders run there")
    ap.add_argument("--batch-size", type=int, default=0,
                    help="onparse sentences per batch (0: 64 on the CPU, 512 on a GPU, as onparse induce)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--seed", type=int, default=1111)
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE, help="path of reference_onlstm.py")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory check")
    ap.add_argument("--memory-only", action="store_true", help="only the memory check")
    ap.add_argument("--memory-config", choices=sorted(CONFIGS), default="tiny")
    ap.add_argument("--memory-sentences", default="10000,100000",
                    type=lambda s: [int(x) for x in s.split(",")], help="comma-separated corpus sizes")
    ap.add_argument("--no-steady", action="store_true",
                    help="memory check without onparse.induce.steady_memory() (glibc's default mmap threshold)")
    ap.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if not args.batch_size:
        args.batch_size = 512 if torch.device(args.device).type == "cuda" else 64
    if args.memory_child is not None:
        return memory_child(args.memory_child, args)
    results = {}
    if not args.memory_only:
        ref = load_reference(args.reference)
        peak = matmul_peak_gflops(args.device)
        print(f"matmul peak before the rounds (2048^3 fp32 torch.mm on {args.device}, {torch.get_num_threads()} threads): "
              f"{peak:.1f} GFLOP/s (each config re-measures it after its rounds and keeps the larger)")
        results["configs"] = [bench_config(name, args, ref, peak) for name in args.configs.split(",")]
        print(f"peak RSS of this process (both contenders, all configs): "
              f"{peak_rss_mib():.0f} MiB")
    if not args.no_memory:
        results["memory"] = memory_check(args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

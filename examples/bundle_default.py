"""Export the bundled model (the last step of ``examples/train_default.sh``).

Of the given checkpoints (one per seed of the recipe, each already the best of its run by
validation perplexity) the one with the lowest validation perplexity is chosen -- an
unsupervised choice: no gold tree is looked at.  It is written with fp16 weights to
``src/onparse/models/default.pt``, its metadata completed with the recipe, its test perplexity
and its parsing scores on NLTK's treebank sample (measured on the fp16 file itself, so that
``onparse info`` shows what the shipped weights do; the fp32 scores are checked to be within 0.1).

    python examples/bundle_default.py --epochs 15 runs/default-s*/best.pt
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.path.join(ROOT, "src", "onparse", "models", "default.pt")
#: The training log of the chosen run, kept for `make figures` (training curves of the bundled model).
LOG_COPY = os.path.join(HERE, "default-model-metrics.jsonl")
GOLDS = ("wsj10", "wsj")
KEYS = ("sentence_f1_onlstm", "sentence_f1_kim", "corpus_f1", "corpus_f1_evalb")
#: fp16 weights may move the headline score by at most this much (fraction of 1).
FP16_TOLERANCE = 0.001


def scores(path: str) -> list:
    """One record per gold set, layer and decoder: the F1 values as fractions."""
    from onparse.induce import score_model

    records = []
    for gold in GOLDS:
        for (layer, decoder), result in score_model(path, gold, layers=None, decoders=None).items():
            d = result.to_dict()
            records.append({"gold": gold, "layer": layer, "decoder": decoder, "sentences": result.n_sentences,
                            **{key: d[key]["f1"] for key in KEYS}})
    return records


def recipe_flags(meta: dict) -> str:
    """The ``onparse train`` options that rebuild a run from its checkpoint metadata: its preset
    and corpus, then every hyperparameter that differs from the preset's (seed and epochs aside),
    e.g. ``--preset small --corpus wsj --dropconnect 0.45``."""
    from onparse.train import preset

    base = preset(meta["preset"]).to_dict()
    changed = [f"--{key.replace('_', '-')} {value}" for key, value in meta["train_config"].items()
               if key not in ("seed", "epochs") and base.get(key) != value]
    return " ".join([f"--preset {meta['preset']} --corpus {meta['corpus']['source']}", *changed])


def headline(records: list, gold: str) -> float:
    return next(r["sentence_f1_onlstm"] for r in records
                if r["gold"] == gold and r["layer"] == 2 and r["decoder"] == "onlstm")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", help="best.pt of each seed")
    ap.add_argument("--epochs", type=int, required=True, help="the recipe's --epochs (recorded)")
    ap.add_argument("--out", default=TARGET)
    args = ap.parse_args(argv)
    from onparse.checkpoint import export_checkpoint, load_checkpoint
    from onparse.perplexity import measure

    metas = {path: load_checkpoint(path)["metadata"] for path in args.checkpoints}
    valid = {path: meta.get("valid_ppl") for path, meta in metas.items()}
    seeds = {path: meta["train_config"]["seed"] for path, meta in metas.items()}
    missing = [p for p, v in valid.items() if v is None]
    if missing:
        sys.exit(f"error: no validation perplexity recorded in {', '.join(missing)}")
    chosen = min(valid, key=valid.get)
    print(f"chosen by validation perplexity: {chosen} ({valid[chosen]:.2f}; "
          + ", ".join(f"{os.path.relpath(p, ROOT)} {v:.2f}" for p, v in valid.items()) + ")", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        half = os.path.join(tmp, "default.pt")
        export_checkpoint(chosen, half)
        print("scoring the fp16 and fp32 weights on the treebank sample ...", file=sys.stderr)
        shipped, original = scores(half), scores(chosen)
        for gold in GOLDS:
            moved = abs(headline(shipped, gold) - headline(original, gold))
            print(f"  {gold}: layer 2 onlstm sentence F1 fp16 {100 * headline(shipped, gold):.2f}, "
                  f"fp32 {100 * headline(original, gold):.2f}", file=sys.stderr)
            if moved > FP16_TOLERANCE:
                sys.exit(f"error: fp16 weights move the {gold} score by {100 * moved:.2f} (> 0.1); "
                         "ship float32 weights instead")
        test, described = measure(half)
    command = f"onparse train {recipe_flags(metas[chosen])} --epochs {args.epochs} --seed {seeds[chosen]}"
    recipe = f"{command} (seeds {', '.join(str(seed) for seed in seeds.values())}; examples/train_default.sh)"
    others = ", ".join(f"seed {seeds[p]} {v:.2f}" for p, v in valid.items())
    written = export_checkpoint(chosen, args.out, metadata={
        "recipe": recipe,
        "selection": f"lowest validation perplexity among the seeds ({others}); no gold trees used",
        "test_ppl": test.perplexity,
        "perplexity_note": f"test: {described}, {test.tokens:,} tokens",
        "scores": shipped,
        "scores_gold": "NLTK's treebank sample (wsj10: 555 sentences, wsj: 3,914)",
    })
    log = os.path.join(os.path.dirname(chosen), "metrics.jsonl")
    if args.out == TARGET and os.path.exists(log):
        shutil.copyfile(log, LOG_COPY)
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB): valid ppl {written['valid_ppl']:.2f}, "
          f"test ppl {test.perplexity:.2f}, WSJ10 {100 * headline(shipped, 'wsj10'):.1f}, "
          f"all lengths {100 * headline(shipped, 'wsj'):.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

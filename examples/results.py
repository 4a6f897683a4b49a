"""Regenerate the results tables from checkpoints (``make results``).

Scores the bundled model and every seed of its recipe on NLTK's treebank sample (WSJ10 and all
lengths), for each layer and both decoders, in the three F1 conventions; adds label recall,
perplexity and the baselines; writes

* ``examples/results.md``: every table, mean ± standard deviation (max) over the seeds;
* ``examples/results.json``: the same numbers, unrounded;
* the block between ``<!-- results:start -->`` and ``<!-- results:end -->`` in ``README.md``.

    python examples/results.py --default src/onparse/models/default.pt runs/default-s*/best.pt

Every figure comes from the checkpoints given; nothing is typed in by hand except the published
anchors of the paper, labelled as such.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GOLDS = (("wsj10", "WSJ10"), ("wsj", "all lengths"))
CONVENTIONS = (("sentence_f1", "sent. F1 ON-LSTM"), ("kim_f1", "sent. F1 Kim"), ("corpus_f1", "corpus F1"))
LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP")
DECODERS = ("onlstm", "split")
RANDOM_SEEDS = range(5)
#: Published figures (Shen et al. 2019, Table 2): full WSJ10 and WSJ test, PTB-trained LM, 5 runs.
PAPER = {"wsj10": "65.1 ± 1.7 (66.8)", "wsj": "47.7 ± 1.5 (49.4)"}


def summarise(result) -> dict:
    """The numbers kept of an onparse.metrics.EvalResult (fractions)."""
    out = {key: getattr(result, key).f1 for key, _ in CONVENTIONS}
    out["evalb_f1"] = result.evalb_f1.f1
    out["labels"] = {label: result.label_recall[label].recall for label in LABELS}
    out["depth"] = result.pred_depth
    return out


def score_checkpoint(path: str, golds) -> dict:
    from onparse.checkpoint import load_model
    from onparse.induce import score_model
    from onparse.perplexity import measure

    loaded = load_model(path)
    meta = loaded.metadata
    test, described = measure(path)
    record = {"path": os.path.relpath(path, ROOT), "seed": (meta.get("train_config") or {}).get("seed"),
              "epochs": meta.get("epoch"), "valid_ppl": meta.get("valid_ppl"), "test_ppl": test.perplexity,
              "test_set": described, "scores": {}}
    for name, gold in golds.items():
        results = score_model(loaded, gold, layers=None, decoders=None)
        record["scores"][name] = {f"{layer}/{decoder}": summarise(r) for (layer, decoder), r in results.items()}
    return record


def score_baselines(golds) -> dict:
    from onparse.baselines import baseline_trees
    from onparse.metrics import evaluate

    out = {}
    for kind in ("right", "left", "balanced", "random"):
        out[kind] = {}
        for name, gold in golds.items():
            seeds = RANDOM_SEEDS if kind == "random" else [0]
            runs = [summarise(evaluate(baseline_trees(gold.tokens, kind, s), gold, check_tokens=False)) for s in seeds]
            out[kind][name] = runs
    return out


# -- formatting ------------------------------------------------------------------------------
def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def spread(values) -> str:
    """``mean ± std (max)`` in percent; a single value alone."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return pct(values[0])
    return f"{pct(statistics.mean(values))} ± {pct(statistics.stdev(values))} ({pct(max(values))})"


def spread_plain(values, digits=1) -> str:
    values = [v for v in values if v is not None]
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def headline(default, seeds, baselines) -> list:
    rows = ["| trees | WSJ10 (555 sentences) | all lengths (3,914) |", "|---|---|---|"]
    get = lambda rec, g: rec["scores"][g]["2/onlstm"]["sentence_f1"]  # noqa: E731
    rows.append(f"| **onparse bundled model** (layer 2, paper decoder) | **{pct(get(default, 'wsj10'))}** | "
                f"**{pct(get(default, 'wsj'))}** |")
    rows.append(f"| same recipe, {len(seeds)} seeds: mean ± std (max) | {spread([get(s, 'wsj10') for s in seeds])} | "
                f"{spread([get(s, 'wsj') for s in seeds])} |")
    for kind in ("right", "left", "balanced", "random"):
        cells = [spread([r["sentence_f1"] for r in baselines[kind][g]]) for g, _ in GOLDS]
        rows.append(f"| {kind}-branching |".replace("balanced-branching", "balanced").replace("random-branching",
                    f"random (mean of {len(RANDOM_SEEDS)} seeds)") + f" {cells[0]} | {cells[1]} |")
    rows.append(f"| *paper: ON-LSTM, PTB-trained, full WSJ10 / WSJ test* | *{PAPER['wsj10']}* | *{PAPER['wsj']}* |")
    return rows


def grid(default, seeds) -> list:
    head = "| layer | decoder | " + " | ".join(f"{gname}: {title}" for _, gname in GOLDS for _, title in CONVENTIONS) + " |"
    rows = [head, "|" + "---|" * (2 + len(GOLDS) * len(CONVENTIONS))]
    for layer in (1, 2, 3):
        for decoder in DECODERS:
            key = f"{layer}/{decoder}"
            cells = []
            for g, _ in GOLDS:
                for conv, _ in CONVENTIONS:
                    cells.append(f"{pct(default['scores'][g][key][conv])} / "
                                 f"{spread([s['scores'][g][key][conv] for s in seeds])}")
            rows.append(f"| {layer} | {decoder} | " + " | ".join(cells) + " |")
    return rows


def labels(default, seeds, baselines) -> list:
    rows = ["| trees | " + " | ".join(LABELS) + " |", "|" + "---|" * (1 + len(LABELS))]
    for g, gname in GOLDS:
        rows.append(f"| *{gname}* |" + " |" * len(LABELS))
        rows.append("| bundled model | " + " | ".join(pct(default["scores"][g]["2/onlstm"]["labels"][lb]) for lb in LABELS) + " |")
        rows.append(f"| {len(seeds)} seeds | " + " | ".join(
            spread([s["scores"][g]["2/onlstm"]["labels"][lb] for s in seeds]) for lb in LABELS) + " |")
        for kind in ("right", "left"):
            rows.append(f"| {kind}-branching | " + " | ".join(pct(baselines[kind][g][0]["labels"][lb]) for lb in LABELS) + " |")
    return rows


def perplexities(default, seeds) -> list:
    rows = ["| model | seed | epochs | valid ppl | test ppl |", "|---|---|---|---|---|"]
    weights = default.get("meta", {}).get("weights", "float32")
    for name, rec in [(f"bundled ({weights})", default)] + [(rec["path"], rec) for rec in seeds]:
        valid = "-" if rec["valid_ppl"] is None else f"{rec['valid_ppl']:.1f}"
        rows.append(f"| {name} | {rec['seed']} | {rec['epochs']} | {valid} | {rec['test_ppl']:.1f} |")
    rows.append(f"| mean ± std over seeds | | | {spread_plain([s['valid_ppl'] for s in seeds])} | "
                f"{spread_plain([s['test_ppl'] for s in seeds])} |")
    return rows


def readme_block(default, seeds, baselines, command) -> str:
    return "\n".join([
        "Sentence F1 (ON-LSTM convention, %) on NLTK's treebank sample, layer 2, the paper's decoder:",
        "", *headline(default, seeds, baselines), "",
        f"Regenerate with `make results` (`{command}`); every layer, decoder and convention, label recall",
        "and perplexities are in [examples/results.md](examples/results.md).",
    ])


def markdown(default, seeds, baselines, command) -> str:
    meta = default.get("meta", {})
    return "\n".join([
        "# onparse results", "",
        f"Generated by `make results` ({command}) on {time.strftime('%Y-%m-%d')}.",
        "Gold trees: NLTK's treebank sample (WSJ files 0001-0199), preprocessed as in the definitions "
        "document (word tags only, lowercased, digits to N); WSJ10 = at most 10 words.",
        f"Models: the bundled model `{default['path']}` ({meta.get('weights', 'float32')} weights) and the "
        f"{len(seeds)} seeds of its recipe; the bundled model is the seed with the best validation perplexity.",
        "", "## Headline: layer 2, paper decoder, sentence F1 (ON-LSTM convention)", "",
        *headline(default, seeds, baselines), "",
        "## Every layer and decoder, three conventions", "",
        "Each cell: bundled model / seeds mean ± std (max). Sentence F1 in the ON-LSTM convention (the paper's),",
        "sentence F1 in the Kim et al. (2019) convention, and corpus F1 (pooled spans).", "",
        *grid(default, seeds), "",
        "## Recall per gold label (layer 2, paper decoder)", "", *labels(default, seeds, baselines), "",
        "## Perplexity", "",
        "Held-out test split of the training corpus (5% of the sentences, never trained on); the validation",
        "split (another 5%) chose the checkpoint of every run.", "", *perplexities(default, seeds), "",
    ])


def replace_block(path: str, block: str) -> None:
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if start not in text or end not in text:
        sys.exit(f"error: {path} lacks the {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{head}{start}\n{block}\n{end}{tail}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", nargs="+", help="best.pt of each seed of the recipe")
    ap.add_argument("--default", required=True, help="the bundled model")
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args(argv)
    from onparse.checkpoint import load_checkpoint
    from onparse.treebank import load_gold

    golds = {name: load_gold(name) for name, _ in GOLDS}
    command = "python examples/results.py --default " + os.path.relpath(args.default, ROOT) + " " + " ".join(
        os.path.relpath(p, ROOT) for p in args.seeds)
    print(f"scoring {args.default}", file=sys.stderr)
    default = score_checkpoint(args.default, golds)
    default["meta"] = {k: v for k, v in load_checkpoint(args.default)["metadata"].items() if k != "scores"}
    seeds = []
    for path in args.seeds:
        print(f"scoring {path}", file=sys.stderr)
        seeds.append(score_checkpoint(path, golds))
    baselines = score_baselines(golds)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump({"default": default, "seeds": seeds, "baselines": baselines}, handle, indent=1, default=str)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(markdown(default, seeds, baselines, command))
    replace_block(args.readme, readme_block(default, seeds, baselines, command))
    print(f"wrote {args.out}, {args.json} and the results block of {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

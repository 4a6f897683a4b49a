"""Regenerate the results tables from the bundled model and its seeds (``make results``).

Every score is *held out*: the gold sentences (NLTK's treebank sample) are in no split of the
``news`` corpus the language models trained and were validated on.  Written:

* ``research/results.md``: the bundle against its single members and per-seed averages, in the
  three F1 conventions, on WSJ10 and on all lengths; label recall; perplexities; baselines;
* ``research/results.json``: the same numbers, unrounded;
* the block between ``<!-- results:start -->`` and ``<!-- results:end -->`` in ``README.md``
  (``--block seeds``: the three-convention table, between ``<!-- seeds:start/end -->``).

    python research/results.py --default src/onparse/models/default.pt
    python research/results.py --default runs/all-seeds.pt --out research/results-3seeds.md \
        --json research/results-3seeds.json --block seeds --label "the bundle of all 3 seeds (float32, not shipped)"

The second reads the float32 bundle of every seed that ``research/bundle_default.py --report``
writes (the three-seed report of PROTOCOL.md rule 22).

The seeds are the bundle's own models (each with its four members: layers 2 and 3 x both
decoders), so the bundle file is all this needs.  Nothing is typed in by hand except the
published anchors of the paper, labelled as such.
"""
import argparse
import json
import os
import shlex
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from choose_members import every_member, replace_block  # noqa: E402  (shared with rules v5-v8)

GOLDS = (("wsj10", "WSJ10 (555)"), ("wsj", "all lengths (3,914)"))
CONVENTIONS = (("sentence_f1", "sent. F1 ON-LSTM"), ("kim_f1", "sent. F1 Kim"), ("corpus_f1", "corpus F1"))
LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP")
KINDS = ((2, "onlstm"), (2, "split"), (3, "onlstm"), (3, "split"))
RANDOM_SEEDS = range(5)
#: Published figures (Shen et al. 2019, Table 2): full WSJ10 and WSJ test, PTB-trained LM, 5 runs.
PAPER = {"wsj10": "65.1 ± 1.7 (66.8)", "wsj": "47.7 ± 1.5 (49.4)"}
#: The targets of issue 20 (ON-LSTM convention): all lengths, WSJ10.
TARGET = {"wsj": 0.477, "wsj10": 0.651}


def summarise(result) -> dict:
    """The numbers kept of an onparse.scores.metrics.EvalResult (fractions)."""
    out = {key: getattr(result, key).f1 for key, _ in CONVENTIONS}
    out["evalb_f1"] = result.evalb_f1.f1
    out["labels"] = {label: result.label_recall[label].recall for label in LABELS}
    out["depth"] = result.pred_depth
    return out


def score_bundle(path: str, golds) -> dict:
    """The bundle's average, each member, and each seed's own 4-member average, per gold set."""
    from onparse import load
    from onparse.trees.average import average_trees_batch
    from onparse import evaluate

    parser = load(path, "cpu")
    # Every candidate member is scored, also those the bundle's rule left out.
    members = every_member(len(parser.models), (2, 3), ("onlstm", "split"))
    chosen = [members.index(m) for m in parser.members]
    record = {"path": os.path.relpath(path, ROOT), "meta": parser.metadata, "n_models": len(parser.models),
              "members": [m.to_dict() for m in parser.members], "scores": {}}
    for name, gold in golds.items():
        tokens = [list(s.words) for s in gold]
        per_sentence = parser.with_members(members).member_trees(tokens)
        average = average_trees_batch([[t[k] for k in chosen] for t in per_sentence])
        got = {"average": summarise(evaluate(average, gold)), "members": {}, "seeds": {}}
        for k, m in enumerate(members):
            got["members"][f"{m.model}/{m.layer}/{m.decoder}"] = summarise(evaluate([t[k] for t in per_sentence], gold))
        for model in range(len(parser.models)):
            mine = [k for k, m in enumerate(members) if m.model == model]
            trees = average_trees_batch([[t[k] for k in mine] for t in per_sentence])
            got["seeds"][str(model)] = summarise(evaluate(trees, gold))
        record["scores"][name] = got
    return record


def score_baselines(golds) -> dict:
    from onparse import baseline_trees
    from onparse import evaluate

    out = {}
    for kind in ("right", "left", "balanced", "random"):
        out[kind] = {}
        for name, gold in golds.items():
            seeds = RANDOM_SEEDS if kind == "random" else [0]
            out[kind][name] = [summarise(evaluate(baseline_trees(gold.tokens, kind, s), gold, check_tokens=False))
                               for s in seeds]
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


def _member(rec, gold, model, layer, decoder, conv="sentence_f1"):
    return rec["scores"][gold]["members"][f"{model}/{layer}/{decoder}"][conv]


def member_name(rec, member: dict) -> str:
    """``seed 4 L2 onlstm``: a bundle member named by its model's training seed."""
    seeds = rec["meta"].get("seeds") or []
    model = member["model"]
    who = f"seed {seeds[model]['seed']}" if model < len(seeds) else f"model {model + 1}"
    return f"{who} L{member['layer']} {member['decoder']}"


def headline(rec, baselines) -> list:
    n = rec["n_models"]
    rows = ["| trees (sentence F1, ON-LSTM convention) | WSJ10 (555) | all lengths (3,914) |", "|---|---|---|"]
    cell = lambda g: pct(rec["scores"][g]["average"]["sentence_f1"])  # noqa: E731
    kept = ", ".join(member_name(rec, m) for m in rec["members"])
    rows.append(f"| **{rec.get('label', 'onparse bundled model')}**: average of {len(rec['members'])} members ({kept}; "
                f"{n} seeds) | **{cell('wsj10')}** | **{cell('wsj')}** |")
    rows.append("| one model: the seed of lowest validation ppl, layer 2, paper decoder | "
                f"{pct(_member(rec, 'wsj10', 0, 2, 'onlstm'))} | {pct(_member(rec, 'wsj', 0, 2, 'onlstm'))} |")
    rows.append(f"| {n} seeds, layer 2, paper decoder: mean ± std (max) | " + " | ".join(
        spread([_member(rec, g, m, 2, "onlstm") for m in range(n)]) for g, _ in GOLDS) + " |")
    rows.append(f"| {n} seeds, each its own 4-member average: mean ± std (max) | " + " | ".join(
        spread([rec["scores"][g]["seeds"][str(m)]["sentence_f1"] for m in range(n)]) for g, _ in GOLDS) + " |")
    for kind in ("right", "left", "balanced", "random"):
        cells = [spread([r["sentence_f1"] for r in baselines[kind][g]]) for g, _ in GOLDS]
        name = {"balanced": "balanced", "random": f"random (mean of {len(RANDOM_SEEDS)} seeds)"}.get(
            kind, f"{kind}-branching")
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")
    rows.append(f"| *paper: ON-LSTM, PTB-trained, full WSJ10 / WSJ test* | *{PAPER['wsj10']}* | *{PAPER['wsj']}* |")
    return rows


def targets(rec, baselines) -> list:
    got = {g: rec["scores"][g]["average"]["sentence_f1"] for g, _ in GOLDS}
    right = baselines["right"]["wsj"][0]["sentence_f1"]
    checks = [(f"all lengths >= {pct(TARGET['wsj'])}", got["wsj"] >= TARGET["wsj"]),
              (f"all lengths >= right-branching + 8 ({pct(right + 0.08)})", got["wsj"] >= right + 0.08),
              (f"WSJ10 >= {pct(TARGET['wsj10'])}", got["wsj10"] >= TARGET["wsj10"])]
    return [f"- {what}: {pct(got['wsj'] if 'all' in what else got['wsj10'])}, "
            f"{'met' if ok else 'not met'}" for what, ok in checks]


def conventions(rec, baselines) -> list:
    n = rec["n_models"]
    head = "| trees | " + " | ".join(f"{gname}: {title}" for _, gname in GOLDS for _, title in CONVENTIONS) + " |"
    rows = [head, "|" + "---|" * (1 + len(GOLDS) * len(CONVENTIONS))]
    rows.append(f"| **bundle: average of its {len(rec['members'])} members** | " + " | ".join(
        f"**{pct(rec['scores'][g]['average'][c])}**" for g, _ in GOLDS for c, _ in CONVENTIONS) + " |")
    rows.append(f"| each seed's 4-member average ({n} seeds) | " + " | ".join(
        spread([rec["scores"][g]["seeds"][str(m)][c] for m in range(n)]) for g, _ in GOLDS for c, _ in CONVENTIONS) + " |")
    for layer, decoder in KINDS:
        rows.append(f"| single member: layer {layer}, {decoder} ({n} seeds) | " + " | ".join(
            spread([_member(rec, g, m, layer, decoder, c) for m in range(n)]) for g, _ in GOLDS for c, _ in CONVENTIONS)
            + " |")
    rows.append("| right-branching | " + " | ".join(
        pct(baselines["right"][g][0][c]) for g, _ in GOLDS for c, _ in CONVENTIONS) + " |")
    return rows


def labels(rec, baselines) -> list:
    rows = ["| trees | " + " | ".join(LABELS) + " |", "|" + "---|" * (1 + len(LABELS))]
    for g, gname in GOLDS:
        rows.append(f"| *{gname}* |" + " |" * len(LABELS))
        rows.append("| bundle (average) | " + " | ".join(pct(rec["scores"][g]["average"]["labels"][lb])
                                                      for lb in LABELS) + " |")
        rows.append("| best-ppl seed, layer 2, onlstm | " + " | ".join(
            pct(rec["scores"][g]["members"]["0/2/onlstm"]["labels"][lb]) for lb in LABELS) + " |")
        for kind in ("right", "left"):
            rows.append(f"| {kind}-branching | " + " | ".join(pct(baselines[kind][g][0]["labels"][lb])
                                                            for lb in LABELS) + " |")
    return rows


def perplexities(rec) -> list:
    rows = ["| model | seed | valid ppl | test ppl |", "|---|---|---|---|"]
    for i, seed in enumerate(rec["meta"].get("seeds", [])):
        rows.append(f"| {i + 1} | {seed['seed']} | {seed['valid_ppl']:.1f} | {seed['test_ppl']:.1f} |")
    return rows


def readme_block(rec, baselines, command) -> str:
    return "\n".join([
        "Held out: none of these gold sentences is in the training, validation or test text of the",
        "language models (the `news` corpus). Sentence F1 (ON-LSTM convention, %) on NLTK's treebank sample:",
        "", *headline(rec, baselines), "", "Targets (issue 20; the bundle, layers and decoders fixed in advance):",
        *targets(rec, baselines), "",
        f"Regenerate with `make results` (`{command}`); the three conventions, every member, label recall",
        "and perplexities are in [research/results.md](research/results.md).",
    ])


def conventions_block(rec, baselines, command) -> str:
    """The README's three-seed block: the bundle of every seed against single members and
    per-seed averages, in the three conventions."""
    return "\n".join([
        f"{rec['label']}: the {rec['n_models']} seeds' {len(rec['members'])} members by agreement "
        f"({', '.join(member_name(rec, m) for m in rec['members'])}). Held-out F1 (%) on NLTK's sample; seed rows: "
        "mean ± std (max) over the seeds.", "", *conventions(rec, baselines), "",
        f"Regenerate with `{command}` (the whole report: [{rec['out']}]({rec['out']})).",
    ])


BLOCKS = {"results": readme_block, "seeds": conventions_block}


def markdown(rec, baselines, command) -> str:
    meta = rec["meta"]
    return "\n".join([
        "# onparse results", "",
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d')}.",
        "Gold trees: NLTK's treebank sample (WSJ files 0001-0199), preprocessed as in the definitions document",
        "(word tags only, lowercased, digits to N); WSJ10 = at most 10 words. The sample is held out: no sentence",
        "of it (nor any longer sentence containing one of 5+ words) is in the `news` corpus the models trained on.",
        f"Model: `{rec['path']}`, {meta.get('recipe', '')}.", f"Selection: {meta.get('selection', '')}.",
        f"Weights: {meta.get('weights_check', '')}.",
        "", "## Headline", "", *headline(rec, baselines), "", *targets(rec, baselines), "",
        "## Single members against averaged trees, three conventions", "",
        "Sentence F1 in the ON-LSTM convention (the paper's), in the Kim et al. (2019) convention, and corpus F1",
        "(pooled spans). Seed rows: mean ± std (max) over the seeds.", "", *conventions(rec, baselines), "",
        "## Recall per gold label", "", *labels(rec, baselines), "",
        "## Perplexity (news' own held-out splits)", "", *perplexities(rec), "",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--default", default=os.path.join(ROOT, "src", "onparse", "models", "default.pt"))
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--readme", default=os.path.join(HERE, "RESULTS.md"),
                    help="the README whose results block is rewritten ('' for none)")
    ap.add_argument("--label", default="onparse bundled model", help="the bundle's name in the tables")
    ap.add_argument("--block", choices=sorted(BLOCKS), default="results",
                    help="which README block to rewrite: the headline (results) or the three conventions (seeds)")
    args = ap.parse_args(argv)
    from onparse import load_gold

    golds = {name: load_gold(name) for name, _ in GOLDS}
    # As typed (``make results`` passes only --default), so the tables say how to remake them.
    command = "python research/results.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"scoring {args.default}", file=sys.stderr)
    rec = score_bundle(args.default, golds)
    # The report's path as the README links it (relative, so no machine's folder is recorded).
    rec["label"], rec["out"] = args.label, os.path.relpath(args.out, ROOT)
    baselines = score_baselines(golds)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump({"bundle": rec, "baselines": baselines}, handle, indent=1, default=str)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(markdown(rec, baselines, command))
    if args.readme:
        replace_block(args.readme, BLOCKS[args.block](rec, baselines, command), args.block)
    print(f"wrote {args.out}, {args.json}" + (f" and the {args.block} block of {args.readme}" if args.readme else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

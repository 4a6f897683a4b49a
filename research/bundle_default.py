"""Export the bundled model (the last step of ``research/train_default.sh``), by the rule that
PROTOCOL.md fixed before the runs finished -- no gold tree is looked at before the file is written:

1. each seed's checkpoint is its run's ``best.pt`` (lowest validation perplexity on news);
2. the seeds are ordered by that perplexity, lowest first;
3. members: every seed x layers 2 and 3 x decoders ``onlstm`` and ``split``, in that order
   (the first member breaks ties of the average) by rule v1 (``--rule v1``); by rule v2 (the
   default, PROTOCOL.md rule 11), the half of them that agrees most with the other seeds'
   members on news' validation sentences, most central first;
4. weights: int8 when the bundle's trees on news' validation sentences are at least 99%
   identical to the float32 bundle's; otherwise float16, with as many seeds (in perplexity
   order) as fit in 40 MB.

Then the file's metadata is completed with the recipe, the rule, the test perplexities and the
parsing scores on NLTK's treebank sample (held out of every split of ``news``), measured on the
written file itself, so that ``onparse info`` shows what the shipped weights do.

    python research/bundle_default.py --epochs 5 runs/news-s4/best.pt runs/news-s5/best.pt

``--report PATH`` also writes the float32 bundle of every seed with the rule's members, before
step 4 leaves seeds out by size, for ``research/results.py`` to score (PROTOCOL.md rule 22).
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.path.join(ROOT, "src", "onparse", "models", "default.pt")
#: The training log of the first seed, kept for `make figures` (training curves).
LOG_COPY = os.path.join(ROOT, "examples", "default-model-metrics.jsonl")
GOLDS = ("wsj10", "wsj")
KEYS = ("sentence_f1_onlstm", "sentence_f1_kim", "corpus_f1", "corpus_f1_evalb")
LAYERS, DECODERS = (2, 3), ("onlstm", "split")
#: int8 is shipped when at least this share of the validation trees is unchanged.
SAME_TREES = 0.99
MAX_BYTES = 40 * 1000 * 1000
RULE = ("every seed x layers 2 and 3 x decoders onlstm and split, seeds ordered by validation perplexity "
        "(lowest first); fixed in PROTOCOL.md before the runs finished; no gold trees used")
#: PROTOCOL.md rule 11 (v2): agreement on the first 2,000 validation sentences of >= 3 words.
AGREEMENT_SENTENCES = 2000
RULE_V2 = ("of every seed x layers 2 and 3 x decoders onlstm and split, the half with the highest agreement "
           "with the other seeds' members on the first 2,000 news validation sentences of >= 3 words, "
           "most central first (PROTOCOL.md rule 11, v2, fixed before the runs started); no gold trees used")


def members_for(n_seeds: int):
    from onparse import Member

    return [Member(m, layer, decoder) for m in range(n_seeds) for layer in LAYERS for decoder in DECODERS]


def members_by_agreement(path: str, sentences):
    """PROTOCOL.md rule 11: the candidates of the float32 bundle ``path`` scored by agreement
    (:meth:`onparse.api.Parser.agreement`), the kept half, most central first; and every score."""
    from onparse.scores.agreement import MIN_WORDS, select
    from onparse.text.tokens import is_word

    parser = load_parser(path)
    usable = [s for s in sentences if sum(map(is_word, s)) >= MIN_WORDS][:AGREEMENT_SENTENCES]
    scored = parser.agreement(usable)
    return [scored[i][0] for i in select([s for _, s in scored])], scored, len(usable)


def load_parser(path: str):
    from onparse import load

    return load(path, "cpu")


def validation_trees(path: str, sentences):
    return load_parser(path).trees(sentences)


def score_rows(path: str) -> list:
    """One record per gold set: the average's scores, then each member's (fractions)."""
    from onparse import load

    parser = load(path, "cpu")
    rows = []
    for gold in GOLDS:
        scores = parser.score(gold)
        named = [(f"average of {len(scores.members)} members", scores.average)]
        named += [(m.label(scores.n_models), r) for m, r in scores.members]
        for trees, result in named:
            d = result.to_dict()
            rows.append({"gold": gold, "trees": trees, "sentences": result.n_sentences,
                         **{key: d[key]["f1"] for key in KEYS}})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", help="best.pt of each seed")
    ap.add_argument("--epochs", type=int, required=True, help="the recipe's --epochs (recorded)")
    ap.add_argument("--out", default=TARGET)
    ap.add_argument("--note", default=None, help="how the runs ended, when not as the recipe says (recorded)")
    ap.add_argument("--report", default=None, metavar="PATH",
                    help="also write the float32 bundle of every seed with the rule's members, before any seed "
                         "is left out by size (PROTOCOL.md rule 22: the 3-seed report; not shipped)")
    ap.add_argument("--rule", choices=("v1", "v2"), default="v2",
                    help="PROTOCOL.md's member rule: v1 (every candidate) or v2 (agreement; default)")
    args = ap.parse_args(argv)
    from onparse import save_bundle
    from onparse.files.checkpoint import load_checkpoint
    from onparse.text.corpora import load_corpus, make_spec
    import onparse

    blobs = {path: load_checkpoint(path) for path in args.checkpoints}
    valid = {path: blob["metadata"].get("valid_ppl") for path, blob in blobs.items()}
    if any(v is None for v in valid.values()):
        sys.exit("error: a checkpoint records no validation perplexity")
    order = sorted(blobs, key=valid.get)
    seeds = {path: blobs[path]["metadata"]["train_config"]["seed"] for path in order}
    print("seeds by validation perplexity: " + ", ".join(f"{seeds[p]} ({valid[p]:.2f})" for p in order),
          file=sys.stderr)
    tests = {}
    for path in order:
        # The runs given here are the script's to trust: their recorded corpus is measured by name.
        source = blobs[path]["metadata"]["corpus"]["source"]
        result = onparse.load(path, "auto").perplexity(source, "test")[0]
        tests[path] = (result.perplexity, result.corpus)
    corpus = load_corpus(make_spec(blobs[order[0]]["metadata"]["corpus"]["source"]))
    sentences = corpus.valid

    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "float32.pt")
        members, rule, agreement = members_for(len(order)), RULE, None
        save_bundle(full, [blobs[p] for p in order], members, weights="float32")
        if args.rule == "v2":
            print("scoring the candidates by agreement on news validation ...", file=sys.stderr)
            members, scored, n_used = members_by_agreement(full, sentences)
            rule = RULE_V2
            agreement = {"sentences": n_used, "scores": [{"seed": seeds[order[m.model]], "layer": m.layer,
                                                          "decoder": m.decoder, "agreement": a} for m, a in scored]}
            for m, a in scored:
                print(f"  seed {seeds[order[m.model]]} layer {m.layer} {m.decoder}: {a:.4f}"
                      + (" kept" if m in members else ""), file=sys.stderr)
            save_bundle(full, [blobs[p] for p in order], members, weights="float32")
        small = os.path.join(tmp, "int8.pt")
        save_bundle(small, [blobs[p] for p in order], members, weights="int8")
        print(f"comparing int8 and float32 trees on {len(sentences):,} validation sentences ...", file=sys.stderr)
        same = sum(a == b for a, b in zip(validation_trees(full, sentences), validation_trees(small, sentences)))
        share = same / len(sentences)
        print(f"  {100 * share:.2f}% of the trees identical", file=sys.stderr)
        if share >= SAME_TREES:
            weights, kept = "int8", order
        else:
            weights = "float16"
            per_seed = os.path.getsize(full) / len(order) / 2
            kept = order[:max(1, int(MAX_BYTES // per_seed))]
        # Members of seeds left out (by size) go with them; the others keep their order.
        every_member, members = members, [m for m in members if m.model < len(kept)]
        check = f"int8 trees equal to float32 ones on {100 * share:.2f}% of news' validation sentences"
        recipe = (f"onparse train --preset paper --embedding-size 300 --hidden-size 600 --corpus news --epochs "
                  f"{args.epochs} --seed S, S = {', '.join(str(seeds[p]) for p in order)} (research/train_default.sh)")

        def metadata(paths) -> dict:
            held = "" if len(paths) == len(order) else (
                f"; this file holds seeds {', '.join(str(seeds[p]) for p in paths)} (seed "
                f"{', '.join(str(seeds[p]) for p in order if p not in paths)} left out by size, with its members)")
            return {"recipe": recipe + held,
                    "selection": "each seed's epoch of lowest validation perplexity on news; members: " + rule,
                    "members_rule": rule, "weights_check": check,
                    **({"agreement": agreement} if agreement else {}),
                    "seeds": [{"seed": seeds[p], "epoch": blobs[p]["metadata"].get("epoch"), "valid_ppl": valid[p],
                               "test_ppl": tests[p][0], "test_set": tests[p][1]} for p in paths],
                    **({"note": args.note} if args.note else {}),
                    "scores_gold": "NLTK's treebank sample, held out of news (wsj10: 555 sentences, wsj: 3,914)"}

        if args.report:
            # Every seed, float32, with the members the rule chose among all of them.
            save_bundle(args.report, [blobs[p] for p in order], every_member, weights="float32",
                        metadata=metadata(order))
            print(f"wrote {args.report} (float32, {len(order)} seeds, {len(every_member)} members)", file=sys.stderr)
        meta = metadata(kept)
        draft = os.path.join(tmp, "default.pt")
        save_bundle(draft, [blobs[p] for p in kept], members, weights=weights, metadata=meta)
        print("scoring the bundle on the treebank sample ...", file=sys.stderr)
        meta["scores"] = score_rows(draft)
        save_bundle(args.out, [blobs[p] for p in kept], members, weights=weights, metadata=meta)
    log = os.path.join(os.path.dirname(order[0]), "metrics.jsonl")
    if args.out == TARGET and os.path.exists(log):
        shutil.copyfile(log, LOG_COPY)
    head = {r["gold"]: r["sentence_f1_onlstm"] for r in meta["scores"] if r["trees"].startswith("average")}
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB, {weights}, {len(kept)} seeds): "
          f"WSJ10 {100 * head['wsj10']:.1f}, all lengths {100 * head['wsj']:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every candidate's trees of one `onparse fit` run folder, on the held-out sentences fit chooses
by and on the language's dev part, kept for trying gold-free choice rules on dev (rule v12's
evidence; the test part is never read here).

    python research/fit_trees.py --language english runs/fit-english.fit

Writes RUN/trees-v12.pkl: {"candidates": [(run, epoch, layer, decoder), ...] in choice.json's
order, "held_out": per candidate its trees, "dev": per candidate its trees, "dev_gold": the dev
part's name}.  Cost: every kept epoch read over both sets of sentences (minutes a language).
"""
import argparse
import json
import os
import pickle
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from score_fit import GOLD, candidate_key, candidate_trees  # noqa: E402

OUT = "trees-v12.pkl"


def held_out(run_dir):
    """The held-out sentences the fit chose by, checked against the digest it recorded."""
    from onparse.fitting.pipeline import held_out_digest, held_out_sentences
    from onparse.text.corpora import load_corpus, make_spec

    with open(os.path.join(run_dir, "fit.json"), encoding="utf-8") as handle:
        state = json.load(handle)
    held = held_out_sentences(load_corpus(make_spec(state["plan"]["corpus"])), state["settings"]["limit"])
    assert held_out_digest(held) == state["plan"]["held_out_sha256"], "the fit's text changed"
    return held


def main():
    from onparse import load_gold

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--language", choices=sorted(GOLD), required=True)
    args = ap.parse_args()
    with open(os.path.join(args.run_dir, "choice.json"), encoding="utf-8") as handle:
        choice = json.load(handle)
    started = time.time()
    dev_name = GOLD[args.language][0]
    dev_tokens = [list(s.words) for s in load_gold(dev_name)]
    out = {"candidates": [candidate_key(c) for c in choice["scores"]],
           "held_out": candidate_trees(args.run_dir, choice, held_out(args.run_dir)),
           "dev": candidate_trees(args.run_dir, choice, dev_tokens), "dev_gold": dev_name}
    with open(os.path.join(args.run_dir, OUT), "wb") as handle:
        pickle.dump(out, handle)
    print(f"{args.language}: {len(out['candidates'])} candidates in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

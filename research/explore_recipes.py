"""Issue 39 after rule v22 (dev only, no rule): could a gold-free score choose the grammars' recipe?

    python research/explore_recipes.py runs/fit-alpino-v22.fit runs/fit-alpino-10k.fit

Each FIT is an `onparse fit` folder of the same text whose language models are the same runs
(linked), so the language models are a fixed reference and only the grammars' recipe differs.
Per fit, from its held-out sentences only (fit's own, never gold):

- ``kept``: the grammars fit kept (not a baseline's trees) out of those it trained;
- ``grammars_vs_lms``: the mean agreement (shared non-trivial spans, `tree_agreement`) between
  the average tree of its kept grammars and that of its language-model members: whether the
  recipe's grammars find what an independent family finds;
- ``members``: the mean of fit's own agreement scores of its members;
- ``lean_right``: how often the members' average agrees with right-branching trees.

Then, for reading beside them (dev gold): the bundle's dev F1 as ``research/score_fit.py
--dev-only`` recorded it (``--dev-records``).  One JSON line per fit on stdout.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def average_trees(run_dir, choice, members, held):
    """The trees of the average of ``members`` (choice.json's member dicts) on ``held``, with
    fit's tie rule and no voter."""
    from onparse import Member, load
    from onparse.fitting.pipeline import _epoch_path

    runs = list(dict.fromkeys(m["run"] for m in members))
    paths = [_epoch_path(os.path.join(run_dir, run), choice["epochs"][run]) for run in runs]
    chosen = [Member(runs.index(m["run"]), m["layer"], m["decoder"]) for m in members]
    return load(paths, "cpu").with_members(chosen, [], choice["ties"]).trees(held)


def mean_agreement(a, b):
    from onparse.scores.agreement import tree_agreement

    values = [v for v in (tree_agreement(x, y) for x, y in zip(a, b)) if v is not None]
    return sum(values) / len(values)


def signals(run_dir):
    """The gold-free figures of the module docstring for one fit folder."""
    from onparse.fitting.pipeline import held_out_sentences
    from onparse.text.corpora import load_corpus, make_spec

    with open(os.path.join(run_dir, "fit.json"), encoding="utf-8") as handle:
        state = json.load(handle)
    with open(os.path.join(run_dir, "choice.json"), encoding="utf-8") as handle:
        choice = json.load(handle)
    held = held_out_sentences(load_corpus(make_spec(state["plan"]["corpus"])), state["settings"]["limit"])
    grammars = [m for m in choice["members"] if m["run"].startswith("grammar-")]
    lms = [m for m in choice["members"] if m["run"].startswith("lm-")]
    trained = [r for r in state["train"]["epochs"] if r.startswith("grammar-")]
    out = {"fit": run_dir, "settings": {k: state["settings"].get(k) for k in ("grammar_vocab", "grammar_curriculum")},
           "kept": f"{len(grammars)}/{len(trained)}",
           "members": round(sum(m["agreement"] for m in choice["member_scores"]) / len(choice["member_scores"]), 5),
           "lean_right": choice["lean"]["right"]}
    if grammars and lms:
        out["grammars_vs_lms"] = round(mean_agreement(average_trees(run_dir, choice, grammars, held),
                                                      average_trees(run_dir, choice, lms, held)), 5)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fits", nargs="+")
    parser.add_argument("--dev-records", default=os.path.join(HERE, "fit-v22-dev.jsonl"))
    args = parser.parse_args()
    dev = {}
    if os.path.exists(args.dev_records):
        with open(args.dev_records, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                dev[os.path.splitext(os.path.basename(record["bundle"]))[0]] = record["dev"]
    for run_dir in args.fits:
        out = signals(run_dir)
        name = os.path.splitext(os.path.basename(os.path.normpath(run_dir)))[0]
        if name in dev:
            out["dev"] = {"bundle": dev[name]["bundle"], "oracle": dev[name]["oracle"]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""Rule v9 of research/PROTOCOL.md (47-53): neural PCFGs beside the shipped language models,
chosen on the sample's dev half; the test half scored once.

    python research/choose_v9.py            # dev: every candidate of rule 50; writes
                                            # research/dev-trials-v9.tsv, research/dev-choice-v9.json
    python research/choose_v9.py --test     # the choice and the grammar-alone figure on the test
                                            # half, once, right and left beside; research/test-v9.json

Grammar members: every (run, epoch) of research/grammar-dev.jsonl (rule 49) whose file
runs/RUN/epoch-NNN.pt exists (rule 50 as amended on 2026-11-26), each read by its MBR tree.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials: shared with rules v5-v8)

RECORDS = os.path.join(HERE, "grammar-dev.jsonl")
SNAPSHOT = os.path.join(ROOT, "runs", "{run}", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v9.tsv")
CHOICE = os.path.join(HERE, "dev-choice-v9.json")
TEST = os.path.join(HERE, "test-v9.json")
#: Rule 50's voter and tie variants of (b) and (c), in the tie-breaking order of rule 51.
VARIANTS = ((), "first"), ((), "right"), (("right",), "first"), (("right",), "right")


def ranked_members(records, exists=lambda run, epoch: os.path.exists(SNAPSHOT.format(run=run, epoch=epoch))):
    """Rule 49 as amended: (run, epoch) of every scored grammar member whose epoch file exists,
    best all-lengths dev F1 first; ties to the earlier record."""
    rows = [(r["run"], r["epoch"], r["dev"]["grammar"]["all"]) for r in records if exists(r["run"], r["epoch"])]
    return [(run, epoch) for run, epoch, _ in sorted(rows, key=lambda r: -r[2])]


def best_of_runs(ranked, k):
    """The ``k`` best-ranked members of ``k`` different runs (None when fewer runs exist)."""
    out, seen = [], set()
    for run, epoch in ranked:
        if run not in seen:
            out.append((run, epoch))
            seen.add(run)
        if len(out) == k:
            return out
    return None


def short_name(run):
    """A member's name in candidate labels: the run less its ``grammar-`` prefix."""
    return run.removeprefix("grammar-")


def candidates(ranked):
    """Rule 50, in order: (a) the shipped bundle; (b) the K best grammar members of K runs, K = 1,
    2, 3, alone; (c) each (b) added to the shipped bundle's members; (b) and (c) each with the
    voter/tie variants.  A candidate: ``{"name", "bundle", "grammars", "voters", "ties"}``."""
    out = [{"name": "shipped bundle", "bundle": True, "grammars": [], "voters": None, "ties": None}]
    for with_bundle in (False, True):
        for k in (1, 2, 3):
            members = best_of_runs(ranked, k)
            if members is None:
                continue
            for voters, ties in VARIANTS:
                label = " + ".join(f"g {short_name(r)} e{e}" for r, e in members)
                label = ("shipped LMs + " if with_bundle else "") + label
                label += (" + right" if voters else "") + f", ties {ties}"
                out.append({"name": label, "bundle": with_bundle, "grammars": members, "voters": list(voters),
                            "ties": ties})
    return out


def average(member_rows, tokens, voters, ties):
    """The voted average of per-sentence member trees (rule 50's (b) and (c))."""
    from onparse import baseline_trees
    from onparse.trees.average import average_trees_batch

    voted = [list(row) + [baseline_trees([t], kind)[0] for kind in voters] for row, t in zip(member_rows, tokens)]
    return list(average_trees_batch(voted, ties))


class Trees:
    """Every candidate's trees of one gold set; member trees computed once."""

    def __init__(self, gold):
        from onparse import load

        self.tokens = [list(s.words) for s in gold]
        started = time.time()
        self.shipped = load()
        self.lm_rows = self.shipped.member_trees(self.tokens)
        self.grammars = {}
        print(f"{gold.name}: the shipped members' trees in {time.time() - started:.0f} s", file=sys.stderr)

    def grammar(self, run, epoch):
        from onparse import load

        if (run, epoch) not in self.grammars:
            started = time.time()
            self.grammars[(run, epoch)] = load(SNAPSHOT.format(run=run, epoch=epoch), "cpu").trees(self.tokens)
            print(f"{run} epoch {epoch}: trees in {time.time() - started:.0f} s", file=sys.stderr)
        return self.grammars[(run, epoch)]

    def of(self, candidate):
        if not candidate["grammars"]:
            return self.shipped.average(self.lm_rows, self.tokens)
        rows = [[] for _ in self.tokens]
        if candidate["bundle"]:
            rows = [list(r) for r in self.lm_rows]
        for run, epoch in candidate["grammars"]:
            for row, tree in zip(rows, self.grammar(run, epoch)):
                row.append(tree)
        return average(rows, self.tokens, candidate["voters"], candidate["ties"])


def read_records(path=RECORDS):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def dev():
    ranked = ranked_members(read_records())
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    trees = Trees(gold)
    rows = []
    for order, candidate in enumerate(candidates(ranked)):
        scores = v5.scores_of(trees.of(candidate), gold, short, short_index)
        rows.append({"order": order, **candidate, "grammars": json.dumps(candidate["grammars"]), "dev": scores})
        print(f"{order + 1:3d} {candidate['name']}: {100 * scores['all']['sentence_f1']:.2f}", file=sys.stderr)
    v5.write_trials(TRIALS, rows)
    best = choose(rows)
    with open(CHOICE, "w") as out:
        json.dump({"rule": "v9 (research/PROTOCOL.md, rules 47-53)", "chosen": best, "grammar_alone": ranked[0],
                   "shipped": rows[0]}, out, indent=1)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def choose(rows):
    """Rule 51: the highest all-lengths dev sentence F1; exact ties to fewer trees, then to the
    earlier candidate."""
    def size(row):
        grammars = json.loads(row["grammars"]) if isinstance(row["grammars"], str) else row["grammars"]
        return len(grammars) + (3 if row["bundle"] else 0) + len(row["voters"] or ())
    return min(rows, key=lambda r: (-r["dev"]["all"]["sentence_f1"], size(r), r["order"]))


def test():
    """Rule 53: the choice and the grammar-alone figure on the test half, once."""
    v5.scored_once(TEST, "rule 53")
    with open(CHOICE) as handle:
        recorded = json.load(handle)
    chosen = recorded["chosen"]
    chosen["grammars"] = json.loads(chosen["grammars"])
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    trees = Trees(gold)
    run, epoch = recorded["grammar_alone"]
    alone = {"name": f"g {short_name(run)} e{epoch}", "bundle": False, "grammars": [[run, epoch]], "voters": [],
             "ties": "first"}
    out = {"rule": "v9", "candidate": chosen["name"], "sentences": [len(gold), len(short)],
           "chosen": v5.scores_of(trees.of(chosen), gold, short, short_index),
           "grammar_alone": v5.scores_of(trees.of(alone), gold, short, short_index)}
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(TEST, "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    args = ap.parse_args()
    test() if args.test else dev()

"""Rule v8 of research/PROTOCOL.md: students of `onparse distill` against their teacher (the
shipped bundle), chosen on the sample's dev half; the test half scored once.

    python research/choose_v8.py            # dev: 25 candidates; writes research/dev-trials-v8.tsv
                                            #      and research/dev-choice-v8.json
    python research/choose_v8.py --test     # the chosen candidate and the teacher on the test half,
                                            # once, right-branching beside; research/test-v8.json

Students: runs/distill/run-sS/epoch-NNN.pt (rule 43).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials: shared with rules v5-v7)

SEEDS = (1, 2)
EPOCHS = range(1, 7)
SNAPSHOT = os.path.join(ROOT, "runs", "distill", "run-s{seed}", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v8.tsv")
CHOICE = os.path.join(HERE, "dev-choice-v8.json")
TEST = os.path.join(HERE, "test-v8.json")
KINDS = ("teacher", "student", "teacher + student")


def candidates():
    """Rule 44, in the tie-breaking order of rule 45: (kind, seed, epoch)."""
    return [("teacher", None, None)] + [(kind, seed, epoch) for kind in KINDS[1:] for seed in SEEDS for epoch in EPOCHS]


def name_of(kind, seed, epoch) -> str:
    return kind if seed is None else f"{kind} (s{seed} e{epoch})"


class Trees:
    """Every candidate's trees of one gold set; the teacher's member trees computed once."""

    def __init__(self, gold):
        from onparse import load

        self.gold = gold
        self.tokens = [list(s.words) for s in gold]
        self.teacher = load()
        started = time.time()
        self.members = self.teacher.member_trees(self.tokens)
        self.students = {}
        print(f"{gold.name}: the teacher's member trees in {time.time() - started:.0f} s", file=sys.stderr)

    def of(self, kind, seed, epoch):
        from onparse import load

        if kind == "teacher":
            return self.teacher.average(self.members, self.tokens)
        path = SNAPSHOT.format(seed=seed, epoch=epoch)
        if path not in self.students:
            self.students[path] = load(path).trees(self.tokens)
        student = self.students[path]
        if kind == "student":
            return student
        both = load([None, path])                      # rule 44 (c): as onparse.load([default, student]) gives
        assert both.voters == self.teacher.voters and both.ties == self.teacher.ties
        return both.average([m + [s] for m, s in zip(self.members, student)], self.tokens)


def dev():
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    trees = Trees(gold)
    rows = []
    for order, (kind, seed, epoch) in enumerate(candidates()):
        scores = v5.scores_of(trees.of(kind, seed, epoch), gold, short, short_index)
        rows.append({"order": order, "name": name_of(kind, seed, epoch), "kind": kind, "seed": seed, "epoch": epoch,
                     "dev": scores})
        print(f"{order + 1:3d}/{len(candidates())} {rows[-1]['name']}: {100 * scores['all']['sentence_f1']:.2f}",
              file=sys.stderr)
    v5.write_trials(TRIALS, rows)
    # Rule 45: the highest dev all-lengths sentence F1; max() keeps the first of exact ties, and the
    # rows are in the tie-breaking order.
    best = max(rows, key=lambda r: r["dev"]["all"]["sentence_f1"])
    with open(CHOICE, "w") as out:
        json.dump({"rule": "v8 (research/PROTOCOL.md, rules 41-46)", "chosen": best, "teacher": rows[0]}, out, indent=1)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; teacher "
          f"{100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def test():
    """Rule 46: the chosen candidate and the teacher on the test half, once."""
    v5.scored_once(TEST, "rule 46")
    with open(CHOICE) as handle:
        chosen = json.load(handle)["chosen"]
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    trees = Trees(gold)
    # The candidate's name under its own key: "chosen" holds its scores (test-v8.json, written
    # before this was fixed, has the scores only; dev-choice-v8.json names the candidate).
    out = {"rule": "v8", "candidate": chosen["name"], "sentences": [len(gold), len(short)]}
    for label, (kind, seed, epoch) in (("chosen", (chosen["kind"], chosen["seed"], chosen["epoch"])),
                                       ("teacher", ("teacher", None, None))):
        out[label] = v5.scores_of(trees.of(kind, seed, epoch), gold, short, short_index)
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(TEST, "w") as handle:
        json.dump(out, handle, indent=1)
    print(" | ".join(f"{k} {100 * out[k]['all']['sentence_f1']:.1f} / {100 * out[k]['10']['sentence_f1']:.1f}"
                     for k in ("chosen", "teacher", "right", "left")), file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    args = ap.parse_args()
    test() if args.test else dev()

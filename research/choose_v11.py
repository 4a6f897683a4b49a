"""Rule v11 of research/PROTOCOL.md (59-65): students of rule v9's average (the shipped language
models, three grammars, a right voter, ties right), chosen on the sample's dev half; the test half
scored once.

    python research/choose_v11.py            # dev: 24 candidates and the teacher; writes
                                             # research/dev-trials-v11.tsv, research/dev-choice-v11.json
    python research/choose_v11.py --test     # the choice, the teacher and the shipped bundle on the
                                             # test half, once, right- and left-branching beside;
                                             # research/test-v11.json
    python research/choose_v11.py --ship     # rule 65: the dev choice becomes the bundled model

Students: runs/distill/v11-sS.run/epoch-NNN.pt (rule 61).  The teacher's member trees of a gold
set are computed once and kept in runs/distill/ (the grammars' take minutes).
"""
import argparse
import json
import os
import pickle
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials: shared with rules v5-v8)

SEEDS = (1, 2)
EPOCHS = range(1, 7)
GRAMMARS = os.path.join(HERE, "models", "v9-grammars-int8.pt")
SNAPSHOT = os.path.join(ROOT, "runs", "distill", "v11-s{seed}.run", "epoch-{epoch:03d}.pt")
CACHE = os.path.join(ROOT, "runs", "distill", "v11-teacher-members-{gold}.pkl")
#: The chosen student, kept in the repository (float32, as scored on dev and test).
KEPT = os.path.join(HERE, "models", "v11-student-s{seed}-e{epoch}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v11.tsv")
CHOICE = os.path.join(HERE, "dev-choice-v11.json")
TEST = os.path.join(HERE, "test-v11.json")
DEFAULT = os.path.join(ROOT, "src", "onparse", "models", "default.pt")
#: The shipped bundle's members are the teacher's first three (its language models).
SHIPPED_MEMBERS = 3
KINDS = ("student", "shipped + student")


def candidates():
    """Rule 62 (b) and (c), in the tie-breaking order of rule 63: (kind, seed, epoch)."""
    return [(kind, seed, epoch) for kind in KINDS for seed in SEEDS for epoch in EPOCHS]


def name_of(kind, seed, epoch) -> str:
    return f"{kind} (s{seed} e{epoch})"


class Trees:
    """Every candidate's trees of one gold set; the teacher's member trees computed once."""

    def __init__(self, gold, teacher=True):
        from onparse import load

        self.gold = gold
        self.tokens = [list(s.words) for s in gold]
        self.teacher = load([None, GRAMMARS])
        self.shipped = load()
        assert [m.reading for m in self.teacher.members[:SHIPPED_MEMBERS]] == [m.reading for m in self.shipped.members]
        cache = CACHE.format(gold=gold.name)
        if not teacher and not os.path.exists(cache):
            # The candidates need the language models' trees only; the teacher's grammars are
            # for its own figure, which dev already has (RESULTS.md, rule v9's int8 check).
            self.members = self.shipped.member_trees(self.tokens)
            self.teacher = None
        elif os.path.exists(cache):
            with open(cache, "rb") as handle:
                self.members = pickle.load(handle)
            assert len(self.members) == len(self.tokens)
        else:
            started = time.time()
            self.members = self.teacher.member_trees(self.tokens)
            with open(cache, "wb") as handle:
                pickle.dump(self.members, handle)
            print(f"{gold.name}: the teacher's member trees in {time.time() - started:.0f} s", file=sys.stderr)
        self.students = {}

    def teacher_trees(self):
        return None if self.teacher is None else self.teacher.average(self.members, self.tokens)

    def shipped_trees(self):
        return self.shipped.average([m[:SHIPPED_MEMBERS] for m in self.members], self.tokens)

    def of(self, kind, seed, epoch):
        from onparse import load

        path = SNAPSHOT.format(seed=seed, epoch=epoch)
        if path not in self.students:
            self.students[path] = load(path).trees(self.tokens)
        student = self.students[path]
        if kind == "student":
            return student
        both = load([None, path])                      # rule 62 (c): as onparse.load([default, student]) gives
        assert both.voters == self.shipped.voters and both.ties == self.shipped.ties
        return both.average([m[:SHIPPED_MEMBERS] + [s] for m, s in zip(self.members, student)], self.tokens)


def dev():
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    order = candidates()
    print("candidates (rule 62): " + "; ".join(name_of(*c) for c in order), file=sys.stderr)
    trees = Trees(gold, teacher=False)
    rows = []
    for at, (kind, seed, epoch) in enumerate(order):
        scores = v5.scores_of(trees.of(kind, seed, epoch), gold, short, short_index)
        rows.append({"order": at, "name": name_of(kind, seed, epoch), "kind": kind, "seed": seed, "epoch": epoch,
                     "dev": scores})
        print(f"{at + 1:3d}/{len(order)} {rows[-1]['name']}: {100 * scores['all']['sentence_f1']:.2f}", file=sys.stderr)
    teacher = trees.teacher_trees()
    reference = {"teacher": None if teacher is None else v5.scores_of(teacher, gold, short, short_index),
                 "shipped": v5.scores_of(trees.shipped_trees(), gold, short, short_index)}
    v5.write_trials(TRIALS, rows)
    # Rule 63: max() keeps the first of exact ties, and the rows are in the tie-breaking order.
    best = max(rows, key=lambda r: r["dev"]["all"]["sentence_f1"])
    ships = best["dev"]["all"]["sentence_f1"] > reference["shipped"]["all"]["sentence_f1"]   # rule 65
    with open(CHOICE, "w") as out:
        json.dump({"rule": "v11 (research/PROTOCOL.md, rules 59-65)", "chosen": best, "ships": ships,
                   **reference}, out, indent=1)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; teacher "
          + (f"{100 * reference['teacher']['all']['sentence_f1']:.2f}" if reference["teacher"] else "57.75 (recorded)")
          + "; shipped "
          f"{100 * reference['shipped']['all']['sentence_f1']:.2f}; ships: {ships})", file=sys.stderr)


def test():
    """Rule 64: the choice, the teacher and the shipped bundle on the test half, once."""
    v5.scored_once(TEST, "rule 64")
    with open(CHOICE) as handle:
        chosen = json.load(handle)["chosen"]
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    trees = Trees(gold)
    out = {"rule": "v11", "candidate": chosen["name"], "sentences": [len(gold), len(short)],
           "chosen": v5.scores_of(trees.of(chosen["kind"], chosen["seed"], chosen["epoch"]), gold, short, short_index),
           "teacher": v5.scores_of(trees.teacher_trees(), gold, short, short_index),
           "shipped": v5.scores_of(trees.shipped_trees(), gold, short, short_index)}
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(TEST, "w") as handle:
        json.dump(out, handle, indent=1)
    print(" | ".join(f"{k} {100 * out[k]['all']['sentence_f1']:.2f} / {100 * out[k]['10']['sentence_f1']:.2f}"
                     for k in ("chosen", "teacher", "shipped", "right", "left")), file=sys.stderr)


def ship(target=DEFAULT):
    """Rule 65: when the dev choice ships, the bundled model becomes it: the shipped bundle's
    language models (kept for `distances` and `show`) and the student, with the candidate's
    members, voter and tie rule, float16; its test figures (test-v11.json) recorded in it."""
    from onparse import load
    from onparse.files.bundle import load_model_file

    decided, tested = v5.to_ship(CHOICE, TEST, "the dev choice does not beat the shipped bundle on dev: nothing to ship (rule 65)")
    chosen = decided["chosen"]
    snapshot = v5.student_file(SNAPSHOT, KEPT, chosen["seed"], chosen["epoch"])
    both = load([target, snapshot])
    lm_members = both.members[:SHIPPED_MEMBERS]
    if chosen["kind"] == "student":            # rule 62 (b): the student alone, no voter
        parser = both.with_members([m for m in both.members if m.model == SHIPPED_MEMBERS], (), "first")
    else:
        parser = both
    old = load_model_file(target)["metadata"]
    meta = {**old,
            "selection": old["selection"] + "; the student: rule v11's dev choice among the students of rule v9's "
                                            "average (research/PROTOCOL.md 59-65)",
            "members_rule": f"of 24 candidates (each student snapshot alone, or beside the language models with a "
                            f"right voter), the one of highest sentence F1 on wsj-sample-dev: {chosen['name']} "
                            "(research/PROTOCOL.md, rule v11)",
            "dev": {**old["dev"], "chosen": chosen["name"], "sentence_f1": chosen["dev"],
                    "trials": "research/dev-trials-v11.tsv",
                    "chosen_members": [m.to_dict() for m in parser.members],
                    "voters": list(parser.voters), "ties": parser.ties,
                    "lm_only_members": [m.to_dict() for m in lm_members]},
            "student": {"teacher": "rule v9's average (the language models below, three grammars, a right voter, "
                                   "ties right)", "seed": chosen["seed"], "epoch": chosen["epoch"]}}
    meta.pop("scores", None)
    # Every model is kept, the language models too when no member reads them (distances, show).
    v5.ship_bundle(target, both.models, parser.members, parser.voters, parser.ties, meta, tested["chosen"],
                   chosen["name"])


def readme_block(report) -> str:
    """The README's results table (test half, three conventions) from research/test-v11.json."""
    return v5.results_table([
        (f"**onparse bundled model**: a student of rule v9's average ({report['candidate']})", report["chosen"], True),
        ("its teacher: the 3 language models + 3 grammars + right, ties right", report["teacher"], False),
        ("the 3 language models + right, ties right (the bundled model before)", report["shipped"], False),
        ("right-branching", report["right"], False)], report["sentences"])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    ap.add_argument("--ship", action="store_true", help="make the dev choice the bundled model (rule 65)")
    ap.add_argument("--readme", action="store_true", help="write README.md's results table from test-v11.json")
    args = ap.parse_args()
    if args.readme:
        with open(TEST, encoding="utf-8") as handle:
            v5.replace_block(v5.TABLES, readme_block(json.load(handle)))
    else:
        ship() if args.ship else test() if args.test else dev()

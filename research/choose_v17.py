"""Rule v17 of research/PROTOCOL.md (86-92): students of rule v9's average on the whole `news`
training text, chosen on the sample's dev half; the test half scored once.

    python research/choose_v17.py            # dev: every candidate of rule 89; writes
                                             # research/dev-trials-v17.tsv, research/dev-choice-v17.json
    python research/choose_v17.py --test     # the choice on the test half, once, right- and
                                             # left-branching beside; research/test-v17.json
    python research/choose_v17.py --ship     # rule 92: the dev choice becomes the bundled model
    python research/choose_v17.py --readme   # README.md's results table from test-v17.json

Students: runs/distill/v17-sS.run/epoch-NNN.pt (rule 88); the candidates are the epochs both
seeds completed.  The incumbent (a) is the shipped bundle, rule v11's student alone.
"""
import argparse
import functools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials: shared with rules v5-v15)
import choose_v11 as v11  # noqa: E402  (the incumbent's student, its test figures)
import choose_v9 as v9  # noqa: E402  (the voted average of member trees)

SEEDS = (1, 2)
RUN = os.path.join(ROOT, "runs", "distill", "v17-s{seed}.run")
SNAPSHOT = os.path.join(RUN, "epoch-{epoch:03d}.pt")
#: Rule 60's teacher without its grammars: the bundle shipped before rule v11 (three language
#: models, a right voter, ties right), `git show 5af825b~1:src/onparse/models/default.pt`.
LMS = os.path.join(ROOT, "runs", "distill", "v6-default.pt")
#: Rule v11's student, the shipped bundle's one member (float32, as rule v11 scored it).
V11_STUDENT = v11.KEPT.format(seed=2, epoch=6)
KEPT = os.path.join(HERE, "models", "v17-student-s{seed}-e{epoch}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v17.tsv")
CHOICE = os.path.join(HERE, "dev-choice-v17.json")
TEST = os.path.join(HERE, "test-v17.json")
INCUMBENT = "shipped (rule v11's student)"
KINDS = ("student", "language models + student", "student + v11 student + right")


def completed_epochs(run=RUN, seeds=SEEDS) -> int:
    """Rule 88: the number of epochs every seed completed (its snapshots 1..E all exist)."""
    def done(seed):
        e = 0
        while os.path.exists(os.path.join(run.format(seed=seed), f"epoch-{e + 1:03d}.pt")):
            e += 1
        return e
    return min(done(s) for s in seeds)


def candidates(epochs):
    """Rule 89's candidates in rule 90's tie-breaking order: (kind, seed, epoch)."""
    return [(INCUMBENT, None, None)] + [(kind, seed, epoch) for kind in KINDS for seed in SEEDS
                                        for epoch in range(1, epochs + 1)]


def name_of(kind, seed, epoch) -> str:
    return kind if seed is None else f"{kind} (s{seed} e{epoch})"


class Trees:
    """Every candidate's trees of one gold set; the language models' and rule v11's student's
    trees computed once, each snapshot's once."""

    def __init__(self, gold):
        from onparse import load

        self.tokens = [list(s.words) for s in gold]
        self.lms = load(LMS)
        assert len(self.lms.members) == 3 and self.lms.voters == ("right",) and self.lms.ties == "right"
        self.students = {}

    @functools.cached_property
    def lm_members(self):
        """Per sentence, rule 60's three language-model members' trees."""
        return self.lms.member_trees(self.tokens)

    @functools.cached_property
    def v11_student(self):
        from onparse import load

        return load(V11_STUDENT).trees(self.tokens)

    def student(self, seed, epoch):
        from onparse import load

        path = SNAPSHOT.format(seed=seed, epoch=epoch)
        if path not in self.students:
            self.students[path] = load(path).trees(self.tokens)
        return self.students[path]

    def of(self, kind, seed, epoch):
        if kind == INCUMBENT:
            from onparse import load
            return load().trees(self.tokens)
        student = self.student(seed, epoch)
        if kind == KINDS[0]:
            return student
        if kind == KINDS[1]:     # rule 89 (c): as onparse.load([v6 bundle, student]) gives: its voter and ties
            rows = [m + [s] for m, s in zip(self.lm_members, student)]
            return v9.average(rows, self.tokens, self.lms.voters, self.lms.ties)
        rows = [[s, v] for s, v in zip(student, self.v11_student)]      # rule 89 (d)
        return v9.average(rows, self.tokens, ("right",), "right")

def dev():
    epochs = completed_epochs()
    if epochs == 0:
        sys.exit("no epoch of rule v17's students exists in both runs (runs/distill/v17-sS.run)")
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    order = candidates(epochs)
    print(f"candidates (rule 89, {epochs} epochs): " + "; ".join(name_of(*c) for c in order), file=sys.stderr)
    trees = Trees(gold)
    rows = []
    for at, (kind, seed, epoch) in enumerate(order):
        scores = v5.scores_of(trees.of(kind, seed, epoch), gold, short, short_index)
        rows.append({"order": at, "name": name_of(kind, seed, epoch), "kind": kind, "seed": seed, "epoch": epoch,
                     "dev": scores})
        print(f"{at + 1:3d}/{len(order)} {rows[-1]['name']}: {100 * scores['all']['sentence_f1']:.2f}", file=sys.stderr)
    v5.write_trials(TRIALS, rows)
    # Rule 90: max() keeps the first of exact ties, and the rows are in the tie-breaking order.
    best = max(rows, key=lambda r: r["dev"]["all"]["sentence_f1"])
    with open(CHOICE, "w") as out:
        json.dump({"rule": "v17 (research/PROTOCOL.md, rules 86-92)", "epochs": epochs, "chosen": best,
                   "ships": best["kind"] != INCUMBENT, "incumbent": rows[0]["dev"]}, out, indent=1)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; incumbent "
          f"{100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def test():
    """Rule 91: the choice on the test half, once (the incumbent's figures are rule v11's)."""
    v5.scored_once(TEST, "rule 91")
    with open(CHOICE) as handle:
        chosen = json.load(handle)["chosen"]
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    with open(v11.TEST) as handle:
        incumbent = json.load(handle)["chosen"]
    if chosen["kind"] == INCUMBENT:
        scores = incumbent
    else:
        scores = v5.scores_of(Trees(gold).of(chosen["kind"], chosen["seed"], chosen["epoch"]), gold, short, short_index)
    out = {"rule": "v17", "candidate": chosen["name"], "sentences": [len(gold), len(short)],
           "chosen": scores, "incumbent": incumbent}
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(TEST, "w") as handle:
        json.dump(out, handle, indent=1)
    print(" | ".join(f"{k} {100 * out[k]['all']['sentence_f1']:.2f} / {100 * out[k]['10']['sentence_f1']:.2f}"
                     for k in ("chosen", "incumbent", "right", "left")), file=sys.stderr)


def bundle_of(kind, both, lm_members):
    """Rule 92: the candidate as the bundle to ship.  ``both``: ``load([shipped bundle, snapshot])``,
    whose models are the three language models, rule v11's student and the new student, in that
    order; ``lm_members``: the language models' members as rule 60's teacher read them.  Returns
    (models kept, members renumbered over them, voters, ties): the language models are always
    kept (for `distances` and `show`), the students only when a member reads them."""
    lms, v11_student, new = (0, 1, 2), 3, 4
    assert len(both.models) == 5 and [m.model for m in both.members] == [v11_student, new]
    student = {m.model: m for m in both.members}
    if kind == KINDS[0]:
        members, voters, ties = [student[new]], (), "first"
    elif kind == KINDS[1]:
        members, voters, ties = [*lm_members, student[new]], ("right",), "right"
    elif kind == KINDS[2]:
        members, voters, ties = [student[new], student[v11_student]], ("right",), "right"
    else:
        raise ValueError(f"not a candidate that ships: {kind}")
    kept = sorted(set(lms) | {m.model for m in members})
    renumber = {old: i for i, old in enumerate(kept)}
    return kept, [m.moved(renumber[m.model]) for m in members], voters, ties


def ship(target=v11.DEFAULT):
    """Rule 92: the dev choice becomes the bundled model, float16, its test figures
    (test-v17.json, scored once by rule 91) measured again on the written file and recorded."""
    from onparse import Member, load
    from onparse.files.bundle import load_model_file

    decided, tested = v5.to_ship(CHOICE, TEST, "rule v17's dev choice is the shipped bundle: nothing to ship (rule 92)")
    chosen = decided["chosen"]
    snapshot = v5.student_file(SNAPSHOT, KEPT, chosen["seed"], chosen["epoch"])
    old = load_model_file(target)["metadata"]
    lm_members = [Member(**m) for m in old["dev"]["lm_only_members"]]
    both = load([target, snapshot])
    kept, members, voters, ties = bundle_of(chosen["kind"], both, lm_members)
    meta = {**old,
            "selection": old["selection"].split("; the student:")[0]
            + "; the student: rule v17's dev choice among the students of rule v9's average on the whole news "
              "text (research/PROTOCOL.md 86-92)",
            "members_rule": f"of {decided['epochs'] * 6 + 1} candidates (the shipped student; each new student "
                            "snapshot alone, beside the language models with a right voter, or beside the shipped "
                            "student with a right voter), the one of highest sentence F1 on wsj-sample-dev: "
                            f"{chosen['name']} (research/PROTOCOL.md, rule v17)",
            "dev": {**old["dev"], "chosen": chosen["name"], "sentence_f1": chosen["dev"],
                    "trials": "research/dev-trials-v17.tsv", "chosen_members": [m.to_dict() for m in members],
                    "voters": list(voters), "ties": ties},
            "student": {"teacher": "rule v9's average (the language models below, three grammars, a right voter, "
                                   "ties right)", "text": "news-train.txt, all 47,912 lines",
                        "seed": chosen["seed"], "epoch": chosen["epoch"]}}
    meta.pop("scores", None)
    v5.ship_bundle(target, [both.models[i] for i in kept], members, voters, ties, meta, tested["chosen"],
                   chosen["name"])


def readme_block(report, v11_report) -> str:
    """The README's results table (test half, three conventions) from research/test-v17.json,
    with rule v11's teacher and older bundle beside it (research/test-v11.json)."""
    return v5.results_table([
        (f"**onparse bundled model**: a student of rule v9's average on all of news ({report['candidate']})",
         report["chosen"], True),
        ("the bundled model before: a student of the same teacher on half of news (rule v11)", report["incumbent"],
         False),
        ("their teacher: 3 language models + 3 grammars + right, ties right", v11_report["teacher"], False),
        ("the 3 language models + right, ties right", v11_report["shipped"], False),
        ("right-branching", report["right"], False)], report["sentences"])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    ap.add_argument("--ship", action="store_true", help="make the dev choice the bundled model (rule 92)")
    ap.add_argument("--readme", action="store_true", help="write README.md's results table from test-v17.json")
    args = ap.parse_args()
    if args.readme:
        with open(TEST, encoding="utf-8") as handle, open(v11.TEST, encoding="utf-8") as older:
            v5.replace_block(v5.TABLES, readme_block(json.load(handle), json.load(older)))
    else:
        ship() if args.ship else test() if args.test else dev()

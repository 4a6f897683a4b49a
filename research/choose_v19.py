"""Rule v19 of research/PROTOCOL.md (99-105): English grammars with rule v18's `v2k-c10` recipe,
a new teacher chosen on the sample's dev half, its students; the test half scored once.

    python research/choose_v19.py              # rule 102-103, dev: every candidate; writes
                                               # research/dev-trials-v19.tsv, research/dev-choice-v19.json
    python research/choose_v19.py --list       # the candidates only, nothing scored
    python research/choose_v19.py teacher      # rule 104: the choice's trees of news-train.txt
    python research/choose_v19.py train S      # rule 104: student S (1, 2), six epochs kept
    python research/choose_v19.py final        # rule 104: the final choice among (a) and the
                                               # snapshots; research/dev-trials-v19-students.tsv,
                                               # research/dev-choice-v19-students.json
    python research/choose_v19.py --test       # rule 105, once: research/test-v19.json

Grammar members: every (run, epoch) of research/grammar-v19-dev.jsonl (rule 101, runs
runs/grammar-v19-news-v2k-c10-sS).  A candidate's members are averaged in this order: rule 60's
three language models, the bundled student, then its grammars (the order ``ties first`` reads).
"""
import argparse
import functools
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials, baseline_scores, scored_once)
import choose_v13 as v13  # noqa: E402  (rule 38's nine variants)
import choose_v17 as v17  # noqa: E402  (the language models, the bundled student, its dev and test figures)
import choose_v9 as v9  # noqa: E402  (the voted average, best_of_runs, read_records)

RUN = "grammar-v19-news-v2k-c10-s{seed}"
SEEDS = (1, 2, 3)
RECORDS = os.path.join(HERE, "grammar-v19-dev.jsonl")
GRAMMAR = os.path.join(ROOT, "runs", "{run}", "epoch-{epoch:03d}.pt")
#: The bundled model's student (rule v17's choice, float32 as rule v17 scored it).
STUDENT = v17.KEPT.format(seed=1, epoch=6)
TEXT = os.path.join(ROOT, "runs", "distill", "news-train.txt")
TEACHER = os.path.join(ROOT, "runs", "distill", "v19-teacher.txt")
NEW_STUDENT = os.path.join(ROOT, "runs", "distill", "v19-s{seed}.pt")
SNAPSHOT = os.path.join(ROOT, "runs", "distill", "v19-s{seed}.run", "epoch-{epoch:03d}.pt")
STUDENT_SEEDS = (1, 2)
STUDENT_EPOCHS = range(1, 7)
TRIALS = os.path.join(HERE, "dev-trials-v19.tsv")
CHOICE = os.path.join(HERE, "dev-choice-v19.json")
FINAL_TRIALS = os.path.join(HERE, "dev-trials-v19-students.tsv")
FINAL = os.path.join(HERE, "dev-choice-v19-students.json")
TEST = os.path.join(HERE, "test-v19.json")
#: Rule 102's groups (b)-(e): (language models?, bundled student?), in order.
GROUPS = ((False, False), (True, False), (False, True), (True, True))


def ranked_members(records):
    """Rule 101: ``(run, epoch)`` of every scored member, best all-lengths dev F1 first; ties to the
    lower seed, then the earlier epoch."""
    rows = [(-r["dev"]["grammar"]["all"], int(r["run"].rpartition("-s")[2]), r["epoch"], r["run"])
            for r in records if r["run"] in {RUN.format(seed=s) for s in SEEDS}]
    return [(run, epoch) for *_, epoch, run in sorted(rows)]


def label(run, epoch) -> str:
    """``g s2 e7``: a member named by its seed (every run has the one recipe)."""
    return f"g s{run.rpartition('-s')[2]} e{epoch}"


def incumbent():
    """Rule 102 (a): the bundled model, rule v17's choice, with its recorded dev scores."""
    with open(v17.CHOICE, encoding="utf-8") as handle:
        chosen = json.load(handle)["chosen"]
    return {"name": f"bundled model (rule v17: {chosen['name']})", "incumbent": True, "lms": False,
            "student": False, "grammars": [], "voters": [], "ties": "first", "trees": 1, "dev": chosen["dev"]}


def candidates(ranked):
    """Rule 102, in order: (a), then groups (b)-(e) for K = 1, 2, 3 and rule 38's nine variants."""
    out = [incumbent()]
    for lms, student in GROUPS:
        for k in (1, 2, 3):
            members = v9.best_of_runs(ranked, k)
            if members is None:
                continue
            for voters, ties in v13.VARIANTS:
                name = ("LMs + " if lms else "") + ("student + " if student else "")
                name += " + ".join(label(r, e) for r, e in members) + "".join(f" + {v}" for v in voters)
                out.append({"name": f"{name}, ties {ties}", "lms": lms, "student": student,
                            "grammars": [list(m) for m in members], "voters": list(voters), "ties": ties,
                            "trees": 3 * lms + student + k + len(voters)})
    return out


def choose(rows):
    """Rule 103: the highest all-lengths dev sentence F1; exact ties to (a), then to fewer trees,
    then to the earlier candidate."""
    return min(rows, key=lambda r: (-r["dev"]["all"]["sentence_f1"], not r.get("incumbent"), r["trees"], r["order"]))


class Trees:
    """Every candidate's trees of some sentences (``tokens``: token lists); each member's trees
    computed once, when a candidate first needs them."""

    def __init__(self, tokens, name):
        self.tokens, self.name, self.grammars = [list(words) for words in tokens], name, {}

    def timed(self, what, parse):
        started = time.time()
        trees = parse(self.tokens)
        print(f"{self.name}: {what} in {time.time() - started:.0f} s", file=sys.stderr)
        return trees

    @functools.cached_property
    def lm_rows(self):
        """Per sentence, rule 60's three language-model members' trees."""
        from onparse import load

        lms = load(v17.LMS, "cpu")
        assert len(lms.members) == 3
        return self.timed("the language models' member trees", lms.member_trees)

    @functools.cached_property
    def student(self):
        from onparse import load

        return self.timed("the bundled student's trees", load(STUDENT, "cpu").trees)

    def grammar(self, run, epoch):
        from onparse import load

        if (run, epoch) not in self.grammars:
            path = GRAMMAR.format(run=run, epoch=epoch)
            self.grammars[(run, epoch)] = self.timed(os.path.relpath(path, ROOT), load(path, "cpu").trees)
        return self.grammars[(run, epoch)]

    def of(self, candidate):
        if candidate.get("incumbent"):
            return self.student
        rows = [list(r) for r in self.lm_rows] if candidate["lms"] else [[] for _ in self.tokens]
        members = ([self.student] if candidate["student"] else []) + [self.grammar(r, e) for r, e in candidate["grammars"]]
        for member in members:
            for row, tree in zip(rows, member):
                row.append(tree)
        return v9.average(rows, self.tokens, candidate["voters"], candidate["ties"])


def dev(list_only=False):
    """Rules 102-103 on wsj-sample-dev."""
    ranked = ranked_members(v9.read_records(RECORDS))
    cands = candidates(ranked)
    if list_only:
        print("\n".join(f"{i + 1}\t{c['name']}" for i, c in enumerate(cands)))
        return
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    trees, rows = Trees(v13.gold_tokens(gold), gold.name), [{"order": 0, **cands[0]}]
    for order, candidate in enumerate(cands[1:], 1):
        scores = v5.scores_of(trees.of(candidate), gold, short, short_index)
        rows.append({"order": order, **candidate, "dev": scores})
        print(f"{order + 1:3d}/{len(cands)} {candidate['name']}: {100 * scores['all']['sentence_f1']:.2f}",
              file=sys.stderr)
    best = choose(rows)
    v5.record_dev(TRIALS, rows, CHOICE, {"rule": "v19 (research/PROTOCOL.md, rules 99-105)", "chosen": best,
                                         "grammar_alone": list(ranked[0]), "incumbent": rows[0]})
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; the bundled model "
          f"{100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def recorded(path=None, key="chosen"):
    """``key`` of a recorded choice file (rule 103's, ``CHOICE``, when no ``path``)."""
    with open(path or CHOICE, encoding="utf-8") as handle:
        return json.load(handle)[key]


def teacher():
    """Rule 104: the choice's trees of the student's text, as brackets."""
    from onparse.student.teacher_trees import write_teacher_trees

    choice = recorded()
    if choice.get("incumbent"):
        sys.exit("rule v19's dev choice is the bundled model: no students (rule 104)")
    tokens = v5.read_sentences(TEXT, v17.LMS)
    trees = Trees(tokens, os.path.basename(TEXT)).of(choice)
    assert len(trees) == len(tokens)
    write_teacher_trees(TEACHER, trees)
    print(f"{len(trees):,} teacher trees written to {os.path.relpath(TEACHER, ROOT)}", file=sys.stderr)


def train_command(seed, resume=False):
    """Rule 104's student command (``resume``: go on with a stopped run)."""
    return [sys.executable, "-m", "onparse", "distill", TEXT, "--pretokenized", "-m", v17.LMS,
            "--teacher-trees", TEACHER, "--out", NEW_STUDENT.format(seed=seed), "--seed", str(seed),
            "--epochs", str(len(STUDENT_EPOCHS)), "--keep-epochs", "--threads", "1"] + (["--resume"] if resume else [])


def final_candidates():
    """Rule 104's final candidates, in order: (a), then each snapshot alone (seed, then epoch);
    (a) alone when rule 103 chose it (no students are trained then)."""
    with open(CHOICE, encoding="utf-8") as handle:
        recorded_choice = json.load(handle)
    first = [{**recorded_choice["incumbent"], "order": 0, "kind": "incumbent"}]
    if recorded_choice["chosen"].get("incumbent"):
        return first
    return first + [
        {"order": 1 + i, "kind": "student", "seed": s, "epoch": e, "name": f"student (s{s} e{e})", "trees": 1}
        for i, (s, e) in enumerate((s, e) for s in STUDENT_SEEDS for e in STUDENT_EPOCHS)]


def snapshot_trees(seed, epoch, tokens):
    from onparse import load

    return load(SNAPSHOT.format(seed=seed, epoch=epoch), "cpu").trees(tokens)


def final():
    """Rule 104's final choice on dev, the teacher (rule 103's choice) reported beside it."""
    rows = final_candidates()
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    tokens = v13.gold_tokens(gold)
    for row in rows[1:]:
        row["dev"] = v5.scores_of(snapshot_trees(row["seed"], row["epoch"], tokens), gold, short, short_index)
        print(f"{row['order'] + 1:2d} {row['name']}: {100 * row['dev']['all']['sentence_f1']:.2f}", file=sys.stderr)
    best = choose(rows)
    v5.record_dev(FINAL_TRIALS, rows, FINAL, {"rule": "v19, rule 104 (research/PROTOCOL.md)", "chosen": best,
                                              "teacher": recorded(), "ships": best["kind"] != "incumbent"})
    print(f"final: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; the teacher "
          f"{100 * recorded()['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def test():
    """Rule 105: the final choice, the teacher and the grammar-alone figure on the test half,
    once, right- and left-branching beside; a final choice of (a) keeps rule v17's figures."""
    v5.scored_once(TEST, "rule 105")
    if not os.path.exists(FINAL):
        sys.exit(f"{FINAL} is missing: rule 104's final choice (choose_v19.py final) comes before the test")
    chosen, teacher_choice = recorded(FINAL), recorded()
    run, epoch = recorded(key="grammar_alone")
    alone = {"name": label(run, epoch), "lms": False, "student": False, "grammars": [[run, epoch]], "voters": [],
             "ties": "first"}
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    trees = Trees(v13.gold_tokens(gold), gold.name)
    with open(v17.TEST, encoding="utf-8") as handle:
        v17_test = json.load(handle)["chosen"]
    if chosen["kind"] == "incumbent":
        scores = v17_test
    else:
        scores = v5.scores_of(snapshot_trees(chosen["seed"], chosen["epoch"], trees.tokens), gold, short, short_index)
    out = {"rule": "v19", "candidate": chosen["name"], "dev": chosen["dev"], "sentences": [len(gold), len(short)],
           "chosen": scores, "incumbent": v17_test,
           "teacher": {"name": teacher_choice["name"], **v5.scores_of(trees.of(teacher_choice), gold, short, short_index)},
           "grammar_alone": {"name": alone["name"], **v5.scores_of(trees.of(alone), gold, short, short_index)}}
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(TEST, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)
    print(" | ".join(f"{k} {100 * out[k]['all']['sentence_f1']:.2f} / {100 * out[k]['10']['sentence_f1']:.2f}"
                     for k in ("chosen", "incumbent", "teacher", "grammar_alone", "right", "left")), file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", nargs="?", choices=("teacher", "train", "final"), help="a step of rule 104")
    ap.add_argument("seed", nargs="?", type=int, choices=STUDENT_SEEDS, help="train: the student's seed")
    ap.add_argument("--resume", action="store_true", help="train: go on with a stopped student")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    args = ap.parse_args()
    if args.step == "train" and args.seed is None:
        ap.error("train needs a seed")
    if args.step == "teacher":
        teacher()
    elif args.step == "train":
        sys.exit(subprocess.call(train_command(args.seed, args.resume)))
    elif args.step == "final":
        final()
    else:
        test() if args.test else dev(list_only=args.list)

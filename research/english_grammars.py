"""Rules v19 and v20 of research/PROTOCOL.md (99-105, 106-109): English grammars beside the
bundled student and the language models, a new teacher chosen on the sample's dev half, its
students, the test half scored once.  One :class:`Rule` per rule (its runs, files and groups);
``choose_v19.py`` and ``choose_v20.py`` configure it and call :func:`main`:

    python research/choose_vNN.py              # the dev choice: every candidate; dev-trials-vNN.tsv,
                                               # dev-choice-vNN.json
    python research/choose_vNN.py --list       # the candidates only, nothing scored
    python research/choose_vNN.py teacher      # the choice's trees of news-train.txt
    python research/choose_vNN.py train S      # student S (1, 2), six epochs kept
    python research/choose_vNN.py final        # the final choice among (a) and the snapshots;
                                               # dev-trials-vNN-students.tsv, dev-choice-vNN-students.json
    python research/choose_vNN.py --test       # once: test-vNN.json

A candidate's members are averaged in this order: rule 60's three language models, the bundled
student, rule v9's three grammars (rule v20's group (f)), then its new grammars (the order
``ties first`` reads).
"""
import argparse
import functools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, record_dev, baseline_scores, scored_once)
import choose_v11 as v11  # noqa: E402  (rule v9's grammars, int8)
import choose_v13 as v13  # noqa: E402  (rule 38's nine variants)
import choose_v17 as v17  # noqa: E402  (the language models, the bundled student, its dev and test figures)
import choose_v9 as v9  # noqa: E402  (the voted average, best_of_runs, read_records)

GRAMMAR = os.path.join(ROOT, "runs", "{run}", "epoch-{epoch:03d}.pt")
#: The bundled model's student (rule v17's choice, float32 as rule v17 scored it).
STUDENT = v17.KEPT.format(seed=1, epoch=6)
TEXT = os.path.join(ROOT, "runs", "distill", "news-train.txt")
STUDENT_SEEDS = (1, 2)
STUDENT_EPOCHS = range(1, 7)
#: Rule 102's groups (b)-(e): (language models?, bundled student?, rule v9's grammars?), in order;
#: rule v20 adds (f), rule v9's teacher: its language models and grammars.
GROUPS = ((False, False, False), (True, False, False), (False, True, False), (True, True, False))
TEACHER_GROUP = (True, False, True)


@dataclass(frozen=True)
class Rule:
    """One rule's runs (``run``: the folder name with ``{seed}``), seeds, candidate groups and
    files, all named by its ``tag`` (``v19``)."""

    tag: str
    run: str
    seeds: tuple
    groups: tuple = GROUPS

    def path(self, name) -> str:
        """research/NAME, with ``{tag}`` filled."""
        return os.path.join(HERE, name.format(tag=self.tag))

    @property
    def records(self):
        return self.path("grammar-{tag}-dev.jsonl")

    @property
    def trials(self):
        return self.path("dev-trials-{tag}.tsv")

    @property
    def choice(self):
        return self.path("dev-choice-{tag}.json")

    @property
    def final_trials(self):
        return self.path("dev-trials-{tag}-students.tsv")

    @property
    def final(self):
        return self.path("dev-choice-{tag}-students.json")

    @property
    def test(self):
        return self.path("test-{tag}.json")

    @property
    def teacher(self):
        return os.path.join(ROOT, "runs", "distill", f"{self.tag}-teacher.txt")

    def new_student(self, seed) -> str:
        return os.path.join(ROOT, "runs", "distill", f"{self.tag}-s{seed}.pt")

    def snapshot(self, seed, epoch) -> str:
        return os.path.join(ROOT, "runs", "distill", f"{self.tag}-s{seed}.run", f"epoch-{epoch:03d}.pt")


def ranked_members(rule, records):
    """``(run, epoch)`` of every scored member of ``rule``'s runs, best all-lengths dev F1 first;
    ties to the lower seed, then the earlier epoch (rules 101 and 108)."""
    rows = [(-r["dev"]["grammar"]["all"], int(r["run"].rpartition("-s")[2]), r["epoch"], r["run"])
            for r in records if r["run"] in {rule.run.format(seed=s) for s in rule.seeds}]
    return [(run, epoch) for *_, epoch, run in sorted(rows)]


def label(run, epoch) -> str:
    """``g s2 e7``: a member named by its seed (every run of a rule has the one recipe)."""
    return f"g s{run.rpartition('-s')[2]} e{epoch}"


def incumbent():
    """(a): the bundled model, rule v17's choice, with its recorded dev scores."""
    with open(v17.CHOICE, encoding="utf-8") as handle:
        chosen = json.load(handle)["chosen"]
    return {"name": f"bundled model (rule v17: {chosen['name']})", "incumbent": True, "lms": False,
            "student": False, "grammars": [], "voters": [], "ties": "first", "trees": 1, "dev": chosen["dev"]}


def candidates(rule, ranked):
    """Rule 102 (109), in order: (a), then each group for K = 1, 2, 3 and rule 38's nine variants."""
    out = [incumbent()]
    for lms, student, v9_grammars in rule.groups:
        for k in (1, 2, 3):
            members = v9.best_of_runs(ranked, k)
            if members is None:
                continue
            for voters, ties in v13.VARIANTS:
                name = ("LMs + " if lms else "") + ("student + " if student else "")
                name += ("v9 grammars + " if v9_grammars else "")
                name += " + ".join(label(r, e) for r, e in members) + "".join(f" + {v}" for v in voters)
                candidate = {"name": f"{name}, ties {ties}", "lms": lms, "student": student,
                             "grammars": [list(m) for m in members], "voters": list(voters), "ties": ties,
                             "trees": 3 * lms + student + 3 * v9_grammars + k + len(voters)}
                if v9_grammars:            # rule v19's candidates were recorded without the key
                    candidate["v9"] = True
                out.append(candidate)
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
    def v9_rows(self):
        """Per sentence, rule v9's three grammars' trees (rule 60's teacher, int8)."""
        from onparse import load

        grammars = load(v11.GRAMMARS, "cpu")
        assert len(grammars.members) == 3
        return self.timed("rule v9's grammars' member trees", grammars.member_trees)

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
        if candidate["student"]:
            for row, tree in zip(rows, self.student):
                row.append(tree)
        if candidate.get("v9"):
            for row, trees in zip(rows, self.v9_rows):
                row.extend(trees)
        for member in [self.grammar(r, e) for r, e in candidate["grammars"]]:
            for row, tree in zip(rows, member):
                row.append(tree)
        return v9.average(rows, self.tokens, candidate["voters"], candidate["ties"])


def dev(rule, list_only=False):
    """Rules 102-103 (109) on wsj-sample-dev."""
    if not os.path.exists(rule.records):
        sys.exit(f"{rule.records} is missing: score the rule's runs on dev first (research/score_epochs.py)")
    ranked = ranked_members(rule, v9.read_records(rule.records))
    cands = candidates(rule, ranked)
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
    v5.record_dev(rule.trials, rows, rule.choice, {"rule": f"{rule.tag} (research/PROTOCOL.md)", "chosen": best,
                                                   "grammar_alone": list(ranked[0]), "incumbent": rows[0]})
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; the bundled model "
          f"{100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def recorded(rule, path=None, key="chosen"):
    """``key`` of a recorded choice file (the rule's dev choice when no ``path``)."""
    with open(path or rule.choice, encoding="utf-8") as handle:
        return json.load(handle)[key]


def teacher(rule):
    """Rule 104: the choice's trees of the student's text, as brackets."""
    from onparse.student.teacher_trees import write_teacher_trees

    choice = recorded(rule)
    if choice.get("incumbent"):
        sys.exit(f"rule {rule.tag}'s dev choice is the bundled model: no students (rule 104)")
    tokens = v5.read_sentences(TEXT, v17.LMS)
    trees = Trees(tokens, os.path.basename(TEXT)).of(choice)
    assert len(trees) == len(tokens)
    write_teacher_trees(rule.teacher, trees)
    print(f"{len(trees):,} teacher trees written to {os.path.relpath(rule.teacher, ROOT)}", file=sys.stderr)


def train_command(rule, seed, resume=False):
    """Rule 104's student command (``resume``: go on with a stopped run)."""
    return [sys.executable, "-m", "onparse", "distill", TEXT, "--pretokenized", "-m", v17.LMS,
            "--teacher-trees", rule.teacher, "--out", rule.new_student(seed), "--seed", str(seed),
            "--epochs", str(len(STUDENT_EPOCHS)), "--keep-epochs", "--threads", "1"] + (["--resume"] if resume else [])


def final_candidates(rule):
    """Rule 104's final candidates, in order: (a), then each snapshot alone (seed, then epoch);
    (a) alone when the dev choice is it (no students are trained then)."""
    with open(rule.choice, encoding="utf-8") as handle:
        recorded_choice = json.load(handle)
    first = [{**recorded_choice["incumbent"], "order": 0, "kind": "incumbent"}]
    if recorded_choice["chosen"].get("incumbent"):
        return first
    return first + [
        {"order": 1 + i, "kind": "student", "seed": s, "epoch": e, "name": f"student (s{s} e{e})", "trees": 1}
        for i, (s, e) in enumerate((s, e) for s in STUDENT_SEEDS for e in STUDENT_EPOCHS)]


def snapshot_trees(rule, seed, epoch, tokens):
    from onparse import load

    return load(rule.snapshot(seed, epoch), "cpu").trees(tokens)


def final(rule):
    """Rule 104's final choice on dev, the teacher (the dev choice) reported beside it."""
    rows = final_candidates(rule)
    gold, short, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    tokens = v13.gold_tokens(gold)
    for row in rows[1:]:
        row["dev"] = v5.scores_of(snapshot_trees(rule, row["seed"], row["epoch"], tokens), gold, short, short_index)
        print(f"{row['order'] + 1:2d} {row['name']}: {100 * row['dev']['all']['sentence_f1']:.2f}", file=sys.stderr)
    best = choose(rows)
    v5.record_dev(rule.final_trials, rows, rule.final,
                  {"rule": f"{rule.tag}, rule 104 (research/PROTOCOL.md)", "chosen": best, "teacher": recorded(rule),
                   "ships": best["kind"] != "incumbent"})
    print(f"final: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; the teacher "
          f"{100 * recorded(rule)['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def test(rule):
    """Rule 105: the final choice, the teacher and the grammar-alone figure on the test half,
    once, right- and left-branching beside; a final choice of (a) keeps rule v17's figures."""
    v5.scored_once(rule.test, "rule 105")
    if not os.path.exists(rule.final):
        sys.exit(f"{rule.final} is missing: rule 104's final choice (choose_{rule.tag}.py final) comes before the test")
    chosen, teacher_choice = recorded(rule, rule.final), recorded(rule)
    run, epoch = recorded(rule, key="grammar_alone")
    alone = {"name": label(run, epoch), "lms": False, "student": False, "grammars": [[run, epoch]], "voters": [],
             "ties": "first"}
    gold, short, short_index = v5.golds("wsj-sample-test", "wsj10-sample-test")
    trees = Trees(v13.gold_tokens(gold), gold.name)
    with open(v17.TEST, encoding="utf-8") as handle:
        v17_test = json.load(handle)["chosen"]
    if chosen["kind"] == "incumbent":
        scores = v17_test
    else:
        scores = v5.scores_of(snapshot_trees(rule, chosen["seed"], chosen["epoch"], trees.tokens), gold, short,
                              short_index)
    out = {"rule": rule.tag, "candidate": chosen["name"], "dev": chosen["dev"], "sentences": [len(gold), len(short)],
           "chosen": scores, "incumbent": v17_test,
           "teacher": {"name": teacher_choice["name"], **v5.scores_of(trees.of(teacher_choice), gold, short, short_index)},
           "grammar_alone": {"name": alone["name"], **v5.scores_of(trees.of(alone), gold, short, short_index)}}
    out.update(v5.baseline_scores(gold, short, short_index))
    with open(rule.test, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)
    print(" | ".join(f"{k} {100 * out[k]['all']['sentence_f1']:.2f} / {100 * out[k]['10']['sentence_f1']:.2f}"
                     for k in ("chosen", "incumbent", "teacher", "grammar_alone", "right", "left")), file=sys.stderr)


def main(rule, doc):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", nargs="?", choices=("teacher", "train", "final"), help="a step of rule 104")
    ap.add_argument("seed", nargs="?", type=int, choices=STUDENT_SEEDS, help="train: the student's seed")
    ap.add_argument("--resume", action="store_true", help="train: go on with a stopped student")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    ap.add_argument("--test", action="store_true", help="score the test half, once")
    args = ap.parse_args()
    if args.step == "train" and args.seed is None:
        ap.error("train needs a seed")
    if args.step == "teacher":
        teacher(rule)
    elif args.step == "train":
        sys.exit(subprocess.call(train_command(rule, args.seed, args.resume)))
    elif args.step == "final":
        final(rule)
    else:
        test(rule) if args.test else dev(rule, list_only=args.list)

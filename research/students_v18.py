"""Rule 97 of research/PROTOCOL.md (rule v18): students of rule v18's dev choices in Dutch and
Spanish, made as rules 82-83 made rule v15's.

    python research/students_v18.py teacher L   # the choice's trees of runs/fit-text-L.txt
    python research/students_v18.py train L     # its student, seed 1, six epochs kept
    python research/students_v18.py             # dev: the students as further candidates, the
                                                # final choice; research/dev-trials-v18-students.tsv,
                                                # research/dev-choice-v18-students.json
    python research/students_v18.py --list      # those candidates only, nothing scored

L: alpino, cess_esp (`RULE=v18 bash research/students_v15.sh` runs teacher and train).  Rule 98's
test step (`choose_v18.py --test`) scores the final choice.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials)
import choose_v13 as v13  # noqa: E402  (rule v7's choices)
import choose_v18 as v18  # noqa: E402  (the dev choices, their member trees)
import students_v15 as v15  # noqa: E402  (rules 82-83: the text, the teacher file, the command)

TEACHER = os.path.join(ROOT, "runs", "distill", "v18-teacher-{lang}.txt")
STUDENT = os.path.join(ROOT, "runs", "distill", "v18-{lang}-s{seed}.pt")
SNAPSHOT = os.path.join(ROOT, "runs", "distill", "v18-{lang}-s{seed}.run", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v18-students.tsv")
CHOICES = os.path.join(HERE, "dev-choice-v18-students.json")


def v18_choice(lang):
    """Rule v18's dev choice of ``lang`` (rule 96), as dev-choice-v18.json records it."""
    with open(v18.CHOICES, encoding="utf-8") as handle:
        return json.load(handle)[lang]["chosen"]


def first(lang) -> str:
    """The student's vocabulary model: the choice's first model (rule 83)."""
    return v15.first_model(v18_choice(lang), v13.v7_choices()[lang], lang)


def teacher(lang):
    """Rule 97 by rule 82: the choice's trees of the text, as brackets."""
    v15.write_teacher(lang, v18_choice(lang), v13.v7_choices()[lang], v18.Trees, TEACHER.format(lang=lang))


def train_command(lang, resume=False):
    """Rule 97 by rule 83: the student's command (``resume``: go on with a stopped run)."""
    return v15.distill_command(lang, first(lang), TEACHER.format(lang=lang),
                               STUDENT.format(lang=lang, seed=v15.SEED), resume)


def candidates(lang):
    """Rule 97's candidates of ``lang``, in order: rule 96's choice and the incumbent (a), with
    their recorded dev scores, then each student snapshot alone and added to the choice as its
    last member (``kind``, ``epoch`` say which)."""
    with open(v18.CHOICES, encoding="utf-8") as handle:
        recorded = json.load(handle)[lang]
    choice = recorded["chosen"]
    rows = [{**choice, "kind": "choice", "epoch": None}, {**recorded["incumbent"], "kind": "incumbent", "epoch": None}]
    rows += [{"kind": "student", "epoch": e, "name": f"student (s{v15.SEED} e{e})", "trees": 1} for e in v15.EPOCHS]
    rows += [{"kind": "choice + student", "epoch": e, "name": f"{choice['name']} + student (s{v15.SEED} e{e})",
              "trees": choice["trees"] + 1} for e in v15.EPOCHS]
    return [{**row, "order": order} for order, row in enumerate(rows)]


def student_trees(lang, epoch, tokens):
    from onparse import load

    return load(SNAPSHOT.format(lang=lang, seed=v15.SEED, epoch=epoch), "cpu").trees(tokens)


def trees_of(row, choice, trees, students):
    """A student candidate's trees (``row``: one of :func:`candidates`' student rows) of the
    sentences of ``trees`` (a :class:`choose_v18.Trees`); ``students``: snapshot trees by epoch,
    filled as first needed, so that each snapshot parses once."""
    if row["epoch"] not in students:
        students[row["epoch"]] = student_trees(trees.lang, row["epoch"], trees.tokens)
    last = students[row["epoch"]]
    return last if row["kind"] == "student" else trees.of(choice, last)


def dev(list_only=False):
    """Rule 97 on dev: the students' candidates scored, the final choice by rule 96's rule."""
    recorded_v7, trials, out = v13.v7_choices(), [], {"rule": "v18, rule 97 (research/PROTOCOL.md)"}
    for lang in v18.LANGUAGES:
        rows = candidates(lang)
        if list_only:
            print("\n".join(f"{lang}\t{r['order'] + 1}\t{r['name']}" for r in rows))
            continue
        gold, short, short_index = v5.golds(f"{lang}-dev", f"{lang}10-dev")
        trees, students = v18.Trees(lang, v13.gold_tokens(gold), recorded_v7[lang], gold.name), {}
        for row in rows[2:]:
            row["dev"] = v5.scores_of(trees_of(row, rows[0], trees, students), gold, short, short_index)
            print(f"{lang} {row['order'] + 1:2d} {row['name']}: {100 * row['dev']['all']['sentence_f1']:.2f}",
                  file=sys.stderr)
        out[lang] = {"chosen": v18.choose(rows)}
        trials += [{**r, "language": lang} for r in rows]
        v5.log_choice(lang, out[lang]["chosen"])
    if list_only:
        return
    v5.record_dev(TRIALS, trials, CHOICES, out, lead="language")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", nargs="?", choices=("teacher", "train"), help="rule 82 or 83 for one language")
    ap.add_argument("lang", nargs="?", choices=v18.LANGUAGES)
    ap.add_argument("--resume", action="store_true", help="train: go on with a stopped student")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    args = ap.parse_args()
    if args.step and not args.lang:
        ap.error(f"{args.step} needs a language")
    if args.step == "teacher":
        teacher(args.lang)
    elif args.step == "train":
        sys.exit(subprocess.call(train_command(args.lang, args.resume)))
    else:
        dev(list_only=args.list)

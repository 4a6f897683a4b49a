"""Rule v15 of research/PROTOCOL.md (81-85): students of rule v13's dev choices in Dutch, Spanish
and Portuguese (rule 75 carried out), chosen on each treebank's dev part; the test parts scored once.

    python research/students_v15.py teacher L   # rule 82: the choice's trees of runs/fit-text-L.txt
    python research/students_v15.py train L     # rule 83: the student, seed 1, six epochs kept
    python research/students_v15.py             # rule 84, dev: research/dev-trials-v15.tsv,
                                                # research/dev-choice-v15.json
    python research/students_v15.py --list      # the candidates only, nothing scored
    python research/students_v15.py --test      # rule 85, once: research/test-v15.json
    python research/students_v15.py --readme    # the README's "Other languages" table from it

L: alpino, cess_esp, floresta.  `bash research/students_v15.sh` runs teacher and train for the
three, one after another.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, baseline_scores, scored_once)
import choose_v7 as v7  # noqa: E402  (the languages, rule v7's runs)
import choose_v13 as v13  # noqa: E402  (rule v13's choices and the code that scored them)

TEXT = os.path.join(ROOT, "runs", "fit-text-{lang}.txt")
TEACHER = os.path.join(ROOT, "runs", "distill", "v15-teacher-{lang}.txt")
STUDENT = os.path.join(ROOT, "runs", "distill", "v15-{lang}-s{seed}.pt")
SNAPSHOT = os.path.join(ROOT, "runs", "distill", "v15-{lang}-s{seed}.run", "epoch-{epoch:03d}.pt")
SEED = 1
EPOCHS = range(1, 7)
TRIALS = os.path.join(HERE, "dev-trials-v15.tsv")
CHOICES = os.path.join(HERE, "dev-choice-v15.json")
TEST = os.path.join(HERE, "test-v15.json")


def v13_choices():
    """Rule v13's dev choice of each language, as recorded."""
    with open(v13.CHOICES, encoding="utf-8") as handle:
        return {lang: recorded["chosen"] for lang, recorded in json.load(handle).items() if lang in v7.LANGUAGES}


def first_model(choice, v7_choice, lang) -> str:
    """Rule 83: the checkpoint whose vocabulary the student reads: rule v7's first language model
    when the choice holds them, else its first grammar."""
    if choice["lms"]:
        model = v7_choice["models"][0]
        return v7.RUN.format(lang=lang, seed=model["seed"], epoch=model["epoch"])
    seed, epoch = choice["grammars"][0]
    return v13.GRAMMAR.format(lang=lang, seed=seed, epoch=epoch)


def candidates(choice):
    """Rule 84, in its order: ``(kind, epoch)`` with kind ``choice`` (epoch None), ``student`` or
    ``choice + student``."""
    return [("choice", None)] + [(kind, e) for kind in ("student", "choice + student") for e in EPOCHS]


def name_of(kind, epoch, choice) -> str:
    if kind == "choice":
        return f"rule v13: {choice['name']}"
    student = f"student (s{SEED} e{epoch})"
    return student if kind == "student" else f"{choice['name']} + {student}"


def size(kind, choice) -> int:
    """The trees a candidate averages (the first tie-break)."""
    return {"choice": choice["trees"], "student": 1, "choice + student": choice["trees"] + 1}[kind]


def choose(rows, kinds=None):
    """Rule 84's choice among ``rows`` (those of ``kinds`` when given): the highest all-lengths dev
    sentence F1; exact ties to fewer trees, then to the earlier candidate."""
    pool = [r for r in rows if kinds is None or r["kind"] in kinds]
    return min(pool, key=lambda r: (-r["dev"]["all"]["sentence_f1"], r["trees"], r["order"]))


def read_text(lang, first):
    """The sentences of ``runs/fit-text-L.txt`` the student learns from (amendment to rule 82: a
    grammar's vocabulary lacks ``&``), as :func:`choose_members.read_sentences` reads them."""
    return v5.read_sentences(TEXT.format(lang=lang), first)


def teacher(lang):
    """Rule 82: the choice's trees of every line of the text, as brackets."""
    choice, v7_choice = v13_choices()[lang], v13.v7_choices()[lang]
    write_teacher(lang, choice, v7_choice, v13.Trees, TEACHER.format(lang=lang))


def write_teacher(lang, choice, v7_choice, trees_class, path):
    """``choice``'s trees (computed by ``trees_class``, a :class:`choose_v13.Trees`) of the
    sentences :func:`read_text` gives, written as brackets to ``path`` (rules 82 and 97)."""
    from onparse.student.teacher_trees import write_teacher_trees

    tokens = read_text(lang, first_model(choice, v7_choice, lang))
    started = time.time()
    trees = trees_class(lang, tokens, v7_choice, os.path.basename(TEXT.format(lang=lang))).of(choice)
    assert len(trees) == len(tokens)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_teacher_trees(path, trees)
    print(f"{lang}: {len(trees):,} teacher trees in {time.time() - started:.0f} s", file=sys.stderr)


def train_command(lang, resume=False):
    """Rule 83's command (``resume``: go on with a stopped run)."""
    choice, v7_choice = v13_choices()[lang], v13.v7_choices()[lang]
    return distill_command(lang, first_model(choice, v7_choice, lang), TEACHER.format(lang=lang),
                           STUDENT.format(lang=lang, seed=SEED), resume)


def distill_command(lang, first, teacher_path, student_path, resume=False):
    """Rule 83's ``onparse distill`` of the text of ``lang`` (seed 1, six epochs kept, one thread)."""
    return [sys.executable, "-m", "onparse", "distill", TEXT.format(lang=lang), "--pretokenized",
            "-m", first, "--teacher-trees", teacher_path, "--out", student_path, "--seed", str(SEED),
            "--epochs", str(len(EPOCHS)), "--keep-epochs", "--threads", "1"] + (["--resume"] if resume else [])


def student_trees(lang, epoch, tokens):
    from onparse import load

    return load(SNAPSHOT.format(lang=lang, seed=SEED, epoch=epoch), "cpu").trees(tokens)


def scored_rows(lang, choice, trees, gold, short, short_index):
    """Every candidate of rule 84 with its dev scores."""
    rows, students = [], {}
    for order, (kind, epoch) in enumerate(candidates(choice)):
        if epoch and epoch not in students:
            students[epoch] = student_trees(lang, epoch, trees.tokens)
        last = students.get(epoch)
        if kind == "student":
            predicted = last
        else:
            predicted = trees.of(choice, last if kind == "choice + student" else None)
        rows.append({"order": order, "kind": kind, "epoch": epoch, "name": name_of(kind, epoch, choice),
                     "trees": size(kind, choice), "dev": v5.scores_of(predicted, gold, short, short_index)})
        print(f"{lang} {order + 1:2d} {rows[-1]['name']}: {100 * rows[-1]['dev']['all']['sentence_f1']:.2f}",
              file=sys.stderr)
    return rows


def dev(list_only=False):
    choices, v7_choices, trials = v13_choices(), v13.v7_choices(), []
    out = {"rule": "v15 (research/PROTOCOL.md, rules 81-85)"}
    for lang in v7.LANGUAGES:
        choice = choices[lang]
        if list_only:
            print("\n".join(f"{lang}\t{i + 1}\t{name_of(k, e, choice)}" for i, (k, e) in enumerate(candidates(choice))))
            continue
        gold, short, short_index = v5.golds(f"{lang}-dev", f"{lang}10-dev")
        trees = v13.Trees(lang, v13.gold_tokens(gold), v7_choices[lang], gold.name)
        rows = scored_rows(lang, choice, trees, gold, short, short_index)
        recorded = choice["dev"]["all"]["sentence_f1"]
        assert abs(rows[0]["dev"]["all"]["sentence_f1"] - recorded) < 1e-9, (rows[0]["dev"], recorded)
        out[lang] = {"chosen": choose(rows), "student_alone": choose(rows, ("student",)), "v13": choice}
        trials += [{**r, "language": lang} for r in rows]
        v5.log_choice(lang, out[lang]["chosen"])
    if list_only:
        return
    v5.record_dev(TRIALS, trials, CHOICES, out, lead="language")


def test():
    """Rule 85: each language's choice and student-alone figure on its test parts, once, with
    right- and left-branching beside; a choice that is rule v13's keeps rule v13's test figure."""
    v5.scored_once(TEST, "rule 85")
    with open(CHOICES, encoding="utf-8") as handle:
        recorded = json.load(handle)
    with open(v13.TEST, encoding="utf-8") as handle:
        v13_test = json.load(handle)
    v7_choices = v13.v7_choices()
    out = {"rule": "v15"}
    for lang in v7.LANGUAGES:
        chosen, alone, choice = recorded[lang]["chosen"], recorded[lang]["student_alone"], recorded[lang]["v13"]
        gold, short, short_index = v5.golds(f"{lang}-test", f"{lang}10-test")
        tokens = v13.gold_tokens(gold)
        # Each snapshot parses the test part once, though it be both the choice's and the alone one.
        students = {e: student_trees(lang, e, tokens) for e in {alone["epoch"], chosen["epoch"]} - {None}}
        entry = {"candidate": chosen["name"], "dev": chosen["dev"], "sentences": [len(gold), len(short)],
                 "student_alone": {"name": alone["name"],
                                   **v5.scores_of(students[alone["epoch"]], gold, short, short_index)},
                 "v13": v13_test[lang]["chosen"]}
        if chosen["kind"] == "choice":
            entry["chosen"] = v13_test[lang]["chosen"]
        else:
            last = students[chosen["epoch"]]
            predicted = (last if chosen["kind"] == "student"
                         else v13.Trees(lang, tokens, v7_choices[lang], gold.name).of(choice, last))
            entry["chosen"] = v5.scores_of(predicted, gold, short, short_index)
        entry.update(v5.baseline_scores(gold, short, short_index))
        out[lang] = entry
        print(f"{lang}: chosen {100 * entry['chosen']['all']['sentence_f1']:.2f}, student alone "
              f"{100 * entry['student_alone']['all']['sentence_f1']:.2f}, rule v13 "
              f"{100 * entry['v13']['all']['sentence_f1']:.2f}, right {100 * entry['right']['all']['sentence_f1']:.2f}",
              file=sys.stderr)
    with open(TEST, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


def readme_block(results, v7_results) -> str:
    """The README's "Other languages" table from rule v15's test record and rule v7's."""
    footer = ("Members (rule v7's language models, rule v13's grammars, rule v15's student of their average), "
              "voter and tie rule chosen per language on its dev part (research/PROTOCOL.md, rules v13 and v15; "
              "`python research/students_v15.py`), test parts scored once (`--test`); table by `--readme`.")
    return v5.languages_table(results, v7_results, v7.LANGUAGES, "v15", ("student_alone", "its student alone"),
                              footer)


def readme():
    v5.write_languages_table(TEST, v7.TEST, readme_block)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", nargs="?", choices=("teacher", "train"), help="rule 82 or 83 for one language")
    ap.add_argument("lang", nargs="?", choices=tuple(v7.LANGUAGES))
    ap.add_argument("--test", action="store_true", help="score the test parts, once")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    ap.add_argument("--resume", action="store_true", help="train: go on with a stopped student")
    ap.add_argument("--readme", action="store_true", help="write README.md's Other languages table (no scoring)")
    args = ap.parse_args()
    if args.step and not args.lang:
        ap.error(f"{args.step} needs a language")
    if args.readme:
        readme()
    elif args.step == "teacher":
        teacher(args.lang)
    elif args.step == "train":
        sys.exit(subprocess.call(train_command(args.lang, args.resume)))
    else:
        test() if args.test else dev(list_only=args.list)

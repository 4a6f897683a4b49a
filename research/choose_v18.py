"""Rule v18 of research/PROTOCOL.md (93-98): grammar recipes for small texts in Dutch and Spanish,
their members ranked with rule v13's, chosen on each treebank's dev part against rule v15's
choice; the test parts scored once.

    python research/choose_v18.py            # dev: rule 96's candidates per language; writes
                                             # research/dev-trials-v18.tsv, research/dev-choice-v18.json
    python research/choose_v18.py --list     # the candidates only, nothing scored
    python research/choose_v18.py --readme   # the README's "Other languages" table: rule v18's
                                             # Dutch and Spanish, rule v15's Portuguese
    python research/choose_v18.py --test     # each final choice (rule 97's, students_v18.py) and
                                             # grammar-alone figure on the test parts, once;
                                             # research/test-v18.json

Grammar members: every (run, epoch) of research/grammar-v18-dev.jsonl (rule 95, runs
runs/grammar-v18-L-RECIPE-sS) and of research/grammar-languages-dev.jsonl (rule v13's runs
runs/grammar-fit-L-sS), read by its MBR tree.  The incumbent (a) is rule v15's dev choice, with
the dev score dev-choice-v15.json records (not scored again).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of, write_trials)
import choose_v13 as v13  # noqa: E402  (rule 74's candidates, the member trees, rule v7's choices)
import choose_v9 as v9  # noqa: E402  (records)
import students_v15 as v15  # noqa: E402  (the incumbent's dev and test figures)

LANGUAGES = ("alpino", "cess_esp")
RECIPES = ("v2k", "v2k-c10")
RECORDS = os.path.join(HERE, "grammar-v18-dev.jsonl")
RUN_FILE = os.path.join(ROOT, "runs", "{run}", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v18.tsv")
CHOICES = os.path.join(HERE, "dev-choice-v18.json")
TEST = os.path.join(HERE, "test-v18.json")


def rank_key(run: str, lang: str):
    """Rule 95's order among equal scores: rule v13's runs, then the recipes in order, the lower
    seed (the epoch is the caller's last key)."""
    v13_prefix, v18_prefix = f"grammar-fit-{lang}-s", f"grammar-v18-{lang}-"
    if run.startswith(v13_prefix):
        return (0, 0, int(run.removeprefix(v13_prefix)))
    recipe, _, seed = run.removeprefix(v18_prefix).rpartition("-s")
    return (1, RECIPES.index(recipe), int(seed))


def ranked_members(lang, records):
    """Rule 95: ``(run, epoch)`` of every scored grammar member of ``lang`` (rule v13's and rule
    v18's runs), best all-lengths dev F1 first, ties by :func:`rank_key`, then the earlier epoch."""
    rows = [(r["dev"]["grammar"]["all"], rank_key(r["run"], lang), r["epoch"], r["run"]) for r in records
            if r["run"].startswith((f"grammar-fit-{lang}-s", f"grammar-v18-{lang}-"))]
    return [(run, epoch) for _, _, epoch, run in sorted(rows, key=lambda r: (-r[0], r[1], r[2]))]


def label(run, epoch) -> str:
    """``g s2 e10`` for rule v13's runs, ``g v2k-c10-s1 e4`` for rule v18's."""
    if run.startswith("grammar-fit-"):
        return v13.seed_label(run.rpartition("-s")[2], epoch)
    return f"g {run.split('-', 3)[3]} e{epoch}"


class Trees(v13.Trees):
    """Rule v13's member trees, the grammar members named by run."""

    def grammar_path(self, run, epoch) -> str:
        return RUN_FILE.format(run=run, epoch=epoch)


def incumbent(lang):
    """Rule 96 (a): rule v15's dev choice, its recorded dev scores and size."""
    with open(v15.CHOICES, encoding="utf-8") as handle:
        chosen = json.load(handle)[lang]["chosen"]
    return {"name": f"rule v15: {chosen['name']}", "incumbent": True, "trees": chosen["trees"], "dev": chosen["dev"]}


def candidates(lang, ranked, v7_choice):
    """Rule 96, in order: (a) the incumbent, then rule 74's (b) and (c) over the joint ranking."""
    return [incumbent(lang)] + v13.candidates(ranked, v7_choice, label)[1:]


def choose(rows):
    """Rule 96's choice: the highest all-lengths dev sentence F1; exact ties to (a), then to fewer
    trees, then to the earlier candidate."""
    return min(rows, key=lambda r: (-r["dev"]["all"]["sentence_f1"], not r.get("incumbent"), r["trees"], r["order"]))


def dev(list_only=False):
    records = v9.read_records(v13.RECORDS) + (v9.read_records(RECORDS) if os.path.exists(RECORDS) else [])
    recorded_v7 = v13.v7_choices()
    choices, trials = {}, []
    for lang in LANGUAGES:
        v7_choice = recorded_v7[lang]
        ranked = ranked_members(lang, records)
        cands = candidates(lang, ranked, v7_choice)
        if list_only:
            print("\n".join(f"{lang}\t{i + 1}\t{c['name']}" for i, c in enumerate(cands)))
            continue
        gold, short, short_index = v5.golds(f"{lang}-dev", f"{lang}10-dev")
        trees = Trees(lang, v13.gold_tokens(gold), v7_choice, gold.name)
        # (a) keeps its recorded dev score (rule 96); the others are scored.
        rows = [{"order": 0, **cands[0]}] + v13.scored(lang, cands[1:], trees, v7_choice, (gold, short, short_index), 1)
        trials += [{**row, "language": lang} for row in rows]
        best = choose(rows)
        choices[lang] = {"chosen": best, "grammar_alone": list(ranked[0]), "incumbent": rows[0]}
        print(f"{lang}: chosen {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; rule v15's "
              f"{100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)
    if list_only:
        return
    v5.record_dev(TRIALS, trials, CHOICES, {"rule": "v18 (research/PROTOCOL.md, rules 93-98)", **choices},
                  lead="language")


def final_choices():
    """Rule 97's final choice of each language (``research/dev-choice-v18-students.json``, made by
    ``students_v18.py`` from rule 96's choices, which are not the incumbent)."""
    import students_v18

    if not os.path.exists(students_v18.CHOICES):
        sys.exit(f"{students_v18.CHOICES} is missing: rule 97 (python research/students_v18.py) comes before the test")
    with open(students_v18.CHOICES, encoding="utf-8") as handle:
        return json.load(handle)


def test():
    """Rule 98: each language's final choice (rule 97) and grammar-alone figure on its test parts,
    once; a choice of the incumbent keeps rule v15's test figures."""
    import students_v18

    v5.scored_once(TEST, "rule 98")
    finals = final_choices()
    with open(CHOICES, encoding="utf-8") as handle:
        recorded = json.load(handle)
    with open(v15.TEST, encoding="utf-8") as handle:
        v15_test = json.load(handle)
    recorded_v7 = v13.v7_choices()
    out = {"rule": "v18"}
    for lang in LANGUAGES:
        chosen, choice, (run, epoch) = finals[lang]["chosen"], recorded[lang]["chosen"], recorded[lang]["grammar_alone"]
        alone = {"name": label(run, epoch), "lms": False, "grammars": [[run, epoch]], "voters": [], "ties": "first"}
        gold, short, short_index = v5.golds(f"{lang}-test", f"{lang}10-test")
        trees = Trees(lang, v13.gold_tokens(gold), recorded_v7[lang], gold.name)
        if chosen["kind"] == "incumbent":
            scores = v15_test[lang]["chosen"]
        else:
            predicted = (trees.of(choice) if chosen["kind"] == "choice"
                         else students_v18.trees_of(chosen, choice, trees, {}))
            scores = v5.scores_of(predicted, gold, short, short_index)
        out[lang] = {"candidate": chosen["name"], "dev": chosen["dev"], "sentences": [len(gold), len(short)],
                     "chosen": scores, "v15": v15_test[lang]["chosen"],
                     "grammar_alone": {"name": alone["name"],
                                       **v5.scores_of(trees.of(alone), gold, short, short_index)}}
        out[lang].update(v5.baseline_scores(gold, short, short_index))
        print(f"{lang}: chosen {100 * out[lang]['chosen']['all']['sentence_f1']:.2f}, grammar alone "
              f"{100 * out[lang]['grammar_alone']['all']['sentence_f1']:.2f}, rule v15 "
              f"{100 * out[lang]['v15']['all']['sentence_f1']:.2f}, right "
              f"{100 * out[lang]['right']['all']['sentence_f1']:.2f}", file=sys.stderr)
    with open(TEST, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


def readme_block(results, v15_results, v7_results) -> str:
    """The README's "Other languages" table: Dutch and Spanish from rule v18's test record (its
    final choice, its grammar alone, rule v15's choice, right-branching), Portuguese as rule
    v15's table has it."""
    rows = list(v5.LANGUAGE_TABLE_HEAD)
    for lang, label in v15.v7.LANGUAGES.items():
        if lang in LANGUAGES:
            r = results[lang]
            entries = [(f"chosen on dev (rule v18): {r['candidate']}", r["chosen"]),
                       (f"its best grammar alone: {r['grammar_alone']['name']}", r["grammar_alone"]),
                       ("rule v15's choice (the one before)", r["v15"]), ("right-branching", r["right"])]
            rows += v5.language_rows(label, r["sentences"], entries)
        else:
            rows += v5.language_block(v15_results[lang], v7_results[lang], label, "v15",
                                      ("student_alone", "its student alone"))
    footer = ("Members (rule v7's language models, rule v13's or v18's grammars, a student of their average), voter "
              "and tie rule chosen per language on its dev part (research/PROTOCOL.md, rules v15 and v18; "
              "`python research/students_v18.py`, `students_v15.py`), test parts scored once; table by "
              "`python research/choose_v18.py --readme`.")
    return "\n".join(rows + ["", footer])


def readme():
    with open(TEST, encoding="utf-8") as a, open(v15.TEST, encoding="utf-8") as b, \
            open(v15.v7.TEST, encoding="utf-8") as c:
        block = readme_block(json.load(a), json.load(b), json.load(c))
    v5.replace_block(v5.TABLES, block, "multilingual")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test parts, once")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    ap.add_argument("--readme", action="store_true", help="write README.md's Other languages table (no scoring)")
    args = ap.parse_args()
    readme() if args.readme else test() if args.test else dev(list_only=args.list)

"""Rule v13 of research/PROTOCOL.md (70-76): grammars in Dutch, Spanish and Portuguese beside
rule v7's language models, chosen on each treebank's dev part; the test parts scored once.

    python research/choose_v13.py             # dev: every candidate of rule 74 per language;
                                              # research/dev-trials-v13.tsv, research/dev-choice-v13.json
    python research/choose_v13.py --list      # the candidates only, nothing scored
    python research/choose_v13.py --test      # each choice and grammar-alone figure on the test
                                              # parts, once, right and left beside; research/test-v13.json
    python research/choose_v13.py --readme    # the README's "Other languages" table from those files

Grammar members: every (seed, epoch) of research/grammar-languages-dev.jsonl (rule 73), read by
its MBR tree; rule v7's members: its recorded choice (research/dev-choice-v7.json) from the
retrained runs runs/small-L-sS (rule 72).
"""
import argparse
import functools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (golds, scores_of: shared with rules v5-v11)
import choose_v7 as v7  # noqa: E402  (the languages, rule v7's runs, voters and ties)
import choose_v9 as v9  # noqa: E402  (the voted average of member trees)

RECORDS = os.path.join(HERE, "grammar-languages-dev.jsonl")
GRAMMAR = os.path.join(ROOT, "runs", "grammar-fit-{lang}-s{seed}", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v13.tsv")
CHOICES = os.path.join(HERE, "dev-choice-v13.json")
TEST = os.path.join(HERE, "test-v13.json")
#: Rule 38's nine voter and tie variants, in its order.
VARIANTS = [(voters, ties) for voters in v7.VOTERS for ties in v7.TIES]


def ranked_grammars(lang, records):
    """Rule 73: ``(seed, epoch)`` of every scored grammar member of ``lang``, best all-lengths dev
    F1 first; ties to the lower seed, then epoch."""
    prefix = f"grammar-fit-{lang}-s"
    rows = [(r["dev"]["grammar"]["all"], int(r["run"].removeprefix(prefix)), r["epoch"])
            for r in records if r["run"].startswith(prefix)]
    return [(seed, epoch) for _, seed, epoch in sorted(rows, key=lambda r: (-r[0], r[1], r[2]))]


def best_of_seeds(ranked, k):
    """The ``k`` best-ranked grammar members of ``k`` different seeds (None when fewer exist)."""
    picks = v5.first_per_seed([(None, seed, epoch) for seed, epoch in ranked])
    return [(seed, epoch) for _, seed, epoch in picks[:k]] if len(picks) >= k else None


def seed_label(seed, epoch) -> str:
    """How a grammar member is named in rule v13's candidates: ``g s2 e10``."""
    return f"g s{seed} e{epoch}"


def candidates(ranked, v7_choice, label=seed_label):
    """Rule 74, in order: (a) rule v7's choice; (b) the K best grammar members of K seeds alone,
    K = 1, 2, 3; (c) each (b) added to (a)'s language-model members; (b) and (c) with rule 38's
    nine voter and tie variants.  A candidate: ``{"name", "lms", "grammars", "voters", "ties"}``,
    ``lms`` as True (rule v7's members) or False.  ``ranked``: (seed, epoch) pairs, or any
    (run, epoch) pairs with their ``label`` (rule v18)."""
    out = [{"name": f"rule v7: {v7_choice['name']}", "lms": True, "grammars": [],
            "voters": list(v7_choice["voters"]), "ties": v7_choice["ties"]}]
    for with_lms in (False, True):
        for k in (1, 2, 3):
            members = best_of_seeds(ranked, k)
            if members is None:
                continue
            for voters, ties in VARIANTS:
                name = ("rule v7's LMs + " if with_lms else "") + " + ".join(label(s, e) for s, e in members)
                name += "".join(f" + {v}" for v in voters) + f", ties {ties}"
                out.append({"name": name, "lms": with_lms, "grammars": members, "voters": list(voters),
                            "ties": ties})
    return out


def size(candidate, v7_choice):
    """The trees a candidate averages (rule 74's first tie-break)."""
    return (len(v7_choice["members"]) if candidate["lms"] else 0) + len(candidate["grammars"]) \
        + len(candidate["voters"])


class Trees:
    """Every candidate's trees of some sentences of one language (``tokens``: token lists, a gold
    set's or a text's; ``name`` for the log); member trees computed once."""

    def __init__(self, lang, tokens, v7_choice, name):
        self.lang, self.tokens = lang, [list(words) for words in tokens]
        self.v7_choice, self.name = v7_choice, name
        self.grammars = {}

    @functools.cached_property
    def lm_rows(self):
        """Rule v7's member trees, per sentence (computed when a candidate first needs them)."""
        from onparse import Member, load

        started = time.time()
        choice = self.v7_choice
        paths = [v7.RUN.format(lang=self.lang, seed=m["seed"], epoch=m["epoch"]) for m in choice["models"]]
        members = [Member(i, m["layer"], m["decoder"]) for i, m in enumerate(choice["members"])]
        rows = load(paths, "cpu").with_members(members).member_trees(self.tokens)
        print(f"{self.name}: rule v7's member trees in {time.time() - started:.0f} s", file=sys.stderr)
        return rows

    def grammar_path(self, seed, epoch) -> str:
        """A grammar member's file (rule v18 names its members by run instead of seed)."""
        return GRAMMAR.format(lang=self.lang, seed=seed, epoch=epoch)

    def grammar(self, seed, epoch):
        from onparse import load

        if (seed, epoch) not in self.grammars:
            started = time.time()
            path = self.grammar_path(seed, epoch)
            self.grammars[(seed, epoch)] = load(path, "cpu").trees(self.tokens)
            print(f"{self.lang} grammar {os.path.relpath(path, ROOT)}: trees in {time.time() - started:.0f} s",
                  file=sys.stderr)
        return self.grammars[(seed, epoch)]

    def of(self, candidate, last=None):
        """The candidate's trees; ``last``: one more member's trees (one per sentence), added
        after its language models and grammars (rule v15's students)."""
        rows = [list(r) for r in self.lm_rows] if candidate["lms"] else [[] for _ in self.tokens]
        for member in [self.grammar(seed, epoch) for seed, epoch in candidate["grammars"]] + [last or []]:
            for row, tree in zip(rows, member):
                row.append(tree)
        return v9.average(rows, self.tokens, candidate["voters"], candidate["ties"])


def gold_tokens(gold):
    """A gold set's sentences as token lists."""
    return [list(s.words) for s in gold]


def rule_72_check(lang, v7_choice, trees, gold):
    """Rule 72: each retrained member of rule v7's choice against its record in
    languages-dev.jsonl: its dev F1 (sentence F1, all lengths) and its epoch's validation
    perplexity, retrained beside recorded."""
    from onparse import evaluate
    from onparse.fitting.pipeline import _valid_perplexity

    with open(v7.RECORDS, encoding="utf-8") as handle:
        records = {(r["seed"], r["epoch"]): r for r in map(json.loads, handle)
                   if r["corpus"] == lang and r["preset"] == "small"}
    out = []
    for i, (model, member) in enumerate(zip(v7_choice["models"], v7_choice["members"])):
        recorded = records[(model["seed"], model["epoch"])]
        folder = os.path.dirname(v7.RUN.format(lang=lang, seed=model["seed"], epoch=model["epoch"]))
        f1 = evaluate([row[i] for row in trees.lm_rows], gold).sentence_f1.f1
        out.append({**model, "layer": member["layer"], "decoder": member["decoder"], "dev": round(f1, 5),
                    "dev_recorded": recorded["dev"][f"L{member['layer']} {member['decoder']}"]["all"],
                    "valid_ppl": _valid_perplexity(folder).get(model["epoch"]),
                    "valid_ppl_recorded": recorded["valid_ppl"]})
        print(f"{lang} rule 72: s{model['seed']} e{model['epoch']} dev {out[-1]['dev']} (recorded "
              f"{out[-1]['dev_recorded']}), valid ppl {out[-1]['valid_ppl']} (recorded {recorded['valid_ppl']})",
              file=sys.stderr)
    return out


def choose(rows):
    """Rule 74's choice: the highest all-lengths dev sentence F1; exact ties to fewer trees, then to
    the earlier candidate."""
    return min(rows, key=lambda r: (-r["dev"]["all"]["sentence_f1"], r["trees"], r["order"]))


def v7_choices():
    with open(v7.CHOICES, encoding="utf-8") as handle:
        return {lang: recorded["chosen"] for lang, recorded in json.load(handle).items()}


def scored(lang, cands, trees, v7_choice, golds, first=0):
    """Each candidate's dev row (order from ``first``, its size, its scores on ``golds``: the gold
    set, its short sentences and their index), logged as it is scored (rules v13 and v18)."""
    rows = []
    for order, candidate in enumerate(cands, first):
        scores = v5.scores_of(trees.of(candidate), *golds)
        rows.append({"order": order, **candidate, "trees": size(candidate, v7_choice), "dev": scores})
        print(f"{lang} {order + 1:3d} {candidate['name']}: {100 * scores['all']['sentence_f1']:.2f}", file=sys.stderr)
    return rows


def dev(list_only=False):
    records = v9.read_records(RECORDS)
    recorded_v7 = v7_choices()
    choices, trials = {}, []
    for lang in v7.LANGUAGES:
        v7_choice = recorded_v7[lang]
        ranked = ranked_grammars(lang, records)
        cands = candidates(ranked, v7_choice)
        if list_only:
            print("\n".join(f"{lang}\t{i + 1}\t{c['name']}" for i, c in enumerate(cands)))
            continue
        gold, short, short_index = v5.golds(f"{lang}-dev", f"{lang}10-dev")
        trees = Trees(lang, gold_tokens(gold), v7_choice, gold.name)
        check = rule_72_check(lang, v7_choice, trees, gold)
        rows = scored(lang, cands, trees, v7_choice, (gold, short, short_index))
        trials += [{**row, "language": lang} for row in rows]
        best = choose(rows)
        choices[lang] = {"chosen": best, "grammar_alone": ranked[0], "rule_v7": rows[0], "rule_72": check}
        print(f"{lang}: chosen {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}; rule v7's "
              f"choice {100 * rows[0]['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)
    if list_only:
        return
    v5.record_dev(TRIALS, trials, CHOICES, {"rule": "v13 (research/PROTOCOL.md, rules 70-76)", **choices},
                  lead="language")


def test():
    """Rule 76: each language's choice and grammar-alone figure on its test parts, once, with
    right- and left-branching beside them."""
    v5.scored_once(TEST, "rule 76")
    with open(CHOICES, encoding="utf-8") as handle:
        recorded = json.load(handle)
    recorded_v7 = v7_choices()
    out = {"rule": "v13"}
    for lang in v7.LANGUAGES:
        chosen, (seed, epoch) = recorded[lang]["chosen"], recorded[lang]["grammar_alone"]
        alone = {"name": f"g s{seed} e{epoch}", "lms": False, "grammars": [[seed, epoch]], "voters": [],
                 "ties": "first"}
        gold, short, short_index = v5.golds(f"{lang}-test", f"{lang}10-test")
        trees = Trees(lang, gold_tokens(gold), recorded_v7[lang], gold.name)
        out[lang] = {"candidate": chosen["name"], "dev": chosen["dev"], "sentences": [len(gold), len(short)],
                     "chosen": v5.scores_of(trees.of(chosen), gold, short, short_index),
                     "grammar_alone": {"name": alone["name"],
                                       **v5.scores_of(trees.of(alone), gold, short, short_index)}}
        out[lang].update(v5.baseline_scores(gold, short, short_index))
        print(f"{lang}: chosen {100 * out[lang]['chosen']['all']['sentence_f1']:.2f}, grammar alone "
              f"{100 * out[lang]['grammar_alone']['all']['sentence_f1']:.2f}, right "
              f"{100 * out[lang]['right']['all']['sentence_f1']:.2f}", file=sys.stderr)
    with open(TEST, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


def readme_block(results, v7_results) -> str:
    """The README's "Other languages" table from rule v13's test record and rule v7's."""
    footer = ("Members (rule v7's language models, rule v13's grammars), voter and tie rule chosen per language "
              "on its dev part (research/PROTOCOL.md, rule v13; `python research/choose_v13.py`), test parts "
              "scored once (`--test`); table by `--readme`.")
    return v5.languages_table(results, v7_results, v7.LANGUAGES, "v13", ("grammar_alone", "its best grammar alone"),
                              footer)


def readme():
    v5.write_languages_table(TEST, v7.TEST, readme_block)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the test parts, once")
    ap.add_argument("--list", action="store_true", help="list the candidates, score nothing")
    ap.add_argument("--readme", action="store_true", help="write README.md's Other languages table (no scoring)")
    args = ap.parse_args()
    if args.readme:
        readme()
    else:
        test() if args.test else dev(list_only=args.list)

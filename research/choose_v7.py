"""Rule v7 of research/PROTOCOL.md: per language (Dutch, Spanish, Portuguese), members of the
`small` runs ranked on the treebank's dev part, K = 1-3 models, a right or left voter or none,
ties first, right or left; the test parts scored once.

    python research/choose_v7.py                 # dev: choose; writes research/dev-trials-v7.tsv
    python research/choose_v7.py --test          # the test parts, once; writes research/test-v7.json
    python research/choose_v7.py --readme        # the README's "Other languages" table

Reads the dev scores of every kept epoch from research/languages-dev.jsonl
(`research/score_epochs.py --gold NAME-dev`) and the checkpoints from
runs/small-NAME-sS/epoch-NNN.pt.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (the helpers of rule v5, shared)

LANGUAGES = {"alpino": "Dutch (alpino)", "cess_esp": "Spanish (cess_esp)", "floresta": "Portuguese (floresta)"}
SEEDS = (1, 2, 3)
EPOCHS = range(1, 11)
RUN = os.path.join(ROOT, "runs", "small-{lang}-s{seed}", "epoch-{epoch:03d}.pt")
RECORDS = os.path.join(HERE, "languages-dev.jsonl")
TRIALS = os.path.join(HERE, "dev-trials-v7.tsv")
CHOICES = os.path.join(HERE, "dev-choice-v7.json")
TEST = os.path.join(HERE, "test-v7.json")
DECODERS = ("onlstm", "split")
VOTERS = ((), ("right",), ("left",))
TIES = ("first", "right", "left")


def ranked_members(lang):
    """Rule 37: (dev F1, seed, epoch, layer, decoder), best first; ties to the lower seed, epoch,
    layer, then onlstm."""
    rows = []
    with open(RECORDS, encoding="utf-8") as handle:
        for record in map(json.loads, handle):
            if record["corpus"] != lang or record["preset"] != "small" or record["seed"] not in SEEDS \
                    or record["epoch"] not in EPOCHS:
                continue
            for layer in (1, 2, 3):
                for decoder in DECODERS:
                    rows.append((record["dev"][f"L{layer} {decoder}"]["all"], record["seed"], record["epoch"], layer,
                                 decoder))
    return sorted(rows, key=lambda r: (-r[0], r[1], r[2], r[3], DECODERS.index(r[4])))


def candidates(ranked):
    """Rule 38: for K = 1..3, the K best members of K different seeds; voters; ties."""
    picks = v5.first_per_seed(ranked)
    return [(picks[:k], voters, ties) for k in range(1, len(picks) + 1) for voters in VOTERS for ties in TIES]


def name_of(members, voters, ties) -> str:
    parts = " + ".join(f"s{seed} e{epoch} L{layer} {decoder}" for _, seed, epoch, layer, decoder in members)
    return parts + "".join(f" + {v}" for v in voters) + f", ties {ties}"


def evaluate_candidates(lang, cands, gold_name, short_name):
    """Every candidate's scores on a gold set and its short part (three conventions each)."""
    from onparse import load
    from onparse import Member

    largest = max(cands, key=lambda c: len(c[0]))[0]
    paths = [RUN.format(lang=lang, seed=seed, epoch=epoch) for _, seed, epoch, _, _ in largest]
    parser = load(paths, "cpu")
    members = [Member(i, layer, decoder) for i, (_, _, _, layer, decoder) in enumerate(largest)]
    gold, short_gold, short_index = v5.golds(gold_name, short_name)
    tokens = [list(s.words) for s in gold]
    per_sentence = parser.with_members(members).member_trees(tokens)
    rows = []
    for order, (picked, voters, ties) in enumerate(cands):
        k = len(picked)
        assert picked == largest[:k]
        voting = parser.with_members(members[:k], voters, ties)
        trees = voting.average([t[:k] for t in per_sentence], tokens) if voting.averages else \
            [t[0] for t in per_sentence]
        rows.append({"order": order, "name": name_of(picked, voters, ties), "k": k, "voters": list(voters),
                     "ties": ties, "trees": k + len(voters),
                     "models": [{"seed": seed, "epoch": epoch} for _, seed, epoch, _, _ in picked],
                     "members": [m.to_dict() for m in members[:k]],
                     "scores": v5.scores_of(trees, gold, short_gold, short_index)})
    return rows


def choose():
    """Rules 37-39 for every language: dev scores of the 27 candidates, the choice, the LM-only one."""
    choices, trials = {}, []
    for lang in LANGUAGES:
        cands = candidates(ranked_members(lang))
        rows = evaluate_candidates(lang, cands, f"{lang}-dev", f"{lang}10-dev")
        for r in rows:
            r["dev"] = r.pop("scores")
            trials.append({**r, "language": lang})
        best, lm = v5.chosen(rows), v5.chosen(rows, lm_only=True)
        choices[lang] = {"chosen": best, "lm_only": lm}
        print(f"{lang}: chosen {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}); LM only "
              f"{lm['name']} (dev {100 * lm['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)
    v5.write_trials(TRIALS, trials, ("trees",), lead="language")
    with open(CHOICES, "w", encoding="utf-8") as out:
        json.dump(choices, out, indent=1)


def test():
    """Rule 40: the chosen and LM-only candidates of each language on its test parts, once, with
    right- and left-branching beside them."""
    v5.scored_once(TEST, "rule 40")
    with open(CHOICES, encoding="utf-8") as handle:
        choices = json.load(handle)
    out = {}
    for lang in LANGUAGES:
        chosen, lm = choices[lang]["chosen"], choices[lang]["lm_only"]
        cands = candidates(ranked_members(lang))
        picked = [cands[chosen["order"]], cands[lm["order"]]]
        rows = evaluate_candidates(lang, picked, f"{lang}-test", f"{lang}10-test")
        gold, short_gold, short_index = v5.golds(f"{lang}-test", f"{lang}10-test")
        baselines = v5.baseline_scores(gold, short_gold, short_index)
        out[lang] = {"chosen": {"name": chosen["name"], "dev": chosen["dev"], "test": rows[0]["scores"]},
                     "lm_only": {"name": lm["name"], "dev": lm["dev"], "test": rows[1]["scores"]},
                     "baselines": baselines, "sentences": [len(gold), len(short_gold)]}
        print(f"{lang}: chosen {100 * rows[0]['scores']['all']['sentence_f1']:.1f}, LM only "
              f"{100 * rows[1]['scores']['all']['sentence_f1']:.1f}, right "
              f"{100 * baselines['right']['all']['sentence_f1']:.1f}, left "
              f"{100 * baselines['left']['all']['sentence_f1']:.1f}", file=sys.stderr)
    with open(TEST, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


def readme_block(results) -> str:
    rows = list(v5.LANGUAGE_TABLE_HEAD)
    for lang, r in results.items():
        entries = [(f"chosen on dev: {r['chosen']['name']}", r["chosen"]["test"]),
                   (f"language models alone: {r['lm_only']['name']}", r["lm_only"]["test"]),
                   ("right-branching", r["baselines"]["right"]), ("left-branching", r["baselines"]["left"])]
        rows += v5.language_rows(LANGUAGES[lang], r["sentences"], entries)
    rows += ["", "Members, voter and tie rule chosen per language on its dev part (research/PROTOCOL.md, rule v7; "
                 "`python research/choose_v7.py`), test parts scored once (`--test`); table by `--readme`."]
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", action="store_true", help="score the dev choices on the test parts (once)")
    ap.add_argument("--readme", action="store_true", help="write README.md's Other languages table")
    args = ap.parse_args()
    if args.readme:
        with open(TEST, encoding="utf-8") as handle:
            block = readme_block(json.load(handle))
        v5.replace_block(v5.TABLES, block, "multilingual")
    elif args.test:
        test()
    else:
        choose()


if __name__ == "__main__":
    main()

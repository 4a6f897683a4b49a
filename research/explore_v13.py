"""Would `onparse fit --grammars G` choose well in Dutch, Spanish and Portuguese?  Dev evidence
for issue 39 (for reading only: it chooses nothing and never reads a test part).

    python research/explore_v13.py [LANGUAGE ...]      # default: alpino cess_esp floresta

Rule v10's fits trained two language models per language (runs/fit-L.fit, their trees of the
held-out and dev sentences in trees-v12.pkl, `research/fit_trees.py`); rule v13 trained three
grammars per language with the command fit runs for them (runs/grammar-fit-L-sS, PROTOCOL.md
71).  Each grammar's MBR trees of the same held-out and dev sentences are computed here for the
epoch fit would take (lowest validation perplexity) and kept in runs/grammar-fit-L-sS/
trees-v13.pkl.  Then fit's own rule (`onparse.fitting.choice.choose`: rule v12 when RESULTS.md's
table was made; since rule v14 it leaves baseline-like members out itself, so the rows with
and without "baselines left out" agree) chooses among
the language models with 0-3 grammars, and among the grammars alone, from the held-out trees
only; the dev part scores each choice (sentence F1, ON-LSTM convention, all lengths) beside the
dev-gold oracle among the same models (every kept epoch; a grammar epoch's dev F1 from
research/grammar-languages-dev.jsonl) and right-branching.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from explore_v12 import bundle_trees, cached, dev_f1, load  # noqa: E402
from fit_trees import held_out  # noqa: E402

LANGUAGES = ("alpino", "cess_esp", "floresta")
GRAMMARS = os.path.join(ROOT, "runs", "grammar-fit-{lang}-s{seed}")
RECORDS = os.path.join(HERE, "grammar-languages-dev.jsonl")
OUT = os.path.join(ROOT, "runs", "explore-v13.json")


def grammar_trees(lang, seed, epoch, held, dev_tokens):
    """``{"held_out": trees, "dev": trees}`` of one grammar epoch, cached in its run folder."""
    from onparse import load as load_model

    folder = GRAMMARS.format(lang=lang, seed=seed)

    def make():
        parser = load_model(os.path.join(folder, f"epoch-{epoch:03d}.pt"), "cpu")
        return {"held_out": parser.trees(held), "dev": parser.trees(dev_tokens)}
    return cached(os.path.join(folder, "trees-v13.pkl"), epoch, make)


def grammar_dev_records(lang):
    """``{(seed, epoch): dev F1}`` of every scored grammar epoch (rule 73's records)."""
    out = {}
    prefix = f"grammar-fit-{lang}-s"
    with open(RECORDS, encoding="utf-8") as handle:
        for record in map(json.loads, handle):
            if record["run"].startswith(prefix):
                out[(int(record["run"].removeprefix(prefix)), record["epoch"])] = record["dev"]["grammar"]["all"]
    return out


def average_dev(columns, choice, index):
    """Dev trees of a choice's members (``index``: candidate -> column), voter and ties: rule
    v12's evidence did the same (explore_v12.bundle_trees)."""
    return bundle_trees({"dev": columns}, [index[m] for m in choice.members], choice.voter, choice.ties)


def load_pool(lang):
    """Everything a fit's choice over rule v10's language models and rule v13's grammars needs,
    and the dev part to score it: ``{"gold", "dev_tokens", "lm_cands", "grammar_cands",
    "held_cols", "dev_cols", "perplexity"}`` (a column: one candidate's trees, candidates in
    ``lm_cands + grammar_cands`` order; each grammar at its epoch of lowest validation
    perplexity)."""
    from onparse import load_gold
    from onparse.fitting.choice import Candidate
    from onparse.fitting.pipeline import _valid_perplexity

    data = load(lang)
    gold = load_gold(data["dev_gold"])
    dev_tokens = [list(s.words) for s in gold]
    fit_dir = os.path.join(ROOT, "runs", f"fit-{lang}.fit")
    held = held_out(fit_dir)
    lm_cands = [Candidate(*c) for c in data["candidates"]]
    held_cols, dev_cols = list(data["held_out"]), list(data["dev"])
    perplexity = {run: _valid_perplexity(os.path.join(fit_dir, run)) for run in {c.run for c in lm_cands}}
    grammar_cands = []
    for seed in (1, 2, 3):
        folder = GRAMMARS.format(lang=lang, seed=seed)
        ppl = _valid_perplexity(folder)
        kept = [e for e in ppl if os.path.exists(os.path.join(folder, f"epoch-{e:03d}.pt"))]
        if not kept:
            continue
        epoch = min(kept, key=lambda e: (ppl[e], -e))
        trees = grammar_trees(lang, seed, epoch, held, dev_tokens)
        grammar_cands.append(Candidate(f"grammar-{seed}", epoch, 1, "mbr"))
        perplexity[f"grammar-{seed}"] = ppl
        held_cols.append(trees["held_out"])
        dev_cols.append(trees["dev"])
    return {"gold": gold, "dev_tokens": dev_tokens, "lm_cands": lm_cands, "grammar_cands": grammar_cands,
            "held_cols": held_cols, "dev_cols": dev_cols, "perplexity": perplexity, "lm_dev": data["dev"]}


def explore(lang):
    from onparse import baseline_trees
    from onparse.fitting.choice import DEGENERATE, baseline_agreement, choose

    pool = load_pool(lang)
    gold, dev_tokens, lm_cands, grammar_cands = pool["gold"], pool["dev_tokens"], pool["lm_cands"], pool["grammar_cands"]
    held_cols, dev_cols, perplexity = pool["held_cols"], pool["dev_cols"], pool["perplexity"]
    cands = lm_cands + grammar_cands
    index = {c: i for i, c in enumerate(cands)}
    records = grammar_dev_records(lang)
    lm_f1 = [dev_f1(t, gold) for t in pool["lm_dev"]]
    oracle = max(lm_f1 + list(records.values()))
    right = dev_f1(baseline_trees(dev_tokens, "right"), gold)
    rows = []
    pools = {"language models (rule v12)": lm_cands}
    for g in range(1, len(grammar_cands) + 1):
        pools[f"language models + {g} grammar(s)"] = lm_cands + grammar_cands[:g]
    for g in range(1, len(grammar_cands) + 1):
        pools[f"{g} grammar(s) alone"] = grammar_cands[:g]
    # A grammar whose held-out trees are a baseline's (agreement > DEGENERATE with right- or
    # left-branching trees) adds nothing a voter does not: left out.
    lean = {c: baseline_agreement(held_cols[index[c]]) for c in grammar_cands}
    kept = [c for c in grammar_cands if max(lean[c].values()) <= DEGENERATE]
    print(f"{lang:9s} grammars' agreement with right/left-branching on held-out text: "
          + "; ".join(f"{c.run} e{c.epoch} {lean[c]}" for c in grammar_cands))
    for g in range(1, len(grammar_cands) + 1):
        pools[f"language models + {g} grammar(s), baselines left out"] = \
            lm_cands + [c for c in grammar_cands[:g] if c in kept]
    for name, pool in pools.items():
        columns = [held_cols[index[c]] for c in pool]
        if len(pool) == 1:
            rows.append({"language": lang, "pool": name, "members": [pool[0].label()], "voter": None,
                         "dev": round(dev_f1(dev_cols[index[pool[0]]], gold), 5)})
        else:
            choice = choose(pool, [list(r) for r in zip(*columns)], perplexity)
            score = dev_f1(average_dev(dev_cols, choice, index), gold)
            rows.append({"language": lang, "pool": name, "members": [m.label() for m in choice.members],
                         "voter": choice.voter, "dev": round(score, 5)})
        r = rows[-1]
        print(f"{lang:9s} {name:34s} dev {100 * r['dev']:.1f}  voter {r['voter']}  members: "
              + "; ".join(r["members"]))
    best_grammar = max(records.items(), key=lambda kv: kv[1]) if records else None
    print(f"{lang:9s} dev-gold oracle (every kept epoch, LMs and grammars) {100 * oracle:.1f}; best grammar "
          f"epoch {best_grammar}; right-branching {100 * right:.1f}")
    return {"language": lang, "rows": rows, "oracle": oracle, "right": right,
            "grammar_epochs": [c.label() for c in grammar_cands],
            "baseline_agreement": {c.label(): lean[c] for c in grammar_cands}}


def main():
    langs = sys.argv[1:] or LANGUAGES
    out = [explore(lang) for lang in langs]
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()

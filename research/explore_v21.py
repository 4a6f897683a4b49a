"""Do a language's good grammar seeds agree with each other?  Dev evidence for issue 39 (for
reading only: it chooses nothing and never reads a test part).

    python research/explore_v21.py [LANGUAGE ...]      # default: floresta

Rule v14's Portuguese fit lost 8.4 test points to its dev-gold oracle because one grammar seed
of three found structure (dev 46.9 at the epoch fit takes) and the other members pulled it
down; no gold-free score tried singled it out (RESULTS.md, rule v14 and "Where Portuguese's fit
loses its points").  With more seeds of the same command (rule 71's: rule v13's
`runs/grammar-fit-L-sS`, S = 1-3, and `runs/grammar-x39-L-sS`, S = 4-7, trained for this
question), one can ask whether the good seeds' trees are alike, so that a cluster of runs that
agree with each other, not the mean agreement, would find them.

For each grammar run at the epoch fit would take (lowest validation perplexity): its MBR trees of
the fit's held-out sentences (`runs/fit-L.fit`, cached in the run folder as trees-v21.pkl), its
dev F1 (from the scorers' records), its likeness to the right- and left-branching trees, and
the agreement of every pair of runs on the held-out sentences.  Also each language model
member of rule v10's fit (layers 2 and 3 at their lowest-perplexity epoch) beside them.  Then
the dev F1 of averages a gold-free rule could form (each with fit's voter rule on the held-out
trees): every grammar, the more central half of the grammars (mean agreement with the other
grammars), the 3 most central; each alone and with the language models.
Output: tables on stdout, `runs/explore-v21.json`.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from explore_v12 import bundle_trees, cached, dev_f1, lean, load, matrix  # noqa: E402
from fit_trees import held_out  # noqa: E402

RUNS = [os.path.join(ROOT, "runs", "grammar-fit-{lang}-s{seed}"), os.path.join(ROOT, "runs", "grammar-x39-{lang}-s{seed}")]
RECORDS = [os.path.join(HERE, "grammar-languages-dev.jsonl"), os.path.join(HERE, "grammar-x39-dev.jsonl")]
OUT = os.path.join(ROOT, "runs", "explore-v21.json")


def records():
    """``{(run name, epoch): dev F1, all lengths}`` of every scored grammar epoch."""
    out = {}
    for path in RECORDS:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                for r in map(json.loads, handle):
                    out[(r["run"], r["epoch"])] = r["dev"]["grammar"]["all"]
    return out


def finished_runs(lang):
    """Run folders of rule 71's command in ``lang`` that trained all their epochs."""
    out = []
    for pattern in RUNS:
        for folder in sorted(f for f in glob.glob(pattern.format(lang=lang, seed="*")) if os.path.isdir(f)):
            with open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8") as handle:
                events = [json.loads(line) for line in handle]
            if any(e["event"] == "stop" and e.get("reason") == "epochs" for e in events):
                out.append(folder)
    return sorted(out, key=lambda f: int(re.search(r"-s(\d+)$", f).group(1)))


def fit_epoch(folder):
    """Fit's rule 1: the kept epoch of lowest validation perplexity (ties: the later)."""
    from onparse.fitting.pipeline import _valid_perplexity

    ppl = _valid_perplexity(folder)
    kept = [e for e in ppl if os.path.exists(os.path.join(folder, f"epoch-{e:03d}.pt"))]
    return min(kept, key=lambda e: (ppl[e], -e))


def grammar_trees(folder, epoch, held, dev_tokens):
    """``{"held_out": trees, "dev": trees}`` of one grammar epoch, cached in its run folder."""
    from onparse import load as load_model

    def make():
        parser = load_model(os.path.join(folder, f"epoch-{epoch:03d}.pt"), "cpu")
        return {"held_out": parser.trees(held), "dev": parser.trees(dev_tokens)}
    return cached(os.path.join(folder, "trees-v21.pkl"), ("both", epoch), make)


def averages(rows, held_cols, dev_cols, gold, agree, grammars):
    """Dev F1 of averages of the grammar members that a gold-free rule could keep: all of them,
    the more central half (mean agreement with the other grammars), the 3 most central; each
    with fit's voter rule (rule 4) on the held-out trees, and the same with the language models."""
    centrality = [sum(agree[k][j] for j in grammars if j != k) / (len(grammars) - 1) for k in grammars]
    order = [grammars[i] for i in sorted(range(len(grammars)), key=lambda i: -centrality[i])]
    lms = [k for k in range(len(rows)) if k not in grammars]
    kept = {"every grammar": grammars, "the more central half of the grammars": sorted(order[:(len(order) + 1) // 2]),
            "the 3 most central grammars": sorted(order[:3])}
    kept.update({f"{name} + the language models": members + lms for name, members in list(kept.items())})
    out = []
    for name, members in kept.items():
        voter, ties, _ = lean({"held_out": held_cols}, members)
        score = dev_f1(bundle_trees({"dev": dev_cols}, members, voter, ties), gold)
        out.append({"kept": name, "members": [rows[m]["member"] for m in members], "voter": voter, "dev": score})
        print(f"  {name:48s} dev {100 * score:5.1f}  voter {voter}")
    return {"centrality": dict(zip([rows[k]["member"] for k in grammars], centrality)), "averages": out}


def explore(lang):
    from onparse import load_gold
    from onparse.fitting.choice import baseline_agreement, best_epochs, member_indices
    from onparse.fitting.choice import Candidate
    from onparse.fitting.pipeline import _valid_perplexity

    scored = records()
    fit_dir = os.path.join(ROOT, "runs", f"fit-{lang}.fit")
    held = held_out(fit_dir)
    data = load(lang)
    gold = load_gold(data.get("dev_gold") or f"{lang}-dev")
    dev_tokens = [list(s.words) for s in gold]
    rows, columns, dev_cols = [], [], []
    for folder in finished_runs(lang):
        name, epoch = os.path.basename(folder), fit_epoch(folder)
        both = grammar_trees(folder, epoch, held, dev_tokens)
        trees = both["held_out"]
        dev_cols.append(both["dev"])
        best = max(((f, e) for (r, e), f in scored.items() if r == name), default=None)
        rows.append({"member": f"{name} e{epoch}", "dev": scored.get((name, epoch)), "best_epoch_dev": best,
                     "likeness": baseline_agreement(trees)})
        columns.append(trees)
    grammars = list(range(len(rows)))
    lm_cands = [Candidate(*c) for c in data["candidates"]]
    perplexity = {run: _valid_perplexity(os.path.join(fit_dir, run)) for run in {c.run for c in lm_cands}}
    for i in member_indices(lm_cands, best_epochs(lm_cands, perplexity)):
        rows.append({"member": lm_cands[i].label(), "dev": dev_f1(data["dev"][i], gold), "best_epoch_dev": None,
                     "likeness": baseline_agreement(data["held_out"][i])})
        columns.append(data["held_out"][i])
        dev_cols.append(data["dev"][i])
    agree = matrix(columns)
    width = max(len(r["member"]) for r in rows)
    print(f"{lang}: {len(held)} held-out sentences; agreement of every pair, dev F1, likeness to right/left-branching")
    for k, r in enumerate(rows):
        dev = "  -  " if r["dev"] is None else f"{100 * r['dev']:5.1f}"
        print(f"  {r['member']:{width}s} dev {dev}  R {r['likeness']['right']:.2f} L {r['likeness']['left']:.2f}  "
              + " ".join(f"{agree[k, j]:.2f}" for j in range(len(rows))))
    found = averages(rows, columns, dev_cols, gold, agree, grammars)
    return {"language": lang, "rows": rows, "agreement": agree.round(4).tolist(), **found}


def main():
    out = [explore(lang) for lang in sys.argv[1:] or ("floresta",)]
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1, default=str)


if __name__ == "__main__":
    main()

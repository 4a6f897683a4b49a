"""Would fit do better by keeping only its most central members?  Dev evidence for issue 39 (for
reading only: it chooses nothing and never reads a test part).

    python research/explore_v16.py [LANGUAGE ...]   # default: english alpino cess_esp floresta

The pool of each language is explore_v13's (rule v10's two language models, every kept epoch;
rule v13's three grammars at their epoch of lowest validation perplexity; English has no
grammar there).  Fit's rule v14 (`onparse.fitting.choice.choose`) chooses members from the
held-out trees; then each member's centrality (its mean agreement with the other runs' members,
`Choice.member_scores`, gold-free) ranks them, and these variants keep a part of them, the
voter chosen again by the lean rule over the members kept:

- rule v14: every member;
- the top half: members at or above the median centrality;
- the top K (K = 1, 2, 3): the K most central members;
- all but the least central.

Each is scored on the dev part (sentence F1, ON-LSTM convention, all lengths) beside the
dev-gold oracle among the same candidates (every kept epoch of the language models, the grammar
epochs of explore_v13's pool) and right-branching; also the rank correlation, over the members,
of centrality with dev F1.  Output: a table on stdout, `runs/explore-v16.json`.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from explore_v12 import bundle_trees, dev_f1, lean  # noqa: E402
from explore_v13 import load_pool  # noqa: E402
from score_fit import spearman  # noqa: E402  (tied values share their average rank)

LANGUAGES = ("english", "alpino", "cess_esp", "floresta")
OUT = os.path.join(ROOT, "runs", "explore-v16.json")


def variants(scores):
    """``{name: kept member positions}`` from the members' centrality ``scores`` (in member
    order); positions keep the member order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    median = sorted(scores)[(len(scores) - 1) // 2]          # the lower median: half or more kept
    out = {"rule v14 (every member)": list(range(len(scores))),
           "the top half by centrality": [i for i in range(len(scores)) if scores[i] >= median]}
    for k in (1, 2, 3):
        if k < len(scores):
            out[f"the {k} most central"] = sorted(order[:k])
    if len(scores) > 2:
        out["all but the least central"] = sorted(order[:-1])
    return out


def explore(lang):
    from onparse import baseline_trees
    from onparse.fitting.choice import choose

    pool = load_pool(lang)
    gold, cands = pool["gold"], pool["lm_cands"] + pool["grammar_cands"]
    index = {c: i for i, c in enumerate(cands)}
    held = [list(row) for row in zip(*pool["held_cols"])]
    choice = choose(cands, held, pool["perplexity"])
    members = [index[m] for m in choice.members]
    centrality = [score for _, score in choice.member_scores]
    member_f1 = [dev_f1(pool["dev_cols"][m], gold) for m in members]
    rows = []
    for name, kept in variants(centrality).items():
        chosen = [members[i] for i in kept]
        voter, ties, _ = lean({"held_out": pool["held_cols"]}, chosen)
        score = dev_f1(bundle_trees({"dev": pool["dev_cols"]}, chosen, voter, ties), gold)
        rows.append({"variant": name, "members": [cands[m].label() for m in chosen], "voter": voter,
                     "dev": round(score, 5)})
        print(f"{lang:9s} {name:28s} dev {100 * score:.1f}  voter {voter}  members: "
              + "; ".join(rows[-1]["members"]))
    oracle = max(dev_f1(column, gold) for column in pool["dev_cols"])
    right = dev_f1(baseline_trees(pool["dev_tokens"], "right"), gold)
    rho = spearman(centrality, member_f1)
    print(f"{lang:9s} members' centrality / dev F1: "
          + "; ".join(f"{cands[m].label()} {c:.3f}/{100 * f:.1f}" for m, c, f in zip(members, centrality, member_f1))
          + f"; Spearman {'undefined' if rho is None else f'{rho:+.2f}'}; oracle {100 * oracle:.1f}; right-branching {100 * right:.1f}")
    return {"language": lang, "rows": rows, "oracle": round(oracle, 5), "right": round(right, 5),
            "members": [{"member": cands[m].label(), "centrality": round(c, 5), "dev": round(f, 5)}
                        for m, c, f in zip(members, centrality, member_f1)], "spearman": rho}


def main():
    out = [explore(lang) for lang in sys.argv[1:] or LANGUAGES]
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()

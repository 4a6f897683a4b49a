"""Issue 39 after rule v21 (dev only, no rule): where Dutch's fit loses its 5.2 dev points.

    python research/explore_v22.py alpino      # or cess_esp, floresta
    python research/explore_v22.py alpino runs/fit-alpino-v22.fit   # another fit (rule v22's)

Reads the dev trees rule v21's score kept (``runs/fit-L-v21.fit/score-trees-L-dev.pkl``, the
grammars) and rule v10's (``runs/fit-L.fit/trees-v12.pkl``, the language models), and scores on
the language's dev part averages of fit's members (``choice.json``) and of parts of them, each
with fit's voter and tie rule as the fit chose them.  Nothing is parsed, no test part is read.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from explore_v12 import bundle_trees, dev_f1  # noqa: E402
from score_fit import GOLD, TreeCache, candidate_key, known_dev_trees  # noqa: E402


def groups(choice):
    """Named member lists (keys of the kept trees): fit's members, and parts of them."""
    members = [candidate_key(m) for m in choice["members"]]
    lms = [m for m in members if m[0].startswith("lm-")]
    kept = [m for m in members if m[0].startswith("grammar-")]
    every = [candidate_key(s) for s in choice["scores"]
             if s["run"].startswith("grammar-") and s["epoch"] == choice["epochs"][s["run"]]]
    return {"fit's members": members, "its language models only": lms, "its grammars only": kept,
            "every grammar at fit's epoch, baseline-like too": every,
            "every grammar + the language models": every + lms}


def explore(language, run_dir=None):
    from onparse import load_gold

    run_dir = run_dir or os.path.join(ROOT, "runs", f"fit-{language}-v21.fit")
    with open(os.path.join(run_dir, "choice.json"), encoding="utf-8") as handle:
        choice = json.load(handle)
    dev_name = GOLD[language][0]
    gold = load_gold(dev_name)
    earlier = os.path.join(ROOT, "runs", f"fit-{language}.fit", "trees-v12.pkl")   # rule v21's links
    trees = known_dev_trees(earlier, run_dir, dev_name) if os.path.exists(earlier) else {}
    trees.update(TreeCache(os.path.join(run_dir, f"score-trees-{dev_name}.pkl"), dev_name).trees)
    named = groups(choice)
    out = []
    for m in named["every grammar + the language models"]:
        alone = dev_f1(trees[m], gold)
        out.append({"members": "-".join(map(str, m)), "n": 1, "dev": round(alone, 5)})
        print(f"{language}: {' '.join(map(str, m)):48s}  1 member   dev {100 * alone:5.1f}")
    for name, members in named.items():
        score = dev_f1(bundle_trees({"dev": [trees[m] for m in members]}, range(len(members)),
                                    choice["voter"], choice["ties"]), gold)
        out.append({"members": name, "n": len(members), "dev": round(score, 5)})
        print(f"{language}: {name:48s} {len(members):2d} members  dev {100 * score:5.1f}")
    return out


if __name__ == "__main__":
    explore(*sys.argv[1:3])

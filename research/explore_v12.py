"""Gold-free choice rules for `onparse fit`, tried on the dev parts of the four languages (rule
v12's evidence; for reading only: it chooses nothing and never reads a test part).

    python research/explore_v12.py            # every rule, every language, on dev

Reads RUN/trees-v12.pkl (`research/fit_trees.py`: each candidate's trees of the held-out
sentences fit chooses by and of the dev part).  For each rule, the gold-free choice is made on
the held-out trees only; the dev part then scores it (sentence F1, ON-LSTM convention), beside
the dev-gold oracle among the same candidates.
"""
import json
import os
import pickle
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LANGUAGES = ("english", "alpino", "cess_esp", "floresta")


def load(language):
    with open(os.path.join(ROOT, "runs", f"fit-{language}.fit", "trees-v12.pkl"), "rb") as handle:
        return pickle.load(handle)


def cached(cache, key, make):
    """``make()``, kept under ``key`` in the pickle file ``cache`` (a dict; made on first use)."""
    kept = {}
    if os.path.exists(cache):
        with open(cache, "rb") as handle:
            kept = pickle.load(handle)
    if key not in kept:
        kept[key] = make()
        with open(cache, "wb") as handle:
            pickle.dump(kept, handle)
    return kept[key]


def matrix(columns):
    """[K, K] mean agreement over the held-out sentences (onparse.fitting.choice's measure)."""
    from onparse.fitting.choice import agreement_matrix

    shared, counted = agreement_matrix([list(row) for row in zip(*columns)])
    return shared / counted


def dev_f1(trees, gold):
    from onparse import evaluate

    return evaluate(trees, gold).sentence_f1.f1


def bundle_trees(data, members, voter, ties):
    """Dev trees of the average of ``members`` (candidate indices) and an optional voter."""
    from onparse.trees.average import average_trees_batch
    from onparse.trees.baselines import baseline_trees
    from onparse.trees.tree import leaves

    dev = data["dev"]
    rows = []
    for i in range(len(dev[0])):
        row = [dev[m][i] for m in members]
        if row[0] is None:
            rows.append(None)
            continue
        if voter:
            row.append(baseline_trees([leaves(row[0])], voter)[0])
        rows.append(row)
    full = [r for r in rows if r is not None]
    averaged = iter(average_trees_batch(full, ties))
    return [None if r is None else next(averaged) for r in rows]


def lean(data, members):
    """onparse.fitting.choice's voter rule on the held-out trees of ``members``."""
    from onparse.fitting.choice import _voter

    return _voter([[data["held_out"][m][i] for m in members] for i in range(len(data["held_out"][0]))])


# -- rules: each returns member indices (most central first) from the held-out trees only --------

def rule_v10(language, cands):
    """Rule v10's members as its fit chose them (``runs/fit-L.fit/choice.json``; onparse fit's
    own rule is rule v12's now), as indices of ``cands``."""
    with open(os.path.join(ROOT, "runs", f"fit-{language}.fit", "choice.json"), encoding="utf-8") as handle:
        members = json.load(handle)["members"]
    index = {c: i for i, c in enumerate(cands)}
    return [index[(m["run"], m["epoch"], m["layer"], m["decoder"])] for m in members]


def like_with_like(A, cands, keep_readings=1, epoch_rule="agreement", decoders=("onlstm", "split")):
    """Each candidate scored only against the other runs' candidates of the same layer and
    decoder (all their epochs).  Per reading (layer, decoder), each run's epoch is its
    best-scored (or its last: epoch_rule="last"); the reading's score is the mean cross-run
    agreement of those epochs; the ``keep_readings`` best readings, every run's chosen epoch."""
    runs = sorted({c[0] for c in cands})
    readings = sorted({(c[2], c[3]) for c in cands if c[3] in decoders})
    scored = []
    for reading in readings:
        mine = [i for i, c in enumerate(cands) if (c[2], c[3]) == reading]
        score = {}
        for i in mine:
            peers = [j for j in mine if cands[j][0] != cands[i][0]]
            score[i] = A[i, peers].mean()
        chosen = []
        for run in runs:
            own = [i for i in mine if cands[i][0] == run]
            if epoch_rule == "last":
                chosen.append(max(own, key=lambda i: cands[i][1]))
            else:
                chosen.append(min(own, key=lambda i: (-score[i], cands[i][1])))
        pair = [A[i, j] for i in chosen for j in chosen if cands[i][0] != cands[j][0]]
        scored.append((float(np.mean(pair)) if pair else 0.0, reading, chosen))
    scored.sort(key=lambda t: -t[0])
    members = [i for _, _, chosen in scored[:keep_readings] for i in chosen]
    return members, scored


def best_ppl_epochs(language):
    """Each run's epoch of lowest validation perplexity (its own metrics.jsonl; ties earlier)."""
    folder = os.path.join(ROOT, "runs", f"fit-{language}.fit")
    out = {}
    for run in sorted(os.listdir(folder)):
        path = os.path.join(folder, run, "metrics.jsonl")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as handle:
            epochs = [json.loads(line) for line in handle]
        epochs = [(e["valid_ppl"], e["epoch"]) for e in epochs if e.get("event") == "epoch"]
        out[run] = min(epochs)[1]
    return out


def fixed_readings(cands, epochs, layers, decoders):
    """Every run's chosen epoch read at ``layers`` x ``decoders`` (layers outermost, then runs)."""
    return [i for layer in layers for decoder in decoders for i, c in enumerate(cands)
            if epochs.get(c[0]) == c[1] and c[2] == layer and c[3] == decoder]


def main():
    from onparse import load_gold

    out = []
    for language in LANGUAGES:
        data = load(language)
        cands = [tuple(c) for c in data["candidates"]]
        gold = load_gold(data["dev_gold"])
        f1 = [dev_f1(t, gold) for t in data["dev"]]
        A = matrix(data["held_out"])
        oracle = max(range(len(f1)), key=lambda i: f1[i])
        from onparse import baseline_trees
        right = dev_f1(baseline_trees([list(s.words) for s in gold], "right"), gold)
        print(f"== {language}: {len(cands)} candidates; oracle {cands[oracle]} {100 * f1[oracle]:.1f}; "
              f"right-branching {100 * right:.1f}")
        rules = {"v10": rule_v10(language, cands)}
        ppl = best_ppl_epochs(language)
        last = {run: max(c[1] for c in cands if c[0] == run) for run in ppl}
        for ename, epochs in (("ppl", ppl), ("last", last)):
            for layers in ((1, 2, 3), (2, 3)):
                for decs in (("onlstm",), ("onlstm", "split")):
                    rules[f"fixed epoch={ename} layers={layers} decoders={'+'.join(decs)}"] = \
                        fixed_readings(cands, epochs, layers, decs)
        for k in (1, 2, 3):
            for er in ("agreement", "last"):
                for decs in (("onlstm", "split"), ("onlstm",)):
                    members, scored = like_with_like(A, cands, k, er, decs)
                    rules[f"like k={k} epoch={er} decoders={'+'.join(decs)}"] = members
                    if k == 1 and er == "agreement":
                        print("   readings by like-with-like agreement (" + "+".join(decs) + "): " + ", ".join(
                            f"L{r[0]} {r[1]} {s:.3f} (dev {100 * np.mean([f1[i] for i in ch]):.1f})" for s, r, ch in scored))
        for name, members in rules.items():
            voter, ties, _ = lean(data, members)
            for v, t in ((voter, ties), (None, "first")):
                score = dev_f1(bundle_trees(data, members, v, t), gold)
                row = {"language": language, "rule": name, "voter": v, "members": [cands[m] for m in members],
                       "dev": round(score, 5), "oracle": round(f1[oracle], 5)}
                out.append(row)
                print(f"   {name:45s} voter {str(v):5s} dev {100 * score:.1f}  members "
                      + "; ".join(f"{c[0]} e{c[1]} L{c[2]} {c[3]}" for c in row["members"]))
    with open(os.path.join(ROOT, "runs", "explore-v12.json"), "w") as handle:
        json.dump(out, handle, indent=1)
    summary(out)


def summary(rows):
    """One line per rule (its own voter rule's row): dev F1 per language, and the mean gap to the oracle."""
    seen = {}
    for r in rows:
        seen.setdefault(r["rule"], {}).setdefault(r["language"], r)      # the first row: the lean rule's voter
    print("rule (voter by lean) | " + " | ".join(LANGUAGES) + " | mean below the oracle")
    for rule, by in seen.items():
        cells = [f"{100 * by[L]['dev']:.1f}" if L in by else "-" for L in LANGUAGES]
        gaps = [100 * (by[L]["oracle"] - by[L]["dev"]) for L in LANGUAGES if L in by]
        print(f"{rule} | " + " | ".join(cells) + f" | {np.mean(gaps):.1f}")


if __name__ == "__main__":
    sys.exit(main())

"""Rule v10, 58: score one `onparse fit` against gold, after the fact (fit itself read none).

    python research/score_fit.py --language english runs/fit-english.pt
    python research/score_fit.py --language alpino runs/fit-alpino.pt [--run-dir DIR]
    python research/score_fit.py --language alpino runs/fit-alpino.pt --dev-only   # test never read

For the fit's run folder (``BUNDLE``'s ``.fit`` beside it, or ``--run-dir``), every candidate of
``choice.json`` alone and the fit's bundle are scored on the language's **dev** part (sentence
F1, ON-LSTM convention); the dev-gold oracle is the highest (ties to the earlier, the bundle
last).  Then, on the **test** part (all lengths and <= 10 words): the bundle, the oracle and
right-branching.  Also the Spearman rank correlation over the candidates between the gold-free
score fit chose by and dev F1.  One JSON line is appended to ``--records``
(``research/fit-v10.jsonl``) and printed.  The dev trees are kept as they are made, in the run
folder's ``score-trees-DEV.pkl`` (:class:`TreeCache`, written at least once a minute): a score
stopped part way starts again about where it stopped, and nothing of the test part is read
before every dev tree is made.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "fit-v10.jsonl")
#: Per language: its dev part, its test part and the test part's sentences of <= 10 words.
GOLD = {"english": ("wsj-sample-dev", "wsj-sample-test", "wsj10-sample-test")}
for _name in ("alpino", "cess_esp", "floresta"):
    GOLD[_name] = (f"{_name}-dev", f"{_name}-test", f"{_name}10-test")


def ranks(values):
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a, b):
    """Spearman's rank correlation of two equally long lists (None when either is constant)."""
    ra, rb = ranks(a), ranks(b)
    n = len(ra)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return None if va == 0 or vb == 0 else cov / (va * vb)


def f1(trees, gold):
    from onparse import evaluate

    return round(evaluate(trees, gold).sentence_f1.f1, 5)


def candidate_key(c):
    """A candidate's key in every kept-trees mapping: ``(run, epoch, layer, decoder)``."""
    return (c["run"], c["epoch"], c["layer"], c["decoder"])


def candidate_trees(run_dir, choice, tokens, known=None, kept=None):
    """Per candidate of ``choice`` (in its order) its trees of ``tokens``; ``known``: trees of
    the same tokens already computed, ``{(run, epoch, layer, decoder): trees}``, used as they are;
    ``kept``: a :class:`TreeCache` of these tokens' trees, read first, added to after each epoch
    file and written at least once a minute (a stopped score starts again about where it stopped)."""
    from onparse import load

    out = dict(known or {})
    if kept is not None:
        out.update(kept.trees)
    wanted = {}
    for c in choice["scores"]:
        if candidate_key(c) not in out:
            wanted.setdefault((c["run"], c["epoch"]), []).append((c["layer"], c["decoder"]))
    for (run, epoch), members in wanted.items():
        path = os.path.join(run_dir, run, f"epoch-{epoch:03d}.pt")
        parser = load(path, "cpu")
        parser = parser.with_grid("all", "all") if parser.models[0].layered else parser
        rows = parser.member_trees(tokens)
        new = {(run, epoch, m.layer, m.decoder): [row[k] for row in rows]
               for k, m in enumerate(parser.members) if (m.layer, m.decoder) in members}
        out.update(new)
        if kept is not None:
            kept.add(path, new)
    if kept is not None and wanted:
        kept.save()
    return [out[candidate_key(c)] for c in choice["scores"]]


class TreeCache:
    """Dev trees a score computed, kept in ``path`` (a pickle) by candidate with the stamp (real
    path, size, mtime) of the epoch file they came from; an entry whose file changed since, or a
    file of another gold set, is not read."""

    def __init__(self, path, gold_name, every=60.0):
        import pickle

        # Written at most every ``every`` seconds (and by save()): rewriting the whole pickle
        # after each of a fit's 264 epochs made the writes grow with the square of their number.
        self.path, self.gold_name, self.every = path, gold_name, every
        self.saved = time.monotonic()
        self.trees, self.stamps = {}, {}
        if os.path.exists(path):
            with open(path, "rb") as handle:
                kept = pickle.load(handle)
            if kept["dev_gold"] == gold_name:
                for key, trees in kept["trees"].items():
                    stamp = kept["stamps"][key]
                    if stamp == self.stamp(stamp[0]):
                        self.trees[key], self.stamps[key] = trees, stamp

    @staticmethod
    def stamp(path):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            return None
        info = os.stat(real)
        return (real, info.st_size, info.st_mtime_ns)

    def add(self, path, trees):
        """Keep ``trees`` (by candidate key) of the epoch file ``path``."""
        stamp = self.stamp(path)
        for key, value in trees.items():
            self.trees[key], self.stamps[key] = value, stamp
        if time.monotonic() - self.saved >= self.every:
            self.save()

    def save(self):
        """Write every tree kept so far to the pickle."""
        import pickle

        from onparse.files.safeio import atomic_output

        with atomic_output(self.path) as tmp, open(tmp, "wb") as handle:
            pickle.dump({"dev_gold": self.gold_name, "trees": self.trees, "stamps": self.stamps}, handle)
        self.saved = time.monotonic()


def known_dev_trees(path, run_dir, dev_name):
    """The dev trees `research/fit_trees.py` kept (``path``, a trees-v12.pkl) by candidate, for
    the runs of ``run_dir`` that are the very folders it read (the same run names, linked)."""
    import pickle

    with open(path, "rb") as handle:
        kept = pickle.load(handle)
    assert kept["dev_gold"] == dev_name, f"{path} holds trees of {kept['dev_gold']}, not {dev_name}"
    source = os.path.dirname(os.path.abspath(path))
    out = {}
    for candidate, trees in zip(kept["candidates"], kept["dev"]):
        run = candidate[0]
        if os.path.realpath(os.path.join(run_dir, run)) == os.path.realpath(os.path.join(source, run)):
            out[tuple(candidate)] = trees
    return out


def perplexity_ranking(run_dir, choice, dev_f1):
    """Spearman's correlation, over the candidates read as fit's members are (a language model
    at layers 2-3 with the paper's decoder, a grammar's MBR tree), between minus their epoch's
    validation perplexity (the gold-free score that chooses epochs since rule v12) and dev F1."""
    from onparse.fitting.choice import GRAMMAR_DECODER, MEMBER_DECODER, MEMBER_LAYERS
    from onparse.fitting.pipeline import _valid_perplexity

    ppl = {run: _valid_perplexity(os.path.join(run_dir, run)) for run in {c["run"] for c in choice["scores"]}}
    pairs = [(-ppl[c["run"]][c["epoch"]], f) for c, f in zip(choice["scores"], dev_f1)
             if (c["decoder"] == GRAMMAR_DECODER or (c["decoder"] == MEMBER_DECODER and c["layer"] in MEMBER_LAYERS))
             and c["epoch"] in ppl[c["run"]]]
    return spearman([p for p, _ in pairs], [f for _, f in pairs]) if len(pairs) > 1 else None


def score(bundle, run_dir, language, dev_trees=None, dev_only=False):
    """Rule 58's figures (module docstring) as one record; ``dev_only``: the dev part's alone,
    the test part never loaded (a reading for a rule still to be written)."""
    from onparse import baseline_trees, load, load_gold

    with open(os.path.join(run_dir, "choice.json"), encoding="utf-8") as handle:
        choice = json.load(handle)
    dev_name, test_name, short_name = GOLD[language]
    dev = load_gold(dev_name)
    dev_tokens = [list(s.words) for s in dev]
    fitted = load(bundle, "cpu")
    known = known_dev_trees(dev_trees, run_dir, dev_name) if dev_trees else None
    kept = TreeCache(os.path.join(run_dir, f"score-trees-{dev_name}.pkl"), dev_name)
    dev_f1 = [f1(trees, dev) for trees in candidate_trees(run_dir, choice, dev_tokens, known, kept)]
    bundle_dev = f1(fitted.trees(dev_tokens), dev)
    options = dev_f1 + [bundle_dev]
    best = max(range(len(options)), key=lambda i: (options[i], -i))
    oracle = "bundle" if best == len(dev_f1) else choice["scores"][best]
    record = {"language": language, "bundle": bundle,
              "choice": {k: choice[k] for k in ("epochs", "members", "voter", "ties")},
              "dev": {"bundle": bundle_dev, "oracle": options[best], "candidates": dev_f1},
              "oracle": oracle, "spearman": spearman([c["agreement"] for c in choice["scores"]], dev_f1),
              "spearman_perplexity": perplexity_ranking(run_dir, choice, dev_f1)}
    if dev_only:
        return record
    test, short = load_gold(test_name), load_gold(short_name)

    def test_scores(trees_of):
        return {"all": f1(trees_of(test), test), "10": f1(trees_of(short), short)}

    def tokens(gold):
        return [list(s.words) for s in gold]

    if oracle == "bundle":
        oracle_test = test_scores(lambda g: fitted.trees(tokens(g)))
    else:
        def oracle_trees(g):
            return candidate_trees(run_dir, {"scores": [oracle]}, tokens(g))[0]
        oracle_test = test_scores(oracle_trees)
    return {**record, "test": {"fit": test_scores(lambda g: fitted.trees(tokens(g))), "oracle": oracle_test,
                               "right": test_scores(lambda g: baseline_trees(tokens(g), "right"))}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("--language", choices=sorted(GOLD), required=True)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--records", default=RECORDS)
    parser.add_argument("--dev-trees", default=None, metavar="PKL",
                        help="dev trees fit_trees.py kept for runs this fit links to (used, not recomputed)")
    parser.add_argument("--dev-only", action="store_true",
                        help="score the dev part only; the test part is not read (a rule still to be written)")
    args = parser.parse_args()
    run_dir = args.run_dir or os.path.splitext(args.bundle)[0] + ".fit"
    record = score(args.bundle, run_dir, args.language, args.dev_trees, args.dev_only)
    line = json.dumps(record)
    with open(args.records, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    print(line)


if __name__ == "__main__":
    sys.exit(main())

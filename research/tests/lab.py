"""Helpers of the research tests: the scripts of research/ loaded as modules, the recorded files
read back, a toy language and a tiny gold set.  Import them with ``from lab import ...`` (pytest
puts this folder on ``sys.path``; a name of its own, so that running tests/ and research/tests in
one session never mixes this with tests/conftest.py)."""
import importlib.util
import json
import random
from pathlib import Path

RESEARCH = Path(__file__).resolve().parents[1]
ROOT = RESEARCH.parent


def load_script(name):
    """research/NAME.py as a fresh module (patched attributes never leak between tests).  The
    scripts that share rule v5's helpers put research/ on ``sys.path`` themselves."""
    spec = importlib.util.spec_from_file_location(f"research_{name}", RESEARCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_tsv(name):
    """research/NAME: one dict per row, keyed by the header."""
    lines = (RESEARCH / name).read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


def read_json(name):
    return json.loads((RESEARCH / name).read_text(encoding="utf-8"))


def read_jsonl(name):
    return [json.loads(line) for line in (RESEARCH / name).read_text(encoding="utf-8").splitlines() if line]


NOUNS = "cat dog bird man woman child teacher farmer".split()
VERBS = "saw liked chased found heard helped".split()
ADJS = "big small red old young happy".split()
DETS = "the a every some".split()
PREPS = "with near behind under".split()


def write_corpus(path, n_sentences=300, seed=0):
    """A toy language with structure an LM can learn (det adj? noun (prep NP)? verb NP), with
    punctuation that the reader must drop (a copy of tests/conftest.py's).  Returns the path."""
    rng = random.Random(seed)

    def noun_phrase(depth=0):
        words = [rng.choice(DETS)] + ([rng.choice(ADJS)] if rng.random() < 0.4 else []) + [rng.choice(NOUNS)]
        if depth < 2 and rng.random() < 0.25:
            words += [rng.choice(PREPS)] + noun_phrase(depth + 1)
        return words

    lines = []
    for _ in range(n_sentences):
        words = noun_phrase() + [rng.choice(VERBS)] + noun_phrase()
        if rng.random() < 0.3:
            words = ["Yesterday", ","] + words
        lines.append(" ".join(words) + " .")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return str(path)


#: Seeds of the tiny runs, and how many epochs each keeps.
SEEDS = (1, 2, 3)
EPOCHS = 2


#: A made-up gold set in the toy language (labelled, PTB style): three sentences of 5, 6 and 12 words.
GOLD_TREES = """\
(S (NP (DT the) (NN cat)) (VP (VBD saw) (NP (DT a) (NN dog))))
(S (NP (DT every) (JJ old) (NN man)) (VP (VBD liked) (NP (DT the) (NN bird))))
(S (NP (NP (DT the) (NN teacher)) (PP (IN with) (NP (DT a) (JJ red) (NN dog))))
   (VP (VBD found) (NP (NP (DT some) (NN child)) (PP (IN near) (NP (DT the) (NN farmer))))))
"""


class NamedTrees:
    """Stands in for a choose script's ``Trees`` (rules v8, v11, v17): a candidate's 'trees' are
    its name, so that a stub ``scores_of`` can score it by name."""

    def __init__(self, gold, **_options):
        self.gold = gold

    def of(self, *name):
        return name

    def teacher_trees(self):
        return ("teacher", None, None)

    def shipped_trees(self):
        return ("shipped", None, None)


def scores_from(table):
    """A stub ``scores_of`` that gives every convention and length the F1 ``table(*name)``."""
    def scores_of(trees, gold, short, short_index):
        f1 = table(*trees)
        return {part: {"sentence_f1": f1, "kim_f1": f1, "corpus_f1": f1} for part in ("all", "10")}
    return scores_of


def run_dev(script, tmp_path, monkeypatch, scores_of):
    """A choose script's dev step with :class:`NamedTrees`, a stub gold set and ``scores_of``,
    writing its trials and choice under ``tmp_path``; returns the choice it wrote."""
    monkeypatch.setattr(script, "Trees", NamedTrees)
    monkeypatch.setattr(script.v5, "golds", lambda name, short: (["gold"], ["short"], [0]))
    monkeypatch.setattr(script.v5, "scores_of", scores_of)
    monkeypatch.setattr(script, "TRIALS", str(tmp_path / "trials.tsv"))
    monkeypatch.setattr(script, "CHOICE", str(tmp_path / "choice.json"))
    script.dev()
    return json.loads((tmp_path / "choice.json").read_text())


def write_run(folder, corpus, epochs=2, seconds=100.0, finished=True, config=None):
    """A trained run's folder as fit and the refits read it: its metrics.jsonl (the text, each
    epoch's time and perplexity, the stop record when ``finished``; ``config``: the training
    config its start record holds)."""
    folder.mkdir(parents=True)
    lines = [{"event": "start", "preset": "small", "corpus": {"source": corpus}, **({"config": config} if config else {})}]
    lines += [{"event": "epoch", "epoch": e, "train_loss": 6.0, "valid_loss": 5.0, "valid_ppl": 150.0 - e,
               "epoch_time_s": seconds} for e in range(1, epochs + 1)]
    if finished:
        lines.append({"event": "stop", "reason": "epochs", "epoch": epochs})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))

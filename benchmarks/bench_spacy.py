"""The spaCy component against the parser it wraps, side by side: what the pipeline costs on top.

Both contenders parse the same sentences in this process, on one thread by default, rounds
alternating A B A B; the medians give each one's sentences a second and their ratio:

- ``parser``: :meth:`onparse.Parser.trees` over the sentences' words, then their labels (a
  grammar's, when the model has one): what ``onparse induce --format ptb`` computes;
- ``spacy``: the same words as spaCy docs of one sentence each (made before the clock starts),
  through ``nlp.pipe`` with the ``onparse`` component (parsing, placing every token, storing the trees on the doc), then each
  sentence's ``._.parse_string``.

The two must give the same brackets (the sentences hold no punctuation, so the component's
brackets are the parser's); the benchmark says so, or stops.  Then one long sentence (``--long``
tokens: the dev half's words in order, as one sentence) goes through each once, wall and CPU
seconds printed: how long a very long sentence takes.

Sentences: the sample's dev half (``wsj-sample-dev``, all lengths), its gold words as given,
but for the sentences with a word the model would read as punctuation (``%`` when its vocabulary
lacks it), whose brackets differ by design: the component places such a token, ``P``.

    python benchmarks/bench_spacy.py                          # the bundled model, one thread, 3 rounds
    python benchmarks/bench_spacy.py --model mine.pt --limit 500 --long 500
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def with_parser(parser, tokens):
    """The parser's brackets of ``tokens`` (one string per sentence)."""
    from onparse import to_ptb
    from onparse.induce import tree_labels

    trees = parser.trees(tokens)
    labels = tree_labels(parser, tokens, trees) or [None] * len(trees)
    return [to_ptb(tree, labels=names) for tree, names in zip(trees, labels)]


def as_docs(nlp, tokens):
    """Each token list as a spaCy doc of one sentence (made before the clock starts: spaCy's own work)."""
    from spacy.tokens import Doc

    return [Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1)) for words in tokens]


def with_spacy(nlp, docs):
    """The component's brackets of ``docs``, through ``nlp.pipe`` (parsed again each time)."""
    return [sent._.parse_string for doc in nlp.pipe(docs) for sent in doc.sents]


def clocked(run, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    out = run(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="a model file [default: the bundled model]")
    ap.add_argument("--limit", type=int, default=None, help="the first N dev sentences only")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--long", type=int, default=2000, help="tokens of the long sentence (0: none) [2000]")
    ap.add_argument("--threads", type=int, default=1, help="torch threads [default: 1]")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    import spacy

    from onparse import load_gold

    nlp = spacy.blank("en")
    component = nlp.add_pipe("onparse", config={"model": args.model})
    parser = component.parser
    keeps = parser.preprocessor().keeps
    every = [list(s.words) for s in load_gold("wsj-sample-dev")][:args.limit]
    tokens = [words for words in every if all(map(keeps, words))]
    print(f"{len(tokens):,} sentences of wsj-sample-dev ({len(every) - len(tokens)} left out: a gold word the "
          f"model would read as punctuation), {sum(map(len, tokens)):,} words; "
          f"{torch.get_num_threads()} thread(s); {args.model or 'the bundled model'} ({parser.describe_average()}); "
          f"spaCy {spacy.__version__}", file=sys.stderr)
    contenders = {"parser": (with_parser, parser, tokens), "spacy": (with_spacy, nlp, as_docs(nlp, tokens))}
    for run, first, given in contenders.values():                   # warm-up
        run(first, given[:64])
    times = {name: [] for name in contenders}
    brackets = {}
    for r in range(args.rounds):
        for name, (run, first, given) in contenders.items():
            seconds, _, brackets[name] = clocked(run, first, given)
            times[name].append(seconds)
            print(f"round {r + 1} {name}: {seconds:.2f} s ({len(tokens) / seconds:,.0f} sent/s)", file=sys.stderr)
    if brackets["parser"] != brackets["spacy"]:
        sys.exit("the component's brackets differ from the parser's: not the same work, no comparison")
    rate = {name: len(tokens) / statistics.median(t) for name, t in times.items()}
    print(f"medians of {args.rounds} round(s), {len(tokens):,} sentences, the same brackets")
    for name in contenders:
        print(f"{name:6} | {rate[name]:8,.1f} sent/s")
    print(f"spacy / parser: {rate['spacy'] / rate['parser']:.2f}x")
    if args.long:
        words = [w for sentence in load_gold("wsj-sample-dev") for w in sentence.words][:args.long]
        given = {"parser": [words], "spacy": as_docs(nlp, [words])}
        clocks = {name: clocked(run, first, given[name])[:2] for name, (run, first, _) in contenders.items()}
        print(f"one sentence of {len(words):,} tokens: " + ", ".join(
            f"{name} {wall:.1f} s ({cpu:.1f} s CPU)" for name, (wall, cpu) in clocks.items()))


if __name__ == "__main__":
    main()

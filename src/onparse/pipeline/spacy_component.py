"""onparse as a spaCy pipeline component: ``nlp.add_pipe("onparse")``.

spaCy finds the factory through the ``spacy_factories`` entry point of onparse's package, so
nothing needs importing first::

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("onparse")                 # config: {"model": None, "batch_size": 1000, "reading": None}
    doc = nlp("The cat sat on the mat.")
    sent = next(doc.sents)
    sent._.parse_string                     # '(X (X (X (W The) (W cat)) (W sat)) ... (P .))'

Config: ``model``, the path (a string: spaCy's config holds JSON values) of a model file of any
kind or a bundle (``null``: the bundled model); ``batch_size``, the most sentences handed to the
parser at once, across docs (it sorts them by length into batches of its own: the more it is
given, the less padding); ``reading``, the name of one of a bundle's readings (``null``: its
default), passed to :func:`onparse.load` only when given.

Input: each sentence of ``doc.sents`` (a sentencizer or a parser must set them first; a doc
without sentence boundaries is refused in one line), over spaCy's own tokens as they are.  The
model reads the sentence's words (a token holding a letter or a digit, or punctuation the
model's vocabulary holds as a word: the rule of ``onparse induce``); every other token,
punctuation and whitespace, gets its place by the rule of :mod:`onparse.pipeline.placement`: a
run of them between two words goes into the smallest constituent that holds both words, between
its two parts; a run at either end of the sentence goes into the sentence's own constituent; a
sentence without words is one flat constituent.  So every token is in ``parse_string``.

Output: the trees are stored on the doc as plain lists (:mod:`onparse.pipeline.spacy_extensions`,
``doc.user_data["onparse"]``), so they survive ``DocBin(store_user_data=True)`` and worker
processes, and read through ``Span._.parse_string``, ``constituents``, ``parent``, ``children``
and ``labels``.  ``nlp.pipe`` parses the sentences of many docs together, ``batch_size`` at a
time; the trees are those of ``nlp(text)``, one doc at a time.  A worker process that
``nlp.pipe(n_process=N)`` forks parses on one thread (:meth:`OnparseComponent._forked`).

Importing this module loads no model (spaCy imports every registered factory whenever it builds
a pipeline): the parser is loaded when the component is made, and again, lazily, in a process
that unpickles it.
"""
import os
from typing import Iterable, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc

import onparse
from ..arguments import whole
from ..induce import tree_labels
from .placement import PUNCT_TAG, SPACE_TAG, WORD_TAG, place
from .spacy_extensions import register, store

#: The factory's name: ``nlp.add_pipe(NAME)``.
NAME = "onparse"
#: The component's config and its defaults.
#: 1000 sentences: the dev half's first 256, parsed in chunks of 64 in the order of the text, cost
#: the bundled model 2.3x the CPU time of one chunk of 256 (benchmarks/bench_spacy.py compares).
DEFAULT_CONFIG = {"model": None, "batch_size": 1000, "reading": None}


class OnparseComponent:
    """The pipeline component: parses each sentence of a doc (module docstring).

    ``model``: a path, or None for the bundled model; ``batch_size``: the most sentences handed
    to the parser at once; ``reading``: a bundle's reading by name (None: the file's default).
    The model is loaded here, so a bad path, reading or batch size fails when the pipe is added.
    Cost: loading the model (a second or two for the bundled one)."""

    def __init__(self, name: str = NAME, *, model: Optional[str] = None, batch_size: int = DEFAULT_CONFIG["batch_size"],
                 reading: Optional[str] = None):
        self.name, self.model, self.reading = name, model, reading
        self.batch_size = whole(batch_size, "batch_size", 1)
        register()
        self._parser = self._load()
        self._pid = os.getpid()

    def _load(self):
        options = {}
        if self.reading is not None:             # only then: an onparse without readings still loads
            options["reading"] = self.reading
        return onparse.load(self.model, **options)

    @property
    def parser(self):
        """The :class:`onparse.Parser` (loaded again after unpickling)."""
        if self._pid != os.getpid():
            self._forked()
        if self._parser is None:
            self._parser = self._load()
        return self._parser

    def _forked(self) -> None:
        # A worker that nlp.pipe(n_process=N) forked from a process whose torch had run on several
        # threads: OpenMP's threads do not survive a fork, and the worker's first parallel region
        # waits for them forever.  Each worker parses on one thread (N workers: N threads), as
        # torch's own DataLoader workers do.
        import torch

        torch.set_num_threads(1)
        self._pid = os.getpid()

    # spaCy's worker processes may receive the component pickled: the model is loaded there again
    # from the config rather than sent across (torch modules, megabytes).
    def __getstate__(self):
        return {**self.__dict__, "_parser": None, "_pid": None}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._pid = os.getpid()                 # loads its own model here: no fork to mind
        register()

    def __call__(self, doc: Doc) -> Doc:
        """Parse every sentence of ``doc``; the trees go on the doc.  Cost: the parser's, per
        sentence (:meth:`onparse.Parser.trees`), and its labels when a grammar names spans."""
        self.parse([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: Optional[int] = None) -> Iterator[Doc]:
        """The docs, parsed, in order: their sentences go to the parser ``self.batch_size`` at a
        time across docs.  ``batch_size`` (docs, spaCy's ``nlp.pipe`` argument) only sets how
        many docs spaCy hands over at once: the trees do not depend on it."""
        waiting: List[Doc] = []
        count = 0
        for doc in docs:
            waiting.append(doc)
            count += len(sentences(doc))
            if count >= self.batch_size:
                self.parse(waiting)
                yield from waiting
                waiting, count = [], 0
        if waiting:
            self.parse(waiting)
            yield from waiting

    def parse(self, docs: List[Doc]) -> None:
        """Parse the sentences of ``docs``, ``batch_size`` at a time, and store each doc's trees."""
        parser = self.parser
        keeps = parser.preprocessor().keeps
        plan = []                              # per doc: its tags, and per sentence (start, end, read)
        work = []                              # (doc number, sentence number, token texts, read)
        for d, doc in enumerate(docs):
            tags, spans = [], []
            for s, sent in enumerate(sentences(doc)):
                texts = [t.text for t in sent]
                read = [not t.is_space and keeps(t.text) for t in sent]
                tags += [WORD_TAG if r else SPACE_TAG if t.is_space else PUNCT_TAG for t, r in zip(sent, read)]
                spans.append((sent.start, sent.end))
                work.append((d, s, texts, read))
            plan.append((tags, spans, [None] * len(spans)))
        for at in range(0, len(work), self.batch_size):
            chunk = work[at:at + self.batch_size]
            words = parser.tokens([[t for t, r in zip(texts, read) if r] for _, _, texts, read in chunk])
            trees = parser.trees(words)
            labels = tree_labels(parser, words, trees) if any(words) else None
            for k, (d, s, texts, read) in enumerate(chunk):
                nodes = place(texts, read, trees[k], labels[k] if labels else None)
                start = plan[d][1][s][0]
                plan[d][2][s] = [(a + start, b + start, label) for a, b, label in nodes]
        for doc, (tags, spans, nodes) in zip(docs, plan):
            store(doc, tags, [(a, b, n) for (a, b), n in zip(spans, nodes)])


def sentences(doc: Doc) -> list:
    """The sentences of ``doc`` (none for an empty doc); ValueError, in one line, when nothing
    set its sentence boundaries."""
    if not len(doc):
        return []
    if not doc.has_annotation("SENT_START"):
        raise ValueError("onparse parses each sentence of a doc, and this doc has no sentence boundaries: "
                         "add a sentencizer or a parser before it (nlp.add_pipe('sentencizer', before='onparse'))")
    return list(doc.sents)


@Language.factory(NAME, default_config=DEFAULT_CONFIG, requires=["token.is_sent_start"])
def make_component(nlp: Language, name: str, model: Optional[str], batch_size: int,
                   reading: Optional[str]) -> OnparseComponent:
    """The factory behind ``nlp.add_pipe("onparse", config={...})`` (module docstring)."""
    return OnparseComponent(name, model=model, batch_size=batch_size, reading=reading)

"""The neural PCFG as a kind of model (:class:`onparse.kinds.ParsingModel`).

A grammar gives a probability to every labelled binary tree of a sentence (``docs/pcfg.md``).  Its
members are two decoders: ``mbr`` (the default: the tree with the most expected constituents,
from the span marginals) and ``viterbi`` (the most probable tree, for grammars whose full rule
tensor is small enough to build: :func:`onparse.grammar.parse.viterbi_refusal`).  It has an
exact perplexity (``exp(-sum log Z / words)``) and no distances; it names its trees' spans by
nonterminal (``NT-12``: :meth:`Grammar.labels`, ``induce --format ptb``, ``show``, ``eval --labels``)
and shows its rules, words and samples (:meth:`Grammar.grammar_report`, ``onparse grammar``).  Its file is a grammar file
(:mod:`onparse.grammar.file`); in a bundle its entry has ``"kind": "grammar"``.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ..errors import OnparseError
from ..files.checkpoint import GRAMMAR_FORMAT, read_file
from ..files.record import field_of, origin_lines
from ..files.safeio import format_ppl, perplexity_of
from ..kinds import ParsingModel, Progress
from ..lm.perplexity import PerplexityResult, text_to_measure
from ..members import ALL, Member, MemberError
from ..progress import Progress as Bar
from ..trees.tree import Span
from .config import MOST_RULES, GrammarConfig
from .file import GRAMMAR_KIND, check_grammar
from .health import collapse_alarm
from .model import NeuralPCFG
from .parse import Reader, log_likelihood, viterbi_refusal

#: Sentences per batch when neither the caller nor the grammar's run says.
DEFAULT_BATCH_SIZE = 8


class Grammar(ParsingModel):
    """A neural PCFG (:class:`onparse.grammar.model.NeuralPCFG`, any rule form) and its vocabulary."""

    kind = "grammar"
    # Kept with no member reading it, it labels no trees (a reading's labels are its own members'
    # models', onparse.members.labelling): onparse grammar shows it.
    kept_for = ("shows its rules (onparse grammar)", "show their rules (onparse grammar)")
    file_format = GRAMMAR_FORMAT
    entry_kind = GRAMMAR_KIND
    family = "grammar"
    decoders = ("mbr", "viterbi")
    config_class, module_class = GrammarConfig, NeuralPCFG

    @classmethod
    def check(cls, blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
        return check_grammar(blob, path, verify=verify)


    @classmethod
    def from_blob(cls, blob: Dict[str, Any], path, device="cpu") -> "Grammar":
        """As :meth:`ParsingModel.from_blob`, then the rules the weights give, once: weights that
        are finite but huge (a file scaled by 1e30 keeps a valid checksum) overflow into NaN
        rules, which would print ``nan``, score ``inf`` and parse chains; such a file is a
        one-line OnparseError.  Cost: :meth:`~onparse.grammar.model.NeuralPCFG.rules`."""
        grammar = super().from_blob(blob, path, device)
        with torch.no_grad():
            rules = grammar.model.rules()
        if not all(bool(torch.isfinite(t).all()) for t in rules):
            raise OnparseError(f"{path}: the grammar's rule probabilities are not finite (its weights are so large "
                               "that they overflow); the file cannot be used")
        return grammar

    @classmethod
    def describe_sections(cls):
        return (_grammar_lines, _training_lines)

    @classmethod
    def checked_member(cls, config: Dict[str, Any], index: int, layer: int, decoder: str) -> Member:
        member = super().checked_member(config, index, layer, decoder)
        refusal = viterbi_refusal(config) if decoder == "viterbi" else None
        if refusal:
            raise MemberError(f"model {index + 1} is a grammar: {refusal}", "decoder")
        return member

    def grid(self, index: int, layers, decoders) -> List[Member]:
        """As :meth:`ParsingModel.grid`; "all" decoders of a grammar too large for Viterbi are
        its MBR member alone (Viterbi asked by name is a MemberError saying why)."""
        if decoders == ALL and viterbi_refusal(self.model.config.to_dict()):
            return [self.member(index, 1, "mbr")]
        return super().grid(index, layers, decoders)

    # -- trees ----------------------------------------------------------------------------------
    def member_trees(self, token_lists, members, *, batch_size: int, max_tokens: int, progress: Progress = None,
                     **_) -> list:
        """Per member the tree of every token list (:meth:`onparse.grammar.parse.Reader.trees`,
        with ``too_long``); ``progress`` counts the first member's sentences."""
        reader = Reader(self.model, self.vocab, batch_size)
        return [reader.trees(token_lists, m.decoder, progress if k == 0 else None) for k, m in enumerate(members)]

    def labelled_trees(self, token_lists: Sequence[Sequence[str]], batch_size: int = DEFAULT_BATCH_SIZE
                       ) -> List[Optional[Tuple[Any, Dict[Span, str]]]]:
        """Per token list its MBR tree and ``{span: "NT-k"}`` (each span's most probable
        nonterminal), for labelled output; None for an empty list
        (:meth:`onparse.grammar.parse.Reader.labelled`)."""
        return Reader(self.model, self.vocab, batch_size).labelled(token_lists)

    def labels(self, token_lists, trees, *, member: Member, batch_size: int) -> List[Optional[Dict[Span, str]]]:
        """Each tree's spans named ``NT-k`` by their most probable nonterminal given the sentence
        (:meth:`onparse.grammar.parse.Reader.labels_of`), whichever member built the tree: for a
        Viterbi tree these are its spans' posterior labels, not its derivation's.
        Cost: the labelled marginals, O(n^3 r + n^2 m r) per sentence."""
        return Reader(self.model, self.vocab, batch_size or DEFAULT_BATCH_SIZE).labels_of(token_lists, trees)

    # -- the grammar itself ----------------------------------------------------------------------
    def grammar_report(self, name: str, *, rules: int = 20, words: int = 5, samples: int = 5, seed: int = 0,
                       max_length: int = 30) -> Dict[str, Any]:
        """``onparse grammar``'s report, JSON-ready: ``sizes``; ``start`` (the ``rules`` most
        probable ``S -> NT-k``) and ``rules`` (the most probable binary rules,
        :meth:`~onparse.grammar.model.NeuralPCFG.top_rules`), best first; ``words`` (per
        preterminal its ``words`` most probable words); ``samples`` sentences drawn with a
        generator seeded ``seed`` (the same seed, the same sentences), of at most ``max_length``
        words, each with its tree in labelled brackets ``(NT-2 (PT-5 the) (PT-1 cat))``.

        ``rule_count`` is the number of binary rules ``m (m+p)^2``; at most that many and at most
        :data:`~onparse.grammar.config.MOST_RULES` are listed, and ``notes`` says when the bound
        cut the list.  Sampling spends a bounded number of draws
        (:func:`onparse.grammar.inside.sample`): when it runs out, ``samples`` holds what was
        drawn and ``gave_up`` says so in one line (else None).
        Cost: O(m (m+p)^2 r) for the rules (seconds at the small size, minutes at the large),
        O(p vocab) for the words, O(words) per sample, O(samples x max_length) at most."""
        model, config = self.model, self.model.config
        report: Dict[str, Any] = {"model": name, "sizes": {
            "nonterminals": config.n_nonterminals, "preterminals": config.n_preterminals, "rule_form": config.rule_form,
            "rank": config.rank,
            "vocabulary": config.vocab_size}}
        with torch.no_grad():
            start = model.rules().log_root.exp()
        top = start.topk(min(rules, config.n_nonterminals)) if rules else None
        report["start"] = [] if top is None else [{"symbol": f"NT-{k}", "probability": float(v)}
                                                  for v, k in zip(top.values.tolist(), top.indices.tolist())]
        rule_count = config.n_nonterminals * config.n_symbols ** 2
        listed = min(rules, rule_count, MOST_RULES)
        report["rule_count"] = rule_count
        report["notes"] = [f"--rules lists at most {MOST_RULES:,} rules: these are the {listed:,} most probable of "
                           f"{rule_count:,}"] if listed < min(rules, rule_count) else []
        report["rules"] = [{"parent": a, "left": b, "right": c, "probability": p}
                           for a, b, c, p in (model.top_rules(listed) if listed else [])]
        report["words"] = [{"symbol": f"PT-{k}", "words": [{"word": w, "probability": p} for w, p in row]}
                           for k, row in enumerate(model.top_words(self.vocab.itos, words) if words else [])]
        drawn = model.sample(samples, torch.Generator().manual_seed(seed), max_length) if samples else []
        report["samples"] = [{"words": [self.vocab.itos[i] for i in ids], "tree": _sampled_brackets(tree, self.vocab.itos)}
                             for ids, tree in drawn]
        report["seed"], report["max_length"] = seed, max_length
        report["gave_up"] = None
        if samples and getattr(drawn, "gave_up", False):
            report["gave_up"] = (f"sampling gave up after {drawn.draws:,} draws: {len(drawn):,} of {samples:,} "
                                 f"sentences of at most {max_length} words drawn (this grammar's derivations are "
                                 "mostly longer" + ("; try a larger --max-length)" if max_length < 500 else ")"))
        return report

    # -- perplexity ------------------------------------------------------------------------------
    def perplexity(self, corpus, split, fmt, batch_size, bptt, *, name: str, quiet: bool) -> PerplexityResult:
        """The exact per-word perplexity ``exp(-sum log Z / words)`` over the sentences of at
        least two words of the text :func:`onparse.lm.perplexity.text_to_measure` chooses (one-word
        sentences have probability 0 and are left out; ``corpus`` says how many).  ``bptt`` does
        not apply; ``batch_size``: sentences per batch (default: the run's).
        Cost: O(n^3 r + n^2 r^2) per sentence, no gradients."""
        sentences, described = text_to_measure(self.metadata, corpus, split, fmt, name)
        training = field_of(self.metadata, "training", dict, {})
        batch_size = batch_size or field_of(training, "batch_size", int) or DEFAULT_BATCH_SIZE
        with Bar(f"perplexity of {name} on {described}", len(sentences), "sentences", quiet) as bar:
            measured = log_likelihood(self.model, self.vocab, sentences, batch_size, bar.update)
        one_word = len(sentences) - measured.sentences - measured.too_long
        notes = [f"{one_word:,} one-word sentence{'s' if one_word > 1 else ''} left out"] if one_word else []
        if measured.too_long:
            count = measured.too_long
            notes.append(f"{count:,} sentence{'s' if count > 1 else ''} of more than {measured.cap:,} words left out: "
                         "too long to score exactly")
        if not measured.words:
            if measured.too_long:
                raise OnparseError(f"{described} holds no sentence of 2 to {measured.cap:,} words, the lengths a "
                                   f"grammar of this size scores ({notes[-1]})")
            raise OnparseError(f"{described} holds no sentence of two words or more")
        if notes:
            described += f" ({'; '.join(notes)})"
        loss = -measured.total / measured.words
        return replace(PerplexityResult(loss, perplexity_of(loss), measured.words, measured.sentences),
                       corpus=described)


def _sampled_brackets(tree, itos: Sequence[str]) -> str:
    """A sampled tree (:data:`onparse.grammar.inside.LabelledTree`) in labelled brackets, its word
    ids written as words (brackets in a word as ``-LRB-`` / ``-RRB-``).  Iterative."""
    parts, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):                        # a closing bracket
            parts.append(node)
        elif isinstance(node[1], int):                   # (PT-k, word id)
            word = itos[node[1]].replace("(", "-LRB-").replace(")", "-RRB-")
            parts.append(f"({node[0]} {word})")
        else:
            parts.append(f"({node[0]}")
            stack.extend([")", node[2], node[1]])
    return " ".join(parts).replace(" )", ")")


def load_grammar(path, device="cpu", *, verify: bool = True) -> Grammar:
    """Read, check and build the grammar saved at ``path``."""
    blob = read_file(path)
    if not (isinstance(blob, dict) and blob.get("format") == GRAMMAR_FORMAT):
        raise OnparseError(f"{path} is not an onparse grammar (onparse train --family grammar writes them)")
    return Grammar.from_blob(check_grammar(blob, path, verify=verify), path, device)


def _grammar_lines(blob, meta):
    """A grammar: its sizes, vocabulary, parameters and decoders."""
    c = blob["config"]
    n_params = sum(t.numel() for name, t in blob["state_dict"].items() if ":" not in name)
    viterbi = "MBR and Viterbi" if viterbi_refusal(c) is None else "MBR (too large for Viterbi)"
    form = GrammarConfig.from_dict(c).rule_form      # a file from before the setting holds low-rank rules
    rules = {"low_rank": f"low-rank rules (rank {c['rank']})", "simple": "simple rules (independent left and "
             "right child)", "full": "a full rule tensor"}[form]
    return [f"architecture: a neural PCFG with {rules}: {c['n_nonterminals']} nonterminals, "
            f"{c['n_preterminals']} preterminals, symbol embeddings {c['symbol_size']}, MLPs "
            f"{c['mlp_size']}, vocabulary {len(blob['vocab']):,}; {n_params:,} parameters; trees by {viterbi}"]


def _training_lines(blob, meta):
    """Where a grammar comes from and how well it fit its validation text."""
    training = field_of(meta, "training", dict, {})
    lines = origin_lines(meta, "training", [f"sentences of at most {training.get('max_words')} words"
                                            if "max_words" in training else None])
    ppl = field_of(meta, "valid_ppl", (int, float))
    if ppl is not None and math.isfinite(ppl):
        lines.append(f"perplexity: valid {format_ppl(float(ppl))} (per word, exact: exp(-sum log Z / words))")
    epochs = [e for e in field_of(meta, "epochs", list, []) if isinstance(e, dict)
              and isinstance(e.get("valid_ppl"), (int, float))]
    if epochs:
        times = [e.get("epoch_time_s") for e in epochs]
        minutes = sum(t for t in times if isinstance(t, (int, float)) and math.isfinite(t)) / 60
        lines.append("valid perplexity by epoch: " + ", ".join(format_ppl(float(e["valid_ppl"])) for e in epochs)
                     + f" ({minutes:.1f} min of training)")
    return lines + _health_lines(next((e for e in epochs if e.get("epoch") == meta.get("epoch")), None))


def _health_lines(record: Optional[Dict[str, Any]]) -> List[str]:
    """The collapse alarm's figures of the file's own epoch (:mod:`onparse.grammar.health`), and
    its verdict; nothing for a grammar trained before they were recorded."""
    if not record or not isinstance(record.get("unigram_ppl"), (int, float)) \
            or not isinstance(record.get("branching_share"), (int, float)):
        return []
    entropy = record.get("rule_entropy")
    alarm = collapse_alarm(record, grace=False)       # the file as it stands
    return [f"learning: valid perplexity {format_ppl(float(record['valid_ppl']))} against "
            f"{format_ppl(float(record['unigram_ppl']))} for counting words (unigram); "
            f"{record['branching_share']:.0%} of its held-out trees are right- or left-branching chains"
            + (f"; rule entropy {entropy:.2f} nats" if isinstance(entropy, (int, float)) else ""),
            f"warning: this grammar is not learning: {alarm}" if alarm else "collapse alarm: none"]

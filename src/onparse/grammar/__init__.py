"""Neural PCFGs whose binary rules take one of three forms (simple, low rank, full; docs/pcfg.md).

- ``config.py``: :class:`~onparse.grammar.config.GrammarConfig`, the sizes and rule form, and the presets
  (no torch).
- ``inside.py``: the math over rule log-probabilities: rank-space inside, span and labelled
  marginals, MBR trees, the full-tensor reference inside and Viterbi, sampling.
- ``model.py``: :class:`~onparse.grammar.model.NeuralPCFG`, the symbol embeddings and residual
  MLPs that produce the rules.
- ``parse.py``: a grammar read over token lists: length batches under a memory budget,
  log-likelihoods, MBR and Viterbi trees, labels, long sentences in pieces.
- ``kind.py``: :class:`~onparse.grammar.kind.Grammar`, the grammar as a kind of model
  (:class:`onparse.kinds.ParsingModel`); ``file.py``: its file format.
- ``settings.py``: how a grammar is trained (no torch); ``train.py``: the training loop of
  ``onparse train --family grammar``.
- ``health.py``: the collapse alarm's figures and rule (no torch): is the grammar better than
  counting words, and are its trees more than right- or left-branching chains?

This package imports nothing itself, so ``import onparse.grammar.config`` stays torch-free.
"""

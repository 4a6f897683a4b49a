"""Neural PCFGs with a low-rank (TN-PCFG style) binary rule tensor.

- ``config.py``: :class:`~onparse.grammar.config.GrammarConfig`, the sizes, and the presets
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

This package imports nothing itself, so ``import onparse.grammar.config`` stays torch-free.
"""

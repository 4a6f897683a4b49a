"""Neural PCFGs with a low-rank (TN-PCFG style) binary rule tensor.

- ``config.py``: :class:`~onparse.grammar.config.GrammarConfig`, the sizes, and the presets
  (no torch).
- ``inside.py``: the math over rule log-probabilities: rank-space inside, span and labelled
  marginals, MBR trees, the full-tensor reference inside and Viterbi, sampling.
- ``model.py``: :class:`~onparse.grammar.model.NeuralPCFG`, the symbol embeddings and residual
  MLPs that produce the rules.

This package imports nothing itself, so ``import onparse.grammar.config`` stays torch-free.
"""

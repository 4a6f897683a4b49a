"""The recurrent baselines of the paper's perplexity table: plain LSTM and GRU language models
trained by the ON-LSTM's recipe (AWD-LSTM: embedding, locked and DropConnect dropout, AR/TAR,
averaged SGD; :mod:`onparse.lm.training`), so that a perplexity compares the cells alone.

- ``config.py``: :class:`~onparse.baselines_lm.config.RecurrentConfig` (a file's ``config``),
  the run settings and presets of each family (no torch);
- ``model.py``: :class:`~onparse.baselines_lm.model.RecurrentLM`, the module;
- ``file.py``: its file (``onparse-lstm``, ``onparse-gru``);
- ``kind.py``: the two kinds of model (:class:`onparse.kinds.ParsingModel`): perplexity and
  ``info``, and a one-line refusal of trees (no master gates, so no distances);
- ``family.py``: ``onparse train --family lstm`` and ``--family gru`` (no torch).

A kind that is its package plus its registry lines (:mod:`onparse.registry`).  Nothing is
imported here, so that reading the families stays torch-free.
"""

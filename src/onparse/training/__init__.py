"""What every kind's training shares, so that no kind borrows another's loop:

- :mod:`onparse.training.options` -- how one invocation of a run goes (:class:`RunOptions`) and
  what it reports (:class:`TrainResult`), the same for ``onparse train --family lm`` and
  ``--family grammar``;
- :mod:`onparse.training.stops` -- Ctrl-C and SIGTERM: stop at a step boundary and save;
- :mod:`onparse.training.fingerprint` -- the digest of a run's training text, by which a
  ``--resume`` on another text is refused.

Each kind's own loop lives in its package (:mod:`onparse.lm.training`, :mod:`onparse.grammar.train`,
:mod:`onparse.student.distill`).  Nothing is imported here, so that reading the options does not
pay for ``import torch``.
"""

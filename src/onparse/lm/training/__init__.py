"""Training an ON-LSTM language model (``onparse train``), one job per module:

- :mod:`onparse.lm.training.train` -- the loop and its entry points (:func:`~onparse.lm.training.train.train`,
  :func:`~onparse.lm.training.train.settings`), read top to bottom;
- :mod:`onparse.lm.training.config` -- hyperparameters and presets;
- :mod:`onparse.lm.training.recipe` -- the objective, window lengths and parameter averaging (AWD-LSTM);
- :mod:`onparse.lm.training.start` -- what a run starts from: the corpus as ids, the model (seeded, or ``--init-from``);
- :mod:`onparse.lm.training.state` -- the loop's state (one value), the resumable state of ``last.pt`` it is
  saved as, and what may change on ``--resume``;
- :mod:`onparse.files.run_folder` -- the run folder: file names, lock, metrics log;
- :mod:`onparse.lm.training.distributed` -- processes and collectives under ``torchrun``;
- :mod:`onparse.training` -- what every kind's training shares: the run options and result, the
  stops (Ctrl-C, SIGTERM), the training text's fingerprint.

Nothing is imported here, so that reading a preset or a run folder's file names does not pay
for ``import torch``.
"""

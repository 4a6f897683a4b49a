"""``onparse fit``: from raw text to a chosen, bundled parser with no gold tree.
:mod:`~onparse.fitting.pipeline` runs the stages in one resumable run folder, over the selection
pipeline that the research lab shares (:mod:`onparse.selection`: run plans, candidates and their
cached trees, the gold-free choice rule); :mod:`~onparse.fitting.budget` spends ``--max-time``."""

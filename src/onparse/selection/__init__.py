"""One selection pipeline, shared by ``onparse fit`` and the research lab.

A selection trains runs, reads their kept epochs' trees, scores them and chooses:

* :mod:`~onparse.selection.runs`: a plan of runs (:class:`RunPlan`: kind, preset, seed, settings,
  corpus), each started or resumed through its kind's own training
  (:data:`onparse.registry.FAMILIES`), in this process or in one of its own
  (``python -m onparse.selection.worker``);
* :mod:`~onparse.selection.candidates`: candidates (run, epoch, reading) and their trees of a
  fixed list of sentences, parsed once and cached (:class:`TreeTable`);
* :mod:`~onparse.selection.scorers`: agreement between candidates on held-out text (no gold), F1
  against a gold set;
* :mod:`~onparse.selection.rules`: choice rules as named functions (:data:`RULES`): the
  gold-free choice of ``onparse fit`` and the lab's highest dev F1.

``onparse fit`` is a plan scored by agreement; a lab rule is a plan scored on a gold dev set.
Runs are read through :mod:`onparse.files.run_folder` only.  The public face is the module
itself: ``from onparse import selection``.
"""
from .candidates import Candidate, TreeTable, candidates_of, run_alarms
from .rules import RULES, Choice, best_dev, choose, epochs_by_run, lowest_perplexity
from .runs import RunPlan, run_command, start_run
from .scorers import agreement_matrix, cross_scores, gold_f1

__all__ = ["Candidate", "TreeTable", "candidates_of", "run_alarms", "RULES", "Choice", "best_dev", "choose",
           "epochs_by_run", "lowest_perplexity", "RunPlan", "run_command", "start_run", "agreement_matrix",
           "cross_scores", "gold_f1"]

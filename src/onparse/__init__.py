"""onparse: unsupervised constituency parsing with Ordered-Neurons LSTMs, their students and
neural PCFGs -- the public face.

Everything a user of the library needs is a name of this package (``__all__``, documented in
``docs/api.md``): loading and parsing (:func:`load`, :class:`Parser`), the choices users pass,
scoring and member selection, gold sets, tree text, training of each family (presets, settings,
the train function), perplexity, distillation, ``fit`` and the selection pipeline under it
(:mod:`onparse.selection`, a module).  What these return (``Scores``, span
metrics, results) is reached through them; the rest is imported from its home module.  Modules
below it may be reorganised; these names stay.  The command line (``onparse.cli``) takes its
library names from here too, and reads at most ten other modules (``tests/test_architecture.py``):
a few names are public for that reason alone (the last group of ``__all__``).

The names are resolved on first use, so ``import onparse`` (and ``onparse --help``) imports
neither torch nor numpy.
"""
from .errors import OnparseError
from .version import __version__

__all__ = [
    # loading and parsing
    "load", "Parser", "Member", "MemberError", "ReadingError", "read_trees", "OnparseError", "__version__",
    # the choices users pass: load(decoders=, voters=, ties=), Parser.tokens(punct=), save_bundle(weights=)
    "DECODERS", "TIES", "VOTER_KINDS", "PUNCT_POLICIES", "WEIGHT_KINDS",
    # scoring, gold sets, tree text, what a model file is
    "evaluate", "score_text", "choose_members", "load_gold", "GOLD_NAMES", "PTB_ROOT_ENV", "tagset", "TAGSETS",
    "baseline_trees", "BASELINE_KINDS", "to_brackets", "to_ptb", "describe_file",
    # training, perplexity, distillation, fit
    "corpus_spec", "load_corpus", "CORPORA", "CORPUS_FORMATS", "CORPUS_SPLITS",
    "train", "TrainConfig", "RunOptions", "PRESETS", "train_settings",
    "train_grammar", "GrammarTraining", "GrammarConfig", "GRAMMAR_PRESETS", "GRAMMAR_RULE_FORMS",
    "train_grammar_settings", "perplexity", "distill", "StudentConfig", "DistillSettings", "fit", "FitSettings",
    # the selection pipeline fit and the research lab share: plans of runs, candidates, scorers, choice rules
    "selection",
    # public only because the command line reads them: it may read at most ten library modules
    # besides this package (tests/test_architecture.py), and their homes would be an eleventh
    "holds_model", "run_family", "is_gold_spec", "read_gold", "format_comparison", "write_per_sentence",
    "GRAMMAR_SIZE_OPTIONS", "TRAIN_FAMILIES",
]

#: Public names whose attribute in their home module is called otherwise.
_RENAMED = {"BASELINE_KINDS": "KINDS", "TAGSETS": "NAMES", "tagset": "resolve", "corpus_spec": "make_spec",
            "CORPORA": "NAMES", "CORPUS_FORMATS": "FORMATS", "CORPUS_SPLITS": "SPLITS",
            "train_settings": "settings", "train_grammar": "train", "train_grammar_settings": "run_settings",
            "GRAMMAR_SIZE_OPTIONS": "SIZE_OPTIONS", "GRAMMAR_RULE_FORMS": "RULE_FORMS",
            "TRAIN_FAMILIES": "FAMILIES"}


def __getattr__(name):
    # One import per home module, on first use: keeps `import onparse` free of torch.
    if name in ("load", "Parser", "read_trees"):
        from . import api as home
    elif name in ("Member", "MemberError"):
        from . import members as home
    elif name == "ReadingError":
        from .files import readings as home
    elif name == "DECODERS":
        from .trees import decode as home
    elif name == "TIES":
        from .trees import average as home
    elif name in ("VOTER_KINDS", "baseline_trees", "BASELINE_KINDS"):
        from .trees import baselines as home
    elif name == "PUNCT_POLICIES":
        from .text import tokens as home
    elif name == "WEIGHT_KINDS":
        from .files import weights as home
    elif name == "evaluate":
        from .scores import metrics as home
    elif name in ("format_comparison", "write_per_sentence"):
        from .scores import reports as home
    elif name == "score_text":
        from .scores import predicted as home
    elif name == "choose_members":
        from .scores import agreement as home
    elif name in ("load_gold", "GOLD_NAMES", "PTB_ROOT_ENV", "is_gold_spec"):
        from .gold import treebank as home
    elif name in ("tagset", "TAGSETS"):
        from .gold import tagsets as home
    elif name == "read_gold":
        from .gold import gold_trees as home
    elif name in ("to_brackets", "to_ptb"):
        from .trees import tree as home
    elif name == "describe_file":
        from .files import describe as home
    elif name in ("run_family", "TRAIN_FAMILIES"):
        from . import registry as home
    elif name == "holds_model":
        from .files import checkpoint as home
    elif name in ("corpus_spec", "load_corpus", "CORPORA", "CORPUS_FORMATS", "CORPUS_SPLITS"):
        from .text import corpora as home
    elif name in ("train", "train_settings"):
        from .lm.training import train as home
    elif name in ("TrainConfig", "PRESETS"):
        from .lm.training import config as home
    elif name == "RunOptions":
        from .training import options as home
    elif name in ("train_grammar", "train_grammar_settings"):
        from .grammar import train as home
    elif name == "GrammarTraining":
        from .grammar import settings as home
    elif name in ("GRAMMAR_PRESETS", "GRAMMAR_SIZE_OPTIONS", "GrammarConfig", "GRAMMAR_RULE_FORMS"):
        from .grammar import config as home
    elif name in ("perplexity", "distill"):
        from . import api_tools as home
    elif name in ("StudentConfig", "DistillSettings"):
        from .student import config as home
    elif name == "fit":
        from .fitting import pipeline as home
    elif name == "FitSettings":
        from .fitting import settings as home
    elif name == "selection":          # a module: imported by name (``from . import`` would ask here again)
        import importlib

        return importlib.import_module(".selection", __name__)
    else:
        raise AttributeError(f"module 'onparse' has no attribute {name!r}")
    return getattr(home, _RENAMED.get(name, name))


def __dir__():
    return sorted(set(globals()) | set(__all__))

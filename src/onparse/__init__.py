"""onparse: unsupervised constituency parsing with Ordered-Neurons LSTMs, their students and
neural PCFGs -- the public face.

Everything a user of the library needs is a name of this package (``__all__``, documented in
``docs/api.md``): the front door (:func:`load`, :class:`Parser`), the contract every kind of model
follows, scoring and member selection, gold trees, tree text, the file formats' loaders, corpora,
training of each family (presets, settings, the train function), distillation, the training-log
figure.  Modules below it may be reorganised; these names stay.  The command line (``onparse.cli``)
takes its library names from here too, and reads at most ten other modules
(``tests/test_architecture.py``).

The names are resolved on first use, so ``import onparse`` (and ``onparse --help``) imports
neither torch nor numpy.
"""
from .errors import OnparseError
from .version import __version__

__all__ = [
    # the front door
    "load", "Parser", "Scores", "ParsingModel", "Member", "MemberError", "OnparseError", "__version__",
    # choices that load(), Parser and save_bundle take
    "DECODERS", "TIES", "VOTER_KINDS", "PUNCT_POLICIES", "WEIGHT_KINDS",
    # scores
    "evaluate", "SpanMetric", "score_text", "format_comparison", "write_per_sentence", "choose_members",
    # gold trees and tree text
    "load_gold", "Gold", "GOLD_NAMES", "PTB_ROOT_ENV", "is_gold_spec", "tagset", "TAGSETS", "read_gold",
    "to_brackets", "to_ptb", "parse_brackets", "read_trees", "baseline_trees", "BASELINE_KINDS",
    # files
    "describe_file", "load_model", "load_student", "load_grammar", "save_bundle", "holds_model",
    # corpora, training, perplexity, distillation
    "corpus_spec", "CORPORA", "CORPUS_FORMATS", "CORPUS_SPLITS",
    "train", "TrainConfig", "RunOptions", "PRESETS", "train_settings", "run_family",
    "train_grammar", "GrammarTraining", "GRAMMAR_PRESETS", "GRAMMAR_SIZE_OPTIONS", "train_grammar_settings",
    "GrammarConfig", "GRAMMAR_RULE_FORMS",
    "perplexity", "PerplexityResult", "distill", "DistillResult", "StudentConfig", "DistillSettings",
    # raw text to a parser with no gold tree
    "fit", "FitSettings", "FitResult",
    # figures
    "plot_training_log",
]

#: Public names whose attribute in their home module is called otherwise.
_RENAMED = {"BASELINE_KINDS": "KINDS", "TAGSETS": "NAMES", "tagset": "resolve", "corpus_spec": "make_spec",
            "CORPORA": "NAMES", "CORPUS_FORMATS": "FORMATS", "CORPUS_SPLITS": "SPLITS",
            "train_settings": "settings", "train_grammar": "train", "train_grammar_settings": "run_settings",
            "GRAMMAR_SIZE_OPTIONS": "SIZE_OPTIONS", "GRAMMAR_RULE_FORMS": "RULE_FORMS"}


def __getattr__(name):
    # One import per home module, on first use: keeps `import onparse` free of torch.
    if name in ("load", "Parser", "Scores", "read_trees"):
        from . import api as home
    elif name == "ParsingModel":
        from . import kinds as home
    elif name in ("Member", "MemberError"):
        from . import members as home
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
    elif name in ("evaluate", "SpanMetric", "format_comparison", "write_per_sentence"):
        from .scores import metrics as home
    elif name == "score_text":
        from .scores import predicted as home
    elif name == "choose_members":
        from .scores import agreement as home
    elif name in ("load_gold", "Gold", "GOLD_NAMES", "PTB_ROOT_ENV", "is_gold_spec"):
        from .gold import treebank as home
    elif name in ("tagset", "TAGSETS"):
        from .gold import tagsets as home
    elif name == "read_gold":
        from .gold import gold_trees as home
    elif name in ("to_brackets", "to_ptb", "parse_brackets"):
        from .trees import tree as home
    elif name == "describe_file":
        from .files import describe as home
    elif name == "save_bundle":
        from .files import bundle as home
    elif name == "run_family":
        from . import registry as home
    elif name == "holds_model":
        from .files import checkpoint as home
    elif name == "load_model":
        from .lm import kind as home
    elif name == "load_student":
        from .student import kind as home
    elif name == "load_grammar":
        from .grammar import kind as home
    elif name in ("corpus_spec", "CORPORA", "CORPUS_FORMATS", "CORPUS_SPLITS"):
        from .text import corpora as home
    elif name in ("train", "train_settings"):
        from .lm.training import train as home
    elif name in ("TrainConfig", "RunOptions", "PRESETS"):
        from .lm.training import config as home
    elif name == "PerplexityResult":
        from .lm import perplexity as home
    elif name in ("train_grammar", "train_grammar_settings"):
        from .grammar import train as home
    elif name == "GrammarTraining":
        from .grammar import settings as home
    elif name in ("GRAMMAR_PRESETS", "GRAMMAR_SIZE_OPTIONS", "GrammarConfig", "GRAMMAR_RULE_FORMS"):
        from .grammar import config as home
    elif name in ("perplexity", "distill"):
        from . import api_tools as home
    elif name == "DistillResult":
        from .student import distill as home
    elif name in ("StudentConfig", "DistillSettings"):
        from .student import config as home
    elif name in ("fit", "FitResult"):
        from .fitting import pipeline as home
    elif name == "FitSettings":
        from .fitting import settings as home
    elif name == "plot_training_log":
        from .pictures import figures as home
    else:
        raise AttributeError(f"module 'onparse' has no attribute {name!r}")
    return getattr(home, _RENAMED.get(name, name))


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""onparse: unsupervised constituency parsing with Ordered-Neurons LSTMs, their students and
neural PCFGs -- the public face.

Everything a user of the library needs is a name of this package (``__all__``, documented in
``docs/api.md``): the front door (:func:`load`, :class:`Parser`), the contract every kind of model
follows, scoring, gold trees, tree text, the file formats' loaders, training and distillation.
Modules below it may be reorganised; these names stay.

The names are resolved on first use, so ``import onparse`` (and ``onparse --help``) imports
neither torch nor numpy.
"""
from .errors import OnparseError
from .version import __version__

__all__ = [
    # the front door
    "load", "Parser", "Scores", "ParsingModel", "Member", "MemberError", "OnparseError", "__version__",
    # choices that load() and Parser take
    "DECODERS", "TIES", "VOTER_KINDS",
    # scores
    "evaluate", "SpanMetric", "score_text",
    # gold trees and tree text
    "load_gold", "Gold", "GOLD_NAMES", "to_brackets", "to_ptb", "parse_brackets", "read_trees", "baseline_trees",
    # files
    "describe_file", "load_model", "load_student", "load_grammar", "save_bundle",
    # training, perplexity, distillation
    "train", "TrainConfig", "RunOptions", "PerplexityResult", "distill", "DistillResult",
]


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
    elif name in ("VOTER_KINDS", "baseline_trees"):
        from .trees import baselines as home
    elif name in ("evaluate", "SpanMetric"):
        from .scores import metrics as home
    elif name == "score_text":
        from .scores import predicted as home
    elif name in ("load_gold", "Gold", "GOLD_NAMES"):
        from .gold import treebank as home
    elif name in ("to_brackets", "to_ptb", "parse_brackets"):
        from .trees import tree as home
    elif name == "describe_file":
        from .files import describe as home
    elif name == "save_bundle":
        from .files import bundle as home
    elif name == "load_model":
        from .lm import kind as home
    elif name == "load_student":
        from .student import kind as home
    elif name == "load_grammar":
        from .grammar import kind as home
    elif name in ("train",):
        from .lm.training import train as home
    elif name in ("TrainConfig", "RunOptions"):
        from .lm.training import config as home
    elif name == "PerplexityResult":
        from .lm import perplexity as home
    elif name in ("distill", "DistillResult"):
        from .student import distill as home
    else:
        raise AttributeError(f"module 'onparse' has no attribute {name!r}")
    return getattr(home, name)


def __dir__():
    return sorted(set(globals()) | set(__all__))

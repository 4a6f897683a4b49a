"""onparse: unsupervised constituency parsing with Ordered-Neurons LSTMs.

The data flow, one module per step:
raw text -> tokens (``text``) -> gold trees (``treebank``) / LM corpora (``corpora``)
-> model (``model``) -> distances -> trees (``trees``) -> spans -> scores (``metrics``).

Heavy modules (torch) are imported lazily so that ``onparse eval`` starts fast.
"""
from .errors import OnparseError

from .version import __version__

__all__ = ["OnparseError", "Parser", "__version__", "evaluate", "load"]


def __getattr__(name):
    # Lazy re-exports of the public API: keeps `import onparse` free of torch.
    if name == "evaluate":
        from .scores.metrics import evaluate
        return evaluate
    if name in ("load", "Parser"):
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'onparse' has no attribute {name!r}")

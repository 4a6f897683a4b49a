"""The pickle reader of onparse's model files: Python's own (C) unpickler, allowed to build only
what those files hold (dicts, lists, strings, numbers, tensors), for ``torch.load(pickle_module=)``.

torch's ``weights_only`` reader runs the same pickle opcodes in Python, one at a time: a bundle's
vocabularies are 40,000 strings, and reading them took 0.4 s of a one-sentence ``onparse induce``
(0.09 s here).  Safety is the same kind, a list of what may be built: a pickle names every
callable it calls (its ``GLOBAL`` opcodes), and :meth:`Unpickler.find_class` refuses any name not
in :data:`ALLOWED`, so no other code can run (the restricted unpickler of Python's ``pickle``
documentation).  torch's own loader resolves the storage types (``torch.FloatStorage`` ...) itself.
"""
import pickle

#: The callables an onparse file's pickle may name: the containers and torch's tensor rebuilding.
ALLOWED = frozenset({
    ("collections", "OrderedDict"),
    ("torch._utils", "_rebuild_tensor_v2"),
})


class Unpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that builds only :data:`ALLOWED` callables (UnpicklingError naming
    any other: ``unsupported GLOBAL posix.system``)."""

    def find_class(self, module, name):
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(f"unsupported GLOBAL {module}.{name}")
        return super().find_class(module, name)


def load(file, **kwargs):
    """One pickle from ``file`` through :class:`Unpickler` (torch's loader reads the header
    pickles of its older format this way)."""
    return Unpickler(file, **kwargs).load()

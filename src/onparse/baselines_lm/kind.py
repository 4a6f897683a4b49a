"""The recurrent baselines as kinds of model (:class:`onparse.kinds.ParsingModel`):
:class:`LSTMLanguageModel` and :class:`GRULanguageModel`.  They measure a perplexity and say what
they are in ``onparse info``; they read no trees: a plain LSTM or GRU has no master gates, so
no distances, and every command that asks for trees (``induce``, ``eval``, ``show``, a bundle's
average) is refused in one line.
"""
from __future__ import annotations

from typing import Any, Dict

from ..errors import OnparseError
from ..files.record import field_of, origin_lines
from ..files.safeio import format_ppl
from ..kinds import ParsingModel, Progress
from ..lm.perplexity import measure_model
from .config import RecurrentConfig
from .file import FORMATS, check_recurrent
from .model import RecurrentLM


class RecurrentLanguageModel(ParsingModel):
    """A plain LSTM or GRU language model (:class:`onparse.baselines_lm.model.RecurrentLM`) and its vocabulary."""

    cell = ""
    #: Its one member only names it: it has no trees to give (:meth:`member_trees` refuses).
    decoders = ("none",)
    config_class, module_class = RecurrentConfig, RecurrentLM
    kept_for = ("gives a perplexity only", "give a perplexity only")

    @classmethod
    def check(cls, blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
        return check_recurrent(blob, path, verify=verify, cell=cls.cell)

    @classmethod
    def describe_sections(cls):
        return (_architecture_lines, _origin_lines, _perplexity_lines)

    #: The article of :attr:`kind` in messages ("an LSTM", "a GRU").
    article = "a"

    def member_trees(self, token_lists, members, *, batch_size: int, max_tokens: int, progress: Progress = None,
                     **_) -> list:
        raise OnparseError(f"{self.article} {self.kind} has no master gates, so no distances and no trees: give an "
                           "ON-LSTM language model, a student or a grammar (onparse train --family lm, student or "
                           "grammar)")

    def lacks(self, what: str, name: str) -> OnparseError:
        return OnparseError(f"{name} is {self.article} {self.kind}: it has no {what} (no master gates); give an "
                            "ON-LSTM language model (onparse train --family lm)")

    def perplexity(self, corpus, split, fmt, batch_size, bptt, *, name: str, quiet: bool):
        return measure_model(self, corpus, split, fmt, batch_size, bptt, name=name, quiet=quiet)


class LSTMLanguageModel(RecurrentLanguageModel):
    kind, cell, family, article = "LSTM language model", "lstm", "lstm", "an"
    file_format = entry_kind = FORMATS["lstm"]


class GRULanguageModel(RecurrentLanguageModel):
    kind, cell, family = "GRU language model", "gru", "gru"
    file_format = entry_kind = FORMATS["gru"]


# -- what onparse info says of one ---------------------------------------------------------------
def _architecture_lines(blob, meta):
    config = blob["config"]
    sizes = [config["hidden_size"]] * (config["n_layers"] - 1) + [config["embedding_size"]]
    n_params = sum(t.numel() for t in blob["state_dict"].values())
    return [f"architecture: {config['n_layers']} {str(config['cell']).upper()} layers of "
            f"{'/'.join(map(str, sizes))} units (no master gates: a perplexity baseline, no trees), embedding "
            f"{config['embedding_size']} tied to the decoder, vocabulary {len(blob['vocab']):,}; {n_params:,} parameters"]


def _origin_lines(blob, meta):
    return origin_lines(meta, "train_config", ["averaged SGD weights" if meta.get("averaged") is True else None])


def _perplexity_lines(blob, meta):
    ppl = [f"{split} {format_ppl(float(meta[key]))}" for split, key in (("valid", "valid_ppl"), ("test", "test_ppl"))
           if field_of(meta, key, (int, float)) is not None]
    return ["perplexity: " + ", ".join(ppl)] if ppl else []

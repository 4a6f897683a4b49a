"""The ON-LSTM language model as a kind of model (:class:`onparse.kinds.ParsingModel`).

Its members read the master-forget distances d_f of one layer with one decoder
(:mod:`onparse.trees.decode`); it is the only kind with distances and a perplexity.  Its file is
a checkpoint (:mod:`onparse.files.checkpoint`); in a bundle its entry has no ``kind`` key.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ..errors import OnparseError
from ..files.checkpoint import FORMAT, first_line, read_file
from ..files.record import SCORE_KEYS, field_of, origin_lines, percent
from ..files.safeio import format_ppl
from ..files.weights import dequantize
from ..kinds import Bars, ParsingModel, Progress
from ..pictures.show import DISTANCES
from ..members import ALL, DEFAULT_DECODER, DEFAULT_LAYER, Member, MemberError, check_layer
from ..text.tokens import normalize_word
from ..text.vocab import Vocabulary
from ..trees.decode import DECODERS, check_decoder, decode
from .config import ModelConfig
from .file import check_checkpoint, check_contents
from .distances import sentence_distances
from .model import ONLSTMLanguageModel


#: The layers whose trees (by the paper's decoder) go into an average of several models: the
#: paper's layer 2 and the top one of its three (``onparse fit``'s members, research/PROTOCOL.md 66-69).
AVERAGED_LAYERS = (2, 3)


class LanguageModel(ParsingModel):
    """An ON-LSTM language model (:class:`onparse.lm.model.ONLSTMLanguageModel`) and its vocabulary."""

    kind = "language model"
    file_format = FORMAT
    entry_kind = None
    family = "lm"
    decoders = DECODERS
    layered = True
    kept_for = ("gives distances only", "give distances only")

    # -- files ----------------------------------------------------------------------------------
    @classmethod
    def check(cls, blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
        if "format" in blob:
            return check_checkpoint(blob, path, verify=verify)
        check_contents(blob, path, verify=verify)
        return blob

    @classmethod
    def from_blob(cls, blob: Dict[str, Any], path, device="cpu") -> "LanguageModel":
        try:
            config = ModelConfig.from_dict(blob["config"])
            model = ONLSTMLanguageModel(config)
            model.load_state_dict(dequantize(blob["state_dict"]))
        except (TypeError, ValueError, KeyError, RuntimeError) as err:
            raise OnparseError(f"{path}: checkpoint does not match this onparse version's model ({first_line(err)})")
        try:
            vocab = Vocabulary(blob["vocab"])
        except OnparseError as err:
            raise OnparseError(f"{path}: {err}") from None
        return cls(model.to(device).eval(), vocab, blob.get("metadata", {}))

    @classmethod
    def describe_sections(cls):
        return (_architecture_lines, _origin_lines, _perplexity_lines, _score_lines)

    # -- members --------------------------------------------------------------------------------
    def default_members(self, index: int) -> List[Member]:
        """Layer 2 read by the paper's decoder (the top layer of a one-layer model)."""
        return [self.member(index, min(DEFAULT_LAYER, self.model.config.n_layers), DEFAULT_DECODER)]

    def averaged_members(self, index: int) -> List[Member]:
        """Layers 2 and 3 (:data:`AVERAGED_LAYERS`) read by the paper's decoder; a model with
        neither gives its top layer."""
        n_layers = self.model.config.n_layers
        layers = [layer for layer in AVERAGED_LAYERS if layer <= n_layers] or [n_layers]
        return [self.member(index, layer, DEFAULT_DECODER) for layer in layers]

    @classmethod
    def checked_member(cls, config: Dict[str, Any], index: int, layer: int, decoder: str) -> Member:
        check_layer(layer, config["n_layers"])
        try:
            check_decoder(decoder)
        except ValueError as err:
            raise MemberError(f"model {index + 1} is a language model: {err}", "decoder") from None
        return Member(index, layer, decoder, cls.reading(layer, decoder))

    @classmethod
    def reading(cls, layer: int, decoder: str) -> str:
        return f"layer {layer} {decoder}"

    def grid(self, index: int, layers, decoders) -> List[Member]:
        n_layers = self.model.config.n_layers
        layers = range(1, n_layers + 1) if layers == ALL else (layers or [DEFAULT_LAYER])
        decoders = DECODERS if decoders == ALL else ([d for d in decoders or () if d in DECODERS] or [DEFAULT_DECODER])
        return [self.member(index, layer, d) for layer in layers for d in decoders]

    # -- trees ----------------------------------------------------------------------------------
    def ids(self, token_lists: Sequence[Sequence[str]]) -> List[List[int]]:
        """Ids of the tokens in the vocabulary (normalised; unknown -> ``<unk>``)."""
        index = self.vocab.index
        return [[index(normalize_word(t)) for t in tokens] for tokens in token_lists]

    def distances(self, token_lists, n_layers: int, *, name: str = "", batch_size: int, max_tokens: int,
                  progress: Progress = None) -> List[Any]:
        """Per token list a float32 array (n_layers, 2, n): d_f ``[l, 0]`` and d_i ``[l, 1]`` of
        layer l + 1 (:func:`onparse.lm.distances.sentence_distances`).  Cost: one batched
        forward pass of the first ``n_layers`` layers."""
        return sentence_distances(self.model, self.ids(token_lists), self.vocab.eos_id, n_layers,
                                  batch_size, max_tokens, progress)

    def member_trees(self, token_lists, members, *, batch_size: int, max_tokens: int, progress: Progress = None,
                     distances: Optional[List[Any]] = None) -> List[List[Any]]:
        """``distances``: what :meth:`distances` gave for these token lists with at least the
        members' deepest layer (reused instead of computed again).  Cost: the distances, then
        O(n) per member and sentence (:func:`onparse.trees.decode.decode`)."""
        if distances is None:
            distances = self.distances(token_lists, max(m.layer for m in members), batch_size=batch_size,
                                       max_tokens=max_tokens, progress=progress)
        return [[decode(d[m.layer - 1, 0], list(tokens), m.decoder) if len(tokens) else None
                 for d, tokens in zip(distances, token_lists)] for m in members]

    def bars(self, tokens: Sequence[str], member: Member, tree: Any) -> Bars:
        """d_f of every layer, the member's layer marked."""
        n_layers = self.model.config.n_layers
        d = self.distances([tokens], n_layers, batch_size=1, max_tokens=len(tokens) + 1)[0]
        return Bars(d[:, 0].tolist(), member.layer, DISTANCES)

    def perplexity(self, corpus, split, fmt, batch_size, bptt, *, name: str, quiet: bool):
        # Imported here: it reads corpora and gold sets, which parsing never needs (start-up).
        from .perplexity import measure_model

        return measure_model(self, corpus, split, fmt, batch_size, bptt, name=name, quiet=quiet)


def load_model(path, device="cpu", *, verify: bool = True) -> LanguageModel:
    """The language model saved in the checkpoint ``path``, on ``device``, in eval mode."""
    blob = read_file(path)
    if not isinstance(blob, dict):
        raise OnparseError(f"{path} is not an onparse checkpoint")
    return LanguageModel.from_blob(LanguageModel.check(blob, path, verify=verify), path, device)


# -- what onparse info says of a language model -------------------------------------------------
def _architecture_lines(blob, meta):
    config = blob["config"]
    sizes = [config["hidden_size"]] * (config["n_layers"] - 1) + [config["embedding_size"]]
    n_params = field_of(meta, "parameters", int) or sum(t.numel() for t in blob["state_dict"].values())
    return [f"architecture: {config['n_layers']} ON-LSTM layers of {'/'.join(map(str, sizes))} units, chunk size "
            f"{config['chunk_size']}, embedding {config['embedding_size']} tied to the decoder, vocabulary "
            f"{len(blob['vocab']):,}; {n_params:,} parameters"]


def _origin_lines(blob, meta):
    lines = origin_lines(meta, "train_config", ["averaged SGD weights" if meta.get("averaged") is True else None])
    init = field_of(meta, "init_from", dict)
    if init is not None:
        source = field_of(field_of(init, "corpus", dict, {}), "source", str)
        lines.append(f"started from: {init.get('checkpoint')}"
                     + (f" (corpus {source}, epoch {init.get('epoch')}, seed {init.get('seed')})" if source else ""))
    return lines


def _perplexity_lines(blob, meta):
    lines = []
    ppl = [f"{split} {format_ppl(float(meta[key]))}" for split, key in (("valid", "valid_ppl"), ("test", "test_ppl"))
           if field_of(meta, key, (int, float)) is not None]
    if ppl:
        note = field_of(meta, "perplexity_note", str)
        lines.append("perplexity: " + ", ".join(ppl) + (f" ({note})" if note else ""))
    for key, title in (("selection", "selected by"), ("recipe", "recipe")):
        if field_of(meta, key, str):
            lines.append(f"{title}: {meta[key]}")
    return lines


def _score_lines(blob, meta):
    scores = [r for r in field_of(meta, "scores", list, []) if isinstance(r, dict)]
    if not scores:
        return []
    lines = ["", f"unlabeled F1 (%) on {field_of(meta, 'scores_gold', str, 'the gold sets')}:",
             f"  {'gold':8}{'layer':>6}  {'decoder':8}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
    for r in scores:
        lines.append(f"  {str(r.get('gold')):8}{str(r.get('layer')):>6}  {str(r.get('decoder')):8}"
                     + "".join(f"{percent(r.get(key)):>18}" for key, _ in SCORE_KEYS))
    return lines

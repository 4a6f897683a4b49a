"""The student of ``onparse distill`` as a kind of model (:class:`onparse.kinds.ParsingModel`).

A student scores every span of a sentence (:class:`onparse.student.model.SpanStudent`) and its
one member is the best tree of those scores (CYK, decoder ``cyk``).  Its file is a student file
(:mod:`onparse.student.file`); in a bundle its entry has ``"kind": "student"``.
"""
from __future__ import annotations

from typing import Any, Dict

from ..errors import OnparseError
from ..files.checkpoint import STUDENT_FORMAT, read_file
from ..files.record import field_of, plain_words
from ..kinds import ParsingModel, Progress
from .config import StudentConfig
from .file import STUDENT_KIND, check_student
from .model import SpanStudent, student_trees


class Student(ParsingModel):
    """A span parser trained on a teacher's trees, and the teacher's vocabulary."""

    kind = "student"
    file_format = STUDENT_FORMAT
    entry_kind = STUDENT_KIND
    decoders = ("cyk",)
    family = "student"
    config_class, module_class = StudentConfig, SpanStudent

    @classmethod
    def check(cls, blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
        return check_student(blob, path, verify=verify)


    @classmethod
    def describe_sections(cls):
        return (_student_lines,)

    def member_trees(self, token_lists, members, *, batch_size: int, max_tokens: int, progress: Progress = None,
                     **_) -> list:
        """Cost: O(n^2) span scores and O(n^3) CYK per sentence, batched by length."""
        trees = student_trees(self.model, self.vocab, token_lists, batch_size, progress)
        return [trees for _ in members]


def load_student(path, device="cpu", *, verify: bool = True) -> Student:
    """Read, check and build the student saved at ``path``."""
    blob = read_file(path)
    if not (isinstance(blob, dict) and blob.get("format") == STUDENT_FORMAT):
        raise OnparseError(f"{path} is not an onparse student (onparse distill writes them)")
    return Student.from_blob(check_student(blob, path, verify=verify), path, device)


def _student_lines(blob, meta):
    """A student (onparse distill): its sizes, teachers, text and training."""
    config = blob["config"]
    n_params = sum(t.numel() for t in blob["state_dict"].values())
    lines = [f"architecture: a student parser (onparse distill): {config['n_layers']} BiLSTM layers of "
             f"{config['hidden_size']} units per direction, embedding {config['embedding_size']}, span scorer "
             f"{config['mlp_size']}, vocabulary {len(blob['vocab']):,}; {n_params:,} parameters; trees by CYK"]
    if field_of(meta, "onparse_version", str):
        lines.append(f"written by: onparse {meta['onparse_version']}")
    teachers = field_of(meta, "teachers", dict, {})
    if teachers:
        lines += _teacher_lines(teachers)
    text = field_of(meta, "text", dict, {})
    if text:
        lines.append(f"text: {text.get('path')} ({text.get('sentences', 0):,} sentences, {text.get('words', 0):,} "
                     f"words; sha256 {str(text.get('sha256'))[:16]}...)")
    settings = field_of(meta, "distill", dict, {})
    epochs = [e for e in field_of(meta, "epochs", list, []) if isinstance(e, dict)]
    if settings:
        lines.append(f"training: {len(epochs)} of {settings.get('epochs')} epochs, batches of "
                     f"{settings.get('batch_size')}, lr {settings.get('lr')}, seed {settings.get('seed')}, sentences of "
                     f"at most {settings.get('max_words')} words")
    if epochs:
        lines.append("agreement with the teacher on held-out sentences, by epoch: "
                     + ", ".join(f"{100 * e['agreement']:.1f}%" for e in epochs)
                     + f" ({epochs[-1].get('minutes')} min in all)")
    return lines


def _teacher_lines(teachers):
    """The teacher a student records (:func:`onparse.student.file.teachers_record`): each model
    named by where it came from and what it is (``model 2 of the bundled model, a language model:
    corpus conll2000, preset small, seed 5, epoch 7``), then the members, voters and tie rule."""
    models = [m for m in field_of(teachers, "models", list, []) if isinstance(m, dict)]
    named = [plain_words(str(m.get("name"))) + (f", {m['about']}" if isinstance(m.get("about"), str) else "")
             for m in models]
    voters = ", ".join(map(str, field_of(teachers, "voters", list, []))) or "none"
    reading = (f"members: {'; '.join(map(str, field_of(teachers, 'members', list, [])))}; voters: {voters}; "
               f"ties: {teachers.get('ties')}")
    if len(named) == 1:
        return [f"teacher: {named[0]} ({reading})"]
    return [f"teachers: {len(named)} models ({reading})"] + [f"  model {k}: {name}" for k, name in enumerate(named, 1)]

"""The layout rules of issue 30 ("one home per rule"), measured on the source itself.

Run as a script (``python tests/test_architecture.py [CHECKOUT]``) it prints the figures of
this checkout or another one: module count, largest module, longest function, function-level
imports, import cycles, the library modules the CLI imports, README lines.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "onparse"


def _use(root: Path) -> None:
    global ROOT, SRC
    ROOT, SRC = root, root / "src" / "onparse"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list:
    """Absolute onparse modules an ``from ... import ...`` names (a name may be a submodule)."""
    if node.level:
        base = module.split(".")
        base = base[:len(base) - node.level + (1 if is_package else 0)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("onparse"):
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if _exists(sub) else target)
    return out


def _exists(module: str) -> bool:
    rel = Path(*module.split("."))
    return (SRC.parent / rel).with_suffix(".py").exists() or (SRC.parent / rel / "__init__.py").exists()


def scan():
    """Per module: its lines, its onparse imports (top-level and inside functions), its
    longest function."""
    modules = {}
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        tree = ast.parse(path.read_text())
        top, inner, longest = set(), [], (0, "")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                longest = max(longest, (length, f"{name}.{node.name}"))
                for sub in ast.walk(node):
                    if isinstance(sub, ast.ImportFrom):
                        inner += _resolve(name, path.name == "__init__.py", sub)
                    elif isinstance(sub, ast.Import):
                        inner += [a.name for a in sub.names if a.name.startswith("onparse")]
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                top.update(_resolve(name, path.name == "__init__.py", node))
            elif isinstance(node, ast.Import):
                top.update(a.name for a in node.names if a.name.startswith("onparse"))
        modules[name] = {"lines": len(path.read_text().splitlines()), "top": top, "inner": inner,
                         "longest": longest, "text": path.read_text()}
    return modules


def cycles(modules) -> list:
    """Strongly connected components of more than one module in the import graph, function-level
    imports and a package's imports of its own submodules included (``onparse -> api -> ... ->
    onparse`` is a loop even though the first arrow is lazy)."""
    graph = {m: {t for t in info["top"] | set(info["inner"]) if t in modules and t != m}
             for m, info in modules.items()}
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def _library(modules):
    return {m: info for m, info in modules.items() if not m.startswith("onparse.cli")}


def _is_cli(module: str) -> bool:
    return module == "onparse.cli" or module.startswith("onparse.cli.")


def cli_imports(modules) -> list:
    """The library modules that modules of ``onparse.cli`` import, top-level and inside
    functions, besides the package ``onparse`` itself (its public face, ``__all__``)."""
    return sorted({t for m, info in modules.items() if _is_cli(m)
                   for t in info["top"] | set(info["inner"]) if not _is_cli(t) and t != "onparse"})


def test_the_cli_imports_few_library_modules():
    """The command line reads the library through ``onparse.__all__`` and at most ten other
    modules (issue 40.1: a narrow public boundary)."""
    imported = cli_imports(scan())
    assert len(imported) <= 10, f"{len(imported)} library modules: {imported}"


def test_no_import_cycle():
    assert cycles(scan()) == []


def test_few_function_level_imports_outside_the_cli():
    """Outside the CLI and the package's lazy public face (``onparse/__init__``, one import per
    home module of ``__all__``), imports are at the top of modules."""
    inner = [(m, t) for m, info in _library(scan()).items() if m != "onparse" for t in info["inner"]]
    assert len(inner) <= 10, inner


def test_the_public_face():
    """``onparse.__all__`` names the public API (issue 40.1); each name resolves, and its lazy
    import is the only way in: importing the package loads no torch."""
    import subprocess

    code = ("import sys, onparse; assert 'torch' not in sys.modules; "
            "[getattr(onparse, n) for n in onparse.__all__]; print(len(onparse.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) >= 20
    doc = (ROOT / "docs" / "api.md").read_text()
    import onparse
    assert sorted(n for n in onparse.__all__ if f"`{n}`" not in doc and f"`{n}(" not in doc) == []
    # Its one table names the public face and nothing else (issue 57.5): first cells, `name(...)`.
    cells = [line.split(" | ")[0] for line in doc.splitlines() if line.startswith("| `")]
    assert {c.split("(")[0] for cell in cells for c in re.findall(r"`([^`]+)`", cell)} == set(onparse.__all__)


def test_the_parser_parses():
    """:class:`onparse.api.Parser` keeps parsing, scoring and agreement (issue 57.5): distillation
    and perplexity are functions beside it (:mod:`onparse.api_tools`), nor does it train."""
    tree = ast.parse((SRC / "api.py").read_text())
    parser = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Parser")
    methods = {n.name for n in parser.body if isinstance(n, ast.FunctionDef)}
    assert not methods & {"distill", "perplexity", "train", "fit", "distance_reader"} and len(methods) <= 24, \
        sorted(methods)


def test_no_module_over_500_lines():
    assert {m: i["lines"] for m, i in scan().items() if i["lines"] > 500} == {}


def test_no_hidden_channels():
    assert [m for m, i in scan().items() if "ContextVar" in i["text"]] == []


def test_research_lab_and_readme():
    assert (ROOT / "research" / "README.md").exists()
    assert not (ROOT / "PROTOCOL.md").exists() and not (ROOT / "x.jsonl").exists()
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_layout_page_names_every_module():
    """docs/layout.md (the README is the user's page and links it) names every module."""
    layout = (ROOT / "docs" / "layout.md").read_text()
    files = {p.name for p in SRC.rglob("*.py") if p.parent.name != "cli" and not p.name.startswith("__")}
    assert sorted(f for f in files if f"`{f}`" not in layout) == []


def test_member_checks_have_one_home():
    """The layer-range message and the decoder-name check are each written in one module."""
    modules = scan()
    layer = [m for m, i in modules.items() if re.search(r'raise \w+\(f"layer .*does not exist', i["text"])]
    decoder = [m for m, i in modules.items() if re.search(r'raise \w+\(f"unknown decoder', i["text"])]
    assert len(layer) == 1 and len(decoder) == 1, (layer, decoder)


#: Packages that hold one kind of model each: only they may know what their kind is.
KIND_PACKAGES = ("onparse.lm", "onparse.student", "onparse.grammar", "onparse.baselines_lm")
#: What asking "which kind is this?" looks like: marker values and format tests (issue 38.1),
#: family tests (``family == "lm"``), decoder-name tests (``decoder == "mbr"``, ``decoder ==
#: GRAMMAR_DECODER``) and run names split into family and seed (``run.split("-")``) (issue 57.2).
KIND_QUESTIONS = re.compile(r'n_layers is None|is_student|"cyk"|STUDENT_FORMAT|GRAMMAR_FORMAT|isinstance\([^)]*'
                            r'(?:LanguageModel|Student|Grammar)\b'
                            r"""|\bfamily\s*[!=]=|\bdecoder\s*[!=]=\s*(?:["']|[A-Z_]+\b)|[!=]=\s*["'](?:mbr|viterbi)["']"""
                            r"""|\.split\(\s*["']-["']\s*\)""")
#: Where a kind may be named for good: its own package, the registry that lists the kinds, and
#: the file layer's list of every file format (``holds_model`` reads a few hundred bytes of a
#: file and imports no kind).
MAY_ASK = KIND_PACKAGES + ("onparse.registry", "onparse.files.checkpoint")
#: Modules that still ask, with how many times (a ratchet: a count may fall, never rise).  None
#: does: ``fit`` plans its runs as :class:`onparse.selection.RunPlan` (kind and seed named, never
#: split out of a folder name), trains them through their kind's own training, and chooses among
#: the readings each kind averages (:meth:`onparse.kinds.ParsingModel.averaged_members`).
STILL_ASKING: dict = {}


def kind_questions(modules) -> dict:
    """Per module outside :data:`MAY_ASK`, the places where it asks which kind it holds."""
    return {m: [q.group(0) for q in KIND_QUESTIONS.finditer(i["text"])] for m, i in modules.items()
            if not m.startswith(MAY_ASK) and KIND_QUESTIONS.search(i["text"])}


def test_no_module_asks_which_kind_of_model_it_holds():
    """Outside the kinds' own packages (and the registry that matches a file to its kind), models
    are used through :class:`onparse.kinds.ParsingModel` and trained through their
    :class:`onparse.training.family.Family` only; :data:`STILL_ASKING` lists what is left."""
    questions = kind_questions(scan())
    grown = {m: found for m, found in questions.items() if len(found) > STILL_ASKING.get(m, 0)}
    assert grown == {}, questions


#: Modules outside the kinds' packages that import one of them, and why (any other would be one
#: more file for a new kind to touch): the public face names each family's own functions (a new
#: kind need not add any); the parser wraps a raw language model (``Parser.from_model``);
#: distillation is the student's own command; ``fit`` trains the two families it is made of (a
#: language model's and a grammar's settings are its options: ``--preset``, ``--grammar-vocab``).
KNOW_THE_KINDS = {"onparse", "onparse.registry", "onparse.api", "onparse.api_tools", "onparse.cli.distill",
                  "onparse.fitting.settings"}


def test_a_new_kind_touches_its_package_and_the_registry(tmp_path):
    """Adding a kind of model (issue 57.2) touches its own package and :mod:`onparse.registry` (a
    line in ``kinds()``, and one in ``FAMILIES`` when ``onparse train`` trains it); a file format
    of its own is named ``onparse-KIND`` (:data:`onparse.files.checkpoint.FORMAT_PREFIX`, by which
    ``holds_model`` knows every model file without a list), and its training is hooks of the one
    run loop (issue 64.1).  Shown two ways: no module but those of :data:`KNOW_THE_KINDS` imports
    a kind's package, and a toy kind registered at run time is matched to its files, trained by
    ``onparse train --family toy`` with its own options through the run loop (which decides when
    its files are written) and refused for another family, with nothing else changed."""
    import subprocess

    modules = scan()
    knowing = {m for m, i in modules.items() if not m.startswith(KIND_PACKAGES)
               and any(t.startswith(KIND_PACKAGES) for t in i["top"] | set(i["inner"]))}
    assert knowing <= KNOW_THE_KINDS, sorted(knowing - KNOW_THE_KINDS)
    corpus = tmp_path / "toy.txt"
    corpus.write_text("a toy text\n")
    done = subprocess.run([sys.executable, "-c", TOY_KIND + f"run({str(corpus)!r})"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and done.stdout.splitlines()[-1:] == ["ok"], done.stdout + done.stderr


#: The toy kind: what its package would declare (a kind, its settings, its family) and its two
#: registry lines, then what the library and the command line make of them.
TOY_KIND = '''
import json
import os
from dataclasses import dataclass

from click.testing import CliRunner

import onparse.registry as registry
from onparse.kinds import ParsingModel
from onparse.settings import DictConfig, check_settings, setting
from onparse.files.run_folder import MetricsLog
from onparse.training.family import Family
from onparse.training.hooks import EpochEnd, Hooks
from onparse.training.loop import RunLoop, holding, new_or_resumed
from onparse.training.options import TrainResult


class Toy(ParsingModel):
    kind, file_format, entry_kind, decoders, family = "toy", "onparse-toy", "toy", ("toy",), "toy"


@dataclass(frozen=True)
class ToySettings(DictConfig):
    WHAT = "toy settings"
    leaves: int = setting(3, "leaves of the toy's trees", "count")
    epochs: int = setting(2, "number of epochs", "count")

    def __post_init__(self):
        check_settings(self)


started, saved = [], []


class ToyHooks(Hooks):
    """All a kind supplies to the one run loop: its batches, a step, a validation, its files."""

    def __init__(self, settings):
        self.settings, self.epoch, self.step, self.done = settings, 0, 0, 0

    def finished(self):
        return self.epoch >= self.settings.epochs

    def where(self):
        return {"epoch": self.epoch, "step": self.step}

    def epoch_shown(self):
        return self.epoch + 1

    def batches(self):
        while self.done < self.settings.leaves:
            yield self.done

    def train_step(self, batch):
        self.done, self.step = self.done + 1, self.step + 1

    def epoch_complete(self):
        return self.done >= self.settings.leaves

    def validate(self, stop):
        self.epoch, self.done = self.epoch + 1, 0
        return EpochEnd({"epoch": self.epoch, "step": self.step}, f"toy epoch {self.epoch}", self.epoch == 1)

    def weights(self):
        return []

    def save_last(self):
        saved.append("last")

    def save(self, path, end):
        saved.append(os.path.basename(path))

    def kept(self):
        return "nothing"


def start(preset, spec, values, options):
    settings = ToySettings(**values)
    started.append((preset, settings.leaves, settings.epochs, options.out))

    def train():
        log = MetricsLog(os.path.join(options.out, "metrics.jsonl"), True)
        with holding(options.out, log):
            hooks = ToyHooks(settings)
            reason = RunLoop(hooks, new_or_resumed(options, options.resume), log).run()
        return TrainResult(options.out, reason, hooks.epoch, hooks.step, None, None, None, None)
    return train


known = registry.kinds() + (Toy,)                      # the registry's two lines
registry.kinds = lambda: known
registry.FAMILIES["toy"] = Family("toy", {"one": ToySettings()}, ToySettings, start, label="Toy",
                                  folder="runs/toy-{preset}")


def run(corpus):
    from onparse.cli import main

    assert registry.kind_of({"format": "onparse-toy"}, "f") is Toy
    assert registry.kind_of({"kind": "toy"}, "f", entry=True) is Toy
    done = CliRunner().invoke(main, ["train", "--family", "toy", "--preset", "one", "--leaves", "5",
                                     "--corpus", corpus, "--json"])
    assert done.exit_code == 0, done.output
    assert started == [("one", 5, 2, "runs/toy-one")], started
    assert json.loads(done.stdout)["epochs"] == 2 and json.loads(done.stdout)["steps"] == 10
    assert saved == ["best.pt", "last", "last"], saved           # the loop decides when, the kind how
    with open("runs/toy-one/metrics.jsonl") as handle:
        assert [json.loads(line)["event"] for line in handle] == ["epoch", "epoch", "stop"]
    help_text = " ".join(CliRunner().invoke(main, ["train", "--help"], terminal_width=200).output.split())
    assert "Toy: leaves of the toy's trees [3]" in help_text, help_text
    refused = CliRunner().invoke(main, ["train", "--family", "lm", "--leaves", "5"])
    assert refused.exit_code == 2 and "--leaves applies to --family toy, not lm" in refused.output, refused.output
    print("ok")
'''


def test_the_file_layer_imports_no_kind():
    """The registry of kinds sits beside the contract (issue 57.2): :mod:`onparse.files` reads and
    writes files of any kind by asking :mod:`onparse.registry`, and imports no kind's package; the
    contract (:mod:`onparse.kinds`) imports nothing that shows a model."""
    modules = scan()
    files = {m: sorted(t for t in i["top"] | set(i["inner"]) if t.startswith(KIND_PACKAGES))
             for m, i in modules.items() if m.startswith("onparse.files")}
    assert {m: t for m, t in files.items() if t} == {}
    assert "onparse.registry" not in str(modules["onparse.files.checkpoint"]["top"])
    contract = modules["onparse.kinds"]["top"] | set(modules["onparse.kinds"]["inner"])
    assert sorted(t for t in contract if t.startswith(KIND_PACKAGES + ("onparse.pictures", "onparse.registry"))) == []


def test_no_kind_trains_with_another_kinds_pieces():
    """What every kind's training shares (run options and result, stops, the text's fingerprint)
    lives in :mod:`onparse.training` (issue 57.2): no kind's package reads another kind's training
    modules, and the shared package reads no kind."""
    modules = scan()
    borrowed = {m: sorted(t for t in i["top"] | set(i["inner"]) if t.startswith("onparse.lm.training"))
                for m, i in modules.items() if m.startswith(("onparse.grammar", "onparse.student"))}
    assert {m: t for m, t in borrowed.items() if t} == {}
    # The recurrent baselines are the exception by design (issue 64.4): the language model's
    # recipe with another cell, so they reuse its run through its Architecture, and nothing else.
    recipe = {m for m, i in modules.items() if m.startswith("onparse.baselines_lm")
              and any(t.startswith("onparse.lm.training") for t in i["top"] | set(i["inner"]))}
    assert recipe <= {"onparse.baselines_lm.config", "onparse.baselines_lm.training"}, recipe
    shared = {t for m, i in modules.items() if m.startswith("onparse.training") for t in i["top"] | set(i["inner"])}
    assert sorted(t for t in shared if t.startswith(KIND_PACKAGES)) == []


def test_few_modules_at_the_top():
    """The folders tell the architecture (issue 40.7): at most 20 modules directly in onparse/."""
    top = [p.name for p in SRC.glob("*.py")]
    assert len(top) <= 20, top


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _use(Path(sys.argv[1]).resolve())
    mods = scan()
    lib = _library(mods)
    longest = max(i["longest"] for i in mods.values())
    print(f"modules: {len(mods)} ({len(lib)} outside cli/)")
    print(f"largest module: {max((i['lines'], m) for m, i in mods.items())}")
    print(f"longest function: {longest[0]} lines ({longest[1]})")
    print(f"function-level onparse imports: {sum(len(i['inner']) for i in mods.values())} in all, "
          f"{sum(len(i['inner']) for i in lib.values())} outside cli/")
    print(f"import cycles: {cycles(mods)}")
    print(f"library modules the CLI imports besides onparse: {len(cli_imports(mods))} {cli_imports(mods)}")
    print(f"ContextVar modules: {[m for m, i in mods.items() if 'ContextVar' in i['text']]}")
    print(f"README lines: {len((ROOT / 'README.md').read_text().splitlines())}")
    questions = kind_questions(mods)
    print(f"kind questions outside the kinds' packages: {sum(len(q) for q in questions.values())} "
          f"{ {m: len(q) for m, q in questions.items()} }")
    knowing = sorted(m for m, i in mods.items() if not m.startswith(KIND_PACKAGES)
                     and any(t.startswith(KIND_PACKAGES) for t in i["top"] | set(i["inner"])))
    print(f"modules outside the kinds' packages that import one: {len(knowing)} {knowing}")

"""The shell examples run end to end (they are documentation: a broken one misleads users)."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_train_tiny_example_runs(tmp_path):
    """examples/train_tiny.sh: train, resume, perplexity, and a student distilled from the model."""
    done = subprocess.run(["bash", str(ROOT / "examples" / "train_tiny.sh"), str(tmp_path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "stopped (epochs) after 4 epoch(s)" in done.stderr and "stopped:" not in out    # said once
    teacher = next(line for line in out.splitlines() if line.startswith("teacher: "))
    assert teacher.startswith(f"teacher: {tmp_path}/run/best.pt, a language model: corpus ")   # what it is (41.16)
    assert "(members: layer 2 onlstm" in teacher
    trees = [line for line in out.splitlines() if line.startswith("(")]
    assert len(trees) == 2 and all(t.count("(") == 9 for t in trees)    # binary trees over 10 words
    assert sorted(os.listdir(tmp_path / "run")) == ["best.pt", "last.pt", "metrics.jsonl"]
    assert (tmp_path / "student.pt").is_file()


# -- the README: a user's page whose every example runs -----------------------------------------

import re
import shlex
import sys

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The lab's words, which belong in research/ (issue 54.2): rule and run names, issue numbers.
LAB_WORDS = re.compile(r"\brules? v\d+|\bv\d+[a-z0-9-]*\b|\bs\d e\d+\b|\bissue \d+|PROTOCOL|Targets \(|"
                       r"\bg v2k|rule \d+\b")


def blocks(language):
    """The README's fenced blocks of ``language``, each as its text."""
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.M | re.S)


def shell_commands():
    """Every `onparse ...` command of the README's sh blocks and its Commands table (pipes split)."""
    lines = [line.split("#")[0] for block in blocks("sh") for line in block.splitlines()]
    lines += re.findall(r"^\| `(onparse [^`]*)` \|", README, flags=re.M)
    out = []
    for line in lines:
        for part in line.split("|"):
            words = shlex.split(part.split(">")[0])
            if words[:1] == ["onparse"]:
                out.append(words)
    return out


def test_readme_is_a_users_page():
    """Issue 54.2: shorter than the 300 lines it had, no lab vocabulary, the research record
    linked; the glossary and the layout page it links exist."""
    assert len(README.splitlines()) < 300
    assert LAB_WORDS.findall(README) == []
    assert "30 MB" not in README and "research/RESULTS.md" in README
    for page in ("docs/glossary.md", "docs/layout.md"):
        assert f"({page})" in README and (ROOT / page).is_file()
    assert len(re.findall(r"^\| language \| trees \|", README, flags=re.M)) == 1   # one results table


def test_readme_describes_the_bundled_model_as_info_does():
    """Issue 54.1: the README's size and parts of default.pt are the file's (what `onparse info`
    prints: its size in MB, its readings, each one's members in order, voters, the language models
    it keeps)."""
    from onparse.files.bundle import load_model_file
    from onparse.files.pretrained import default_model_path

    path = default_model_path()
    blob = load_model_file(path)
    section = " ".join(README.split("## The bundled model")[1].split("\n## ")[0].split())
    assert f"({os.path.getsize(path) / 1e6:.0f} MB)" in section
    number = ("no", "one", "two", "three", "four")
    kinds = [m.get("kind") for m in blob["models"]]
    readings = blob["readings"]
    assert f"reads its parsers in {number[len(readings)]} ways" in section
    default = readings[blob["default_reading"]]
    assert [kinds[m["model"]] for m in default["members"]] == ["student"] and not default.get("voters")
    assert f"The default, `{blob['default_reading']}`, is one *student parser*" in section
    accurate = readings["accurate"]
    members = [kinds[m["model"]] for m in accurate["members"]]
    assert f"averages the trees of {number[len(members)]} parsers" in section
    assert members[0] == "student" and "The accurate reading's first parser is an earlier student" in section
    assert f"the other {number[members.count('grammar')]} are *grammars*" in section
    assert accurate["voters"] == ["right"] and "with a right-branching tree as a fourth voter" in section
    assert accurate["ties"] == "first" and "where trees tie, the first parser's wins" in section
    assert f"also holds {number[kinds.count(None)]} of those language models" in section


def test_readme_names_every_command_and_only_real_options():
    """Every command `onparse --help` lists is in the Commands table (punkt too); every onparse
    command line of the README names a real command, and every --option it gives is one of that
    command's options."""
    from onparse.cli import main

    table = set(re.findall(r"^\| `onparse ([a-z-]+)", README, flags=re.M))
    assert table == set(main.commands)
    for words in shell_commands():
        command = main.commands.get(words[1])
        assert command is not None, words
        names = {opt for p in command.params for opt in p.opts + p.secondary_opts} | {"--help", "-h"}
        given = {w.split("=")[0] for w in words[2:] if w.startswith("-") and w != "-"}
        assert given <= names, (words, given - names)
        # issue 54.5: never a deprecated spelling (hidden from --help), such as --beside or --kind
        hidden = {opt for p in command.params if getattr(p, "hidden", False) for opt in p.opts}
        assert not given & hidden, (words, given & hidden)


def test_readme_python_runs(tmp_path):
    """Every Python line of the README runs, as written, in a fresh interpreter per block: the
    API's, then the spaCy pipeline's."""
    out = []
    for code in blocks("python"):
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        out.append(done.stdout)
    assert len(out) == 2 and "sentence_f1" in out[0]
    assert out[1].splitlines()[0].endswith("(P .))")


def test_readmes_first_example_is_what_induce_prints():
    """The first lines of the README: the command and the tree it prints with the bundled model."""
    first = README.split("```\n$ ")[1].split("```")[0].splitlines()
    command, shown = first[0], first[1]
    done = subprocess.run(command.replace("onparse", f"{sys.executable} -m onparse"), shell=True,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [shown]

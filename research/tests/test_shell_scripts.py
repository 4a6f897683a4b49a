"""The training scripts of research/ (``make model``, ``make campaign``, ``make multilingual``,
``make students``, ``make languages``, the recipe of the first bundles and the GPU grammar variants): each passes ``bash -n``, and each, run in
a copy of the layout it expects with ``onparse`` and ``python`` replaced by stubs that record
their arguments, runs commands that onparse's own command-line parser (and bundle_default.py's)
accepts, with the options the script means, first and on a resume."""
import os
import shutil
import subprocess

import pytest

from lab import RESEARCH, ROOT, load_script

SCRIPTS = ("train_campaign.sh", "train_default.sh", "train_students.sh", "gpu_grammars.sh", "train_v13.sh",
           "students_v15.sh", "train_v18.sh", "train_v19.sh", "grammar_recipes.sh",
           "train_v20.sh")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

STUB = """#!/bin/sh
printf '%s\\0' "$@" > "$STUB_LOG/NAME.$$"
"""


@pytest.mark.parametrize("name", SCRIPTS)
def test_bash_reads_the_script(name):
    done = subprocess.run(["bash", "-n", str(RESEARCH / name)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture()
def layout(tmp_path):
    """A copy of what the scripts use (research/*.sh, examples/background_runs.sh), stubs for
    ``onparse`` and ``python`` on PATH, and a function that runs a script there and returns the
    commands run: ``[(program, [args...]), ...]``, sorted."""
    (tmp_path / "research").mkdir()
    (tmp_path / "examples").mkdir()
    for name in SCRIPTS:
        shutil.copy(RESEARCH / name, tmp_path / "research" / name)
    shutil.copy(ROOT / "examples" / "background_runs.sh", tmp_path / "examples" / "background_runs.sh")
    stubs, log = tmp_path / "stubs", tmp_path / "log"
    stubs.mkdir()
    for program in ("onparse", "python"):
        (stubs / program).write_text(STUB.replace("NAME", program))
        (stubs / program).chmod(0o755)

    def run(name, **env):
        if log.exists():
            shutil.rmtree(log)
        log.mkdir()
        done = subprocess.run(["bash", str(tmp_path / "research" / name)], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
                                               "STUB_LOG": str(log), **env})
        assert done.returncode == 0, done.stderr
        calls = [(p.name.split(".")[0], p.read_text().split("\0")[:-1]) for p in log.iterdir()]
        return sorted(calls, key=lambda c: (c[0], c[1]))

    return tmp_path, run


def parse(args):
    """The parameters onparse's command line reads from ``args`` (a usage error fails the test)."""
    from onparse.cli import main

    command = main.commands[args[0]]
    return command.make_context(args[0], list(args[1:])).params


def test_train_campaign_runs_small_models_keeping_every_epoch(layout):
    root, run = layout
    runs = root / "runs"
    calls = run("train_campaign.sh", RUNS="conll2000:1 alpino:2", EPOCHS="3", DIR=str(runs), MAX_TIME="1h")
    assert [program for program, _ in calls] == ["onparse", "onparse"]
    got = sorted((parse(args) for _, args in calls), key=lambda p: p["seed"])
    for params, corpus, seed in zip(got, ("conll2000", "alpino"), (1, 2)):
        assert (params["preset"], params["corpus"], params["seed"], params["epochs"]) == ("small", corpus, seed, 3)
        assert params["keep_epochs"] and params["threads"] == 1 and params["max_time"] == 3600
        assert params["out"] == str(runs / f"small-{corpus}-s{seed}") and not params["resume"]
    # A run that holds last.pt is resumed (its settings are in last.pt).
    (runs / "small-conll2000-s1" / "last.pt").write_bytes(b"")
    (_, args), = run("train_campaign.sh", RUNS="conll2000:1", EPOCHS="4", DIR=str(runs))
    params = parse(args)
    assert params["resume"] and params["epochs"] == 4 and params["out"] == str(runs / "small-conll2000-s1")
    assert params["seed"] is None and params["keep_epochs"] is False


def test_train_default_trains_the_recipe_then_bundles_the_seeds(layout, monkeypatch):
    root, run = layout
    runs = root / "runs"
    calls = run("train_default.sh", SEEDS="4 5", EPOCHS="11", RUNS=str(runs))
    trains = [args for program, args in calls if program == "onparse"]
    (bundle,) = [args for program, args in calls if program == "python"]
    got = sorted((parse(args) for args in trains), key=lambda p: p["seed"])
    assert [p["seed"] for p in got] == [4, 5]
    for params in got:
        assert (params["preset"], params["corpus"], params["embedding_size"], params["hidden_size"]) == \
            ("paper", "news", 300, 600)
        assert params["epochs"] == 11 and params["keep_epochs"] and params["threads"] == 1
        assert params["out"] == str(runs / f"news-s{params['seed']}")
    assert bundle[0] == "research/bundle_default.py"
    assert bundle[1:] == ["--epochs", "11", "--report", str(runs / "all-seeds.pt"),
                          str(runs / "news-s4" / "best.pt"), str(runs / "news-s5" / "best.pt")]

    # bundle_default.py's own parser accepts them: it gets as far as reading the first checkpoint.
    import onparse.files.checkpoint

    class Read(Exception):
        pass

    def read(path, *args, **kwargs):
        raise Read(path)

    monkeypatch.setattr(onparse.files.checkpoint, "load_checkpoint", read)
    with pytest.raises(Read, match="news-s4"):
        load_script("bundle_default").main(bundle[1:])


def test_train_students_distils_each_seed_from_the_news_text(layout):
    root, run = layout
    calls = run("train_students.sh", SEEDS="1 2")
    (text,) = [args for program, args in calls if program == "python"]
    assert text == ["research/distill_text.py", "runs/distill/news-train.txt"]
    got = sorted((parse(args) for program, args in calls if program == "onparse"), key=lambda p: p["seed"])
    assert [p["seed"] for p in got] == [1, 2]
    for params in got:
        seed = params["seed"]
        assert params["text"] == "runs/distill/news-train.txt" and params["pretokenized"]
        assert params["student_path"] == f"runs/distill/student-s{seed}.pt"
        assert params["run_dir"] == f"runs/distill/run-s{seed}"
        assert (params["epochs"], params["keep_epochs"], params["threads"]) == (6, True, 1)
        assert not params["resume"] and not params["model_paths"]            # the teacher: the bundled model
    assert (root / "runs" / "distill").is_dir()
    # The text exists now; a run that holds last.pt is resumed.
    (root / "runs" / "distill" / "news-train.txt").write_text("a b\n")
    (root / "runs" / "distill" / "run-s1").mkdir()
    (root / "runs" / "distill" / "run-s1" / "last.pt").write_bytes(b"")
    calls = run("train_students.sh", SEEDS="1")
    assert [program for program, _ in calls] == ["onparse"]
    params = parse(calls[0][1])
    assert params["resume"] and params["force"] and params["seed"] == 1


def test_gpu_grammars_trains_each_variant_on_cuda_and_scores_it_as_it_goes(layout, tmp_path):
    """The script's python is a stub: its trainers, scorer and CUDA tests return at once and no
    epoch exists, so it packs only the logs (no model pieces) and ends well inside its deadline."""
    root, run = layout
    calls = run("gpu_grammars.sh", OUT=str(tmp_path / "out"), PYTHON="python", TRAIN_SECONDS="7",
                RUNS="small 32 2e-3 1\nlarge 64 1e-3 2")
    trains = [args[2:] for program, args in calls if args[:3] == ["-m", "onparse", "train"]]
    got = sorted((parse(args) for args in trains), key=lambda p: p["seed"])
    assert [(p["preset"], p["batch_size"], p["lr"], p["seed"]) for p in got] == [("small", 32, 2e-3, 1),
                                                                                ("large", 64, 1e-3, 2)]
    for params in got:
        assert params["family"] == "grammar" and params["corpus"] == "news" and params["device"] == "cuda"
        assert params["max_time"] == 7 and params["keep_epochs"] and params["epochs"] == 12
    outs = [p["out"] for p in got]
    assert outs == ["runs/grammar-small-b32-lr2e-3-s1-gpu", "runs/grammar-large-b64-lr1e-3-s2-gpu"]
    (scorer,) = [args for program, args in calls if args[:1] == ["research/score_epochs.py"]]
    assert scorer[scorer.index("--device") + 1] == "cuda" and scorer[scorer.index("--until") + 1] == "runs/TRAINED"
    assert scorer[scorer.index("--gold") + 1] == "wsj-sample-dev"
    assert scorer[-2:] == outs and "--decoders" in scorer and scorer[scorer.index("--decoders") + 1] == "mbr"
    assert any(args[:3] == ["-m", "pytest", "-q"] and "tests/test_cuda.py" in args for _, args in calls)
    assert sorted(os.listdir(tmp_path / "out")) == ["logs.tar.gz"]


def test_train_v13_trains_the_grammars_on_the_fit_texts_and_rule_v7s_models(layout):
    root, run = layout
    runs = root / "runs"
    calls = run("train_v13.sh", DIR=str(runs))
    (texts,) = [args for program, args in calls if program == "python"]
    assert texts == ["research/fit_texts.py", "--out-dir", str(runs), "alpino", "cess_esp", "floresta"]
    got = [parse(args) for program, args in calls if program == "onparse"]
    grammars = sorted((p["corpus"], p["seed"]) for p in got if p["family"] == "grammar")
    assert grammars == sorted((str(runs / f"fit-text-{lang}.txt"), s)
                              for lang in ("alpino", "cess_esp", "floresta") for s in (1, 2, 3))
    lms = sorted((p["corpus"], p["seed"], p["epochs"]) for p in got if p["family"] != "grammar")   # lm: the default
    assert lms == [("alpino", 1, 7), ("alpino", 3, 10), ("cess_esp", 1, 6), ("cess_esp", 2, 10),
                   ("cess_esp", 3, 10), ("floresta", 1, 6), ("floresta", 3, 1)]
    for p in got:
        assert p["preset"] == "small" and p["keep_epochs"] and p["threads"] == 1 and not p["resume"]
        if p["family"] == "grammar":
            assert p["epochs"] == 12 and p["checkpoint_every"] == 300
            assert p["out"] == str(runs / f"grammar-fit-{os.path.basename(p['corpus'])[9:-4]}-s{p['seed']}")
        else:
            assert p["out"] == str(runs / f"small-{p['corpus']}-s{p['seed']}")
    # The texts exist now and a run that holds last.pt is resumed.
    (runs / "fit-text-floresta.txt").write_text("a b\n")
    (runs / "grammar-fit-alpino-s1" / "last.pt").write_bytes(b"")
    calls = run("train_v13.sh", DIR=str(runs))
    assert [program for program, _ in calls] == ["onparse"] * 16
    resumed = [parse(args) for _, args in calls if "--resume" in args]
    assert [p["out"] for p in resumed] == [str(runs / "grammar-fit-alpino-s1")]


def test_train_v18_trains_rule_94s_recipes_seed_by_seed_and_resumes(layout):
    root, run = layout
    runs = root / "runs"
    calls = run("train_v18.sh", DIR=str(runs))
    texts = sorted(args for program, args in calls if program == "python")
    assert texts == [["research/fit_texts.py", "--out-dir", str(runs), lang] for lang in ("alpino", "cess_esp")]
    got = [parse(args) for program, args in calls if program == "onparse"]
    assert len(got) == 8
    for p in got:
        assert p["family"] == "grammar" and p["preset"] == "small" and p["epochs"] == 12
        assert p["keep_epochs"] and p["threads"] == 1 and p["checkpoint_every"] == 300 and not p["resume"]
        lang = os.path.basename(p["corpus"])[9:-4]
        recipe = "v2k-c10" if p["curriculum_start"] == 10 else "v2k"
        assert p["max_vocab"] == 2000 and p["curriculum_start"] in (10, None)
        assert p["corpus"] == str(runs / f"fit-text-{lang}.txt")
        assert p["out"] == str(runs / f"grammar-v18-{lang}-{recipe}-s{p['seed']}")
    assert sorted(p["out"] for p in got) == sorted(str(runs / f"grammar-v18-{lang}-{r}-s{s}") for lang in
                                                   ("alpino", "cess_esp") for r in ("v2k", "v2k-c10") for s in (1, 2))
    # The texts exist now, a run that holds last.pt is resumed, and LANGS picks the languages.
    for lang in ("alpino", "cess_esp", "floresta"):
        (runs / f"fit-text-{lang}.txt").write_text("a b\n")
    (runs / "grammar-v18-alpino-v2k-s1" / "last.pt").write_bytes(b"")
    calls = run("train_v18.sh", DIR=str(runs))
    assert [program for program, _ in calls] == ["onparse"] * 8
    assert [a[a.index("--out") + 1] for _, a in calls if "--resume" in a] == [str(runs / "grammar-v18-alpino-v2k-s1")]
    calls = run("train_v18.sh", DIR=str(runs), LANGS="floresta")
    assert sorted(a[a.index("--out") + 1] for _, a in calls) == sorted(
        str(runs / f"grammar-v18-floresta-{r}-s{s}") for r in ("v2k", "v2k-c10") for s in (1, 2))
    calls = run("train_v18.sh", DIR=str(runs), LANGS="alpino floresta", SEEDS="3", RECIPES="v2k-c10")
    assert sorted(a[a.index("--out") + 1] for _, a in calls) == [
        str(runs / f"grammar-v18-{lang}-v2k-c10-s3") for lang in ("alpino", "floresta")]
    assert all(parse(a)["curriculum_start"] == 10 and parse(a)["seed"] == 3 for _, a in calls)


def test_students_v15_makes_teacher_trees_then_trains_each_language_skipping_and_resuming(layout):
    root, run = layout
    calls = run("students_v15.sh")
    assert calls == sorted(("python", ["research/students_v15.py", step, lang])
                           for lang in ("alpino", "cess_esp", "floresta") for step in ("teacher", "train"))
    distill = root / "runs" / "distill"
    (distill / "v15-alpino-s1.pt").write_bytes(b"")             # done: skipped
    (distill / "v15-teacher-cess_esp.txt").write_text("(a b)\n")  # its trees exist: not made again
    (distill / "v15-cess_esp-s1.run").mkdir()                   # a stopped run: resumed
    calls = run("students_v15.sh")
    assert calls == [("python", ["research/students_v15.py", "teacher", "floresta"]),
                     ("python", ["research/students_v15.py", "train", "cess_esp", "--resume"]),
                     ("python", ["research/students_v15.py", "train", "floresta"])]
    assert "alpino: student exists, skipped" in (root / "runs" / "students-v15.log").read_text()


def test_students_script_serves_rule_v18_with_its_own_files(layout):
    root, run = layout
    calls = run("students_v15.sh", RULE="v18", LANGS="alpino cess_esp")
    assert calls == sorted(("python", ["research/students_v18.py", step, lang])
                           for lang in ("alpino", "cess_esp") for step in ("teacher", "train"))
    distill = root / "runs" / "distill"
    (distill / "v18-alpino-s1.pt").write_bytes(b"")              # done: skipped
    (distill / "v15-teacher-cess_esp.txt").write_text("(a b)\n")   # rule v15's trees are not rule v18's
    (distill / "v18-cess_esp-s1.run").mkdir()                    # a stopped run: resumed
    calls = run("students_v15.sh", RULE="v18", LANGS="alpino cess_esp")
    assert calls == [("python", ["research/students_v18.py", "teacher", "cess_esp"]),
                     ("python", ["research/students_v18.py", "train", "cess_esp", "--resume"])]
    assert "alpino: student exists, skipped" in (root / "runs" / "students-v18.log").read_text()


def test_train_v19_trains_three_english_seeds_with_rule_v18s_v2k_c10_recipe_and_resumes(layout):
    root, run = layout
    runs = root / "runs"
    calls = run("train_v19.sh", DIR=str(runs))
    got = [parse(args) for program, args in calls]
    assert [program for program, _ in calls] == ["onparse"] * 3
    for p in got:
        assert (p["family"], p["preset"], p["corpus"], p["epochs"]) == ("grammar", "small", "news", 12)
        assert (p["max_vocab"], p["curriculum_start"]) == (2000, 10)
        assert p["keep_epochs"] and p["threads"] == 1 and p["checkpoint_every"] == 300 and not p["resume"]
    assert sorted(p["out"] for p in got) == [str(runs / f"grammar-v19-news-v2k-c10-s{s}") for s in (1, 2, 3)]
    assert sorted(p["seed"] for p in got) == [1, 2, 3]
    (runs / "grammar-v19-news-v2k-c10-s2" / "last.pt").write_bytes(b"")
    calls = run("train_v19.sh", DIR=str(runs))
    resumed = [parse(args) for _, args in calls if "--resume" in args]
    assert [p["out"] for p in resumed] == [str(runs / "grammar-v19-news-v2k-c10-s2")] and resumed[0]["epochs"] == 12


def test_train_v20_trains_four_english_seeds_of_rule_v9s_recipe_two_at_a_time(layout):
    root, run = layout
    runs = root / "runs"
    got = [parse(args) for _, args in run("train_v20.sh", DIR=str(runs))]
    assert sorted(p["seed"] for p in got) == [4, 5, 6, 7]
    for p in got:
        assert (p["family"], p["preset"], p["corpus"], p["epochs"]) == ("grammar", "small", "news", 6)
        assert p["max_vocab"] is None and p["curriculum_start"] is None
        assert p["keep_epochs"] and p["threads"] == 1 and p["checkpoint_every"] == 300
        assert p["out"] == str(runs / f"grammar-v20-news-s{p['seed']}")

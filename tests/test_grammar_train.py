"""The grammar family end to end (issue 38): ``onparse train --family grammar`` and its run
folder, grammar files, the Grammar kind behind ``onparse.load``, ``induce``, ``perplexity``,
``plot-log``, bundles and averaging with language models.  Tiny preset on a few hundred toy
sentences written here: seconds."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

import onparse
from conftest import save_tiny_checkpoint, write_corpus
from onparse.cli import main
from onparse.errors import OnparseError
from onparse.files.bundle import load_model_file
from onparse.grammar.kind import Grammar, load_grammar
from onparse.grammar.model import NeuralPCFG
from onparse.members import MemberError
from onparse.grammar.parse import exact_words, piece_bounds, piece_spans, viterbi_refusal
from onparse.trees.tree import leaves, spans_to_tree, tree_spans

pytestmark = pytest.mark.usefixtures("one_thread")

#: A tiny run: 3 epochs, the curriculum from 5 to 20 words.
TRAIN = ["train", "--family", "grammar", "--preset", "tiny", "--epochs", "3", "--curriculum-start", "5",
         "--max-words", "20", "--threads", "1", "--no-progress", "--checkpoint-every", "0"]
SENTENCES = [["the", "big", "cat", "saw", "a", "dog"], ["every", "man", "liked", "some", "bird"],
             ["the", "cat", "with", "a", "red", "bird", "near", "the", "old", "man", "chased", "some", "woman"],
             ["a", "dog", "heard", "the", "teacher"], ["zebra", "unknownword", "cat"], ["dog", "cat"]]


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("text") / "toy.txt", 400)


@pytest.fixture(scope="module")
def run(tmp_path_factory, corpus):
    """One uninterrupted run (the reference of the other tests)."""
    out = tmp_path_factory.mktemp("runs") / "g"
    result = cli(*TRAIN, "--corpus", corpus, "--out", out, "--keep-epochs")
    assert result.exit_code == 0, result.output
    return out


def binary_over(tree, words) -> bool:
    """Whether ``tree`` is a binary tree whose leaves are ``words``."""
    def binary(node):
        return isinstance(node, str) or (len(node) == 2 and all(binary(c) for c in node))
    return leaves(tree) == list(words) and binary(tree)


def events(folder):
    with open(os.path.join(folder, "metrics.jsonl")) as handle:
        return [json.loads(line) for line in handle]


# -- training and its folder -----------------------------------------------------------------
def test_a_run_writes_its_files_and_log(run):
    assert sorted(os.listdir(run)) == ["best.pt", "epoch-001.pt", "epoch-002.pt", "epoch-003.pt", "last.pt",
                                       "metrics.jsonl"]
    log = events(run)
    assert [e["event"] for e in log] == ["start", "epoch", "epoch", "epoch", "stop", "test"]
    epochs = [e for e in log if e["event"] == "epoch"]
    assert [e["length_limit"] for e in epochs] == [5, 6, 7]                 # the curriculum, one word an epoch
    assert all(math.isclose(e["valid_ppl"], math.exp(e["valid_loss"])) for e in epochs)
    best = load_grammar(run / "best.pt")
    assert best.metadata["valid_ppl"] == min(e["valid_ppl"] for e in epochs)
    assert best.metadata["training"]["seed"] == 1 and best.metadata["preset"] == "tiny"


def test_plot_log_reads_the_run(run, tmp_path):
    from onparse.files.training_log import read_log

    log = read_log(str(run))
    assert log.epochs == (1, 2, 3) and log.preset == "tiny" and log.seed == 1 and log.test_ppl is not None
    pytest.importorskip("matplotlib")
    result = cli("plot-log", run, "--out", tmp_path / "curves.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "curves.png").stat().st_size > 0


def test_resume_continues_exactly(run, corpus, tmp_path):
    out = tmp_path / "g"
    first = cli(*TRAIN, "--corpus", corpus, "--out", out, "--max-steps", "30", "--keep-epochs")   # inside epoch 2
    assert first.exit_code == 0, first.output
    assert json.loads(json.dumps(torch.load(out / "last.pt", weights_only=True)["training"]["position"]))["batch"] > 0
    # no --family: a resume takes the run's own (from last.pt), as examples/background_runs.sh relies on
    again = cli("train", "--out", out, "--resume", "--threads", "1", "--no-progress")
    assert again.exit_code == 0, again.output
    mine, reference = (torch.load(p / "last.pt", weights_only=True) for p in (out, run))
    assert mine["state_dict"].keys() == reference["state_dict"].keys()
    assert all(torch.equal(mine["state_dict"][k], reference["state_dict"][k]) for k in mine["state_dict"])
    assert [e["epoch"] for e in events(out) if e["event"] == "epoch"] == [1, 2, 3]    # each epoch logged once
    assert (out / "epoch-003.pt").exists()                                  # --keep-epochs survives a resume


def test_an_existing_run_is_refused_and_resume_keeps_its_settings(run, corpus):
    result = cli(*TRAIN, "--corpus", corpus, "--out", run)
    assert result.exit_code == 1 and "already holds a run" in result.output
    changed = cli("train", "--family", "grammar", "--out", run, "--resume", "--lr", "0.1")
    assert changed.exit_code == 1 and "cannot change --lr" in changed.output


def test_run_family_is_the_kind_of_last_pt(run, tmp_path):
    assert onparse.run_family(run) == "grammar"
    (tmp_path / "lm").mkdir()
    save_tiny_checkpoint(tmp_path / "lm" / "last.pt", ["the", "cat"])
    assert onparse.run_family(tmp_path / "lm") == "lm"
    assert onparse.run_family(tmp_path / "nothing") is None
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "last.pt").write_text("not a checkpoint")
    assert onparse.run_family(tmp_path / "broken") is None


def test_resuming_with_the_other_family_says_which(run, tmp_path):
    as_lm = cli("train", "--family", "lm", "--out", run, "--resume")
    assert as_lm.exit_code == 1 and "is a grammar run's last.pt: resume it with --family grammar" in as_lm.output
    save_tiny_checkpoint(tmp_path / "last.pt", ["the", "cat"])
    as_grammar = cli("train", "--family", "grammar", "--out", tmp_path, "--resume")
    assert as_grammar.exit_code == 1 and "resume it with --family lm, or without --family" in as_grammar.output


def test_divergence_stops_and_keeps_best(corpus, tmp_path, monkeypatch):
    out = tmp_path / "g"
    forward = NeuralPCFG.forward

    def failing(self, ids, lengths):
        if (out / "best.pt").exists() and self.training:    # in epoch 2, after best.pt: the weights break
            with torch.no_grad():
                for p in self.parameters():
                    p.fill_(float("nan"))
        return forward(self, ids, lengths)

    monkeypatch.setattr(NeuralPCFG, "forward", failing)
    result = cli(*TRAIN, "--corpus", corpus, "--out", out)
    assert result.exit_code == 1
    assert "training diverged" in result.output and "keeps epoch 1" in result.output
    assert len(result.output.strip().splitlines()[-1]) < 300
    assert load_grammar(out / "best.pt").metadata["epoch"] == 1
    assert [e["event"] for e in events(out)][-1] == "diverged"


def test_a_sentence_whose_log_z_underflows_is_skipped_and_counted(corpus, tmp_path, monkeypatch):
    """One sentence of -inf log Z (an underflowed inside) leaves the step to the others, is
    counted in the epoch's record, and does not stop the run (round four of issue 38's runs)."""
    out = tmp_path / "g"
    forward = NeuralPCFG.forward

    def one_underflows(self, ids, lengths):
        z = forward(self, ids, lengths)
        if self.training and len(z) > 1:
            z = torch.cat([z[:1] * 0 + float("-inf"), z[1:]])
        return z

    monkeypatch.setattr(NeuralPCFG, "forward", one_underflows)
    result = cli(*TRAIN, "--corpus", corpus, "--out", out)
    assert result.exit_code == 0, result.output
    epochs = [e for e in events(out) if e["event"] == "epoch"]
    assert epochs and all(e["skipped_sentences"] > 0 for e in epochs)
    assert all(math.isfinite(e["train_loss"]) for e in epochs)


def test_family_options_are_refused_for_the_other_family(corpus, tmp_path):
    for args, flag in ((["--family", "lm", "--rank", "4"], "--rank"), (["--family", "grammar", "--bptt", "5"], "--bptt"),
                       (["--family", "grammar", "--preset", "paper"], "paper"),
                       (["--family", "lm", "--curriculum-start", "4"], "--curriculum-start")):
        result = cli("train", *args, "--corpus", corpus, "--out", tmp_path / "x")
        assert result.exit_code == 2 and flag in result.output, result.output
    bad = cli(*TRAIN, "--corpus", corpus, "--out", tmp_path / "y", "--curriculum-start", "30")
    assert bad.exit_code == 2 and "curriculum_start" in bad.output
    assert not os.path.exists(tmp_path / "x")


# -- grammar files ---------------------------------------------------------------------------
def test_a_grammar_file_round_trips_and_damage_is_refused(run, tmp_path):
    blob = torch.load(run / "best.pt", weights_only=True)
    grammar = load_grammar(run / "best.pt")
    assert isinstance(grammar, Grammar) and grammar.vocab.to_list() == blob["vocab"]
    assert all(torch.equal(grammar.model.state_dict()[k], blob["state_dict"][k]) for k in blob["state_dict"])
    damaged = dict(blob, state_dict={**blob["state_dict"], "start": blob["state_dict"]["start"] + 1})
    torch.save(damaged, tmp_path / "damaged.pt")
    for blob_change, message in (({}, "do not match their checksum"),
                                 ({"config": {**blob["config"], "rank": 0}}, "unusable grammar config"),
                                 ({"config": {**blob["config"], "n_nonterminals": 9}}, "the config does not fit the weights"),
                                 ({"vocab": blob["vocab"][:-1]}, "the vocabulary has")):
        torch.save({**damaged, **blob_change}, tmp_path / "bad.pt")
        with pytest.raises(OnparseError, match=message) as err:
            onparse.load(str(tmp_path / "bad.pt"), "cpu")
        assert "\n" not in str(err.value)
    result = cli("info", "-m", run / "best.pt")
    assert result.exit_code == 0 and "neural PCFG" in result.output and "valid" in result.output


# -- trees ----------------------------------------------------------------------------------------
def test_load_gives_binary_trees_over_the_words(run):
    parser = onparse.load(str(run / "best.pt"), "cpu")
    for decoders in (None, ["viterbi"]):
        chosen = parser if decoders is None else parser.with_grid(decoders=decoders)
        trees = chosen.trees(SENTENCES + [["alone"], []])
        assert all(binary_over(t, s) for t, s in zip(trees, SENTENCES))
        assert trees[-2] == "alone" and trees[-1] is None
    labelled = parser.models[0].labelled_trees(SENTENCES + [["alone"], []])
    for (tree, labels), words in zip(labelled, SENTENCES):
        assert binary_over(tree, words) and set(labels) == set(tree_spans(tree))
        assert all(label.startswith("NT-") for label in labels.values())
    assert labelled[-2] == ("alone", {}) and labelled[-1] is None


def test_viterbi_is_the_full_tensor_decoder_only_when_small():
    assert viterbi_refusal({"n_nonterminals": 30, "n_preterminals": 60}) is None
    assert "full rule tensor" in viterbi_refusal({"n_nonterminals": 250, "n_preterminals": 500})
    assert exact_words(8) > exact_words(64) > exact_words(500) >= 2
    large = {"n_nonterminals": 250, "n_preterminals": 500}
    with pytest.raises(MemberError, match="viterbi needs the full rule tensor"):
        Grammar.checked_member(large, 0, 1, "viterbi")
    assert Grammar.checked_member(large, 0, 1, "mbr").reading == "grammar"
    with pytest.raises(MemberError, match="no layers"):
        Grammar.checked_member(large, 0, 2, "mbr")


def test_long_sentences_are_parsed_in_pieces(run, monkeypatch):
    import onparse.grammar.parse as parse

    words = [w for s in SENTENCES for w in s]                               # 34 words
    monkeypatch.setattr(parse, "exact_words", lambda rank: 8)
    trees = Grammar.member_trees(load_grammar(run / "best.pt"), [words, SENTENCES[0]],
                                 [Grammar.checked_member({}, 0, 1, "mbr")], batch_size=4, max_tokens=100)[0]
    assert trees.too_long == [0] and all(binary_over(t, s) for t, s in zip(trees, [words, SENTENCES[0]]))
    bounds = piece_bounds(len(words), 8)
    assert set(zip(bounds, bounds[1:])) <= set(tree_spans(trees[0]))
    tree, labels = load_grammar(run / "best.pt").labelled_trees([words])[0]
    assert tree == trees[0] and set(labels) <= set(tree_spans(tree))
    assert set(tree_spans(tree)) - set(labels) <= {(b, len(words)) for b in bounds[:-1]}   # the joins only
    assert spans_to_tree("abcd", piece_spans([0, 2, 4], [[], []])) == (("a", "b"), ("c", "d"))


def test_induce_keeps_one_line_per_input_line(run):
    text = "the big cat saw a dog .\n\nhello\n, ;\nthe cat with a red bird near the old man chased some woman\n"
    result = cli("induce", "-m", run / "best.pt", input=text)
    assert result.exit_code == 0, result.output
    lines = result.output.split("\n")[:-1]
    assert len(lines) == 5 and lines[1] == "" and lines[3] == "" and "hello" in lines[2]


# -- perplexity --------------------------------------------------------------------------------
def test_perplexity_is_exact(run, tmp_path):
    text = tmp_path / "eval.txt"
    text.write_text("the big cat saw a dog\nhello\nevery man liked some bird near the old woman\n")
    result = cli("perplexity", "-m", run / "best.pt", "--corpus", text, "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    grammar = load_grammar(run / "best.pt")
    total, words = 0.0, 0
    for line in text.read_text().splitlines()[::2]:                      # the two sentences of 2+ words
        ids = torch.tensor([[grammar.vocab.index(w) for w in line.split()]])
        with torch.no_grad():
            total += float(grammar.model(ids, torch.tensor([ids.shape[1]]))[0])
        words += ids.shape[1]
    assert record["tokens"] == words and record["sentences"] == 2
    assert math.isclose(record["perplexity"], math.exp(-total / words), rel_tol=1e-5)
    assert "1 one-word sentence left out" in record["corpus"]


# -- bundles and averaging ---------------------------------------------------------------------
def test_grammars_average_with_language_models_and_travel_in_bundles(run, tmp_path):
    words = sorted({w for s in SENTENCES for w in s})
    _, _, lm = save_tiny_checkpoint(tmp_path / "lm.pt", words)
    mixed = onparse.load([lm, str(run / "best.pt")], "cpu")
    trees = mixed.trees(SENTENCES)
    assert len(mixed.members) == 2 and all(binary_over(t, s) for t, s in zip(trees, SENTENCES))
    alone = onparse.load(str(run / "best.pt"), "cpu")
    for weights in ("float32", "int8"):
        path = tmp_path / f"{weights}.pt"
        mixed.save_bundle(str(path), weights=weights)
        assert load_model_file(str(path))["models"][1]["kind"] == "grammar"
        assert onparse.load(str(path), "cpu").trees(SENTENCES) == trees
        alone.save_bundle(str(path), weights=weights)
        assert onparse.load(str(path), "cpu").trees(SENTENCES) == alone.trees(SENTENCES)


@pytest.mark.slow
def test_train_help_imports_no_torch():
    code = ("import sys; from onparse.cli import main; from click.testing import CliRunner; "
            "r = CliRunner().invoke(main, ['train', '--help']); assert '--family' in r.output, r.output; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- long sentences, stops and messages (issue 55) ---------------------------------------------
def long_line(n):
    words = "the big cat saw a dog near every old man".split()
    return " ".join(words[k % len(words)] for k in range(n))


def test_a_validation_sentence_too_long_to_score_is_left_out_and_said(tmp_path):
    """Issue 55.3: 200 short lines and one of 2,000 words that the held-out rule sends to
    validation.  Scoring it exactly would cost n^3 r (minutes, GBs): it is left out of the
    perplexity, counted in every epoch's record and said once, and the run ends normally."""
    from onparse.text.corpora import held_out_split

    lines = open(write_corpus(tmp_path / "short.txt", 200)).read().splitlines()
    lines.insert(18, long_line(2000))                   # line 19: the 5% rule's first validation line
    (tmp_path / "v2000.txt").write_text("\n".join(lines) + "\n")
    assert max(len(s) for s in held_out_split([line.split() for line in lines])[1]) == 2000
    out = tmp_path / "g"
    result = cli(*TRAIN, "--epochs", "1", "--corpus", tmp_path / "v2000.txt", "--out", out)
    assert result.exit_code == 0, result.output
    cap = exact_words(4)                                # the tiny preset's chart: m = 4
    assert f"1 validation sentence of more than {cap:,} words is left out" in result.stderr
    epoch = next(e for e in events(out) if e["event"] == "epoch")
    assert epoch["valid_too_long"] == 1 and math.isfinite(epoch["valid_ppl"])
    assert epoch["valid_words"] < 2000


def test_a_stop_during_validation_is_honoured_at_the_next_batch(corpus, tmp_path, monkeypatch):
    """Issue 55.3: SIGTERM while the epoch's validation runs stops it after the batch in hand
    (exit 130, last.pt at the epoch's end, no epoch record); --resume validates that epoch."""
    import signal
    import onparse.grammar.parse as parse_module

    calls = []
    inside = parse_module.rank_inside

    def signalled(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return inside(*args, **kwargs)

    monkeypatch.setattr(parse_module, "rank_inside", signalled)
    out = tmp_path / "g"
    result = cli(*TRAIN, "--epochs", "1", "--corpus", corpus, "--out", out)
    assert result.exit_code == 130, result.output
    assert len(calls) == 1                               # no batch after the request
    assert [e["event"] for e in events(out)] == ["start", "stop"] and events(out)[-1]["reason"] == "interrupted"
    monkeypatch.setattr(parse_module, "rank_inside", inside)
    resumed = cli("train", "--family", "grammar", "--out", out, "--resume", "--no-progress", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    assert [e["epoch"] for e in events(out) if e["event"] == "epoch"] == [1]


def test_perplexity_leaves_out_a_sentence_too_long_to_score_and_says_so(run, tmp_path):
    """Issue 55.3: ``perplexity -m GRAMMAR`` on a 1,000-word line (beside short ones) scores the
    others and says that one was left out; on that line alone it is a one-line error."""
    cap = exact_words(4)
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("the big cat saw a dog\n" + long_line(1000) + "\nevery man liked some bird\n")
    result = cli("perplexity", "-m", run / "best.pt", "--corpus", mixed, "--json", "-q")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["sentences"] == 2 and row["tokens"] == 11
    assert f"1 sentence of more than {cap:,} words left out" in row["corpus"]
    alone = tmp_path / "alone.txt"
    alone.write_text(long_line(1000) + "\n")
    only = cli("perplexity", "-m", run / "best.pt", "--corpus", alone)
    assert only.exit_code == 1 and only.stderr.count("\n") == 1 and "Traceback" not in only.output
    assert f"more than {cap:,} words" in only.stderr


def test_max_words_beyond_the_chart_is_refused_before_training(corpus, tmp_path):
    """Issue 55.4: a training sentence of 2,000 words would need a chart of n^3 m cells far past
    the budget (a MemoryError after a minute): --max-words over the chart's limit is refused in
    one line before any text is read."""
    cap = exact_words(4)
    result = cli(*TRAIN, "--corpus", corpus, "--out", tmp_path / "g", "--max-words", "2000",
                 "--curriculum-start", "2000")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--max-words 2000 is more than the {cap:,} words" in result.output
    assert not (tmp_path / "g").exists()


def test_training_batches_keep_to_the_chart_budget(corpus, tmp_path, monkeypatch):
    """Issue 55.4: a batch of long sentences is cut to the chart budget (sentences x n^3 x chart
    width <= CHART_CELLS), every sentence still trained.  The budget is shrunk so that the toy
    corpus's longest sentences meet it."""
    import onparse.grammar.parse as parse_module

    monkeypatch.setattr(parse_module, "CHART_CELLS", 2 * 12 ** 3 * 4)
    cap = exact_words(4)
    assert cap < 20
    shapes = []
    forward = NeuralPCFG.forward

    def recorded(self, ids, lengths):
        if self.training:
            shapes.append((len(lengths), int(lengths.max())))
        return forward(self, ids, lengths)

    monkeypatch.setattr(NeuralPCFG, "forward", recorded)
    refused = cli(*TRAIN, "--epochs", "1", "--corpus", corpus, "--out", tmp_path / "x")
    assert refused.exit_code == 2 and f"the {cap} words" in refused.output
    out = tmp_path / "g"
    result = cli(*TRAIN, "--epochs", "1", "--max-words", cap, "--curriculum-start", cap, "--corpus", corpus,
                 "--out", out)
    assert result.exit_code == 0, result.output
    assert all(b * n ** 3 * 4 <= parse_module.CHART_CELLS for b, n in shapes)
    assert any(b == 1 and n > 12 for b, n in shapes)                # alone: the budget, not batch_size
    start = next(e for e in events(out) if e["event"] == "start")
    assert sum(b for b, _ in shapes) == start["train_sentences"]


def test_max_words_below_the_default_curriculum_start_names_the_default(corpus, tmp_path):
    """Issue 55, low: --max-words 2 alone is refused naming --curriculum-start's default, which
    the user did not give."""
    result = cli("train", "--family", "grammar", "--preset", "tiny", "--corpus", corpus, "--out", tmp_path / "g",
                 "--max-words", "2")
    assert result.exit_code == 2
    assert "--max-words 2 is below --curriculum-start's default 30: give --curriculum-start too" in result.output


def test_init_from_for_a_grammar_is_refused_in_english(corpus, tmp_path):
    result = cli("train", "--family", "grammar", "--corpus", corpus, "--out", tmp_path / "g", "--init-from",
                 tmp_path / "lm.pt")
    assert result.exit_code == 2 and "--init-from applies to --family lm, not grammar" in result.output
    both = cli("train", "--family", "grammar", "--corpus", corpus, "--out", tmp_path / "g", "--init-from",
               tmp_path / "lm.pt", "--no-amp")
    assert both.exit_code == 2 and "--init-from, --amp/--no-amp apply to --family lm" in both.output


def test_a_validation_file_of_one_word_lines_is_named_not_the_corpus(corpus, tmp_path):
    # Issue 55, low: the error blamed the training corpus for the validation file's lines.
    valid = tmp_path / "oneword.txt"
    valid.write_text("".join(f"word{i}\n" for i in range(30)))
    result = cli(*TRAIN, "--corpus", corpus, "--valid", valid, "--out", tmp_path / "g")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{valid}: no validation sentence of two words or more" in result.output
    assert f"{corpus}:" not in result.output

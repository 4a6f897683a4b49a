"""The distill student learns its teacher's trees: right-branching teacher trees over random
text are reproduced on sentences it never saw."""
import random

import torch

from onparse.trees.baselines import right_branching
from onparse.trees.span_trees import cyk
from onparse.student.model import SpanStudent, StudentConfig
from onparse.trees.tree import tree_spans


def batch(sentences):
    lengths = torch.tensor([len(s) for s in sentences])
    ids = torch.zeros(len(sentences), int(lengths.max()), dtype=torch.long)
    for b, s in enumerate(sentences):
        ids[b, :len(s)] = torch.tensor(s)
    return ids, lengths


def teacher(sentence):
    return tree_spans(right_branching([str(w) for w in sentence]))


def test_a_student_reproduces_right_branching_teachers_on_unseen_sentences():
    torch.manual_seed(0)
    rng = random.Random(0)
    make = lambda n: [[rng.randrange(1, 50) for _ in range(rng.randint(1, 12))] for _ in range(n)]  # noqa: E731
    train, unseen = make(256), make(64)
    model = SpanStudent(StudentConfig(vocab_size=50, embedding_size=16, hidden_size=16, mlp_size=16, dropout=0.0))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    first = None
    for step in range(60):
        chunk = train[(step % 8) * 32:(step % 8 + 1) * 32]
        ids, lengths = batch(chunk)
        loss = model.loss(ids, lengths, [teacher(s) for s in chunk])
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < first / 10
    ids, lengths = batch(unseen)
    found = model.parse(ids, lengths)
    wanted = [teacher(s) for s in unseen]
    shared = sum(len(set(a) & set(b)) for a, b in zip(found, wanted))
    assert shared >= 0.99 * sum(len(b) for b in wanted)


def test_span_scores_of_a_sentence_do_not_depend_on_its_batch():
    torch.manual_seed(1)
    model = SpanStudent(StudentConfig(vocab_size=20, embedding_size=8, hidden_size=8, mlp_size=8)).eval()
    sentences = [[3, 4, 5], [6, 7, 8, 9, 10, 11], [12]]
    ids, lengths = batch(sentences)
    together = model(ids, lengths)
    for b, s in enumerate(sentences):
        alone = model(*batch([s]))
        n = len(s)
        assert torch.allclose(together[b, :n + 1, :n + 1], alone[0], atol=1e-6)


# -- issue 41: one long line must not exhaust memory or time --------------------------------------

def _tiny_student(seed=2, mlp_size=16):
    torch.manual_seed(seed)
    return SpanStudent(StudentConfig(vocab_size=30, embedding_size=8, hidden_size=8, mlp_size=mlp_size)).eval()


def _is_binary_over(tree, words):
    from onparse.trees.tree import leaves

    def binary(node):
        return isinstance(node, str) or (len(node) == 2 and all(binary(c) for c in node))
    return leaves(tree) == list(words) and binary(tree)


def test_span_scores_in_row_blocks_equal_the_whole_forward_pass():
    model = _tiny_student()
    sentences = [[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], [6, 7, 8], [12]]
    ids, lengths = batch(sentences)
    whole = model(ids, lengths)
    g = model.boundaries(ids, lengths)
    for max_cells in (1, 13, 50, 1 << 20):
        blocked = model.span_scores(g, max_cells)
        for b, n in enumerate(lengths.tolist()):
            upper = torch.triu(torch.ones(n + 1, n + 1, dtype=torch.bool), diagonal=1)
            assert torch.allclose(blocked[b, :n + 1, :n + 1][upper], whole[b, :n + 1, :n + 1][upper], atol=1e-6)
    assert model.parse(ids, lengths) == cyk(whole, lengths)


def test_the_span_mlp_never_holds_more_than_max_cells(monkeypatch):
    """The [B, rows, T + 1, M] layer is bounded by MAX_CELLS (or one row), however long the
    sentence: before issue 41 it was [B, T + 1, T + 1, M]."""
    import onparse.student.model as student_module
    from onparse.student.model import student_trees
    from onparse.text.vocab import Vocabulary

    monkeypatch.setattr(student_module, "MAX_CELLS", 200)
    model = _tiny_student()
    seen = []
    model.out.register_forward_hook(lambda module, args, result: seen.append(args[0].shape[:-1].numel()))
    words = [f"w{k}" for k in range(20)]
    vocab = Vocabulary.build([words])
    tokens = [words[k % 20] for k in range(80)]
    (tree,) = student_trees(model, vocab, [tokens], 64)
    assert _is_binary_over(tree, tokens)
    assert seen and max(seen) <= 200                     # 2 rows of at most 80 spans at a time
    assert sum(seen) < 81 * 81                           # the upper triangle only


def test_sentences_over_the_cap_are_parsed_in_pieces_and_counted(monkeypatch):
    import onparse.trees.average as average_module
    from onparse.student.model import student_trees
    from onparse.text.vocab import Vocabulary

    model = _tiny_student()
    words = [f"w{k}" for k in range(25)]
    vocab = Vocabulary.build([words])
    long, short = words[:23], words[:6]
    exact = student_trees(model, vocab, [long, short], 64)
    assert exact.too_long == []
    monkeypatch.setattr(average_module, "MAX_WORDS", 7)
    pieces = student_trees(model, vocab, [short, [], long, short], 64)
    assert pieces.too_long == [2]
    assert pieces[1] is None and pieces[0] == pieces[3] == exact[1]      # short sentences: CYK as before
    assert _is_binary_over(pieces[2], long)
    # Pieces of 5, 6, 6, 6 words (ceil(23 / 7) = 4 near-equal pieces): each is a span of the tree.
    from onparse.trees.tree import tree_spans
    spans = set(tree_spans(pieces[2]))
    assert {(0, 5), (5, 11), (11, 17), (17, 23)} <= spans and len(spans) == 22
    # With pieces as long as the sentence, the pieces' tree is CYK's.
    ids, lengths = batch([[vocab.index(w) for w in long]])
    assert model.parse_in_pieces(ids, 23) == model.parse(ids, lengths)[0]


def test_induce_keeps_a_line_over_the_cap_and_notes_it(monkeypatch, tmp_path):
    from click.testing import CliRunner

    import onparse.trees.average as average_module
    from onparse.cli import main
    from onparse.student.file import save_student
    from onparse.trees.tree import leaves, parse_brackets
    from onparse.text.vocab import Vocabulary

    words = "the a cat dog saw liked big small".split()
    vocab = Vocabulary.build([words])
    torch.manual_seed(0)
    config = StudentConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, mlp_size=8)
    path = tmp_path / "student.pt"
    save_student(str(path), config=config.to_dict(), vocab=vocab, state_dict=SpanStudent(config).state_dict())
    monkeypatch.setattr(average_module, "MAX_WORDS", 10)
    long = " ".join(words[k % 8] for k in range(45))
    lines = ["the cat saw a dog", long, "", "the dog"]
    out = CliRunner().invoke(main, ["induce", "-", "-m", str(path), "-q"], input="\n".join(lines) + "\n")
    assert out.exit_code == 0, out.output
    trees = out.stdout.splitlines()
    assert len(trees) == 4 and trees[2] == ""
    assert leaves(parse_brackets(trees[1])) == long.split()
    assert "note: 1 sentence(s) were too long for the student to parse whole: each got a tree built in pieces" \
        in out.stderr

"""The distill student learns its teacher's trees: right-branching teacher trees over random
text are reproduced on sentences it never saw."""
import random

import torch

from onparse.baselines import right_branching
from onparse.student import SpanStudent, StudentConfig
from onparse.trees import tree_spans


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

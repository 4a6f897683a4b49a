"""A first probe of `onparse distill` (issue 33), for reading only: does a span student trained on
the shipped bundle's trees of the `news` training text parse the dev half better than its
teacher?  It chooses nothing; the test half is not read.

    onparse induce runs/distill/news-train.txt --pretokenized -q > runs/distill/news-train.teacher.txt
    python research/distill_probe.py --minutes 20 --out runs/distill/probe

Trains `onparse.student.model.SpanStudent` (default sizes) with the tree-CRF loss, Adam, batches of
sentences of similar length (at most 60 words in training), and after every epoch (or at the
time limit) scores the student's CYK trees on `wsj-sample-dev` / `wsj10-sample-dev` beside the
teacher's, writing one JSON line per evaluation to OUT/probe.jsonl.
"""
import argparse
import json
import os
import random
import sys
import time


def read_data(text_path, trees_path, max_words):
    from onparse.trees.tree import parse_brackets, tree_spans

    sentences, spans = [], []
    with open(text_path, encoding="utf-8") as text, open(trees_path, encoding="utf-8") as trees:
        for words, tree in zip(text, trees):
            words = words.split()
            if 2 <= len(words) <= max_words and tree.strip():
                sentences.append(words)
                spans.append(tree_spans(parse_brackets(tree.strip())))
    return sentences, spans


def batches(order, lengths, size, rng):
    """Lists of sentence indices of similar length, shuffled."""
    order = sorted(order, key=lambda i: (lengths[i], rng.random()))
    chunks = [order[k:k + size] for k in range(0, len(order), size)]
    rng.shuffle(chunks)
    return chunks


def encode(sentences, vocab):
    import torch

    from onparse.text.tokens import normalize_word

    lengths = torch.tensor([len(s) for s in sentences])
    ids = torch.zeros(len(sentences), int(lengths.max()), dtype=torch.long)
    for b, s in enumerate(sentences):
        ids[b, :len(s)] = torch.tensor([vocab.index(normalize_word(w)) for w in s])
    return ids, lengths


def dev_scores(model, vocab, gold, short_index):
    from onparse import evaluate
    from onparse.trees.tree import spans_to_tree

    tokens = [list(s.words) for s in gold]
    trees = []
    for k in range(0, len(tokens), 128):
        chunk = tokens[k:k + 128]
        ids, lengths = encode(chunk, vocab)
        for words, spans in zip(chunk, model.parse(ids, lengths)):
            trees.append(spans_to_tree(words, spans))
    short = [gold[i] for i in short_index]
    return {"all": evaluate(trees, gold).sentence_f1.f1,
            "10": evaluate([trees[i] for i in short_index], short).sentence_f1.f1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--text", default="runs/distill/news-train.txt")
    ap.add_argument("--trees", default="runs/distill/news-train.teacher.txt")
    ap.add_argument("--out", default="runs/distill/probe")
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-words", type=int, default=60)
    args = ap.parse_args()
    import torch

    from onparse import load
    from onparse.student.model import SpanStudent, StudentConfig
    from onparse import load_gold
    from onparse.text.vocab import Vocabulary

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = random.Random(0)
    os.makedirs(args.out, exist_ok=True)
    sentences, spans = read_data(args.text, args.trees, args.max_words)
    vocab = Vocabulary.build([[w for w in s] for s in sentences], max_size=10000)
    gold = load_gold("wsj-sample-dev")
    short_index = [i for i, s in enumerate(gold) if len(s) <= 10]
    teacher = load().score(gold).result
    teacher_short = load().score(load_gold("wsj10-sample-dev")).result
    log = open(os.path.join(args.out, "probe.jsonl"), "a", encoding="utf-8")
    log.write(json.dumps({"event": "teacher", "dev": {"all": teacher.sentence_f1.f1,
                                                      "10": teacher_short.sentence_f1.f1},
                          "sentences": len(sentences)}) + "\n")
    model = SpanStudent(StudentConfig(vocab_size=len(vocab)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    started, epoch, step = time.monotonic(), 0, 0
    lengths = [len(s) for s in sentences]
    done = False
    while not done:
        epoch += 1
        for chunk in batches(range(len(sentences)), lengths, args.batch, rng):
            ids, lens = encode([sentences[i] for i in chunk], vocab)
            loss = model.loss(ids, lens, [spans[i] for i in chunk])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f} "
                      f"{time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)
            if time.monotonic() - started > 60 * args.minutes:
                done = True
                break
        record = {"event": "eval", "epoch": epoch, "step": step, "minutes": (time.monotonic() - started) / 60,
                  "dev": dev_scores(model, vocab, gold, short_index)}
        log.write(json.dumps(record) + "\n")
        log.flush()
        print(json.dumps(record), file=sys.stderr, flush=True)
        torch.save({"config": model.config.to_dict(), "state_dict": model.state_dict(), "vocab": vocab.to_list()},
                   os.path.join(args.out, "student.pt"))


if __name__ == "__main__":
    main()

"""The text students learn from (rule v8, research/PROTOCOL.md): the training part of the `news`
corpus, one sentence per line, its words joined by spaces (read back with `--pretokenized`).

    python research/distill_text.py runs/distill/news-train.txt
"""
import os
import sys

from onparse.text.corpora import load_corpus, make_spec


def main(out: str) -> None:
    sentences = load_corpus(make_spec("news")).train
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        handle.writelines(" ".join(words) + "\n" for words in sentences)
    print(f"{out}: {len(sentences):,} sentences, {sum(map(len, sentences)):,} words", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/distill/news-train.txt")

"""Rule v10, 56: each treebank's training part as raw text for `onparse fit`, one sentence a line
(`runs/fit-text-NAME.txt`); the treebank's dev and test sentences are never written.

    python research/fit_texts.py [--out-dir runs] [NAME ...]
"""
import argparse
import os

from onparse.gold.multilingual import TREEBANKS, text_sentences


def write_text(name: str, out_dir: str) -> str:
    """Write NAME's training sentences, words joined by spaces, and return the path."""
    path = os.path.join(out_dir, f"fit-text-{name}.txt")
    os.makedirs(out_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(" ".join(words) + "\n" for words in text_sentences(name, "train"))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(TREEBANKS))
    parser.add_argument("--out-dir", default="runs")
    args = parser.parse_args()
    for name in args.names:
        print(write_text(name, args.out_dir))


if __name__ == "__main__":
    main()

"""Rule v11 (amended, PROTOCOL.md 60): the students' text and teacher trees, from the two
`onparse induce --shard K/2` halves as far as they got: the first N trees of each half and the
lines of news-train.txt they are trees of, in order.

    python research/v11_text.py --lines 12288      # runs/distill/v11-text.txt, v11-teacher.txt

Every tree's words are checked to be its line's, less dropped punctuation (onparse distill
checks them exactly, as it reads the text).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DISTILL = os.path.join(os.path.dirname(HERE), "runs", "distill")
TEXT = os.path.join(DISTILL, "news-train.txt")
PART = os.path.join(DISTILL, "v9-teacher.part{k}.txt")


def words_match(tree: str, line: str) -> bool:
    """Whether a bracketed tree `induce` wrote is one of `line` (an empty tree, for a line of fewer
    than two words, matches any line): induce drops punctuation the vocabulary lacks, so the
    tree's words are a subsequence of the line's.  `onparse distill` checks them exactly."""
    from onparse.trees.tree import leaves, parse_brackets, to_brackets

    if not tree:
        return True
    words = iter(to_brackets(w) for w in line.split())
    return all(w in words for w in leaves(parse_brackets(tree)))


def main():
    from onparse.induce import Shard, _line_number_at

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, required=True, help="trees taken from each half")
    args = ap.parse_args()
    with open(TEXT, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    size = os.path.getsize(TEXT)
    text, trees = [], []
    for k in (1, 2):
        start = Shard(k, 2).byte_range(size)[0]
        with open(TEXT, "rb") as handle:          # as read_lines skips to a part's first line
            if start > 0:
                handle.seek(start - 1)
                handle.readline()
            first = _line_number_at(TEXT, handle.tell()) - 1                    # 0-based
        with open(PART.format(k=k), encoding="utf-8") as handle:
            part = handle.read().splitlines()[:args.lines]
        assert len(part) == args.lines, f"half {k} has only {len(part)} trees"
        for offset, tree in enumerate(part):
            line = lines[first + offset]
            assert words_match(tree, line), (k, offset)
            text.append(line)
            trees.append(tree)
    for name, rows in (("v11-text.txt", text), ("v11-teacher.txt", trees)):
        with open(os.path.join(DISTILL, name), "w", encoding="utf-8") as handle:
            handle.writelines(row + "\n" for row in rows)
    print(f"{len(text):,} sentences, {sum(len(t.split()) for t in text):,} words", file=sys.stderr)


if __name__ == "__main__":
    main()

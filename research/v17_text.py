"""Rule v17 (PROTOCOL.md 87): the teacher's trees of the whole of news-train.txt, from the pieces
`onparse induce` wrote them in, concatenated in the text's order into runs/distill/v17-teacher.txt.

    python research/v17_text.py            # the rule's six pieces (below)
    python research/v17_text.py --check    # only check what exists, write nothing

Each piece is FILE[:N]: its first N complete lines (a piece cut by the clock ends in a partial
line, which is left out).  Every tree's words are checked to be its line's, less the punctuation
induce drops (`v11_text.words_match`); the pieces must cover the text's lines exactly.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from v11_text import DISTILL, TEXT, words_match  # noqa: E402

#: Rule 87's pieces: each --shard K/2 half's first 12,288 trees, then the rest of that half in
#: the windows the clock left (news-train.restK.txt from its line 1, then from its line 4,097).
PIECES = ("v9-teacher.part1.txt:12288", "v9-teacher.rest1.txt:4096", "v9-teacher.rest1b.txt",
          "v9-teacher.part2.txt:12288", "v9-teacher.rest2.txt:4096", "v9-teacher.rest2b.txt")
OUT = os.path.join(DISTILL, "v17-teacher.txt")


def complete_lines(path, limit=None):
    """A file's newline-terminated lines (the first `limit`), without their newlines."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.split("\n")[:-1]          # the part after the last newline is partial (or empty)
    if limit is not None:
        if len(lines) < limit:
            raise SystemExit(f"{path}: {len(lines)} complete lines, fewer than the {limit} taken")
        lines = lines[:limit]
    return lines


def concatenate(pieces, text_path=TEXT, distill=DISTILL):
    """The pieces' trees in order, checked against text_path's lines one by one."""
    with open(text_path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    trees = []
    for piece in pieces:
        name, _, limit = piece.partition(":")
        got = complete_lines(os.path.join(distill, name), int(limit) if limit else None)
        for offset, tree in enumerate(got):
            at = len(trees) + offset
            if at >= len(lines):
                raise SystemExit(f"{name}: more trees than the text has lines ({len(lines):,})")
            if not words_match(tree, lines[at]):
                raise SystemExit(f"{name}, tree {offset + 1}: not a tree of text line {at + 1}")
        trees.extend(got)
        print(f"{name}: {len(got):,} trees, text lines to {len(trees):,}", file=sys.stderr)
    if len(trees) != len(lines):
        raise SystemExit(f"the pieces cover {len(trees):,} of the text's {len(lines):,} lines")
    return trees


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pieces", nargs="*", default=list(PIECES), help="FILE[:N] in runs/distill, in order")
    ap.add_argument("--check", action="store_true", help="check only; write nothing")
    args = ap.parse_args(argv)
    trees = concatenate(args.pieces)
    if not args.check:
        with open(OUT, "w", encoding="utf-8") as handle:
            handle.writelines(tree + "\n" for tree in trees)
        print(f"wrote {OUT}: {len(trees):,} trees", file=sys.stderr)


if __name__ == "__main__":
    main()

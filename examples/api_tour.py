"""A tour of onparse's Python API, using nothing but the public surface (``onparse.load`` and
the :class:`onparse.Parser` it returns).  Runs in about a minute on a laptop CPU:

    python examples/api_tour.py

1. parse raw text and token lists into nltk trees;
2. read the distances a tree was decoded from;
3. parse many sentences in batches (nltk's ``parse_sents`` contract, or ``batch``);
4. score the parser on a gold set, member by member and averaged, with and without its voter.
"""
import onparse


def parse_text(parser) -> None:
    """Part 1 (tests/test_api.py checks that the comments show what the bundled model returns)."""
    # A string is tokenised (NLTK's word tokenizer) and its punctuation dropped; a list of tokens
    # is used as given.  Trees are binary nltk.Tree objects, each constituent labelled X, each
    # word under a pre-terminal W (as `onparse induce --format ptb` writes them).
    tree = parser.parse_one("The cat sat on the mat.")
    print(tree)       # (X (X (X (W The) (W cat)) (W sat)) (X (W on) (X (W the) (W mat))))
    tree.pretty_print()               # drawn with the words in order: The cat sat on the mat
    print(tree.leaves())              # ['The', 'cat', 'sat', 'on', 'the', 'mat']
    print(parser.parse_one(["Le", "chat", "dort"]))
    # Trees written by `onparse induce` (either format) read back the same way; a brackets line
    # is not PTB (nltk.Tree.fromstring would take its first word for a label).
    print(onparse.read_trees(["((The cat) sat)"])[0])     # (X (X (W The) (W cat)) (W sat))


def main() -> None:
    parser = onparse.load()          # the bundled model; onparse.load("run/best.pt") for your own
    print(f"{len(parser.models)} model(s): {parser.describe_average()}")   # members, voters, tie rule

    # 1. Raw text and token lists into nltk trees.
    parse_text(parser)

    # 2. The master-forget distances of layer 2 of the first model, one per token.
    words = parser.tokens(["Stocks fell sharply in heavy trading."])[0]
    for word, value in zip(words, parser.distances("Stocks fell sharply in heavy trading.")):
        print(f"{word:>10} {value:.3f}")

    # 3. Many sentences: computed in length-sorted batches, returned in input order.
    sentences = ["It rained .", "The market closed higher on Friday .", ""]
    for sentence, trees in zip(sentences, parser.parse_sents(sentences)):
        print(repr(sentence), "->", next(trees, None))   # an empty sentence has no tree
    print(parser.batch(sentences))

    # 4. Scores on the test half of NLTK's WSJ sample (never training text, never chosen from),
    #    member by member and averaged; the same parser without its voter for comparison.
    scores = parser.score("wsj10-sample-test")
    for label, result in scores.rows():
        print(f"{label:48} sentence F1 {100 * result.sentence_f1.f1:5.1f}")
    alone = parser.with_members(parser.members, voters=[], ties="first").score("wsj10-sample-test")
    print(f"{'the same members, no voter, ties first':48} sentence F1 {100 * alone.result.sentence_f1.f1:5.1f}")


if __name__ == "__main__":
    main()

"""A tour of onparse's Python API, using nothing but the public surface (``onparse.load`` and
the :class:`onparse.Parser` it returns).  Runs in about a minute on a laptop CPU:

    python examples/api_tour.py

1. parse raw text and token lists into nltk trees;
2. read the distances a tree was decoded from;
3. parse many sentences in batches (nltk's ``parse_sents`` contract, or ``batch``);
4. score the parser on a gold set, member by member and averaged, with and without its voter.
"""
import onparse


def main() -> None:
    parser = onparse.load()          # the bundled model; onparse.load("run/best.pt") for your own
    print(f"{len(parser.models)} model(s): {parser.describe_average()}")   # members, voters, tie rule

    # 1. A string is tokenised (NLTK's word tokenizer) and its punctuation dropped; a list of
    #    tokens is used as given.  Trees are binary nltk.Tree objects labelled X.
    tree = parser.parse_one("The cat sat on the mat.")
    print(tree)                      # (X (X The cat) (X sat (X on (X the mat))))
    tree.pretty_print()
    print(parser.parse_one(["Le", "chat", "dort"]))

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

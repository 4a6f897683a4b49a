"""A tour of onparse's Python API, using nothing but the public surface (``onparse.load`` and
the :class:`onparse.Parser` it returns).  Runs in about a minute on a laptop CPU:

    python examples/api_tour.py

1. parse raw text and token lists into nltk trees;
2. read the distances a tree was decoded from;
3. parse many sentences in batches (nltk's ``parse_sents`` contract, or ``batch``);
4. score the parser on a gold set, member by member and averaged.
"""
import onparse


def main() -> None:
    parser = onparse.load()          # the bundled model; onparse.load("run/best.pt") for your own
    print(f"{len(parser.models)} model(s), {len(parser.members)} member(s) averaged")

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

    # 4. Held-out scores on WSJ10 (NLTK's treebank sample is never training text).
    scores = parser.score("wsj10")
    for label, result in scores.rows():
        print(f"{label:28} sentence F1 {100 * result.sentence_f1.f1:5.1f}")


if __name__ == "__main__":
    main()

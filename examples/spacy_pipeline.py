"""onparse inside a spaCy pipeline, end to end (a few seconds; needs `pip install onparse[spacy]`).

    python examples/spacy_pipeline.py

No spaCy model needs downloading: a blank pipeline with spaCy's rule-based sentencizer gives the
sentences, and onparse's bundled model parses them over spaCy's own tokens.
"""
import spacy
from spacy.tokens import DocBin

nlp = spacy.blank("en")
nlp.add_pipe("sentencizer")              # onparse parses each sentence: something must set them
nlp.add_pipe("onparse")                  # the bundled model; config={"model": "mine.pt"} for another

doc = nlp("The cat sat on the mat. Dogs bark, and cats meow!")
for sent in doc.sents:
    print(sent._.parse_string)           # every token is in the tree: W words, P punctuation

# The constituents of the first sentence, outermost first, with their labels and parents.
first = next(doc.sents)
for span in first._.constituents:
    if len(span) > 1:
        parent = span._.parent
        where = f"inside {parent.text!r}" if parent is not None else "(the sentence)"
        print(f"{span._.labels[0]:>6}  {span.text!r:28} {where}")

# nlp.pipe parses the sentences of many docs together and gives the same trees.
texts = ["A bird sang.", "The dog chased the ball across the park.", "Hello, world!"]
for doc2 in nlp.pipe(texts):
    print(" ".join(sent._.parse_string for sent in doc2.sents))

# The trees travel with the docs: a DocBin that keeps user data keeps them.
box = DocBin(store_user_data=True)
box.add(doc)
again = next(DocBin().from_bytes(box.to_bytes()).get_docs(nlp.vocab))
print("DocBin round trip keeps the trees:",
      [s._.parse_string for s in again.sents] == [s._.parse_string for s in doc.sents])

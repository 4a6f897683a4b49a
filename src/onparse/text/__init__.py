"""Where words come from: tokenisation, vocabularies, corpora, held-out splits, NLTK data."""

"""onparse inside other people's pipelines: the spaCy component (:mod:`.spacy_component`), its
``Span._`` extensions (:mod:`.spacy_extensions`) and the rule that gives every token of a
sentence its place in the tree (:mod:`.placement`, which needs neither spaCy nor torch).

Importing this package imports nothing: ``import onparse`` never loads spaCy.
"""

"""Scores: span conventions, the F1 metric, token matching, predicted trees, gold-free agreement."""

"""Pictures: the terminal view of a sentence and the matplotlib figures."""

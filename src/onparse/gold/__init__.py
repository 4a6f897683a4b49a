"""Gold trees: treebanks, tag sets, other languages' treebanks."""

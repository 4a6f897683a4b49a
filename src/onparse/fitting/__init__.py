"""``onparse fit``: from raw text to a chosen, bundled parser with no gold tree.
:mod:`~onparse.fitting.pipeline` runs the stages in one resumable run folder;
:mod:`~onparse.fitting.choice` is the gold-free rule that chooses epochs, members, voter and ties."""

"""Files: checkpoints, bundles, weights, safe writing, run folders and their logs, the bundled model, descriptions."""

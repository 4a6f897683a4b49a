"""Trees and what builds them: nested tuples and brackets, decoders, averaging, span charts, baselines. No model here."""

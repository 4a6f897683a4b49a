"""The ON-LSTM language model kind: the model, its fast cell and graphs, distances, perplexity, training."""

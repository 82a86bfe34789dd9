"""Hand-offs: how a prepared frame's planes become the inputs of an inference request."""

"""Resizers: decoded frame → model-size input (NV12 planes, or BGR for the baseline)."""

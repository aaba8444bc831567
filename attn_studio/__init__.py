"""Attention Studio: a live playground for the attention mechanism."""

__version__ = "0.1.0"

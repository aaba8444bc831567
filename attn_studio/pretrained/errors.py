"""The one error a trained model's loading and running raise."""

from __future__ import annotations


class ModelError(ValueError):
    """A model folder, checkpoint or input that cannot be used, with a message a person can act on."""

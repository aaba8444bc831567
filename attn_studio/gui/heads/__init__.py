"""The Head Lab in the window: the Heads tab of a trained model (report card, find the head,
weight and norm, importance, flow beside rollout, what silencing changed)."""

from .tab import HeadsTab

__all__ = ["HeadsTab"]

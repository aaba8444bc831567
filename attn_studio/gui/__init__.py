"""The Qt side of Attention Studio: the window, its views and the bridge to the Studio."""

from .window import MainWindow

__all__ = ["MainWindow"]

"""The main window and its layout: it assembles the other rooms of ``gui`` and wires them.

``main`` builds the window, ``layout`` places its central area and docks for the screen,
``help`` holds the shortcuts dialog and the About box. No other room of ``gui`` imports
this one: the window is where they meet.
"""

from ..settings import data_dir
from .main import MainWindow

__all__ = ["MainWindow", "data_dir"]

"""The Qt side of Attention Studio: the window, its views and the bridge to the Studio.

The rooms by job (docs/ARCHITECTURE.md): ``window/`` assembles the main window and lays it
out; ``editing/`` holds the Model panel, the matrix tables and the Edit menu; ``files/`` the
File and Export menus, figures and saving; ``lecture/`` lecture mode and Present;
``trained/`` trained models in the window; ``views/`` draws. Shared by all of them:
``bridge`` (the Studio's changes as Qt signals), ``presentation`` (themes, text size),
``settings`` (what the window remembers) and ``widgets`` (small building blocks).
"""

from .window import MainWindow

__all__ = ["MainWindow"]

"""Test setup shared by every layer: Qt runs on the offscreen platform, no display needed."""

import os

# Set before anything imports Qt: the GUI tests drive the real window offscreen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

"""pyqtgraph, configured once before any item is created."""

import pyqtgraph as pg

# Arrays are (rows = queries, columns = keys), as the seeds print them.
pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")

__all__ = ["pg", "cache_static"]


def cache_static(*items) -> None:
    """Paint ``items`` from a device pixmap cache: axes and fixed curves change
    rarely, and replaying their drawing on every repaint costs a frame."""
    from PySide6 import QtWidgets

    for item in items:
        item.setCacheMode(QtWidgets.QGraphicsItem.DeviceCoordinateCache)

"""The heatmap's image item: pyqtgraph's ImageItem drawing a picture coloured beforehand
(:mod:`.heatmap_image`, NumPy only) without a copy or a conversion."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from ..qt.pg import pg


class HeatmapImage(pg.ImageItem):
    """pyqtgraph's ImageItem, drawn from a picture coloured beforehand (:mod:`.heatmap_image`).

    ``image`` stays the matrix itself (NaN where a cell is masked), as pyqtgraph keeps it:
    its shape places the picture and readers find the numbers there. The picture is
    ``set_pixels``' premultiplied ARGB32 array, wrapped as a QImage without a copy or a
    conversion, one pixel per ``factor`` × ``factor`` block of cells; it is stretched
    over the whole matrix when painted. Without pixels pyqtgraph colours ``image`` itself.
    """

    def __init__(self, *args, **kwargs):
        self._pixels = None
        self._factor = 1
        self._scaled, self._scaled_key = None, None  # the picture scaled down to the screen, and for what
        super().__init__(*args, **kwargs)

    def set_pixels(self, pixels: np.ndarray | None, factor: int = 1) -> None:
        """Show ``pixels`` (uint32 premultiplied ARGB32, (rows, columns) of blocks) for the current image."""
        self._pixels = None if pixels is None else np.ascontiguousarray(pixels, dtype=np.uint32)
        self._scaled_key = None  # the picture scaled to the screen, made again at the next paint
        self._factor = int(factor)
        self._renderRequired = True
        self.update()

    @property
    def factor(self) -> int:
        """Cells per side of the block one pixel of the picture stands for (1: a pixel per cell)."""
        return self._factor

    def render(self, *args, **kwargs):
        pixels = self._pixels
        if pixels is None:
            super().render(*args, **kwargs)
            qimage = self.qimage
            if qimage is not None and qimage.format() != QtGui.QImage.Format_ARGB32_Premultiplied:
                self.qimage = qimage.convertToFormat(QtGui.QImage.Format_ARGB32_Premultiplied)
            return
        h, w = pixels.shape
        # The QImage reads the array's memory: ``_pixels`` keeps it alive as long as the image is shown.
        self.qimage = QtGui.QImage(pixels.data, w, h, 4 * w, QtGui.QImage.Format_ARGB32_Premultiplied)
        self._renderRequired = False
        self._unrenderable = False

    def paint(self, painter, *args):
        if self._pixels is None or self.image is None:
            return super().paint(painter, *args)
        if self._renderRequired:
            self.render()
        rows, cols = self.image.shape[:2]
        target = QtCore.QRectF(0, 0, cols, rows)
        # A block at the right or bottom edge may hold fewer cells: the source rectangle ends
        # inside its pixel, so that every block covers exactly its cells.
        f = self._factor
        wide, tall = cols / f, rows / f
        device = painter.transform().mapRect(target)
        width, height = abs(device.width()), abs(device.height())
        if width >= wide and height >= tall:
            painter.drawImage(target, self.qimage, QtCore.QRectF(0, 0, wide, tall))
            return
        # Drawn smaller than its pixels (2,000 tokens in a few hundred): Qt would show every n-th
        # pixel. The picture is scaled down once per size by Qt's smooth scaling, which averages
        # the pixels each screen pixel covers, so that the screen too shows means, not samples.
        sx, sy = min(1.0, width / wide), min(1.0, height / tall)
        size = (max(1, round(self.qimage.width() * sx)), max(1, round(self.qimage.height() * sy)))
        key = (id(self._pixels), size)
        if getattr(self, "_scaled_key", None) != key:
            self._scaled = self.qimage.scaled(*size, QtCore.Qt.IgnoreAspectRatio, QtCore.Qt.SmoothTransformation)
            self._scaled_key = key
        scaled = self._scaled
        painter.drawImage(target, scaled, QtCore.QRectF(0, 0, wide * scaled.width() / self.qimage.width(),
                                                       tall * scaled.height() / self.qimage.height()))

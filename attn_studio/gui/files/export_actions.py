"""The export menus and dialogs: figures to PNG/SVG/PDF, matrices to CSV/NumPy/LaTeX.

Only menus and questions live here; the exporting itself is ``export``'s.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from . import export
from .panels import TOY_PANELS, heatmap_panel

PANEL_ITEMS = (("heatmaps", "Attention heatmaps…"), ("head", "Head {head} weights…"),
               ("steps", "Step-by-step table…"), ("outputs", "Heads → output…"), ("compare", "Compare…"),
               ("geometry", "Geometry…"), ("positions", "Positions…"),
               ("variance", "Variance plot…"), ("saturation", "Saturation plot…"), ("window", "Whole window…"))
TRAINED_PANEL_ITEMS = (("model", "Model view (all layers and heads)…"), ("drift", "Drift plot…"),
                       ("meaning", "Meaning in context…"))
PNG_SCALES = (1, 2, 3, 4, 6, 8)


class ExportActions(QtCore.QObject):
    """Export actions of ``window`` (a MainWindow): ``export_menu``, ``copy_figure_action``, ``png_scale``.

    ``show_message`` reports a failure; ``status`` a success (text, milliseconds).
    """

    def __init__(self, window, show_message: Callable[[str], None], status: Callable[[str, int], None]):
        super().__init__(window)
        self.window = window
        self.studio = window.studio
        self.show_message, self.status = show_message, status
        self.png_scale = 2.0
        self.writing: set = set()  # PNGs being compressed and written off the GUI thread
        self.exports: list = []  # figures being exported or copied in steps (export_job), the first one running
        self.export_menu = QtWidgets.QMenu("&Export", window)
        self.export_menu.setObjectName("exportMenu")
        self.export_menu.aboutToShow.connect(self._fill_export_menu)
        self.copy_figure_action = QtGui.QAction("Copy &figure of this view", window)
        self.copy_figure_action.setShortcut(QtGui.QKeySequence("Ctrl+Shift+C"))
        self.copy_figure_action.triggered.connect(lambda: self.copy_current_figure(wait=False))
        window.addAction(self.copy_figure_action)

    def _fill_export_menu(self):
        menu = self.export_menu
        menu.clear()
        head = self.studio.state.shown_head + 1
        trained = getattr(self.studio, "is_trained", False)
        for name, text in PANEL_ITEMS:
            if trained and name in TOY_PANELS:
                continue  # a toy model's view, hidden for a trained one: nothing to draw
            name = f"head:{head}" if name == "head" else name
            menu.addAction(text.format(head=head), lambda n=name: self.export_panel_dialog(n))
        if trained:
            for name, text in TRAINED_PANEL_ITEMS:
                menu.addAction(text, lambda n=name: self.export_panel_dialog(n))
        self._add_training_items(menu)
        scale_menu = menu.addMenu("PNG &scale")
        group = QtGui.QActionGroup(scale_menu)
        for scale in PNG_SCALES:
            action = scale_menu.addAction(f"{scale}× ({96 * scale} dpi)",
                                          lambda s=scale: setattr(self, "png_scale", float(s)))
            action.setCheckable(True)
            action.setChecked(scale == self.png_scale)
            group.addAction(action)
        custom = scale_menu.addAction("Resolution in dpi…", self.ask_png_dpi)
        custom.setToolTip("PNG resolution for slides or print, 96 to 768 dpi")
        menu.addSeparator()
        menu.addAction(self.copy_figure_action)
        menu.addAction("Whole model as NumPy arrays (.npz)…", self.export_arrays_dialog)

    def _add_training_items(self, menu: QtWidgets.QMenu) -> None:
        # The training lab's panels by name, in a submenu; the one shown, when the lab is, also at the top
        # of the menu (where the view on screen is expected).
        lab = getattr(self.window, "training", None)
        if lab is None:
            return
        titles = lab.titles()
        shown = self.current_panel_name()
        if shown in export.TRAINING_PANELS:
            first = menu.actions()[0] if menu.actions() else None
            title = titles[shown.split(":", 1)[1]]
            for text, slot in ((f"{title} figure (shown)…", lambda: self.export_panel_dialog(shown)),
                               (f"{title} history as CSV (shown)…", lambda: self.export_history_dialog(shown))):
                action = QtGui.QAction(text, menu)
                action.triggered.connect(slot)
                menu.insertAction(first, action)
            menu.insertSeparator(first)
        sub = menu.addMenu("&Training lab")
        sub.setObjectName("exportTrainingMenu")
        for name in export.TRAINING_PANELS:
            title = titles[name.split(":", 1)[1]]
            sub.addAction(f"{title} figure…", lambda n=name: self.export_panel_dialog(n)).setObjectName(
                f"export_{name.replace(':', '_')}_figure")
            sub.addAction(f"{title} history as CSV…", lambda n=name: self.export_history_dialog(n)).setObjectName(
                f"export_{name.replace(':', '_')}_csv")

    def ask_png_dpi(self) -> bool:
        """Ask for the PNG resolution in dpi (96 dpi = 1×); kept for the next exports."""
        dpi, ok = QtWidgets.QInputDialog.getInt(self.window, "PNG resolution", "Dots per inch (96 = screen size):",
                                                int(round(self.png_scale * 96)), 96, 768, 24)
        if ok:
            self.png_scale = dpi / 96.0
            self.status(f"PNG exports at {dpi} dpi ({self.png_scale:g}×)", 4000)
        return ok

    def current_panel_name(self) -> str:
        """The export panel name of the view on screen."""
        w = self.window
        lab = getattr(w, "training", None)
        if lab is not None and w.view_tabs.currentWidget() is lab.page and lab.built:
            return f"training:{lab.tab.current.experiment_name}"
        names = {w.heatmap_view: "heatmaps", w.pipeline_view: "steps", w.geometry_view: "geometry",
                 w.compare_view: "compare", w.positional_view: "positions", w.heads_summary_view: "outputs",
                 w.trained.room.model_view: "model", w.trained.room.drift_plot: "drift",
                 w.trained.room.meaning_view: "meaning"}
        return names.get(w.view_tabs.currentWidget(), "window")

    def export_panel_dialog(self, name: str) -> bool:
        """Ask for a file and export panel ``name`` (PNG at the chosen scale, SVG or PDF)."""
        try:
            # An unknown name is refused before a file is asked for; the figure itself is built once the
            # file is chosen, in steps (a large one takes a second to build).
            export.check_panel_name(name)
        except export.ExportError as exc:
            self.show_message(str(exc))
            return False
        filters = "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"
        if name in export.TRAINING_PANELS:
            filters += ";;History as CSV (*.csv)"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self.window, "Export figure", f"{name.replace(':', '-')}.png", filters)
        return self.export_panel(name, path, background=True) if path else False

    def export_history_dialog(self, name: str) -> bool:
        """Ask for a file and write training panel ``name``'s history there as CSV."""
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self.window, "Save the history", f"{name.replace(':', '-')}.csv", "CSV table (*.csv)")
        return self.export_panel(name, path) if path else False

    def export_panel(self, name: str, path, scale: float | None = None, background: bool = False) -> bool:
        """Export panel ``name`` to ``path``; the format follows the file name (a training lab panel
        also writes its history to a ``.csv`` file).

        ``background`` (File → Export): the figure is built and painted in pieces across event-loop
        turns and the file compressed and written on a worker (``export_job``), so that the window
        never freezes; the status line says how far it is, then when the file is there, or why not.
        Without it the file is written when this returns."""
        if name in export.TRAINING_PANELS and str(path).lower().endswith(".csv"):
            try:
                export.export_history(self.window, name, path)
            except export.ExportError as exc:
                self.show_message(str(exc))
                return False
            self.status(f"Saved the history of {name} as CSV to {path}", 5000)
            return True
        if background:
            try:
                fmt = export.figure_format(path)
                self._queue(name, fmt, path, scale or self.png_scale)
            except export.ExportError as exc:
                self.show_message(str(exc))
                return False
            return True
        try:
            panel = export.find_panel(self.window, name)
            export.show_panel(panel)
            QtWidgets.QApplication.processEvents()
            fmt = export.export_figure(panel, path, scale=scale or self.png_scale)
            export.done_with(panel)
        except export.ExportError as exc:
            self.show_message(str(exc))
            return False
        self.status(f"Exported {name} as {fmt.upper()} to {path}", 5000)
        return True

    def _queue(self, name: str, kind: str, path, scale: float, make_panel=None):
        """Export (or copy, ``kind`` "copy") a figure in steps, after the ones already under way
        (``make_panel``: builds the figure, else the panel called ``name``)."""
        from .export_job import FigureExport

        job = FigureExport(self.window, name, kind, path, scale, status=self.status,
                           on_end=lambda ok, message: self._export_ended(job, ok, message), make_panel=make_panel)
        self.exports.append(job)
        if len(self.exports) == 1:
            job.start()
        else:
            self.status(f"{name} waits for the export under way", 3000)
        return job

    def _export_ended(self, job, ok: bool, message: str) -> None:
        if job in self.exports:
            self.exports.remove(job)
        if shiboken6.isValid(self.window) and message:
            if ok:
                self.status(message, 5000)
            else:
                self.show_message(message)
        if self.exports:
            self.exports[0].start()

    def busy(self) -> bool:
        """True while a figure is being exported or copied, or a PNG written, in the background."""
        return bool(self.exports or self.writing)

    def wait_written(self, timeout: float = 30.0) -> bool:
        """Wait until every figure being exported in the background is on disk (and said so); the event
        loop runs meanwhile."""
        for job in list(self.exports):
            if not job.wait(timeout):
                return False
        for job in list(self.writing):
            if not job.wait(timeout):
                return False
            job.deliver()
        return True

    def copy_current_figure(self, wait: bool = True) -> bool:
        """Copy the view on screen to the clipboard, as an image (and SVG), built and painted in steps
        across event-loop turns (the window stays live). ``wait``: return once it is on the clipboard
        (the event loop runs meanwhile); else at once (Copy figure from the menu). False if it failed."""
        try:
            job = self._queue(self.current_panel_name(), "copy", None, self.png_scale)
        except export.ExportError as exc:
            self.show_message(str(exc))
            return False
        if wait:
            job.wait()
            return bool(job.ok)
        return True

    def export_arrays_dialog(self) -> bool:
        """Ask for a file and save every array of the model to it (.npz)."""
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, "Save model arrays", "attention.npz",
                                                        "NumPy arrays (*.npz)")
        if not path:
            return False
        try:
            export.save_arrays(path, export.studio_arrays(self.studio))
        except (export.ExportError, OSError) as exc:
            self.show_message(str(exc))
            return False
        self.status(f"Saved every array of the model to {path}", 5000)
        return True

    # -- right-click menus of matrices ---------------------------------------------------
    def matrix_menu(self, parent, title: str, matrix, global_pos) -> QtWidgets.QMenu:
        """Pop up the right-click menu of a matrix: save as CSV / NumPy, copy as LaTeX; returns it."""
        array, rows, cols = matrix
        menu = QtWidgets.QMenu(parent)
        menu.setObjectName("matrixMenu")

        def save():
            path, _ = QtWidgets.QFileDialog.getSaveFileName(
                self.window, f"Save {title}", f"{title.replace(' ', '_')}.csv",
                "CSV table (*.csv);;NumPy array (*.npy);;NumPy arrays with labels (*.npz)")
            if path:
                try:
                    export.save_matrix(path, array, rows, cols)
                except (export.ExportError, OSError) as exc:
                    self.show_message(str(exc))
                else:
                    self.status(f"Saved {title} to {path}", 5000)

        menu.addAction(f"Save {title} as CSV / NumPy…", save)
        menu.addAction("Copy as LaTeX (bmatrix)", lambda: (export.copy_latex(array), self.status("LaTeX copied", 3000)))
        menu.popup(global_pos)
        return menu

    def table_menu(self, key: str, pos: QtCore.QPoint) -> QtWidgets.QMenu:
        """The right-click menu of table ``key`` at ``pos`` (in its viewport); returns it."""
        numbers = self.window.numbers
        table, model = numbers.tables[key], numbers.models[key]
        return self.matrix_menu(table, model.name, export.table_matrix(model), table.viewport().mapToGlobal(pos))

    def show_heatmap_menu(self, canvas, pos) -> QtWidgets.QMenu | None:
        """Right-click menu of a heatmap (its view asks its window): save or copy its matrix, or copy the figure."""
        heatmap = canvas.heatmap
        data = heatmap.data
        if data is None:
            return None
        menu = self.matrix_menu(canvas, heatmap.title or "matrix",
                                (np.asarray(data.values), list(data.row_labels), list(data.col_labels)),
                                canvas.mapToGlobal(pos))
        menu.addSeparator()
        menu.addAction("Copy figure", lambda: self._copy_heatmap(heatmap))
        return menu

    def _copy_heatmap(self, heatmap):
        """Copy one heatmap as a figure of its own, in steps like Copy figure (the window stays live)."""
        title = heatmap.title.replace(" ◀", "")
        return self._queue(title or "heatmap", "copy", None, self.png_scale,
                           make_panel=lambda: heatmap_panel(heatmap, title=title))

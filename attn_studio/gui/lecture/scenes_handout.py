"""The Scenes panel's hand-out: the lecture's scenes written as pages (File → Export lecture hand-out…).

The glue between the panel and :mod:`.handout`: the options dialog, where to write, the progress
with Cancel, and the scene shown before shown again afterwards.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from ...matrices import ExportError

NO_SCENES = "There is no lecture to export: add a scene first (Ctrl+M)"


class LectureHandout:
    """The hand-out of ``panel``'s lecture (the panel parents its dialogs and shows its scenes)."""

    def __init__(self, panel) -> None:
        self.panel = panel
        self.window = panel.window

    def export(self, path, fmt: str = "png", ask_cancel=None, *, paper: str | None = None,
               notes: bool = False, on_message=None) -> list:
        """See :meth:`ScenesPanel.export_handout`: the files written ([] when cancelled or refused)."""
        from .handout import Cancelled, write_handout

        panel = self.panel
        if panel.lecture is None or not panel.lecture.scenes:
            self.window.show_message(NO_SCENES)
            return []
        shown = panel.current

        def progress(done, total, message: str):
            if message and on_message is not None:
                on_message(message)
            return not ask_cancel(done, total) if ask_cancel else None

        try:
            written = write_handout(self.window, panel.lecture, path, fmt=fmt, progress=progress, paper=paper,
                                    notes=notes)
        except Cancelled:
            self.window.show_message("The hand-out was cancelled: nothing was written")
            written = []
        except (ExportError, OSError) as exc:
            self.window.show_message(f"The hand-out was not written: {exc}")
            written = []
        if shown >= 0:
            panel.go(shown)
        return written

    def dialog(self) -> None:
        """See :meth:`ScenesPanel.handout_dialog`: the options, then where, then each scene drawn with
        progress and Cancel."""
        from .handout import HandoutDialog

        panel = self.panel
        if panel.lecture is None or not panel.lecture.scenes:
            self.window.show_message(NO_SCENES)
            return
        options = HandoutDialog(panel)
        if options.exec() != QtWidgets.QDialog.Accepted:
            return
        choice = options.choices()
        options.deleteLater()
        if choice["fmt"] == "pdf":
            path, _ = QtWidgets.QFileDialog.getSaveFileName(panel, "Export the lecture's hand-out", "handout.pdf",
                                                            "PDF (*.pdf)")
            if path and not path.lower().endswith(".pdf"):
                path += ".pdf"
        else:
            path = QtWidgets.QFileDialog.getExistingDirectory(panel, f"A folder for the {choice['fmt'].upper()} pages")
        if not path:
            return
        total = len(panel.lecture.scenes)
        progress = QtWidgets.QProgressDialog("Drawing each scene…", "Cancel", 0, total * 100, panel)
        progress.setObjectName("handoutProgress")
        progress.setWindowTitle("Hand-out")
        progress.setWindowModality(QtCore.Qt.WindowModal)
        progress.setMinimumDuration(0)
        progress.setValue(0)

        def ask(done: float, total: int) -> bool:
            progress.setValue(min(round(done * 100), total * 100 - 1))
            QtWidgets.QApplication.processEvents()
            return progress.wasCanceled()

        # Through the panel's own export_handout, as before (a test may stand in for it there).
        written = panel.export_handout(path, choice["fmt"], ask_cancel=ask, paper=choice["paper"],
                                       notes=choice["notes"], on_message=progress.setLabelText)
        progress.close()
        progress.deleteLater()
        if written:
            where = Path(path).name if choice["fmt"] == "pdf" else f"{len(written)} pages in {Path(path).name}"
            self.window.statusBar().showMessage(f"Wrote {where}", 5000)

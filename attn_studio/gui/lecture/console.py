"""The presenter console: the lecturer's view on the laptop while the stage is on the projector."""

from __future__ import annotations

import time

from PySide6 import QtCore, QtGui, QtWidgets


class PresenterConsole(QtWidgets.QWidget):
    """The lecturer's view on the laptop while the stage is on the projector (pdfpc's layout): the
    scene's number of the total, its title and notes, the next scene's title and caption, the time
    since Present began and the clock. Everything else of the window stays usable beside it."""

    def __init__(self, window, panel):
        super().__init__()
        self.setObjectName("presenterConsole")
        self.window, self.panel = window, panel
        self.started: float | None = None
        layout = QtWidgets.QVBoxLayout(self)
        big = QtGui.QFont(self.font())
        big.setPointSizeF(big.pointSizeF() * 1.6)
        big.setBold(True)
        self.position = QtWidgets.QLabel()
        self.position.setObjectName("presenterPosition")
        self.current = QtWidgets.QLabel()
        self.current.setObjectName("presenterCurrent")
        self.current.setFont(big)
        self.current.setWordWrap(True)
        self.notes = QtWidgets.QTextBrowser()
        self.notes.setObjectName("presenterNotes")
        self.next = QtWidgets.QLabel()
        self.next.setObjectName("presenterNext")
        self.next.setWordWrap(True)
        self.clock = QtWidgets.QLabel()
        self.clock.setObjectName("presenterClock")
        self.clock.setFont(big)
        for widget in (self.position, self.current, self.notes, self.next, self.clock):
            layout.addWidget(widget, 1 if widget is self.notes else 0)
        self.timer = QtCore.QTimer(self, interval=1000)
        self.timer.timeout.connect(self.refresh)
        panel.sceneShown.connect(lambda _i: self.refresh())
        panel.lectureChanged.connect(self.refresh)

    def start(self) -> None:
        """Present began: the elapsed time counts from now."""
        self.started = time.monotonic()
        self.timer.start()
        self.refresh()

    def stop(self) -> None:
        self.timer.stop()
        self.started = None

    def refresh(self) -> None:
        """Show the scene, the next one, the time since the start and the clock."""
        panel = self.panel
        lecture, i = panel.lecture, panel.current
        total = len(lecture.scenes) if lecture else 0
        scene = panel.scene()
        nxt = panel.scene(i + 1) if lecture and i + 1 < total else None
        self.position.setText(f"Scene {i + 1} of {total} — {lecture.title}" if scene else "No scene shown")
        self.current.setText(scene.title if scene else "")
        if self.notes.toPlainText() != (scene.notes if scene else ""):
            self.notes.setPlainText(scene.notes if scene else "")
        self.next.setText(f"Next: {nxt.title} — {nxt.caption}" if nxt else ("Last scene" if scene else ""))
        elapsed = int(time.monotonic() - self.started) if self.started is not None else 0
        self.clock.setText(f"{elapsed // 60:02d}:{elapsed % 60:02d}  ·  {time.strftime('%H:%M')}")

"""The presenter console: the lecturer's view on the laptop while the stage is on the projector.

pdfpc's layout: the scene's number of the total, its title (while its run is trained, how far it is) and
notes, the next scene's title, caption and a small picture of it (its attention weights, computed from
the scene's own state off the GUI thread and kept per scene), the time since Present began and the
clock; Previous / Next. Beside the
live window (a dock), or instead of it: the console full screen on the laptop's screen, its buttons
and the clicker's keys still working.
"""

from __future__ import annotations

import json
import time
import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from ...scenes import VARIANCE, Scene, scene_weights
from .. import settings
from ..qt.worker import Job

INSTEAD_KEY = "presenterConsoleInstead"  # the console's toggle, kept in the settings file

PICTURE = QtCore.QSize(240, 180)  # the next scene's picture on the console


def _picture_key(scene: Scene) -> str:
    # What the picture depends on: the model, the view and the selection (not the texts).
    return json.dumps([scene.view, scene.selection, scene.session], sort_keys=True)


def weights_image(weights: np.ndarray, size: QtCore.QSize = PICTURE) -> QtGui.QImage:
    """``weights`` (queries × keys, 0 to 1) as a small picture: white for 0, deep blue for 1, each cell
    a block of equal pixels."""
    w = np.clip(np.nan_to_num(np.asarray(weights, dtype=float)), 0.0, 1.0)
    rows, cols = w.shape
    cell = max(1, min(size.width() // max(cols, 1), size.height() // max(rows, 1)))
    big = np.kron(w, np.ones((cell, cell)))
    low, high = np.array([255, 255, 255]), np.array([33, 84, 181])
    rgb = (low + (high - low) * big[..., None]).astype(np.uint8)
    argb = np.empty(big.shape + (4,), dtype=np.uint8)
    argb[..., 0], argb[..., 1], argb[..., 2], argb[..., 3] = rgb[..., 2], rgb[..., 1], rgb[..., 0], 255
    image = QtGui.QImage(argb.data, argb.shape[1], argb.shape[0], argb.shape[1] * 4, QtGui.QImage.Format_ARGB32)
    return image.copy()  # its own pixels: the array goes


class PresenterConsole(QtWidgets.QWidget):
    """The lecturer's view on the laptop while the stage is on the projector. ``pictures`` holds the
    scenes' pictures made so far (by what each depends on), each made once."""

    def __init__(self, window, panel):
        super().__init__()
        self.setObjectName("presenterConsole")
        self.window, self.panel = window, panel
        self.started: float | None = None
        self.pictures: dict[str, QtGui.QPixmap | str] = {}
        self._pending: dict[str, Job] = {}
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
        # While the stage shows a training scene's card (its run being trained), the same words here.
        self.run_line = QtWidgets.QLabel()
        self.run_line.setObjectName("presenterRunTraining")
        self.run_line.setWordWrap(True)
        self.run_line.hide()
        self.notes = QtWidgets.QTextBrowser()
        self.notes.setObjectName("presenterNotes")
        # Four lines at least: a short dock scrolls the console rather than squash the notes away.
        self.notes.setMinimumHeight(4 * self.notes.fontMetrics().lineSpacing() + 12)
        self.next = QtWidgets.QLabel()
        self.next.setObjectName("presenterNext")
        self.next.setWordWrap(True)
        self.picture = QtWidgets.QLabel()
        self.picture.setObjectName("presenterNextPicture")
        self.picture.setFixedSize(PICTURE)
        self.picture.setAlignment(QtCore.Qt.AlignCenter)
        self.picture.setWordWrap(True)
        self.clock = QtWidgets.QLabel()
        self.clock.setObjectName("presenterClock")
        self.clock.setFont(big)
        self.buttons = {}
        for name, text, tip in (("previous", "◀ Previous", "The scene before, at its start (Shift+PageUp; PageUp steps back through its pages first)"),
                                ("next", "Next ▶", "The next scene (Shift+PageDown; PageDown plays its pages first)"),
                                ("instead", "Instead of the window", "The console full screen on this screen, "
                                 "in place of the window; again: beside it")):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"presenter_{name}")
            button.setToolTip(tip)
            button.setFocusPolicy(QtCore.Qt.NoFocus)  # the clicker's keys stay the stage's
            self.buttons[name] = button
        # Previous and Next side by side; the toggle, used once a lecture, on a row of its own at the
        # bottom (a row of all three made the dock, and the window with it, 340 px wide).
        moves = QtWidgets.QHBoxLayout()
        moves.addWidget(self.buttons["previous"])
        moves.addWidget(self.buttons["next"])
        self.buttons["previous"].clicked.connect(lambda: window.present.next_scene(-1))
        self.buttons["next"].clicked.connect(lambda: window.present.next_scene(1))
        self.buttons["instead"].setCheckable(True)
        layout.addWidget(self.position)
        layout.addWidget(self.current)
        layout.addWidget(self.run_line)
        # The time and the buttons under the scene's title: in a dock shorter than the console (a
        # 768-pixel laptop), what scrolls out of sight is the next scene's picture, not the clock.
        layout.addWidget(self.clock)
        layout.addLayout(moves)
        # The notes, then the next scene: one above the other in the dock, side by side full screen.
        self.body = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.TopToBottom)
        self.body.addWidget(self.notes, 1)
        upcoming = QtWidgets.QVBoxLayout()
        upcoming.addWidget(self.next)
        upcoming.addWidget(self.picture)
        upcoming.addStretch(1)
        self.body.addLayout(upcoming)
        layout.addLayout(self.body, 1)
        layout.addWidget(self.buttons["instead"])
        self.scale = 1  # the picture's scale: larger full screen
        self.timer = QtCore.QTimer(self, interval=1000)
        self.timer.timeout.connect(self.refresh)
        panel.sceneShown.connect(lambda _i: self.refresh())
        panel.lectureChanged.connect(self.refresh)

    def set_wide(self, wide: bool) -> None:
        """Full screen (``wide``): the notes beside the next scene, its picture twice as large."""
        self.body.setDirection(QtWidgets.QBoxLayout.LeftToRight if wide else QtWidgets.QBoxLayout.TopToBottom)
        self.scale = 2 if wide else 1
        font = QtGui.QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * (1.5 if wide else 1.0))  # read from an arm's length away
        self.notes.setFont(font)
        self.picture.setFixedSize(PICTURE * self.scale)
        self.next.setMaximumWidth(PICTURE.width() * self.scale if wide else 16777215)
        self.refresh()

    def start(self) -> None:
        """Present began: the elapsed time counts from now."""
        self.started = time.monotonic()
        self.timer.start()
        self.refresh()

    def stop(self) -> None:
        self.timer.stop()
        self.started = None

    def refresh(self) -> None:
        """Show the scene, the next one and its picture, the time since the start and the clock."""
        panel = self.panel
        lecture, i = panel.lecture, panel.current
        total = len(lecture.scenes) if lecture else 0
        scene = panel.scene()
        nxt = panel.scene(i + 1) if lecture and i + 1 < total else None
        self.position.setText(f"Scene {i + 1} of {total} — {lecture.title}" if scene else "No scene shown")
        self.current.setText(scene.title if scene else "")
        card = getattr(self.window.present, "card", None)
        status = getattr(card[1], "status", None) if card is not None else None
        self.run_line.setText(status() if status is not None else "")
        self.run_line.setVisible(status is not None)
        if self.notes.toPlainText() != (scene.notes if scene else ""):
            self.notes.setPlainText(scene.notes if scene else "")
        self.next.setText(f"Next: {nxt.title} — {nxt.caption}" if nxt else ("Last scene" if scene else ""))
        self._show_picture(nxt)
        self.buttons["previous"].setEnabled(scene is not None and i > 0)
        self.buttons["next"].setEnabled(nxt is not None)
        elapsed = int(time.monotonic() - self.started) if self.started is not None else 0
        self.clock.setText(f"{elapsed // 60:02d}:{elapsed % 60:02d}  ·  {time.strftime('%H:%M')}")

    # -- the next scene's picture ---------------------------------------------------------------
    def _show_picture(self, scene: Scene | None) -> None:
        if scene is None:
            self.picture.clear()
            return
        if scene.view.startswith("Training: "):
            self.picture.setText(f"The training lab:\n{scene.view[len('Training: '):]}")
            return
        if scene.view == VARIANCE:  # plots of var(q·k) and of softmax against d_k, not a head's weights
            self.picture.setText(f"The plots:\n{VARIANCE}")
            return
        key = _picture_key(scene)
        made = self.pictures.get(key)
        if isinstance(made, QtGui.QPixmap):
            # Blocks of equal pixels stay blocks when scaled up: no smoothing.
            self.picture.setPixmap(made if self.scale == 1 else made.scaled(made.size() * self.scale))
        elif made is not None:
            self.picture.setText(made)
        else:
            self.picture.setText("…")
            if key not in self._pending:  # computed off the GUI thread, once
                # Dropped if the console is gone by then (its window closed while the picture was made).
                self._pending[key] = Job(scene_weights, scene, on_result=lambda w, key=key: self._made(key, w),
                                         on_error=lambda exc, key=key: self._made(key, exc),
                                         current=lambda: shiboken6.isValid(self)).submit()

    def _made(self, key: str, made) -> None:
        self._pending.pop(key, None)
        if isinstance(made, BaseException):  # a missing model, a scene that cannot be computed: in words
            self.pictures[key] = f"No picture: {str(made)[:120]}"
        else:
            self.pictures[key] = QtGui.QPixmap.fromImage(weights_image(made))
        self.refresh()


class ConsoleScreen(QtWidgets.QWidget):
    """The console full screen on the laptop, instead of the window: the clicker's keys go to the stage."""

    def __init__(self, present):
        # A window of its own, owned by the main window: deleted with it by Qt, not left to the cycle
        # collector (see widgets.discard).
        super().__init__(present.window, QtCore.Qt.Window)
        self.setObjectName("presenterScreen")
        self.setWindowTitle("Attention Studio — Presenter console")
        self.present = present
        QtWidgets.QVBoxLayout(self)

    def keyPressEvent(self, event):  # noqa: N802 (Qt's name)
        stage = self.present.stage
        if stage is not None:
            QtWidgets.QApplication.sendEvent(stage, event)
        else:
            super().keyPressEvent(event)


def install(window, panel):
    """The presenter console of ``window`` (View → Presenter console): shown while Present has the stage
    on another screen and a lecture is open, beside the window (a dock) or instead of it (the toggle)."""
    console = PresenterConsole(window, panel)
    # In the dock the console scrolls when the laptop's screen is short (the window stays on it).
    dock = window.layout_room.dock("Presenter console", "presenterDock", console, QtCore.Qt.RightDockWidgetArea,
                                   scroll=True)
    dock.hide()
    holder = dock.widget()
    screen = ConsoleScreen(window.present)

    def back_in_dock() -> None:
        if holder.widget() is not console:
            holder.setWidget(console)
            console.show()

    def place(instead: bool) -> None:
        console.set_wide(instead)
        if instead:
            if holder.widget() is console:
                holder.takeWidget()
            screen.layout().addWidget(console)
            dock.hide()
            target = window.screen()
            screen.setGeometry(target.geometry())
            screen.showFullScreen()
        else:
            screen.hide()
            back_in_dock()
            dock.setVisible(window.present.active and panel.lecture is not None)

    def show_console(on: bool) -> None:
        stage = window.present.stage
        elsewhere = on and stage is not None and stage.screen() is not window.screen()
        if on:
            console.start()
        else:
            console.stop()
        wanted = bool(elsewhere and panel.lecture is not None)
        if wanted and console.buttons["instead"].isChecked():
            place(True)
        else:
            screen.hide()
            console.set_wide(False)
            back_in_dock()
            dock.setVisible(wanted)

    instead = console.buttons["instead"]
    if getattr(window, "restore_settings", False):  # kept between runs, as the window's layout is
        instead.setChecked(str(settings.settings().value(INSTEAD_KEY, "false")).lower() == "true")
    instead.toggled.connect(lambda on: window.present.active and place(on))
    instead.toggled.connect(lambda on: getattr(window, "restore_settings", False)
                            and settings.settings().setValue(INSTEAD_KEY, bool(on)))
    # After the turn: F5 toggles the action before the stage is made.
    # The console's own timer: dropped if the window is gone by then (closed right after Present).
    window.present.action.toggled.connect(lambda on: QtCore.QTimer.singleShot(0, console, lambda: show_console(on)))
    window.presenter_console, window.presenter_dock, window.presenter_screen = console, dock, screen
    return console

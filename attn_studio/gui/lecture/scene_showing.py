"""Showing a lecture's scene and releasing the stage once the scene is drawn whole.

The stage keeps showing the scene before until the new one is drawn whole (a trained model takes more
than a turn): it is not painted meanwhile, and is painted once, when nothing is left to draw. A training
scene whose run must be trained first (seconds, not a turn) is the exception: its card, with the
training's progress, is painted at once, and the scene replaces it when the run is there.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ...scenes import Scene
from .scene_show import paint_offscreen, show_scene

SETTLED_TURNS = 2  # turns without drawing before a scene's stage is painted


class SceneShowing:
    """One scene shown at a time for ``panel`` (its ``window``, its ``sceneShown`` / ``sceneDrawn``
    signals and its ``current`` scene): ``token`` is the showing under way (None: none)."""

    def __init__(self, panel) -> None:
        self.panel = panel
        self.window = panel.window
        self.token = None  # the scene being shown, until it is drawn whole

    def start(self, index: int, scene: Scene) -> None:
        """Show ``scene`` (scene ``index`` of the lecture) in the window, the stage held until it is drawn."""
        self.token = token = object()
        stage = self.window.present.stage
        if stage is not None:
            stage.setUpdatesEnabled(False)
            if not scene.trained or self.window.trained.kept_model is not None:
                # The stage first: the window (beside it on two screens) is drawn once the stage is, not
                # before it (a model still to be read, a second or so, leaves the window live meanwhile).
                self.window.drawer.hold(True)

        def shown(ok: bool) -> None:
            if self.token is token:  # else a later scene was asked for: it will say so
                self.panel.sceneShown.emit(index)
                self.release(token)

        def waiting(on: bool) -> None:
            # A training scene's run is trained first: its card is painted now (the stage is never silent
            # meanwhile), and held again once the run is there and the scene is drawn in its place.
            present = self.window.present
            if self.token is not token or present.stage is None:
                return
            present.stage.setUpdatesEnabled(on)
            if on:
                present.stage.repaint()
                self.window.drawer.hold(present.covers_window())

        try:
            show_scene(self.window, scene, on_shown=shown, wanted=lambda: self.token is token, on_wait=waiting)
        except BaseException:
            self.release(token, SETTLED_TURNS)  # nothing kept from being painted by a scene that failed
            raise

    def release(self, token, settled: int = 0) -> None:
        """Paint the stage again once nothing is left to draw and the layouts of the last drawing are
        done: SETTLED_TURNS turns without drawing (a plot lays out its axes a turn after it is drawn)."""
        if self.token is not token:
            return
        if settled < SETTLED_TURNS:
            stage = self.window.present.stage
            if settled == 1 and stage is not None:
                # A plot measures its axes' labels when it is first painted, and lays them out after
                # that: painted once off the screen now, so the stage's first painting is its last.
                for view in stage.findChildren(QtWidgets.QGraphicsView):
                    if view.isVisible() and view.scene() is not None:
                        paint_offscreen(view)
            QtCore.QTimer.singleShot(0, self.panel,
                                     lambda: self.release(token, 0 if self.window.drawing() else settled + 1))
            return
        self.token = None
        present = self.window.present
        if present.stage is not None:
            present.stage.setUpdatesEnabled(True)
            present.stage.repaint()  # now, before the window's own drawing that waited for it
        self.window.drawer.hold(present.covers_window())
        self.panel.sceneDrawn.emit(self.panel.current)

    def showing(self) -> bool:
        """True while a scene asked for is not yet drawn whole (the stage shows the scene before)."""
        return self.token is not None

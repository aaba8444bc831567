"""The stage's keys (mixed into :class:`~.present.Present`): what a clicker sends (PageDown / PageUp,
← →), the query, the head, scaling and the mask, G + number + Enter to a scene, Ctrl+M to add one."""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from .basics import TRAINING_PREFIX


class StageKeys:
    """The keys of the stage; the rest of :class:`~.present.Present` moves and draws."""

    def key(self, event: QtGui.QKeyEvent) -> bool:
        """The stage's keys; False for a key it leaves to Qt."""
        k, mods = event.key(), event.modifiers()
        w = self.window
        if event.matches(QtGui.QKeySequence.Undo):
            w.undo()
        elif event.matches(QtGui.QKeySequence.Redo) or (k == QtCore.Qt.Key_Y and mods & QtCore.Qt.ControlModifier):
            w.redo()
        elif k == QtCore.Qt.Key_M and mods == QtCore.Qt.ControlModifier and self.lecture_panel is not None:
            self._add_scene()
        elif mods & (QtCore.Qt.ControlModifier | QtCore.Qt.AltModifier):
            return False
        elif k == QtCore.Qt.Key_Escape and self._jump is not None:
            self._jump = None  # a jump typed half: forgotten, the stage stays
        elif k in (QtCore.Qt.Key_Escape, QtCore.Qt.Key_F5):
            self.leave()
        elif k in (QtCore.Qt.Key_Up, QtCore.Qt.Key_Down) and self.view.startswith(TRAINING_PREFIX):
            # A training heatmap's window of tokens moves a row at a time, from where it is now.
            last = self._last_sheet
            if last is not None and last["windows"]:
                rows = last["windows"][0][0]
                self.centre = (rows[0] + rows[1]) // 2
            self.centre += -1 if k == QtCore.Qt.Key_Up else 1
            self.render()
        elif k == QtCore.Qt.Key_Up:
            w.move_query(-1)
        elif k == QtCore.Qt.Key_Down:
            w.move_query(+1)
        elif self._jump is not None and (QtCore.Qt.Key_0 <= k <= QtCore.Qt.Key_9
                                         or k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter)):
            # G, a number and Enter: that scene (as pdfpc does); the digits alone choose the head.
            if k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter):
                number, self._jump = self._jump, None
                if number and self.lecture_panel is not None:
                    self.lecture_panel.go(int(number) - 1)
            else:
                self._jump += chr(k)
        elif k == QtCore.Qt.Key_G and self._playing():
            self._jump = ""
        elif k in (QtCore.Qt.Key_Left, QtCore.Qt.Key_Right):
            step = -1 if k == QtCore.Qt.Key_Left else 1
            # A clicker sends ← →: within the view first (its stages, steps), then the next scene.
            if self._can_move_page(step) or not self.next_scene(step):
                self.move_page(step)
        elif k in (QtCore.Qt.Key_PageDown, QtCore.Qt.Key_PageUp):
            step = 1 if k == QtCore.Qt.Key_PageDown else -1
            if mods & QtCore.Qt.ShiftModifier and self._playing():
                self.next_scene(step)  # Shift: scene to scene, each at its start
            else:
                self.page_down(step)  # the view's pages and steps first, then the next scene (pdfpc)
        elif k in (QtCore.Qt.Key_Home, QtCore.Qt.Key_End) and self._playing():
            panel = self.lecture_panel
            panel.go(0 if k == QtCore.Qt.Key_Home else len(panel.lecture.scenes) - 1)
        elif QtCore.Qt.Key_1 <= k <= QtCore.Qt.Key_9:
            self.select_head(k - QtCore.Qt.Key_1)
        elif k == QtCore.Qt.Key_S and not w.studio.is_trained:
            w.scale_check.toggle()
        elif k == QtCore.Qt.Key_C and not w.studio.is_trained:
            w.causal_check.toggle()
        elif k == QtCore.Qt.Key_H:
            self.stage.strip.setVisible(not self.stage.strip.isVisible())
            self.render()
        else:
            return False
        return True

    def _add_scene(self) -> None:
        # Ctrl+M on the stage, as in the window: what the stage shows becomes a scene, said on the stage
        # for two seconds (on one screen the Scenes panel is under it).
        panel = self.lecture_panel
        if panel.add_current():
            self.stage.caption.setText(f"Added as scene {panel.current + 1} of {len(panel.lecture.scenes)}")
        else:
            self.stage.caption.setText("Not added: " + self.window.message_label.text())
        QtCore.QTimer.singleShot(2000, self, self.render)

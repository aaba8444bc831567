"""The stage's keys (an object of :class:`~.present.Present`'s): what a clicker sends (PageDown / PageUp,
← →, "." or B), the query, the head, scaling and the mask, G + number + Enter to a scene, Ctrl+M to add
one; the presenter's keys of PowerPoint, Keynote and pdfpc (B / W a black or white screen, N the scene's
number, F1 the list of keys); Shift+F5 presents from the lecture's current scene."""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from .basics import TRAINING_PREFIX

# Every key of the stage, as F1 lists them (keys, what they do).
STAGE_KEYS = (
    ("PageDown / PageUp", "next / previous page or scene"),
    ("Shift+PageDown / PageUp", "next / previous scene"),
    ("G  n  Enter", "scene n"),
    ("Home / End", "first / last scene"),
    ("↑ ↓", "query"),
    ("← →", "page or step"),
    ("1–9", "head"),
    ("S", "scaling ÷√d_k"),
    ("C", "causal mask"),
    ("H", "control strip"),
    ("B or .", "black screen"),
    ("W or ,", "white screen"),
    ("N", "scene number"),
    ("F1 or ?", "these keys"),
    ("Ctrl+Z / Ctrl+Y", "undo / redo"),
    ("Ctrl+M", "add as a scene"),
    ("Esc", "leave"),
)
# Keys that do not end a black screen or the list of keys by themselves: a modifier pressed on its way
# to a key ("?" is Shift and /).
_MODIFIER_KEYS = (QtCore.Qt.Key_Shift, QtCore.Qt.Key_Control, QtCore.Qt.Key_Alt, QtCore.Qt.Key_Meta,
                  QtCore.Qt.Key_AltGr, QtCore.Qt.Key_CapsLock, QtCore.Qt.Key_unknown)
_BLANKS = {QtCore.Qt.Key_B: "black", QtCore.Qt.Key_Period: "black",
           QtCore.Qt.Key_W: "white", QtCore.Qt.Key_Comma: "white"}


class StageKeys:
    """The keys of the stage of ``present`` (:class:`~.present.Present`, which moves and draws): what each
    key does, the scene number typed after G (``jump``), and Shift+F5 (``scene_action``, ``enter_scene``)."""

    def __init__(self, present):
        self.present = present
        self.jump: str | None = None  # digits typed after G (go to scene N, as pdfpc does)
        self._scene_action: QtGui.QAction | None = None

    def key(self, event: QtGui.QKeyEvent) -> bool:
        """The stage's keys; False for a key it leaves to Qt."""
        p = self.present
        k, mods = event.key(), event.modifiers()
        w = p.window
        if p.stage is not None and p.stage.covered():
            # A black or white screen or the list of keys: the next key brings the stage back and does
            # nothing else (as PowerPoint does: the room is not shown a jump it did not see coming).
            if k not in _MODIFIER_KEYS:
                p.stage.uncover()
            return True
        if event.matches(QtGui.QKeySequence.Undo):
            w.undo()
        elif event.matches(QtGui.QKeySequence.Redo) or (k == QtCore.Qt.Key_Y and mods & QtCore.Qt.ControlModifier):
            w.redo()
        elif k == QtCore.Qt.Key_M and mods == QtCore.Qt.ControlModifier and p.lecture_panel is not None:
            self._add_scene()
        elif mods & (QtCore.Qt.ControlModifier | QtCore.Qt.AltModifier):
            return False
        elif k in _BLANKS:
            self.jump = None  # a jump typed half is forgotten: the lecturer turned to the room
            p.stage.cover(_BLANKS[k])
        elif k in (QtCore.Qt.Key_F1, QtCore.Qt.Key_Question):
            p.stage.show_keys(STAGE_KEYS)
        elif k == QtCore.Qt.Key_N:
            p.number_on = not p.number_on
            p.stage.show_number()
        elif k == QtCore.Qt.Key_F5 and mods & QtCore.Qt.ShiftModifier:
            if p._playing():  # Shift+F5 on the stage: the current scene again, from its start
                p.lecture_panel.go(max(p.lecture_panel.current, 0))
        elif k == QtCore.Qt.Key_Escape and self.jump is not None:
            self.jump = None  # a jump typed half: forgotten, the stage stays
        elif k in (QtCore.Qt.Key_Escape, QtCore.Qt.Key_F5):
            p.leave()
        elif k in (QtCore.Qt.Key_Up, QtCore.Qt.Key_Down) and p.view.startswith(TRAINING_PREFIX):
            # A training heatmap's window of tokens moves a row at a time, from where it is now.
            last = p.figures.last_sheet
            if last is not None and last["windows"]:
                rows = last["windows"][0][0]
                p.centre = (rows[0] + rows[1]) // 2
            p.centre += -1 if k == QtCore.Qt.Key_Up else 1
            p.render()
        elif k == QtCore.Qt.Key_Up:
            w.move_query(-1)
        elif k == QtCore.Qt.Key_Down:
            w.move_query(+1)
        elif self.jump is not None and (QtCore.Qt.Key_0 <= k <= QtCore.Qt.Key_9
                                         or k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter)):
            # G, a number and Enter: that scene (as pdfpc does); the digits alone choose the head.
            if k in (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter):
                number, self.jump = self.jump, None
                if number and p.lecture_panel is not None:
                    p.lecture_panel.go(int(number) - 1)
            else:
                self.jump += chr(k)
        elif k == QtCore.Qt.Key_G and p._playing():
            self.jump = ""
        elif k in (QtCore.Qt.Key_Left, QtCore.Qt.Key_Right):
            step = -1 if k == QtCore.Qt.Key_Left else 1
            # A clicker sends ← →: within the view first (its stages, steps), then the next scene.
            if p._can_move_page(step) or not p.next_scene(step):
                p.move_page(step)
        elif k in (QtCore.Qt.Key_PageDown, QtCore.Qt.Key_PageUp):
            step = 1 if k == QtCore.Qt.Key_PageDown else -1
            if mods & QtCore.Qt.ShiftModifier and p._playing():
                p.next_scene(step)  # Shift: scene to scene, each at its start
            else:
                p.page_down(step)  # the view's pages and steps first, then the next scene (pdfpc)
        elif k in (QtCore.Qt.Key_Home, QtCore.Qt.Key_End) and p._playing():
            panel = p.lecture_panel
            panel.go(0 if k == QtCore.Qt.Key_Home else len(panel.lecture.scenes) - 1)
        elif QtCore.Qt.Key_1 <= k <= QtCore.Qt.Key_9:
            p.select_head(k - QtCore.Qt.Key_1)
        elif k == QtCore.Qt.Key_S and not w.studio.is_trained:
            w.scale_check.toggle()
        elif k == QtCore.Qt.Key_C and not w.studio.is_trained:
            w.causal_check.toggle()
        elif k == QtCore.Qt.Key_H:
            p.stage.strip.setVisible(not p.stage.strip.isVisible())
            p.render()
        else:
            return False
        return True

    def _add_scene(self) -> None:
        p = self.present
        # Ctrl+M on the stage, as in the window: what the stage shows becomes a scene, said on the stage
        # for two seconds (on one screen the Scenes panel is under it); a refusal also in a banner.
        panel = p.lecture_panel
        before = len(panel.lecture.scenes) if panel.lecture else 0
        if panel.add_current() and panel.lecture is not None and len(panel.lecture.scenes) > before:
            p.stage.say_for_now(f"Added as scene {panel.current + 1} of {len(panel.lecture.scenes)}")
        else:
            said = "Not added: " + p.window.message_label.text()
            p.stage.say_for_now(said)
            p.stage.say(said)

    # -- Shift+F5 -------------------------------------------------------------------------------
    def scene_action(self) -> QtGui.QAction:
        """View → Present from current scene (``presentSceneAction``, Shift+F5), made on first use."""
        p = self.present
        action = self._scene_action
        if action is None:
            action = self._scene_action = QtGui.QAction("Present from current &scene", p.window)
            action.setObjectName("presentSceneAction")
            action.setShortcut(QtGui.QKeySequence(QtCore.Qt.SHIFT | QtCore.Qt.Key_F5))
            action.setToolTip("Present the open lecture from its current scene, as PowerPoint's \"from current "
                              "slide\" (Shift+F5); with no lecture open, the current view as F5 does")
            action.triggered.connect(lambda: self.enter_scene())
        return action

    def enter_scene(self, screen: QtGui.QScreen | None = None, geometry: QtCore.QRect | None = None):
        """Shift+F5: open the stage on the Scenes panel's current scene (or its first), shown as the
        scene has it; with no lecture open, the current view as F5 does. Returns the stage."""
        p = self.present
        panel = p.lecture_panel
        if not p._playing():
            return p.stage if p.active else p.enter(screen=screen, geometry=geometry)
        scenes = len(panel.lecture.scenes)
        index = panel.current if 0 <= panel.current < scenes else max(panel.list.currentRow(), 0)
        index = min(index, scenes - 1)
        if not p.active:
            p.enter(panel.scene(index).view, screen=screen, geometry=geometry)
        panel.go(index)
        return p.stage

"""Random use of the real window: seeded sequences of what a person can do, none may raise or stall.

Each seed drives a new MainWindow (offscreen) through its own widgets and actions: typing
sentences (short, long, one very long word, text outside Latin-1), spin boxes, switches and
combos, the view and table tabs, examples, table edits with good and bad values, undo and redo,
zoom, themes, colour maps, precision, Play, Present (F5, its keys, Esc) and the panel under the
pointer, all-MiniLM-L6-v2 and back, silencing and scaling heads, the Head Lab's Find, importance
and flow, the training lab's panels (Play, Step, Reset), the window's size, File → New, Save As and
Open (a session of the other model included), File → Export of a panel, the Scenes panel (add,
the example lecture, a scene clicked).

A sequence fails on any exception that reaches ``sys.excepthook`` (an exception in a slot or a Qt
virtual, captured per action) and on any action that keeps the GUI thread longer than
``STALL_S``: the action's own call (each keystroke of a typed text alone), and then each turn of
the event loop until the window is idle again (its stepped drawing done, nothing computing);
see ``_stalled`` for how a loaded machine is told from a slow window (RANDOM_USE_STRICT=1 judges
wall time alone). Work off the GUI thread (loading a model,
a large edit, the Head Lab's jobs) is waited for and not counted; the turns that install and
draw its result are. The failure names the seed, the step and the actions before it.

The seeds are fixed, so CI runs the same sequences every time. More of them::

    RANDOM_USE_SEEDS=200 python -m pytest tests/gui/test_random_use.py        # seeds 0..199
    RANDOM_USE_SEEDS=1000-1100 RANDOM_USE_STEPS=60 python -m pytest tests/gui/test_random_use.py
"""

from __future__ import annotations

import gc
import os
import time
import traceback
import warnings

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attn_studio.gui import presentation
from attn_studio.pretrained import default_model_zip
from gui_helpers import find

STALL_S = 0.5  # the longest a person may wait for the window to answer after one action
MAX_WIDTH = 3000  # a window wider than this grew by itself (a long word once made it 31,000 px)
IDLE_TIMEOUT_S = 60.0  # the longest to wait for work off the GUI thread (a model loading)
HAS_MINILM = default_model_zip() is not None

# Exceptions these sequences found that are not fixed yet, each with where it is and what it is: a
# sequence that meets one records it as a warning and goes on. (exception text, a file of its
# traceback) -> why. Remove an entry once its defect is fixed: the sequence then proves it.
KNOWN: dict = {}
# Stalls known and being worked on elsewhere, each a test of the window's facts before and after the
# action: they are reported as warnings, any other stall fails.
KNOWN_SLOW: dict = {
    # Measured at rest: 200-250 ms of GUI-thread CPU (five pyqtgraph plots, their legends and reference
    # lines built, the docks stepping aside); a loaded CI machine has measured 266 ms of CPU in 532 ms.
    "a training panel's first opening builds its figure": lambda before, after: (
        after["action"].startswith("Training →") and len(after["panels built"]) > len(before["panels built"])),
}


def _seeds() -> list[int]:
    spec = os.environ.get("RANDOM_USE_SEEDS", "").strip()
    if not spec:
        return list(range(6))
    if "-" in spec:
        lo, hi = (int(x) for x in spec.split("-", 1))
        return list(range(lo, hi))
    if "," in spec:
        return [int(x) for x in spec.split(",") if x.strip()]
    return list(range(int(spec)))


STEPS = int(os.environ.get("RANDOM_USE_STEPS", "25"))
STRICT = bool(os.environ.get("RANDOM_USE_STRICT"))

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "Your journey starts with one step",
    "a b c",
    "",
    "bank river bank money",
    "Hello, world!!! ... ???",
    "3.14 1e5 -2 +7",
    "naïve café Ünïcödé",
    "I ❤ attention 🙂 مرحبا 世界",  # outside Latin-1: pasted, never typed key by key
    "word " * 80,
    "x" * 700,
    "y" * 5000,
    "The cat sat on the mat and the dog sat on the log. " * 12,
]
GOOD_VALUES = ["0", "0.5", "-1.25", "1e-3", "2", "-0.0001", " 3 ", "1,5"]
BAD_VALUES = ["inf", "-inf", "nan", "abc", "1e400", "", "--1", "0x10", "½"]
WORDS = ["it", "animal", "#0", "#3", "street", "tired", "nosuchword", "", "#999", "[CLS]"]


class Person:
    """One seeded sequence of actions on ``window``; each action is a method ``do_*`` that uses the
    window's widgets as a person would, or does nothing when what it needs is not there."""

    def __init__(self, window, qtbot, rng: np.random.Generator, folder=None):
        self.w, self.qtbot, self.rng = window, qtbot, rng
        self.folder = folder  # where the sequence saves and exports its files
        self.log: list[str] = []
        self.parts: list[tuple[float, float]] = []  # an action made of several events: each one's time

    # -- choosing -------------------------------------------------------------------------
    def pick(self, items):
        items = list(items)
        return items[int(self.rng.integers(len(items)))] if items else None

    def usable(self, cls, names):
        """The widgets named ``names`` that a person could use now (shown and enabled)."""
        found = [self.w.findChild(cls, n) for n in names]
        return [x for x in found if x is not None and x.isVisibleTo(self.w) and x.isEnabled()]

    def note(self, text: str) -> None:
        self.log.append(text)

    def timed(self, fn) -> None:
        """Call ``fn`` (one event a person makes, inside a longer action) and keep its (wall, CPU) time."""
        wall, cpu = time.perf_counter(), time.thread_time()
        fn()
        self.parts.append((time.perf_counter() - wall, time.thread_time() - cpu))

    # -- typing -----------------------------------------------------------------------------
    def type_into(self, edit: QtWidgets.QLineEdit, text: str, enter: bool) -> None:
        edit.setFocus()
        if len(text) <= 40 and text.isascii():
            self.qtbot.keyClick(edit, QtCore.Qt.Key_A, QtCore.Qt.ControlModifier)  # select all, type over it
            if text:
                for char in text:  # each keystroke is a turn of its own: timed alone
                    self.timed(lambda c=char: self.qtbot.keyClicks(edit, c))
            else:
                self.qtbot.keyClick(edit, QtCore.Qt.Key_Delete)
        else:  # pasted (keyClicks of a non-ASCII letter can abort the offscreen platform; long text is a paste)
            edit.setText(text)
            edit.textEdited.emit(text)
        if enter:
            self.qtbot.keyClick(edit, QtCore.Qt.Key_Return)

    def do_type_sentence(self):
        text = self.pick(SENTENCES)
        enter = bool(self.rng.random() < 0.6)
        self.note(f"type sentence {text[:30]!r}… ({len(text)} chars){' + Enter' if enter else ''}")
        self.type_into(find(self.w, QtWidgets.QLineEdit, "sentenceEdit"), text, enter)

    def do_type_other_text(self):
        edits = self.usable(QtWidgets.QLineEdit, ["targetSentenceEdit", "secondSentenceEdit", "meaningWordEdit"])
        edit = self.pick(edits)
        if edit is None:
            return
        text = self.pick(SENTENCES[:8] + WORDS)
        self.note(f"type {text[:30]!r} in {edit.objectName()}")
        self.type_into(edit, text, bool(self.rng.random() < 0.7))

    # -- controls ---------------------------------------------------------------------------
    def do_spin(self):
        spins = self.usable(QtWidgets.QAbstractSpinBox, ["dModelSpin", "headsSpin", "dHeadSpin", "seedSpin",
                                                         "temperatureSpin", "layerSpin", "headScaleSpin",
                                                         "playIntervalSpin", "compareTempA", "compareTempB",
                                                         "flowLayerSpin"])
        spin = self.pick(spins)
        if spin is None:
            return
        how = self.rng.random()
        if how < 0.5:
            steps = int(self.pick([-3, -1, 1, 1, 2, 5]))
            self.note(f"step {spin.objectName()} by {steps}")
            spin.setFocus()
            for _ in range(abs(steps)):
                self.qtbot.keyClick(spin, QtCore.Qt.Key_Up if steps > 0 else QtCore.Qt.Key_Down)
        else:
            lo, hi = spin.minimum(), spin.maximum()
            if how < 0.9:  # mostly the small values a lecture uses; sometimes anything the box allows
                hi = min(hi, lo + 16 * (spin.singleStep() or 1))
            value = lo + (hi - lo) * self.rng.random()
            text = f"{value:.2f}" if isinstance(spin, QtWidgets.QDoubleSpinBox) else str(int(round(value)))
            self.note(f"type {text} in {spin.objectName()} + Enter")
            line = spin.findChild(QtWidgets.QLineEdit)
            spin.setFocus()
            line.selectAll()
            self.qtbot.keyClicks(line, text)
            self.qtbot.keyClick(line, QtCore.Qt.Key_Return)

    def do_switch(self):
        checks = self.usable(QtWidgets.QCheckBox, ["scaleCheck", "causalCheck", "positionalCheck",
                                                   "projectionsCheck", "modelNormCheck", "rolloutCheck"])
        check = self.pick(checks)
        if check is not None:
            self.note(f"click {check.objectName()}")
            check.click()

    def do_combo(self):
        combos = self.usable(QtWidgets.QComboBox, ["softmaxCombo", "scoreCombo", "queryCombo", "headCombo",
                                                   "geometryMode", "geometryPairA", "geometryPairB", "compareMode"])
        combo = self.pick(combos)
        if combo is None or combo.count() == 0:
            return
        index = int(self.rng.integers(combo.count()))
        self.note(f"choose {combo.itemText(index)[:30]!r} in {combo.objectName()}")
        combo.setCurrentIndex(index)
        combo.activated.emit(index)

    def do_example(self):
        combo = self.usable(QtWidgets.QComboBox, ["presetCombo"])
        if not combo or combo[0].count() == 0:
            return
        combo = combo[0]
        index = int(self.rng.integers(combo.count()))
        self.note(f"example {combo.itemText(index)!r}")
        combo.setCurrentIndex(index)
        combo.activated.emit(index)

    def do_button(self):
        buttons = self.usable(QtWidgets.QPushButton, ["randomizeButton", "comparePin", "pipelineNext",
                                                      "pipelinePrev", "resetHeadButton", "resetAllButton",
                                                      "silenceHeadButton"])
        button = self.pick(buttons)
        if button is not None:
            self.note(f"click {button.objectName()}")
            button.click()

    def do_query_keys(self):
        key = self.pick([QtCore.Qt.Key_Up, QtCore.Qt.Key_Down])
        self.note(f"Alt+{'Up' if key == QtCore.Qt.Key_Up else 'Down'}")
        self.w.lecture.move_query(-1 if key == QtCore.Qt.Key_Up else 1)

    # -- tabs -------------------------------------------------------------------------------
    def do_view_tab(self):
        tabs = self.w.view_tabs
        shown = [i for i in range(tabs.count()) if tabs.isTabVisible(i)]
        index = self.pick(shown)
        self.note(f"view tab {tabs.tabText(index)!r}")
        tabs.setCurrentIndex(index)

    def do_table_tab(self):
        tabs = self.w.numbers.table_tabs
        shown = [i for i in range(tabs.count()) if tabs.isTabVisible(i)]
        index = self.pick(shown)
        if index is not None:
            self.note(f"table tab {tabs.tabText(index)!r}")
            tabs.setCurrentIndex(index)

    # -- tables -----------------------------------------------------------------------------
    def do_table_edit(self):
        table = self.w.numbers.table_tabs.currentWidget()
        if not isinstance(table, QtWidgets.QTableView) or not table.isVisibleTo(self.w) or not table.isEnabled():
            return
        model = table.model()
        if model.rowCount() == 0 or model.columnCount() == 0:
            return
        row, col = int(self.rng.integers(model.rowCount())), int(self.rng.integers(model.columnCount()))
        value = self.pick(GOOD_VALUES if self.rng.random() < 0.6 else BAD_VALUES)
        index = model.index(row, col)
        if not model.flags(index) & QtCore.Qt.ItemIsEditable:
            return
        self.note(f"edit {table.objectName()} [{row}, {col}] = {value!r}")
        if not value or self.rng.random() < 0.5:
            model.setData(index, value)
            return
        table.setFocus()
        table.setCurrentIndex(index)
        self.qtbot.keyClicks(table, value[0])
        editor = next((e for e in table.findChildren(QtWidgets.QLineEdit) if e.isVisible()), None)
        if editor is None:
            return
        if len(value) > 1:
            self.qtbot.keyClicks(editor, value[1:])
        self.qtbot.keyClick(editor, self.pick([QtCore.Qt.Key_Return, QtCore.Qt.Key_Return, QtCore.Qt.Key_Escape]))

    def do_undo_redo(self):
        action = self.pick([self.w.undo_action, self.w.undo_action, self.w.redo_action])
        if action.isEnabled():
            self.note(action.text().replace("&", ""))
            action.trigger()

    # -- the look ---------------------------------------------------------------------------
    def do_zoom(self):
        lecture = self.w.lecture
        action = self.pick([lecture.zoom_in_action, lecture.zoom_in_action, lecture.zoom_out_action,
                            lecture.zoom_reset_action])
        self.note(action.text().replace("&", ""))
        action.trigger()

    def do_look(self):
        lecture = self.w.lecture
        group = self.pick([lecture.theme_actions, lecture.colormap_actions, lecture.precision_actions])
        action = self.pick(group.actions())
        self.note(f"look: {action.text()}")
        action.trigger()

    def do_resize(self):
        size = self.pick([(1280, 720), (1024, 700), (1366, 768), (1920, 1080), (900, 600)])
        self.note(f"resize {size}")
        self.w.resize(*size)

    # -- lecture ----------------------------------------------------------------------------
    def do_play(self):
        self.note("Play" if not self.w.play_button.isChecked() else "Stop")
        self.w.play_button.click()

    def do_present(self):
        present = self.w.present
        if present.active:
            stage = present.stage
            key = self.pick([QtCore.Qt.Key_Right, QtCore.Qt.Key_Left, QtCore.Qt.Key_PageDown, QtCore.Qt.Key_PageUp,
                             QtCore.Qt.Key_Up, QtCore.Qt.Key_Down, QtCore.Qt.Key_Escape, QtCore.Qt.Key_F5])
            self.note(f"stage key {QtGui.QKeySequence(key).toString()}")
            QTest.keyClick(stage, key)
        elif self.rng.random() < 0.7:
            self.note("F5 (Present)")
            present.action.trigger()
        else:
            self.note("F (present the panel under the pointer)")
            present.focus_action.trigger()

    # -- trained models ---------------------------------------------------------------------
    def do_model(self):
        combo = find(self.w, QtWidgets.QComboBox, "modelCombo")
        wanted = "Toy" if self.w.studio.is_trained or not HAS_MINILM else "all-MiniLM"
        index = next((i for i in range(combo.count()) if combo.itemText(i).startswith(wanted)), -1)
        if index < 0:
            return
        self.note(f"model {combo.itemText(index)!r}")
        combo.setCurrentIndex(index)
        combo.activated.emit(index)

    def do_head_lab(self):
        if not self.w.studio.is_trained:
            return
        pages = self.w.findChild(QtWidgets.QTabWidget, "headsPages")
        if pages is None or not pages.isVisibleTo(self.w):
            tabs = self.w.view_tabs
            self.note("view tab 'Heads'")
            tabs.setCurrentWidget(self.w.heads_tab)
            return
        what = self.rng.random()
        if what < 0.3:
            index = int(self.rng.integers(pages.count()))
            self.note(f"Head Lab page {pages.tabText(index)!r}")
            pages.setCurrentIndex(index)
        elif what < 0.8:
            query, key = self.pick(WORDS), self.pick(WORDS)
            self.note(f"Find {query!r} to {key!r}")
            for name, text in (("findQueryEdit", query), ("findKeyEdit", key)):
                edit = find(self.w, QtWidgets.QLineEdit, name)
                edit.setText(text)
            button = find(self.w, QtWidgets.QPushButton, "findHeadsButton")
            if button.isEnabled():
                button.click()
        else:
            buttons = self.usable(QtWidgets.QPushButton, ["importanceButton", "importanceCancel", "flowButton"])
            button = self.pick(buttons)
            if button is not None:
                self.note(f"click {button.objectName()}")
                button.click()

    # -- files and scenes -------------------------------------------------------------------
    def do_file(self):
        """File → New, File → Open of a session saved earlier in this sequence (toy or trained: a switch
        of model when it is of the other kind), File → Save As to the sequence's folder, or File →
        Export of a panel the window can draw (PNG or SVG)."""
        what = self.rng.random()
        files = self.w.files
        saved = sorted(self.folder.glob("*.attn.json"))
        if what < 0.2:
            self.note("File → New")
            files.new_session()
        elif what < 0.5 and saved:
            path = self.pick(saved)
            self.note(f"File → Open {path.name}")
            files.confirm_discard() and files.open_file(path)
        elif what < 0.7:
            path = self.folder / f"{'trained' if self.w.studio.is_trained else 'toy'}-{len(self.log)}.attn.json"
            self.note(f"File → Save As {path.name}")
            files.save_to(path)
        else:
            from attn_studio.gui.files import panels

            names = [n for n in panels.available(self.w) if "…" not in n]
            name = self.pick(names)
            path = self.folder / f"{name.replace(':', '-')}-{len(self.log)}.{self.pick(['png', 'svg'])}"
            self.note(f"File → Export {name} to {path.name}")
            self.w.export_actions.export_panel(name, path, background=True)  # as File → Export writes it

    def do_scenes(self):
        """The Scenes panel: add what is shown (Ctrl+M), open the example lecture, or click a scene."""
        panel = self.w.scenes
        count = panel.list.count()
        what = self.rng.random()
        if what < 0.3 or not count:
            self.note("Add scene (Ctrl+M)")
            panel.add_action.trigger()
        elif what < 0.4:
            self.note("Help → Example lecture")
            self.w.findChild(QtGui.QAction, "exampleLectureAction").trigger()
        else:
            row = min(count - 1, panel.list.currentRow() + 1) if what < 0.8 else int(self.rng.integers(count))
            self.note(f"click scene {row + 1} of {count}")
            panel.list.setCurrentRow(row)
            panel.list.itemClicked.emit(panel.list.item(row))

    # -- the training lab -------------------------------------------------------------------
    def do_training(self):
        lab = self.w.training
        if self.w.view_tabs.currentWidget() is not lab.page or self.rng.random() < 0.3:
            name = self.pick(["scaling", "seq2seq", "induction"])
            self.note(f"Training → {name}")
            self.w.findChild(QtGui.QAction, f"training_{name}_action").trigger()
            return
        panel = lab.tab.current
        button = self.pick([panel.play_button, panel.step_button, panel.step_button, panel.reset_button])
        if button.isEnabled():
            self.note(f"training {panel.experiment_name}: {button.text()}")
            button.click()

    ACTIONS = (("type_sentence", 6), ("type_other_text", 2), ("spin", 6), ("switch", 4), ("combo", 4),
               ("example", 2), ("button", 2), ("query_keys", 2), ("view_tab", 6), ("table_tab", 2),
               ("table_edit", 7), ("undo_redo", 5), ("zoom", 2), ("look", 3), ("resize", 1), ("play", 1),
               ("present", 3), ("model", 2), ("head_lab", 3), ("training", 2), ("file", 2), ("scenes", 2))

    def next_action(self):
        names = [n for n, _ in self.ACTIONS]
        weights = np.array([w for _, w in self.ACTIONS], dtype=float)
        return getattr(self, "do_" + names[int(self.rng.choice(len(names), p=weights / weights.sum()))])


def _busy(w) -> bool:
    """Work the window is still doing: drawing in steps, a change computing, a model loading."""
    room = w.trained.room
    return bool(w.drawing() or w.studio.computing() or room.worker.is_busy()
                or w.controls.typing_timer.isActive() or w.export_actions.busy())


def _settle(w) -> tuple[float, float]:
    """Turn the event loop until the window is idle. Returns the longest turn as (wall, GUI-thread CPU)
    seconds; waiting for work off the GUI thread is not a turn."""
    app = QtWidgets.QApplication.instance()
    longest = (0.0, 0.0)
    deadline = time.perf_counter() + IDLE_TIMEOUT_S
    quiet_turns = 0
    while time.perf_counter() < deadline:
        start, cpu = time.perf_counter(), time.thread_time()
        w.bridge.flush()
        app.processEvents()
        longest = max(longest, (time.perf_counter() - start, time.thread_time() - cpu))
        if _busy(w):
            quiet_turns = 0
            time.sleep(0.002)  # a worker computes: let it have the interpreter
        else:
            quiet_turns += 1
            if quiet_turns >= 2:
                break
    else:
        raise AssertionError(f"the window was still busy after {IDLE_TIMEOUT_S:.0f} s")
    return longest


def _stalled(wall: float, cpu: float) -> bool:
    """A stall: the window kept a person waiting longer than STALL_S. Unless RANDOM_USE_STRICT is set,
    the GUI thread must also have worked for half of it: on a shared two-core machine running two test
    workers a turn's wall time can triple while the thread only waits for a core."""
    if wall <= STALL_S:
        return False
    return STRICT or cpu > STALL_S / 2


def _facts(w) -> dict:
    """What the window is, for telling a known stall from a new one."""
    return {"lab built": w.training.built, "presenting": w.present.active, "trained": w.studio.is_trained,
            "heads shown": w.view_tabs.currentWidget() is w.heads_tab,
            "panels built": tuple(sorted(w.training.tab.built)) if w.training.built else ()}


def _known(info) -> str | None:
    """Why the exception ``info`` (type, value, traceback) is a known defect, or None."""
    text = "".join(traceback.format_exception(*info)).replace(os.sep, "/")
    for (message, path), why in KNOWN.items():
        if message in str(info[1]) and path in text:
            return why
    return None


@pytest.fixture
def cached_minilm(monkeypatch):
    """all-MiniLM-L6-v2 read from its package once for every sequence (it is loaded off the GUI thread,
    and that time is not what these tests measure)."""
    from attn_studio.gui.trained import room
    from attn_studio.pretrained import load_pretrained

    cache = {}

    def load(path=None):
        key = str(path)
        if key not in cache:
            cache[key] = load_pretrained(path)
        return cache[key]

    monkeypatch.setattr(room, "load_pretrained", load)
    return load


@pytest.fixture(autouse=True)
def _earlier_windows_deleted():
    """The windows of the sequences before are deleted before this one starts. pytest-qt closes a test's
    window and asks Qt to delete it later, which no event loop of a test ever does: every earlier window
    stayed alive, and each theme or zoom (application-wide palette and font) changed all of them, a
    stall that grew with the number of sequences run, not with what this one does."""
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    # Their Python side freed here, on the GUI thread: left to the automatic collection, it could run on a
    # model job's thread and finalize Qt objects there (Qt warns: timers started from another thread).
    gc.collect()
    yield


@pytest.fixture(scope="module", autouse=True)
def _look_put_back():
    yield
    app = QtWidgets.QApplication.instance()
    tops = [t for t in app.topLevelWidgets() if t.objectName() == "mainWindow"]
    if tops:
        presentation.apply(app, tops[0], theme="light", zoom=1.0)
    presentation.set_weights_colormap("viridis")
    presentation.STYLE.digits = None  # each view's own, as a new window has it


@pytest.mark.parametrize("seed", _seeds())
def test_random_use_never_raises_or_stalls(window, qtbot, seed, cached_minilm, tmp_path):
    w = window
    app = QtWidgets.QApplication.instance()
    # Alone: an earlier sequence's window left alive would take part in every theme and zoom.
    assert [t for t in app.topLevelWidgets() if t.objectName() == "mainWindow"] == [w]
    w.resize(1280, 720)
    _settle(w)
    person = Person(w, qtbot, np.random.default_rng(seed), tmp_path)
    slow = []
    try:
        for step in range(STEPS):
            action = person.next_action()
            before = _facts(w)
            person.parts = []
            with qtbot.capture_exceptions() as raised:
                start, cpu = time.perf_counter(), time.thread_time()
                action()
                call = (time.perf_counter() - start, time.thread_time() - cpu)
                if person.parts:  # several events (keystrokes): each is what a person waits for
                    call = max(person.parts)
                longest = _settle(w)
            where = f"seed {seed}, step {step}: {person.log[-1] if person.log else action.__name__}"
            recent = "\n  ".join(person.log[-8:])
            unknown = [info for info in raised if _known(info) is None]
            for info in raised:
                if _known(info) is not None:
                    warnings.warn(f"{where}: known defect: {_known(info)}", stacklevel=1)
            assert not unknown, (f"{where} raised:\n" + "".join(
                "".join(traceback.format_exception(*info)) for info in unknown)
                + f"\nthe actions before it:\n  {recent}")
            wall, cpu = max(call, longest)
            after = {**_facts(w), "action": person.log[-1] if person.log else ""}
            known = next((why for why, test in KNOWN_SLOW.items() if test(before, after)), None)
            if _stalled(wall, cpu) and known is not None:
                warnings.warn(f"{where}: {wall * 1000:.0f} ms, known: {known}", stacklevel=1)
            elif _stalled(wall, cpu):
                slow.append(f"{where}: the window did not answer for {wall * 1000:.0f} ms (GUI thread CPU "
                            f"{cpu * 1000:.0f} ms; the call {call[0] * 1000:.0f} ms, longest turn "
                            f"{longest[0] * 1000:.0f} ms)")
            assert w.width() <= MAX_WIDTH, f"{where}: the window grew to {w.width()} px\n  {recent}"
    finally:
        w.play_button.setChecked(False)
        w.present.leave()
        if w.training.built:
            for panel in w.training.tab.panels.values():
                panel.pause()
    assert not slow, "stalls:\n" + "\n".join(slow) + "\nthe actions:\n  " + "\n  ".join(person.log)

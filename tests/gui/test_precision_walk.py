"""View → Precision reaches every number the window shows: a walk through every tab.

With the toy model at 2 and at 4 decimals, and with all-MiniLM-L6-v2 at 2: every tab and inner tab
is rendered to SVG and its texts read back, every table's cells (display text and tooltip), every
widget's tooltip and label, a few hovers over each picture, and every figure File → Export offers.
A decimal number with more decimals than the setting fails, unless its text carries the note of
the stated exception that allows it (``SIZE_NOTE``: powers of ten where a number's size is the
point; ``EXACT_NOTE``: every stored digit, beside the setting's number in a table cell's tooltip).
A table whose cells mix forms (``1`` beside ``0.18``, ``0.18`` beside ``0.1800``) fails too.

Left alone: settings a person chose, shown in spin and combo boxes (a learning rate 0.0003, a
temperature 1.000), and a text that repeats one of them.
"""

from __future__ import annotations

import re

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.formatting import EXACT_NOTE, SIZE_NOTE
from attn_studio.gui import presentation
from attn_studio.gui.files import export, panels
from attn_studio.pretrained import default_model_zip
from gui_helpers import settle, wait_idle
from stage_measure import drawn_texts, svg_texts

# A number with a decimal point (a true minus or a hyphen before it, an exponent after it), not part
# of a word, a version or a longer number.
DECIMAL = re.compile(r"(?<![\w.])[−-]?\d+\.(\d+)(e[−+-]?\d+)?(?![\w.])")
NOTES = (SIZE_NOTE, EXACT_NOTE)
MAX_CELLS = 40  # rows and columns read per table: a trained model's 384 dimensions repeat one form
HOVERS = 3  # points per side of each picture where a tooltip is asked for


@pytest.fixture
def window(shared_window):
    yield shared_window
    presentation.set_digits(4, shared_window)
    presentation.STYLE.digits = None  # each view's own again, as a new window has it (the next module's)


def _choices(window) -> set[str]:
    """The texts of settings a person chose: spin boxes' values, combo boxes' items."""
    chosen = set()
    for spin in window.findChildren(QtWidgets.QAbstractSpinBox):
        chosen.add(spin.text().strip())
    for combo in window.findChildren(QtWidgets.QComboBox):
        chosen.update(combo.itemText(i).strip() for i in range(combo.count()))
    return {text for text in chosen if text}


def _too_precise(text: str, digits: int, chosen: set[str]) -> list[str]:
    """The numbers of ``text`` written with more than ``digits`` decimals and no stated reason."""
    if text.strip() in chosen or any(note in text for note in NOTES):
        return []
    return [m.group(0) for m in DECIMAL.finditer(text) if len(m.group(1)) > digits]


class Findings:
    """What the walk saw that breaks the rule, by where it was seen."""

    def __init__(self, digits: int, chosen: set[str] = frozenset()):
        self.digits, self.chosen, self.seen = digits, set(chosen), {}

    def check(self, where: str, text) -> None:
        if isinstance(text, str) and text:
            found = _too_precise(text, self.digits, self.chosen)
            if found:
                self.seen.setdefault(where, (found[:3], text[:120]))

    def mixed(self, where: str, texts: list[str]) -> None:
        """The cells of one table share one form: the same number of decimals in every number."""
        forms = {len(m.group(1)) for text in texts for m in DECIMAL.finditer(text)}
        whole = any(re.fullmatch(r"[−-]?\d+", text.strip()) for text in texts)
        if len(forms) > 1 or (forms and whole):
            self.seen.setdefault(where, (sorted(forms), [t for t in texts if t][:6]))


def _tab_widgets(tabs: QtWidgets.QTabWidget):
    """Every tab shown of ``tabs`` and of the tab widgets inside it, each made current in turn."""
    for i in range(tabs.count()):
        if not tabs.isTabVisible(i):
            continue
        tabs.setCurrentIndex(i)
        yield tabs.tabText(i)
        for inner in tabs.widget(i).findChildren(QtWidgets.QTabWidget):
            if inner.isVisible():
                for name in _tab_widgets(inner):
                    yield f"{tabs.tabText(i)}/{name}"


def _hover(widget, findings: Findings, where: str, monkeypatch) -> None:
    shown = []
    monkeypatch.setattr(QtWidgets.QToolTip, "showText", lambda pos, text, *a, **k: shown.append(text))
    target = widget.viewport() if isinstance(widget, QtWidgets.QAbstractScrollArea) else widget
    for fx in range(1, HOVERS + 1):
        for fy in range(1, HOVERS + 1):
            point = QtCore.QPointF(target.width() * fx / (HOVERS + 1), target.height() * fy / (HOVERS + 1))
            QtWidgets.QApplication.sendEvent(target, QtGui.QMouseEvent(
                QtCore.QEvent.MouseMove, point, point, QtCore.Qt.NoButton, QtCore.Qt.NoButton, QtCore.Qt.NoModifier))
            QtWidgets.QApplication.sendEvent(target, QtGui.QHelpEvent(
                QtCore.QEvent.ToolTip, point.toPoint(), target.mapToGlobal(point.toPoint())))
    for text in shown:
        findings.check(f"hover {where} {type(widget).__name__}", text)


def _pictures(window) -> list[QtWidgets.QWidget]:
    """The views that answer a hover with numbers: plots and the canvases drawn by hand."""
    found = [v for v in window.findChildren(QtWidgets.QGraphicsView) if v.isVisible()]
    found += [w for w in window.findChildren(QtWidgets.QWidget)
              if w.isVisible() and type(w).__name__.endswith(("Canvas", "Matrix"))]
    return found


def _tables(window, findings: Findings) -> None:
    for view in window.findChildren(QtWidgets.QAbstractItemView):
        model = view.model()
        if model is None or view.window() is not window:  # a combo box's list: settings
            continue
        name = view.objectName() or type(view).__name__
        columns: dict[int, list[str]] = {}
        for r in range(min(model.rowCount(), MAX_CELLS)):
            for c in range(min(model.columnCount(), MAX_CELLS)):
                index = model.index(r, c)
                text = model.data(index, QtCore.Qt.DisplayRole)
                findings.check(f"table {name}", text)
                findings.check(f"table {name} tooltip", model.data(index, QtCore.Qt.ToolTipRole))
                if isinstance(text, str):
                    columns.setdefault(c, []).append(text)
        if isinstance(view, QtWidgets.QTableView):
            for c, texts in columns.items():
                findings.mixed(f"table {name} column {c + 1}", texts)


def _widgets(window, findings: Findings) -> None:
    for widget in window.findChildren(QtWidgets.QWidget):
        findings.check(f"tooltip {type(widget).__name__} {widget.objectName()}", widget.toolTip())
        if isinstance(widget, QtWidgets.QLabel):
            findings.check(f"label {widget.objectName()}", widget.text())


def walk(window, digits: int, monkeypatch, figures: bool = True) -> dict:
    """Everything the window shows at ``digits`` decimals, checked; returns what broke the rule."""
    presentation.set_digits(digits, window)
    settle(window)
    findings = Findings(digits)
    for name in _tab_widgets(window.view_tabs):
        settle(window)
        findings.chosen |= _choices(window)  # a tab builds its controls when first shown
        for text, _ in drawn_texts(window):
            findings.check(f"drawn {name}", text)
        for picture in _pictures(window):
            _hover(picture, findings, name, monkeypatch)
    _tables(window, findings)
    _widgets(window, findings)
    if figures:
        for name in panels.available(window):
            if name == "window" or name.startswith("training:") or "…" in name:
                continue
            try:
                panel = export.find_panel(window, name)
            except export.ExportError:  # a panel with nothing to show (no word to follow): no figure
                continue
            for text, _ in svg_texts(export.svg_bytes(panel)):
                findings.check(f"figure {name}", text)
    return findings.seen


def test_the_rule_reads_numbers_as_a_person_does():
    chosen = {"0.0003 (default)"}
    assert _too_precise("var = 0.0061", 2, chosen) == ["0.0061"]
    assert _too_precise("−1.254e−5 beside 0.18", 2, chosen) == ["−1.254e−5"]
    assert _too_precise("0.18, 1.00 and 12 steps (v1.2 aside)", 2, chosen) == []
    assert _too_precise(f"1.82e−5 ({SIZE_NOTE})", 2, chosen) == []
    assert _too_precise("0.0003 (default)", 2, chosen) == []
    findings = Findings(2)
    findings.mixed("one form", ["0.18", "1.00", "−0.14"])
    assert not findings.seen
    findings.mixed("trimmed", ["0.18", "1"])
    findings.mixed("two precisions", ["0.18", "0.1800"])
    assert set(findings.seen) == {"trimmed", "two precisions"}


@pytest.mark.parametrize("digits", [2, 4])
def test_every_number_of_the_toy_model_follows_the_precision(window, digits, monkeypatch):
    window.trained.room.use_toy()
    window.resize(1280, 720)
    settle(window)
    assert walk(window, digits, monkeypatch) == {}
    # Present's stage writes its cells at its own precision (View → Precision on the stage), its colour
    # bars' labels too: the same form everywhere on it (its cells grow for four decimals).
    window.present.set_stage_digits(digits)
    stage = window.present.enter("Attention", geometry=QtCore.QRect(0, 0, 1280, 720))
    settle(window)
    try:
        findings = Findings(digits, _choices(stage))
        cells = [text for text, _ in drawn_texts(stage) if DECIMAL.fullmatch(text) and text not in findings.chosen]
        for text in cells:
            findings.check("stage", text)
        findings.mixed("stage cells", cells)
        assert cells and findings.seen == {}
    finally:
        window.present.leave()
        window.present.set_stage_digits(2)
        settle(window)


@pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")
def test_every_number_of_minilm_follows_the_precision(window, qtbot, monkeypatch):
    from attn_studio.pretrained import load_pretrained
    from attn_studio.trained import TrainedStudio

    window.resize(1280, 720)
    # A head silenced and one halved (the drift has numbers to show), a second sentence and a word in
    # both (the meaning view follows "tired" through the layers).
    studio = TrainedStudio(load_pretrained())
    studio.update(sentence="The animal didn't cross the street because it was too tired.",
                  second_sentence="I was tired after the long walk.", word="tired")
    studio.set_head_scale(2, 1, 0)
    studio.set_head_scale(3, 1, 0.5)
    window.trained.room.set_studio(studio)
    wait_idle(qtbot, window)
    try:
        assert walk(window, 2, monkeypatch) == {}
    finally:
        window.trained.room.use_toy()
        wait_idle(qtbot, window)

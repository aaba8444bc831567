"""Fixtures for the GUI tests: the real MainWindow, offscreen, checked for Qt warnings.

``window`` builds a fresh window for each test (opening on the "journey"
preset). Building one costs far more than most tests (about 25 plots), so a
module whose tests change nothing but the Studio's state, the window's size
and the shown tab can share one window instead::

    @pytest.fixture
    def window(shared_window):
        return shared_window

``shared_window`` builds one window per module (its ``WINDOW_PRESET`` and
``WINDOW_SIZE``, if the module sets them) and puts it back before each test:
undone to the state it opened with (so nothing to undo), its size, its view
tab, nothing modified.
Either way, when a test ends it fails if Qt logged a warning other than the
offscreen platform's harmless "does not support propagateSizeHints()".

Unsaved work is asked about on every platform, and a question nobody answers would wait
forever: ``unsaved`` (automatic in every test, and around each module's shared window)
answers the session's and the lecture's Save / Discard / Cancel question (``QMessageBox.question``,
as pytest-qt's documentation has tests answer dialogs) with Discard and records each question
asked. A test that means another answer sets ``unsaved.answer``, or patches the question itself.
(pytest-qt captures Qt messages only while pytest captures output: under
``-s`` the check is off.)
"""

from __future__ import annotations

import gc

import pytest
from PySide6 import QtCore, QtTest, QtWidgets

from gui_helpers import settle
from window_reset import document_start, quiet, reset_document

# What the offscreen platform logs on show() (see DESIGN.md, "Known traps") and when a
# menu pops up: it has no window stacking and no keyboard to grab. Harmless there.
IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",
                       "This plugin does not support raise()",
                       "This plugin does not support grabbing the keyboard")


def _unexpected(records) -> list[str]:
    bad = []
    for record in records:
        if record.type in (QtCore.QtMsgType.QtDebugMsg, QtCore.QtMsgType.QtInfoMsg):
            continue
        if any(ignored in record.message for ignored in IGNORED_QT_MESSAGES):
            continue
        bad.append(f"{record.type.name}: {record.message}")
    return bad


def _check_messages(qtlog) -> None:
    unexpected = _unexpected(qtlog.records)
    assert not unexpected, "unexpected Qt messages:\n" + "\n".join(unexpected)


@pytest.fixture(scope="session", autouse=True)
def _collector_on_the_gui_thread(qapp):
    """Cycles freed on the GUI thread only, from a timer, as in the app (``attn-studio`` does the same).

    Left automatic, a collection runs in whichever thread allocates past a threshold: a job's, or
    the test runner's own thread that reads its messages (pytest-xdist), and a Qt model freed there
    resets its views off their thread ("Timers cannot be started from another thread").
    """
    from attn_studio.gui.qt.worker import collect_on_gui_thread

    collector = collect_on_gui_thread(qapp)
    yield
    if collector is not None:
        collector.stop()


class UnsavedQuestions:
    """Stands in for ``QMessageBox.question``, the dialog that asks about unsaved work
    (``files.file_actions.unsaved_question``): ``asked`` the (title, text) of each question, in order;
    every one is answered ``answer``."""

    def __init__(self, answer=QtWidgets.QMessageBox.Discard):
        self.asked: list[tuple[str, str]] = []
        self.answer = answer

    def __call__(self, parent, title: str, text: str, *buttons_and_default):
        self.asked.append((title, text))
        return self.answer


@pytest.fixture(autouse=True)
def unsaved(monkeypatch) -> UnsavedQuestions:
    """Every question about unsaved work this test's windows ask (closing, New, Open, the example
    lecture over a changed one...) answered Discard, and recorded; set ``.answer`` for another."""
    answers = UnsavedQuestions()
    monkeypatch.setattr(QtWidgets.QMessageBox, "question", answers)
    return answers


@pytest.fixture(autouse=True)
def _precision_put_back():
    """The precision setting (process-wide, like the theme) as it was before the test: a test that
    chose 2 decimals must not leave later modules' windows at 2."""
    from attn_studio.gui import presentation

    saved = presentation.STYLE.digits
    yield
    presentation.STYLE.digits = saved


@pytest.fixture(autouse=True)
def _standalone_heatmaps_deleted(monkeypatch):
    """A heatmap a test makes in no scene (to read its picture) is deleted when the test ends, whole:
    a plot in no scene has no owner but Python and would be left to the cycle collector."""
    import shiboken6

    from attn_studio.gui.views.heatmap import Heatmap

    made = []
    make = Heatmap.__init__

    def init(self, *args, **kwargs):
        make(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(Heatmap, "__init__", init)
    yield
    for heatmap in made:
        plot = heatmap.plot
        if shiboken6.isValid(plot) and plot.scene() is None and plot.parentItem() is None:
            shiboken6.delete(plot)


@pytest.fixture(autouse=True)
def _closed_widgets_deleted_now():
    """The widgets this test closed are deleted when it ends, whole, by Qt.

    pytest-qt closes a test's widgets and asks Qt to delete them later, which only an event loop's
    return does; left alive, a window's Python side would be freed by the cycle collector, whose
    clearing of its plot items first makes the window's deletion call items that are no longer whole
    ('LabelItem' has no '_sizeHint')."""
    yield
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)


@pytest.fixture(scope="module", autouse=True)
def _no_garbage_from_earlier_modules():
    """The windows earlier modules closed are freed here, on the main thread.

    Python's cycle collector runs in whichever thread allocates when a threshold is crossed; a
    module that loads a model or computes on a worker thread would otherwise have that thread
    free an earlier module's Qt objects, and Qt warns (timers stopped from another thread).
    """
    gc.collect()


@pytest.fixture
def window(qtbot, qtlog):
    """A new window for this test alone."""
    from attn_studio.gui.window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    settle(w)
    yield w
    settle(w)
    _check_messages(qtlog)


fresh_window = window
"""A new window for this test alone, also where a module's ``window`` is the shared one."""


@pytest.fixture(scope="module")
def _module_window(request, qapp, tmp_path_factory):
    """One MainWindow for a whole module, with its own settings folder; closed after the module."""
    from attn_studio.gui.window import MainWindow

    from attn_studio.gui import presentation

    preset = getattr(request.module, "WINDOW_PRESET", None)
    size = getattr(request.module, "WINDOW_SIZE", None)
    # A module's window starts as a new app's: the precision setting is process-wide, and a module run
    # before this one on the same worker may have left it set (modules run in any order).
    presentation.STYLE.digits = None
    with pytest.MonkeyPatch.context() as patch:
        # Built before any test's own data folder is set: give it one of its own.
        patch.setenv("ATTN_STUDIO_DATA_DIR", str(tmp_path_factory.mktemp("shared-window-data")))
        # Closed after the module's tests, when their own answers are gone: a lecture a test left
        # changed is discarded here, not asked about.
        patch.setattr(QtWidgets.QMessageBox, "question", UnsavedQuestions())
        w = MainWindow(preset=preset) if preset else MainWindow()
        if size is not None:
            w.resize(*size)
        w.show()
        QtTest.QTest.qWaitForWindowExposed(w)
        settle(w)
        start = {"state": w.studio.state, "size": w.size(), "tab": w.view_tabs.currentIndex(),
                 "document": document_start(w)}
        yield w, start
        w.studio.mark_saved()  # nothing to ask about on closing
        w.close()
        w.deleteLater()
        settle(w)
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)


@pytest.fixture
def shared_window(_module_window, qtlog):
    """The module's window, put back as it opened: state, size, shown tab, not modified."""
    w, start = _module_window
    if w.size() != start["size"]:
        w.resize(start["size"])
    w.view_tabs.setCurrentIndex(start["tab"])
    studio, state = w.studio, start["state"]
    # Undo back to the opening state: the state and an empty undo history, as in a new window.
    while studio.can_undo:
        studio.undo()
    if studio.state != state:  # only the selection differs (it is not an edit), or history ran out
        studio.select(query=state.query_index, head=state.head_index)
    if studio.state != state:
        studio.set_state(state)
    studio.mark_saved()
    settle(w)
    yield w
    settle(w)
    _check_messages(qtlog)


@pytest.fixture(scope="module")
def opening_document(_module_window) -> dict:
    """What the module's window's document opened as (``window_reset.document_start``)."""
    return _module_window[1]["document"]


@pytest.fixture
def document_window(shared_window, opening_document, qtbot):
    """The module's window (``shared_window``) with nothing left running from the last test and its
    document (file, example, recent files, message, title) put back as it opened. Checked."""
    w = shared_window
    quiet(w, qtbot)
    reset_document(w, opening_document)
    yield w
    quiet(w, qtbot)

"""Helpers of the GUI tests: settle the event loop, find widgets, compute the expected numbers.

The expected numbers come from the engine alone (no Studio), so a test fails
when the window shows something other than what the engine computes.
"""

from __future__ import annotations

import contextlib

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.engine import Vocabulary, attention, multi_head_attention, sinusoidal_positions, tokenize


def settle(w) -> None:
    """Let the bridge emit and the views redraw (what one event-loop turn does; the heatmaps a large or
    trained model draws one per turn are drawn at once)."""
    w.bridge.flush()
    if hasattr(w, "finish_drawing"):
        w.finish_drawing()
    QtWidgets.QApplication.processEvents()


def fit_screen(w, size, view=None) -> None:
    """``w`` in the layout it chooses on a screen of ``size``, at that size (and showing ``view``, when
    given); the window's width not pushed past the screen's by a minimum width."""
    w.fit_to_screen(QtCore.QRect(0, 0, *size))
    w.resize(*size)
    settle(w)
    if view is not None:
        w.view_tabs.setCurrentWidget(view)
        settle(w)
    assert w.size() == QtCore.QSize(*size)


def panel_idle(panel):
    """A training panel's worker done with its work and the panel drawn; its snapshot."""
    assert panel.runner.wait_idle(), "the worker did not finish its work"
    QtWidgets.QApplication.processEvents()
    panel.redraw()
    return panel.runner.snapshot()


def finish(w, qtbot, timeout: int = 60_000) -> None:
    """Wait until a large edit computed off the GUI thread is installed and drawn, then settle."""
    qtbot.waitUntil(lambda: not w.studio.computing(), timeout=timeout)
    w.finish_drawing()
    settle(w)


def find(w, cls, name):
    """A child widget by objectName; fails the test clearly (never hands None to qtbot)."""
    child = w.findChild(cls, name)
    assert child is not None, f"no {cls.__name__} named {name!r} in the window"
    return child


def expected_embeddings(state) -> np.ndarray:
    """The embedding table of ``state`` in self-attention: seeded vectors plus edits, no positions."""
    edits = {word: dict(values) for word, values in state.embedding_edits.items()}
    return Vocabulary(state.d_model, state.seed, edits=edits).vectors(tokenize(state.sentence))


def expected_inputs(state) -> tuple[np.ndarray, np.ndarray]:
    """(x, x_kv) of ``state``, computed from the engine without the Studio."""
    edits = {word: dict(values) for word, values in state.embedding_edits.items()}
    vocab = Vocabulary(state.d_model, state.seed, edits=edits)

    def inputs(tokens):
        e = vocab.vectors(tokens)
        if state.positional:
            e = e + sinusoidal_positions(len(tokens), state.d_model)
        return e

    keys = tokenize(state.sentence)
    targets = tokenize(state.target_sentence)
    x_kv = inputs(keys)
    x = inputs(targets) if targets else x_kv
    return x, x_kv


def expected_result(state) -> dict[str, np.ndarray]:
    """What the window must show for ``state``: scores, logits, weights (h, Tq, Tk) and output."""
    assert state.score == "dot", "these tests compute dot-product attention only"
    x, x_kv = expected_inputs(state)
    opts = dict(scale=state.scale, causal=state.causal, temperature=state.temperature, kind=state.softmax)
    if state.projections:
        r = multi_head_attention(x, state.w_q, state.w_k, state.w_v, state.w_o, x_kv=x_kv, **opts)
        return {"scores": r.scores, "logits": r.logits, "weights": r.weights, "output": r.output}
    # The seeds' simplified attention: Q = K = V = X, one head, no W_O.
    r = attention(x, x_kv, x_kv, **opts)
    return {"scores": r.scores[None], "logits": r.logits[None], "weights": r.weights[None], "output": r.output}


def assert_result_matches(studio, want) -> None:
    got = studio.result
    for key in ("scores", "weights", "output"):
        np.testing.assert_allclose(getattr(got, key), want[key], rtol=1e-12, atol=1e-12, err_msg=key)
    # logits hold -inf where blocked: compare finite parts and where the infinities are.
    np.testing.assert_array_equal(np.isinf(got.logits), np.isinf(want["logits"]))
    finite = np.isfinite(want["logits"])
    np.testing.assert_allclose(got.logits[finite], want["logits"][finite], rtol=1e-12, atol=1e-12)


# The chosen head's three stages, as the seeds walk through them.
STAGES = ("scores", "logits", "weights")


def stage_maps(view) -> list:
    """(key, Heatmap) of the score, logit and weight heatmaps of a HeatmapView."""
    return [(key, view.stages[key]) for key in STAGES]


def shown_image(heatmap) -> np.ndarray:
    """The array an ImageItem displays (NaN where the cell is masked)."""
    image = heatmap.image.image
    assert image is not None, "the heatmap has no image"
    return np.asarray(image, dtype=np.float64)


def axis_tokens(axis) -> list[str]:
    return [text for _, text in axis.labels()]


def bring_forward(widget) -> None:
    """Select the tabs that hold ``widget`` (as a person would click them), innermost first."""
    child, parent = widget, widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QtWidgets.QStackedWidget):
            parent.setCurrentWidget(child)
        child, parent = parent, parent.parentWidget()


def wait_idle(qtbot, window) -> None:
    """Until the trained room's worker has nothing left to do, then let the bridge and views catch up."""
    room = window.trained.room
    qtbot.waitUntil(lambda: not room.worker.is_busy(), timeout=60000)
    # A scene asked for is shown once it can be drawn whole: its trained model opened, a training
    # scene's saved run trained on its panel's worker (minutes on a loaded machine).
    qtbot.waitUntil(lambda: not window.scenes.showing(), timeout=900_000)
    settle(window)
    # A long sentence's report card is measured off the GUI thread when the Heads tab shows it.
    qtbot.waitUntil(lambda: not window.heads_tab.measuring(), timeout=60000)
    settle(window)
    window.bridge.flush()
    settle(window)


def fully_shown(widget: QtWidgets.QWidget, top: QtWidgets.QWidget) -> bool:
    """No ancestor up to ``top`` (a scroll area's viewport, a dock, the window) cuts any of ``widget``."""
    parent = widget.parentWidget()
    while parent is not None:
        if not parent.rect().contains(QtCore.QRect(widget.mapTo(parent, QtCore.QPoint(0, 0)), widget.size())):
            return False
        if parent is top:
            return True
        parent = parent.parentWidget()
    return False


def shown_canvas(qtbot, heatmap, width: int, height: int):
    """``heatmap`` on a canvas of its own (no colour bar), ``width`` × ``height``, shown."""
    from attn_studio.gui.views.heatmap_canvas import HeatmapCanvas

    canvas = HeatmapCanvas(heatmap, with_bar=False)
    qtbot.addWidget(canvas)
    canvas.resize(width, height)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def put_lecture_away(qtbot, window) -> None:
    """After a lecture test on a shared window: the stage left, the toy model back, no lecture open."""
    window.present.leave()
    wait_idle(qtbot, window)
    if window.studio.is_trained:
        window.trained.room.use_toy()
        wait_idle(qtbot, window)
    window.scenes.set_lecture(None, record=False)
    settle(window)


def drop_files(window, *paths) -> QtGui.QDragEnterEvent:
    """Drag ``paths`` over ``window`` and drop them there, as a file manager does; returns the drag's
    enter event (accepted when the window takes the files)."""
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QtCore.QPointF(window.width() / 2, window.height() / 2)
    enter = QtGui.QDragEnterEvent(pos.toPoint(), QtCore.Qt.CopyAction, mime, QtCore.Qt.LeftButton,
                                  QtCore.Qt.NoModifier)
    window.dragEnterEvent(enter)
    window.dropEvent(QtGui.QDropEvent(pos, QtCore.Qt.CopyAction, mime, QtCore.Qt.LeftButton, QtCore.Qt.NoModifier))
    return enter


@contextlib.contextmanager
def showing_minilm(window, qtbot, model):
    """``window`` showing MiniLM (``model``) on its "animal" sentence; back to the toy model afterwards."""
    from attn_studio.trained import TrainedStudio

    window.trained.room.set_studio(TrainedStudio(model))
    wait_idle(qtbot, window)
    yield window
    window.view_tabs.setCurrentIndex(0)
    window.trained.room.use_toy()
    wait_idle(qtbot, window)


def play_example_scene(window, qtbot, number: int, rect, strip: bool = True):
    """Scene ``number`` (from 1) of the example lecture on a stage of ``rect``'s size (a projector of that
    size), drawn whole, with the control strip shown or (H) hidden; the stage."""
    from PySide6.QtTest import QTest

    w = window
    if w.scenes.lecture is None:
        w.scenes.open_example()
        settle(w)
    if w.present.stage is None or w.present.stage.size() != rect.size():
        w.present.enter(geometry=rect)
        settle(w)
    with qtbot.waitSignal(w.scenes.sceneShown, timeout=60_000):
        w.scenes.go(number - 1)
    wait_idle(qtbot, w)
    settle(w)
    stage = w.present.stage
    if stage.strip.isVisible() != strip:
        QTest.keyClick(stage, QtCore.Qt.Key_H)
        settle(w)
    assert stage.strip.isVisible() == strip
    return stage

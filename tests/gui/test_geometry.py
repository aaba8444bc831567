"""The geometry view: arrows where the vectors are, the true dot/cos/angle of a pair.

Expected numbers come from the engine and NumPy here, never from the view.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.engine.projection import angle_degrees, cosine, pca_2d, project
from attn_studio.gui.views.geometry import PAIR_A, GeometryView
from attn_studio.gui.views.heatmap import format_value
from attn_studio.session import load_preset
from attn_studio.studio import Studio

from conftest import _unexpected

READOUT = re.compile(r"= (\S+) ; cos = (\S+) ; angle = (\S+)°")


@pytest.fixture
def make_view(qtbot, qtlog):
    made = []

    def make(preset: str | None = "money-bank-2d", **changes) -> GeometryView:
        studio = Studio(load_preset(preset) if preset else None)
        if changes:
            studio.update(**changes)
        view = GeometryView(studio)
        qtbot.addWidget(view)
        view.resize(900, 600)
        view.show()
        qtbot.waitExposed(view)
        made.append(view)
        return view

    yield make
    unexpected = _unexpected(qtlog.records)
    assert not unexpected, "unexpected Qt messages:\n" + "\n".join(unexpected)


def plain(label) -> str:
    return re.sub(r"<[^>]+>", "", label.text()).replace("&nbsp;", " ")


def readout_numbers(view) -> tuple[str, str, str]:
    match = READOUT.search(plain(view.readout))
    assert match, plain(view.readout)
    return match.groups()


def painted_colour_count(view, colour: str) -> int:
    return _count(view.grab().toImage(), colour)


# --------------------------------------------------------------------------- exact 2-d


def test_arrows_end_exactly_at_the_2d_vectors(make_view):
    view = make_view()
    studio = view.studio
    assert studio.state.d_model == 2
    assert view.arrows.tips.shape == (3, 2)
    assert np.array_equal(view.arrows.tips, studio.x_kv)
    assert np.array_equal(view.arrows.tips, [[0.9, 0.1], [0.6, 0.6], [0.1, 0.9]])
    assert view.arrows.labels == ["money", "bank", "river"]
    assert view.projection.exact


def test_caption_says_exact(make_view):
    view = make_view()
    caption = view.caption.text()
    assert "exact 2-d vectors" in caption.lower()
    assert "PCA" not in caption


def test_pair_defaults_to_the_query_and_the_key_it_attends_to_most(make_view):
    view = make_view()
    state, result = view.studio.state, view.studio.result
    assert state.query_index == 1  # "bank" in the preset
    assert view.pair_a.currentIndex() == 1
    weights = np.array(result.weights[0, 1])
    weights[1] = -np.inf  # a vector paired with itself is trivial
    assert view.pair_b.currentIndex() == int(np.argmax(weights)) == 0
    assert view.arrows.roles == ["b", "a", "plain"]


def test_readout_is_the_full_dimensional_truth(make_view):
    view = make_view()
    x = view.studio.x_kv
    bank, money = x[1], x[0]
    dot = np.dot(bank, money)
    cos = dot / (np.linalg.norm(bank) * np.linalg.norm(money))
    angle = np.degrees(np.arccos(cos))
    assert readout_numbers(view) == (format_value(dot), format_value(cos), f"{angle:.1f}")
    assert "bank · money = 0.60 ; cos = 0.78 ; angle = 38.7°" in plain(view.readout)
    assert view.pair_numbers == pytest.approx((dot, cos, angle))


def test_the_angle_arc_is_drawn_in_the_exact_case(make_view):
    view = make_view()
    assert view.arrows.arc == (1, 0, "38.7°")
    assert painted_colour_count(view, PAIR_A) > 200  # the highlighted arrow is painted, and thick


def test_editing_an_embedding_moves_its_arrow(make_view):
    view = make_view()
    view.studio.set_embedding("money", 1, "0.5")
    view.render()
    assert np.array_equal(view.arrows.tips[0], [0.9, 0.5])
    assert np.array_equal(view.arrows.tips, view.studio.x_kv)
    money, bank = view.studio.x_kv[0], view.studio.x_kv[1]
    assert readout_numbers(view)[0] == format_value(np.dot(bank, money))


def test_the_frame_follows_an_arrow_that_leaves_it(make_view):
    view = make_view()
    view.studio.set_embedding("river", 0, "-5")
    view.render()
    (x0, x1), _ = view.plot.vb.viewRange()
    assert x0 < -5 < x1


def test_choosing_a_pair(make_view, qtbot):
    view = make_view()
    view.pair_b.setCurrentIndex(2)
    view.pair_b.activated.emit(2)
    x = view.studio.x_kv
    assert readout_numbers(view)[0] == format_value(np.dot(x[1], x[2]))
    assert "bank · river" in plain(view.readout)
    view.render()  # another studio change keeps the lecturer's pair
    assert view.pair_b.currentIndex() == 2
    view.studio.select(query=0)  # a new selected query resets it
    view.render()
    assert view.pair_a.currentIndex() == 0
    view.set_pair(2, 2)  # a vector with itself: angle 0, no arc
    assert readout_numbers(view)[1:] == ("1.00", "0.0")
    assert view.arrows.arc is None


def test_a_zero_vector_has_no_angle(make_view):
    view = make_view()
    view.studio.set_embedding("bank", 0, "0")  # the query of the pair
    view.studio.set_embedding("bank", 1, "0")
    view.render()
    text = plain(view.readout)
    assert "a zero vector has no direction" in text
    assert view.pair_numbers[0] == 0.0 and view.pair_numbers[1] is None
    view.grab()


def test_empty_sentence(make_view):
    view = make_view()
    view.studio.update(sentence="")
    view.render()
    assert view.arrows.tips.shape == (0, 2)
    assert "No tokens" in view.caption.text()
    assert view.pair_numbers is None
    assert not view.pair_a.isEnabled() and view.pair_a.count() == 0
    view.set_mode("qk")
    view.grab()


def test_one_dimensional_vectors(make_view):
    view = make_view()
    view.studio.update(d_model=1)
    view.render()
    x = view.studio.x_kv
    assert np.array_equal(view.arrows.tips[:, 0], x[:, 0])
    assert np.array_equal(view.arrows.tips[:, 1], np.zeros(3))
    assert "1-d" in view.caption.text()
    assert readout_numbers(view)[2] in ("0.0", "180.0")
    view.grab()


# --------------------------------------------------------------------------- PCA


def test_pca_caption_and_projected_arrows(make_view):
    view = make_view("animal")
    studio = view.studio
    assert studio.state.d_model == 8
    expected = pca_2d(studio.x_kv, center=False)
    caption = view.caption.text()
    assert "PCA projection of 8-dimensional vectors" in caption
    assert f"{100 * expected.explained.sum():.0f}% of the variance" in caption
    assert "approximate" in caption
    assert np.allclose(view.arrows.tips, project(studio.x_kv, expected))
    assert view.arrows.arc is None  # angles on screen are not the true ones
    view.grab()


def test_pca_readout_uses_the_true_vectors(make_view):
    view = make_view("animal")
    studio = view.studio
    a, b = view.pair_a.currentIndex(), view.pair_b.currentIndex()
    assert a == studio.state.query_index
    va, vb = studio.x_kv[a], studio.x_kv[b]
    dot, cos, angle = readout_numbers(view)
    assert dot == format_value(np.dot(va, vb))
    assert cos == format_value(cosine(va, vb))
    assert angle == f"{angle_degrees(va, vb):.1f}"


def test_queries_and_keys_of_the_chosen_head(make_view):
    view = make_view("animal")
    studio = view.studio
    studio.select(head=1)
    view.render()
    view.set_mode("qk")
    result, state = studio.result, studio.state
    q, k = result.q[1], result.k[1]
    a = state.query_index
    weights = result.weights[1, a]
    assert view.pair_b.currentIndex() == int(np.argmax(weights))
    b = view.pair_b.currentIndex()
    plane = pca_2d(np.vstack([q, k]), center=False)
    # Every key, then the chosen query.
    assert np.allclose(view.arrows.tips[:-1], project(k, plane))
    assert np.allclose(view.arrows.tips[-1], project(q[a:a + 1], plane)[0])
    assert view.arrows.labels[-1] == "q(it)"
    assert f"{100 * plane.explained.sum():.0f}%" in view.caption.text()
    dot, _, _ = readout_numbers(view)
    assert dot == format_value(np.dot(q[a], k[b])) == format_value(result.scores[1, a, b])
    assert format_value(result.weights[1, a, b]) in plain(view.readout)
    assert "head 2" in view.mode.currentText()
    view.grab()


def test_positions_change_the_vectors_drawn(make_view):
    view = make_view()
    view.studio.update(positional=True)
    view.render()
    assert np.array_equal(view.arrows.tips, view.studio.x_kv)
    assert not np.array_equal(view.arrows.tips, [[0.9, 0.1], [0.6, 0.6], [0.1, 0.9]])


def test_cross_attention_draws_the_query_from_the_other_sentence(make_view):
    view = make_view()
    view.studio.update(target_sentence="river money")
    view.render()
    studio = view.studio
    assert studio.state.cross
    assert view.pair_a.count() == 2 and view.pair_b.count() == 3
    a = view.pair_a.currentIndex()
    assert view.arrows.tips.shape == (4, 2)  # three keys and the chosen query
    assert np.array_equal(view.arrows.tips[-1], studio.x[a])
    b = view.pair_b.currentIndex()
    assert readout_numbers(view)[0] == format_value(np.dot(studio.x[a], studio.x_kv[b]))
    view.studio.update(sentence="")  # queries but no keys
    view.render()
    assert view.pair_numbers is None
    view.grab()


def _count(image: QtGui.QImage, colour: str) -> int:
    image = image.convertToFormat(QtGui.QImage.Format_RGB32)
    arr = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    c = QtGui.QColor(colour)
    bgr = np.array([c.blue(), c.green(), c.red()])
    return int(np.sum(np.all(np.abs(arr[..., :3].astype(int) - bgr) <= 8, axis=-1)))


def test_a_2x_export_scales_arrows_with_the_figure(make_view):
    view = make_view()
    size = view.canvas.size()
    once = QtGui.QImage(size, QtGui.QImage.Format_ARGB32)
    twice = QtGui.QImage(size * 2, QtGui.QImage.Format_ARGB32)
    for image, scale in ((once, 1), (twice, 2)):
        image.fill(QtCore.Qt.white)
        painter = QtGui.QPainter(image)
        painter.scale(scale, scale)
        QtWidgets.QWidget.render(view.canvas, painter, QtCore.QPoint(0, 0))  # Qt's render, as an export does
        painter.end()
    ratio = _count(twice, PAIR_A) / _count(once, PAIR_A)
    assert ratio > 3.0  # areas grow 4x when widths and heads scale too (2x if they stayed 1x)


def test_tokens_that_look_like_markup_are_shown_as_text(make_view):
    view = make_view(None, sentence="a < b & c")
    view.set_pair(1, 3)
    assert "< · &" in plain(view.readout).replace("&lt;", "<").replace("&amp;", "&")
    assert "&lt;" in view.readout.text()
    view.grab()


class _Hover:
    def __init__(self, pos, exit=False):
        self._pos, self._exit = pos, exit

    def isExit(self):
        return self._exit

    def pos(self):
        return self._pos


def test_hovering_an_arrow_tip_shows_its_full_vector(make_view):
    view = make_view()
    view.grab()
    assert view.arrows.tooltip(0) == "money = [0.90, 0.10]"
    view.arrows.hoverEvent(_Hover(QtCore.QPointF(0.9, 0.1)))
    assert view.arrows.toolTip() == "money = [0.90, 0.10]"
    view.arrows.hoverEvent(_Hover(QtCore.QPointF(-0.5, -0.15)))  # nowhere near an arrow
    assert view.arrows.toolTip() == ""
    view.arrows.hoverEvent(_Hover(QtCore.QPointF(0.6, 0.6)))
    view.arrows.hoverEvent(_Hover(QtCore.QPointF(0.6, 0.6), exit=True))
    assert view.arrows.toolTip() == ""

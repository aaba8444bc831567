"""The positional-encoding view: the engine's PE matrix, its labels, and whether it is added."""

from __future__ import annotations

import numpy as np
import pytest

from attn_studio.engine import sinusoidal_positions
from attn_studio.gui.views.positional import PositionalView, column_labels, followed_columns
from attn_studio.session import load_preset
from attn_studio.studio import Studio

from conftest import _unexpected


@pytest.fixture
def make_view(qtbot, qtlog):
    made = []  # alive until the test ends, when Qt deletes them (never left to the cycle collector)

    def make(preset: str | None = None, **changes) -> PositionalView:
        studio = Studio(load_preset(preset) if preset else None)
        if changes:
            studio.update(**changes)
        view = PositionalView(studio)
        qtbot.addWidget(view)
        view.resize(900, 600)
        view.show()
        qtbot.waitExposed(view)
        made.append(view)
        return view

    yield make
    unexpected = _unexpected(qtlog.records)
    assert not unexpected, "unexpected Qt messages:\n" + "\n".join(unexpected)


def shown(view) -> np.ndarray:
    return np.asarray(view.heatmap.image.image)


def test_the_image_is_the_engines_matrix(make_view):
    view = make_view()  # "Your journey starts with one step", d_model 3
    state = view.studio.state
    expected = sinusoidal_positions(len(state.tokens), state.d_model)
    assert shown(view).shape == (6, 3)
    assert np.array_equal(shown(view), expected)
    assert np.array_equal(view.matrix, expected)
    assert view.heatmap.levels == (-1.0, 1.0)


def test_labels(make_view):
    view = make_view()
    assert view.row_labels[:2] == ["0: Your", "1: journey"]
    assert view.row_labels[-1] == "5: step"
    assert view.col_labels == ["sin 0", "cos 0", "sin 1"]
    assert column_labels(4) == ["sin 0", "cos 0", "sin 1", "cos 1"]


def test_the_seeds_d4_example(make_view):
    view = make_view(sentence="Monika likes coffee .", d_model=4)
    pe = shown(view)
    assert np.allclose(pe[0], [0, 1, 0, 1])
    assert np.allclose(pe[1], [np.sin(1), np.cos(1), np.sin(1 / 100), np.cos(1 / 100)])
    assert np.allclose(pe[3], [np.sin(3), np.cos(3), np.sin(3 / 100), np.cos(3 / 100)])


def test_caption_follows_the_toggle_and_the_image_does_not(make_view):
    view = make_view()
    studio = view.studio
    assert "Not added" in view.status.text()
    assert "positional encoding" in view.status.text()
    before = shown(view).copy()
    embeddings = studio.embeddings(studio.state.tokens)
    studio.update(positional=True)
    view.render()
    assert "Added to the token vectors" in view.status.text()
    assert "Not added" not in view.status.text()
    assert np.array_equal(shown(view), before)  # PE is shown whether or not it is added
    assert np.allclose(studio.x - embeddings, shown(view))  # ...and what is added is exactly this
    studio.update(positional=False)
    view.render()
    assert "Not added" in view.status.text()


def test_caption_has_the_formula(make_view):
    view = make_view()
    text = view.caption.text()
    assert "PE(pos, 2i) = sin(pos / 10000" in text and "PE(pos, 2i+1) = cos(pos / 10000" in text
    assert "d = 3" in text


def test_d_model_change_resizes_the_image(make_view):
    view = make_view()
    view.studio.update(d_model=7)
    view.render()
    assert shown(view).shape == (6, 7)
    assert np.array_equal(shown(view), sinusoidal_positions(6, 7))
    assert view.col_labels[-1] == "sin 3"  # odd d: the last column is a sine
    assert "d = 7" in view.caption.text()
    view.studio.update(d_model=1)
    view.render()
    assert np.array_equal(shown(view), sinusoidal_positions(6, 1))


def test_sentence_length_changes_the_rows(make_view):
    view = make_view()
    view.studio.update(sentence="one two")
    view.render()
    assert np.array_equal(shown(view), sinusoidal_positions(2, 3))
    assert view.row_labels == ["0: one", "1: two"]


def test_empty_sentence(make_view):
    view = make_view()
    view.studio.update(sentence="")
    view.render()
    assert view.matrix.shape == (0, 3)
    assert view.row_labels == []
    view.grab()


def test_curves_follow_sine_columns(make_view):
    view = make_view("animal")  # d_model 8: frequencies 0..3
    assert followed_columns(8) == [0, 2, 4, 6]
    pe = sinusoidal_positions(11, 8)
    for curve, col in zip(view.curves, followed_columns(8)):
        x, y = curve.getData()
        assert np.array_equal(x, np.arange(11))
        assert np.array_equal(y, pe[:, col])
    assert "sin 3" in view.legend.text().replace("&nbsp;", " ")
    view.grab()


def test_followed_columns_for_small_and_large_d():
    assert followed_columns(1) == [0]
    assert followed_columns(2) == [0]
    assert followed_columns(3) == [0, 2]
    cols = followed_columns(512)
    assert len(cols) == 4 and cols[0] == 0 and cols[-1] == 510


def test_cross_attention_rows_name_both_sentences(make_view):
    view = make_view(sentence="the bank", target_sentence="la banque de")
    assert view.matrix.shape == (3, 3)
    assert view.row_labels == ["0: the / la", "1: bank / banque", "2: de"]

"""A trained model's panels leave the app laid out for the page, and a slide can hold them.

Each figure is exported as SVG at three window sizes and read back (text stays text, with its size):
it must be the same figure at each, carry no control or hint of the window, label every token, and
keep the slide rule (no text below 9 pt once the figure fills a 13.33 in slide's width). Compare
shows the trained model (pinned as "before") against the edited one, in the window and from the
command line. Skipped where all-MiniLM-L6-v2 is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from attn_studio import cli
from attn_studio.gui.files import export
from attn_studio.gui.files.sheet import fits_slide, slide_points
from attn_studio.pretrained import default_model_zip
from gui_helpers import settle, wait_idle
from stage_measure import svg_size, svg_texts

pytestmark = pytest.mark.skipif(default_model_zip() is None, reason="all-MiniLM-L6-v2 is not installed")

ANIMAL = "The animal didn't cross the street because it was too tired."
SIZES = [(1024, 600), (1280, 720), (1600, 900)]
PANELS = ("model", "drift", "meaning", "outputs", "compare")
# The window's controls and what it says to a person at the screen: never on a slide.
CONTROL_WORDS = ("Norm", "rollout", "Click", "click", "Show", "Pair", "Pin", "Random", "hover", "Hover",
                 "Silence or scale", "Type a second", "Compare", "Press", "◀")


@pytest.fixture
def edited(window, qtbot, minilm):
    """The window on MiniLM, "animal" and a second sentence about "tired": head 2 of layer 3 silenced, head 2 of
    layer 4 halved, layer 4 and its head 5 shown."""
    from attn_studio.trained import TrainedStudio

    studio = TrainedStudio(minilm)
    studio.update(sentence=ANIMAL, second_sentence="I was tired after the long walk.", word="tired")
    studio.set_head_scale(2, 1, 0)
    studio.set_head_scale(3, 1, 0.5)
    studio.select(layer=3, head=4)
    window.trained.room.set_studio(studio)
    wait_idle(qtbot, window)
    yield window
    window.trained.room.use_toy()
    settle(window)


def screen(window, width, height):
    window.fit_to_screen(QtCore.QRect(0, 0, width, height))
    window.resize(width, height)
    settle(window)


def controls_in(texts) -> list[str]:
    return [t for t, _ in texts if any(word in t for word in CONTROL_WORDS)]


def test_every_trained_panel_is_one_figure_at_every_window_size_and_a_slide_holds_it(edited):
    w = edited
    tokens = list(w.studio.state.tokens)
    figures = {}
    for size in SIZES:
        screen(w, *size)
        for name in PANELS:
            panel = export.find_panel(w, name)
            assert panel.widget.window() is panel.widget, f"{name}: a figure is its own page, not a part of the window"
            svg = export.svg_bytes(panel)
            texts = svg_texts(svg)
            assert not controls_in(texts), (name, size, controls_in(texts))
            width, _ = svg_size(svg)
            smallest = min(px for _, px in texts)
            assert fits_slide(width, smallest), (name, size, width, smallest, slide_points(smallest, width))
            figures.setdefault(name, []).append((sorted(texts), svg_size(svg)))
    for name, seen in figures.items():
        assert all(f == seen[0] for f in seen), f"the {name} figure changed with the window's size"
    words = {name: [t for t, _ in seen[0][0]] for name, seen in figures.items()}
    # Every token labelled: in the model's grid of heads each token labels rows and columns; in compare
    # each of the three heatmaps labels both axes; in heads → output each token labels two heatmaps' rows.
    for token in set(tokens):
        n = tokens.count(token)
        assert words["model"].count(token) >= 2 * n, token
        assert words["compare"].count(token) == 6 * n, token
        assert words["outputs"].count(token) == 2 * n, token
    model = words["model"]
    assert "head 2 · ×0.50" in model and "mean over heads" in model
    assert all(model.count(f"head {h}") == 1 for h in (1, *range(3, 13)))  # every head once, head 2 marked
    # The drift figure names each edited head, at its own layer: 3.2 silenced, 4.2 at half.
    assert "3.2 silenced" in words["drift"] and "4.2 × 0.5" in words["drift"]
    assert "A: trained model" in words["compare"] and "B: edited (1 head silenced, 1 head scaled)" in words["compare"]
    assert "Cosine of “tired”, sentence 1 vs 2" in words["meaning"]


def test_the_model_figure_shows_the_layer_shown_with_the_views_numbers(edited, minilm):
    w = edited
    panel = export.find_panel(w, "model")
    assert "layer 4 of 6" in panel.title
    sheet = panel.widget
    run = minilm.run(ANIMAL, edits=w.studio.state.edits)
    # Twelve heads and the mean, in the order of the heads, each the run's weights of layer 4.
    assert len(sheet.heatmaps) == 13
    for h, hm in enumerate(sheet.heatmaps[:12]):
        np.testing.assert_allclose(hm.data.values, run.attentions[3, h], atol=1e-9)
    np.testing.assert_allclose(sheet.heatmaps[12].data.values, run.attentions[3].mean(axis=0), atol=1e-9)


def test_compare_shows_the_trained_model_against_the_edited_one_in_its_tab(edited, minilm):
    w = edited
    tabs = w.view_tabs
    index = tabs.indexOf(w.compare_view)
    assert tabs.isTabVisible(index)
    tabs.setCurrentIndex(index)
    settle(w)
    view = w.compare_view
    assert not view.mode_combo.isVisibleTo(w) and not view.pin_button.isVisibleTo(w)
    assert "layer 4, head 5" in view.caption.text() and "trained model" in view.caption.text()
    trained = minilm.run(ANIMAL).attentions[3, 4]
    edited_weights = minilm.run(ANIMAL, edits=w.studio.state.edits).attentions[3, 4]
    np.testing.assert_allclose(view.maps["a"].data.values, trained, atol=1e-9)
    np.testing.assert_allclose(view.maps["diff"].data.values, edited_weights - trained, atol=1e-9)
    assert np.abs(view.maps["diff"].data.values).max() > 1e-4  # a head silenced below changes layer 4


def test_compare_says_why_a_layer_at_or_below_a_silenced_head_is_unchanged(window, qtbot, minilm):
    """Head 4.2 silenced: layer 4's attention is the trained model's (silencing scales what the head passes
    on, not its weights), which the view and its figure say; from layer 5 on the difference is there."""
    from attn_studio.trained import TrainedStudio

    w = window
    studio = TrainedStudio(minilm)
    studio.update(sentence=ANIMAL)
    studio.set_head_scale(3, 1, 0.0)
    studio.select(layer=3, head=1)
    w.trained.room.set_studio(studio)
    w.view_tabs.setCurrentWidget(w.compare_view)
    wait_idle(qtbot, w)
    view = w.compare_view
    try:
        assert np.abs(view.maps["diff"].data.values).max() == 0.0
        assert view.maps["diff"].title == "B − A: unchanged below layer 5"
        assert "Attention changes from layer 5 on" in view.caption.text()
        figure = " ".join(text for text, _ in svg_texts(export.svg_bytes(export.find_panel(w, "compare"))))
        assert "unchanged below layer 5" in figure
        w.trained.room.select(layer=4, head=1)
        wait_idle(qtbot, w)
        assert np.abs(view.maps["diff"].data.values).max() > 1e-4
        assert view.maps["diff"].title == "B − A" and "changes from layer" not in view.caption.text()
    finally:
        w.trained.room.use_toy()
        settle(w)


def test_the_window_figure_outlines_the_query_row_its_caption_names(window):
    hm = window.heatmap_view.stages["weights"]
    assert hm.overlay.selected_row is not None
    assert "the outlined row is the query" in window.heatmap_view.header.text()
    color = hm.overlay.outline

    def outline_pixels(panel_name):
        image = export.render_panel(export.find_panel(window, panel_name), scale=1, title="")
        rgb = image.convertToFormat(image.Format.Format_RGB888)
        a = np.frombuffer(rgb.constBits(), np.uint8).reshape(rgb.height(), rgb.bytesPerLine())
        a = a[:, : 3 * rgb.width()].reshape(rgb.height(), rgb.width(), 3).astype(int)
        target = np.array([color.red(), color.green(), color.blue()])
        return int((np.abs(a - target).sum(axis=2) < 30).sum())

    assert outline_pixels("window") > 50
    assert outline_pixels("heatmaps") == 0  # a figure of the heatmaps outlines no row


def test_the_command_line_draws_the_same_trained_figures_at_any_window_size(tmp_path, capfd):
    base = ["export", "--model", "all-MiniLM-L6-v2", "--text", ANIMAL, "--layer", "4", "--silence", "3.2"]
    for panel in ("model", "compare", "outputs"):
        seen = []
        for width, height in (SIZES[0], SIZES[2]):
            out = tmp_path / f"{panel}-{width}.svg"
            assert cli.main([*base, "--panel", panel, "--width", str(width), "--height", str(height),
                             "--out", str(out)]) == 0, capfd.readouterr().err
            svg = out.read_bytes()
            texts = svg_texts(svg)
            assert not controls_in(texts), (panel, controls_in(texts))
            assert fits_slide(svg_size(svg)[0], min(px for _, px in texts)), panel
            seen.append((sorted(texts), svg_size(svg)))
        assert seen[0] == seen[1], f"{panel} changed with --width/--height"
    # Positions: a trained model learns its positions; refused with a message, never a traceback.
    assert cli.main([*base, "--panel", "positions", "--out", str(tmp_path / "p.svg")]) == 2
    err = capfd.readouterr().err
    assert "learns its positions" in err and "Traceback" not in err and not (tmp_path / "p.svg").exists()

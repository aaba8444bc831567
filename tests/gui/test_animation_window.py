"""File → Export animation… in the real window: the view's page figure over the control under the
pointer, written as a GIF that decodes to the frames, size and rate asked for; Cancel writes nothing;
the window's values, document and Undo are the same afterwards; a bad range or path is said and
nothing is written; a training panel's run as an animation. The dialog is answered by the tests
(``animation_dialog.ask`` replaced), as the window's other questions are."""

from __future__ import annotations


import numpy as np
import pytest
from PIL import Image
from PySide6 import QtCore, QtGui, QtWidgets

from attn_studio.gui.files import animation_dialog
from attn_studio.gui.files.animation_dialog import AnimationDialog, AnimationRequest
from attn_studio.gui.files.animation_export import Timing
from attn_studio.gui.files.animation_frames import FrameMaker, toy_controls
from attn_studio.studio import Studio
from gui_helpers import settle
from window_reset import quiet


@pytest.fixture
def window(shared_window, qtbot):
    w = shared_window
    quiet(w, qtbot)
    w.clear_message()
    w.view_tabs.setCurrentWidget(w.heatmap_view)
    settle(w)
    yield w
    quiet(w, qtbot)


class Answer:
    """Stands in for the dialog: records what it was asked and answers with the request ``make`` builds."""

    def __init__(self, make):
        self.make, self.asked = make, []

    def __call__(self, parent, title, controls, path):
        self.asked.append((title, controls, path))
        return self.make(controls)


def hover(widget) -> None:
    QtWidgets.QApplication.sendEvent(widget, QtCore.QEvent(QtCore.QEvent.Enter))


def decode_gif(path) -> tuple[int, tuple[int, int], list[int], list[np.ndarray]]:
    """(frames, (width, height), each frame's delay in ms, the frames as RGB) read with Pillow."""
    frames, delays = [], []
    with Image.open(path) as gif:
        for i in range(gif.n_frames):
            gif.seek(i)
            delays.append(int(gif.info.get("duration", 0)))
            frames.append(np.asarray(gif.convert("RGB")))
        return gif.n_frames, gif.size, delays, frames


def before(w) -> tuple:
    return (w.studio.state, w.studio.can_undo, w.studio.is_modified, w.temperature_spin.value(), w.windowTitle())


def test_a_gif_of_the_weights_as_the_temperature_goes_from_0_2_to_5(window, monkeypatch, tmp_path, qtbot):
    w = window
    start = before(w)
    hover(w.temperature_spin)  # the control under the pointer comes first, its range proposed
    target = tmp_path / "weights.gif"
    answer = Answer(lambda controls: AnimationRequest(controls[0], controls[0].start, controls[0].stop, 12,
                                                      Timing(fps=10, hold=0, loop=True), target))
    monkeypatch.setattr(animation_dialog, "ask", answer)
    export = w.animation.export_dialog()
    assert export is not None and export.wait(180), "the animation did not end"
    assert export.result[0], export.result[1]
    title, controls, _ = answer.asked[0]
    assert title == "Attention"
    assert (controls[0].key, controls[0].start, controls[0].stop) == ("temperature", 0.2, 5.0)
    count, size, delays, frames = decode_gif(target)
    assert count == 12
    assert all(f.shape == frames[0].shape for f in frames) and size == (frames[0].shape[1], frames[0].shape[0])
    assert size == export.source.sweep.pixel_size() and size[0] > 600
    assert delays == [100] * 12  # 10 frames a second
    assert not np.array_equal(frames[0], frames[-1])  # the weights flatten
    assert before(w) == start  # the window's value, document and Undo as they were
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weights.gif"]  # no temporary left


def test_the_colour_scales_are_the_widest_over_the_animation(window):
    control = next(c for c in toy_controls(window.studio.state) if c.key == "temperature")
    values = control.values(0.2, 5.0, 6)
    maker = FrameMaker(window, "heatmaps", control, values)
    try:
        for i in range(len(values)):
            maker.prepare(i)
        # The logits' levels at T = 0.2 are the widest: every frame is drawn with them.
        studio = Studio(window.studio.state.replace(temperature=0.2))
        logits = studio.result.logits[0]
        assert maker.levels["stages:logits"][1] >= np.abs(logits[np.isfinite(logits)]).max()
        image = maker.image(len(values) - 1)  # the last frame, T = 5
        assert tuple(maker.view.stages["logits"].levels) == maker.levels["stages:logits"]
        assert tuple(maker.view.stages["weights"].levels) == (0.0, 1.0)
        assert image.width() > 0
        assert "temperature = 5" in maker.title(len(values) - 1)
    finally:
        maker.close()


def test_cancel_midway_writes_nothing_and_keeps_the_value(window, monkeypatch, tmp_path, qtbot):
    w = window
    start = before(w)
    hover(w.temperature_spin)
    target = tmp_path / "cancelled.gif"
    monkeypatch.setattr(animation_dialog, "ask", Answer(
        lambda controls: AnimationRequest(controls[0], 0.2, 5.0, 40, Timing(10, 0, True), target)))
    export = w.animation.export_dialog()
    qtbot.waitUntil(lambda: export.drawn >= 3, timeout=120_000)
    assert export.dialog.isVisible() and export.dialog.value() > 0
    button = next(b for b in export.dialog.findChildren(QtWidgets.QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(button, QtCore.Qt.LeftButton)  # the progress dialog's Cancel button
    assert export.wait(60)
    assert export.result == (False, "Cancelled: nothing was written")
    assert list(tmp_path.iterdir()) == []
    assert before(w) == start


def test_a_range_outside_the_limits_or_an_unwritable_path_is_said_and_nothing_written(window, monkeypatch,
                                                                                           tmp_path):
    w = window
    hover(w.temperature_spin)
    for start, path, said in ((0.0001, tmp_path / "low.gif", "between 0.001 and 1000"),
                              (0.2, tmp_path / "missing" / "x.gif", "does not exist"),
                              (0.2, tmp_path / "x.txt", "is written as")):
        monkeypatch.setattr(animation_dialog, "ask", Answer(
            lambda controls, start=start, path=path: AnimationRequest(controls[0], start, 5.0, 10, Timing(), path)))
        assert w.animation.export_dialog() is None
        assert said in w.message_label.text(), w.message_label.text()
    monkeypatch.setattr(animation_dialog, "ask", Answer(
        lambda controls: AnimationRequest(controls[0], 0.2, 5.0, 10, Timing(fps=55), tmp_path / "fast.gif")))
    assert w.animation.export_dialog() is None
    assert "a GIF plays at most 50 frames a second" in w.message_label.text()
    assert list(tmp_path.iterdir()) == []


def test_a_cell_of_w_q_under_the_pointer_is_swept_and_kept(window, monkeypatch, tmp_path):
    w = window
    w.studio.update(projections=True)  # the journey example opens with Q = K = V = X
    table = w.numbers.tables["w_q"]
    w.numbers.table_tabs.setCurrentWidget(table)
    settle(w)
    rect = table.visualRect(table.model().index(1, 2))
    QtWidgets.QApplication.sendEvent(table.viewport(), QtGui.QMouseEvent(
        QtCore.QEvent.MouseMove, QtCore.QPointF(rect.center()), QtCore.QPointF(table.viewport().mapToGlobal(rect.center())),
        QtCore.Qt.NoButton, QtCore.Qt.NoButton, QtCore.Qt.NoModifier))
    start, undo_label = before(w), w.studio.undo_label
    target = tmp_path / "cell.gif"
    answer = Answer(lambda controls: AnimationRequest(controls[0], -1.0, 1.0, 5, Timing(5, 0, False), target))
    monkeypatch.setattr(animation_dialog, "ask", answer)
    export = w.animation.export_dialog()
    assert export.wait(120) and export.result[0], export.result
    control = answer.asked[0][1][0]
    assert control.key == "cell:w_q:1:2" and control.label == "W_Q[2, 3]"
    assert decode_gif(target)[0] == 5
    assert before(w) == start and w.studio.undo_label == undo_label


def test_a_training_panel_exports_an_animation_of_its_run(window, monkeypatch, tmp_path):
    w = window
    panel = w.training.open("scaling")
    panel.apply_settings({"d_k": 4, "speed": 0})
    for _ in range(20):
        panel.single_step()
        assert panel.runner.wait_idle()
        QtWidgets.QApplication.processEvents()
    assert panel.runner.snapshot().steps == 20
    names = [a.text() for a in panel.export_button.menu().actions()]
    assert "Animation of this run…" in names
    target = tmp_path / "run.gif"
    answer = Answer(lambda controls: AnimationRequest(controls[0], 0, 20, 11, Timing(4, 0, True), target))
    monkeypatch.setattr(animation_dialog, "ask", answer)
    export = w.animation.export_dialog()  # File → Export animation… on the Training tab: the panel's own
    assert export is not None and export.wait(180) and export.result[0], export and export.result
    control = answer.asked[0][1][0]
    assert (control.key, control.low, control.high) == ("steps", 0, 20)
    count, size, delays, frames = decode_gif(target)
    assert count == 11 and delays == [250] * 11
    assert not np.array_equal(frames[1], frames[-1])  # the curves draw themselves
    assert panel.runner.snapshot().steps == 20  # the run is where it was


def test_the_dialog_proposes_the_range_and_refuses_a_bad_one(qtbot, tmp_path):
    from attn_studio.state import StudioState

    controls = toy_controls(StudioState())
    dialog = AnimationDialog("Attention", controls, tmp_path / "heatmaps-temperature.gif")
    qtbot.addWidget(dialog)
    dialog.resize(dialog.sizeHint().expandedTo(QtCore.QSize(560, 0)))
    assert (dialog.from_edit.text(), dialog.to_edit.text(), dialog.frames_spin.value()) == ("0.2", "5", 60)
    dialog.from_edit.setText("abc")
    dialog.accept()
    assert dialog.request is None and "must be a number" in dialog.message.text()
    dialog.from_edit.setText("2000")
    dialog.accept()
    assert dialog.request is None and "between 0.001 and 1000" in dialog.message.text()
    dialog.control_combo.setCurrentIndex([c.key for c in controls].index("causal"))
    assert (dialog.from_edit.text(), dialog.to_edit.text(), dialog.frames_spin.value()) == ("off", "on", 2)
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".mp4"))
    assert dialog.path_edit.text().endswith("heatmaps-temperature.mp4")
    dialog.accept()
    assert dialog.request is not None and dialog.request.control.key == "causal"
    assert (dialog.request.start, dialog.request.stop) == (0.0, 1.0)


def test_a_trained_models_heatmaps_over_its_layers(window, monkeypatch, tmp_path, qtbot, minilm):
    from attn_studio.trained import TrainedStudio

    w = window
    w.trained.room.set_studio(TrainedStudio(minilm))
    qtbot.waitUntil(lambda: w.studio.is_trained and not w.drawing(), timeout=60_000)
    try:
        settle(w)
        start = (w.studio.state, w.studio.can_undo)
        hover(w.findChild(QtWidgets.QSpinBox, "layerSpin"))
        target = tmp_path / "layers.gif"
        answer = Answer(lambda controls: AnimationRequest(controls[0], 1, minilm.layers, minilm.layers,
                                                          Timing(2, 0, True), target))
        monkeypatch.setattr(animation_dialog, "ask", answer)
        export = w.animation.export_dialog()
        assert export is not None and export.wait(300) and export.result[0], export and export.result
        control = answer.asked[0][1][0]
        assert (control.key, control.high) == ("layer", minilm.layers)
        count, _, delays, frames = decode_gif(target)
        assert count == minilm.layers and delays == [500] * count
        assert not np.array_equal(frames[0], frames[-1])
        assert (w.studio.state, w.studio.can_undo) == start
    finally:
        w.trained.room.use_toy()
        settle(w)


def test_the_control_last_under_the_pointer_is_proposed_first(window):
    from attn_studio.gui.files.animation_actions import view_controls

    w = window
    for widget, panel, key, proposed in ((w.causal_check, "heatmaps", "causal", (0, 1, 2)),
                                         (w.query_combo, "heatmaps", "query", (1, 6, 6)),
                                         (w.pipeline_view, "steps", "step", (1, 9, 9)),
                                         (w.d_model_spin, "compare", "d_model", (1, 16, 16))):
        hover(widget)
        first = view_controls(w, panel, w.animation.pointed.last)[0]
        assert (first.key, (first.start, first.stop, first.frames)) == (key, proposed)


def test_an_mp4_of_the_causal_mask_switching_on(window, monkeypatch, tmp_path):
    import imageio_ffmpeg

    w = window
    start = before(w)
    hover(w.causal_check)
    target = tmp_path / "causal.mp4"
    monkeypatch.setattr(animation_dialog, "ask", Answer(
        lambda controls: AnimationRequest(controls[0], 0, 1, 4, Timing(fps=2, hold=0, loop=True), target)))
    export = w.animation.export_dialog()
    assert export is not None and export.wait(180) and export.result[0], export and export.result
    reader = imageio_ffmpeg.read_frames(str(target))
    meta = next(reader)
    frames = list(reader)
    width, height = meta["size"]
    assert len(frames) == 4 and meta["fps"] == 2
    assert width % 2 == 0 and height % 2 == 0
    assert before(w) == start and not w.causal_check.isChecked()

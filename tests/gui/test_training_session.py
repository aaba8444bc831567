"""The training lab's settings in the window's session files: Save writes them, Open and recovery
bring them back, a bad "training" section is refused and changes nothing, an older file without
one opens and leaves the lab as it was."""

from __future__ import annotations

import json

import pytest

from attn_studio.gui import MainWindow
from attn_studio.session import read_session_file, write_session
from attn_studio.state import StudioState
from gui_helpers import settle
from window_reset import quiet, reset_document


@pytest.fixture(scope="module")
def _start(_module_window, opening_document):
    return {**opening_document, "lab": _module_window[0].training.settings()}


@pytest.fixture
def window(_module_window, _start, qtbot, shared_window):
    # One window serves the module: its state undone (the shared reset), then the lab's settings, the
    # document (file, example, recent files, message, title) and the recovery file put back. Checked.
    w = shared_window
    quiet(w, qtbot)
    w.files.autosave_timer.stop()  # a test's edit may have started it
    if w.training.settings() != _start["lab"]:
        w.training.apply_settings(_start["lab"])  # each panel's run starts again from them
    reset_document(w, _start)
    w.document.recovery.clear()
    settle(w)
    assert w.training.settings() == _start["lab"]
    if w.training.built:
        assert lab_as_shown(w) == _start["lab"]
        assert not any(panel.play_button.isChecked() for panel in w.training.tab.panels.values())
    assert not w.recovery.path.exists() and not w.files.autosave_timer.isActive()
    yield w
    quiet(w, qtbot)


def choose(combo, value) -> None:
    index = combo.findData(value)
    assert index >= 0, f"{value!r} is not offered"
    combo.setCurrentIndex(index)


def lab_as_shown(window) -> dict:
    """What the lab's widgets show (not what its settings() say)."""
    tab = window.training.tab
    shown = {"panel": next(name for name, panel in tab.panels.items() if tab.tabs.currentWidget() is panel)}
    for name, panel in tab.panels.items():
        shown[name] = {"seed": panel.seed_spin.value(), "lr": panel.lr_combo.currentData(),
                       "speed": panel.speed_combo.currentData()}
    shown["scaling"]["d_k"] = tab.panels["scaling"].d_k_combo.currentData()
    return shown


def set_lab(window, *, seed: int, lr: float, d_k: int, seq2seq_seed: int, panel: str) -> None:
    """Change the lab through its widgets, as a person does."""
    tab = window.training.tab
    scaling = tab.panels["scaling"]
    scaling.seed_spin.setValue(seed)
    choose(scaling.lr_combo, lr)
    choose(scaling.d_k_combo, d_k)
    choose(scaling.speed_combo, 0)
    tab.panels["seq2seq"].seed_spin.setValue(seq2seq_seed)
    window.training.open(panel)


def test_save_writes_the_labs_settings_and_open_brings_them_back(window, qtbot, tmp_path):
    set_lab(window, seed=7, lr=0.01, d_k=16, seq2seq_seed=3, panel="induction")
    expected = lab_as_shown(window)
    assert expected["scaling"] == {"seed": 7, "lr": 0.01, "speed": 0, "d_k": 16}
    path = tmp_path / "lab.attn.json"
    assert window.save_to(path)
    assert json.loads(path.read_text(encoding="utf-8"))["training"] == expected
    assert not window.isWindowModified()

    # A new seed, saved at once: the file has it (changing the lab is not an edit of the model).
    window.training.tab.panels["scaling"].seed_spin.setValue(8)
    assert window.save()
    assert read_session_file(path).training["scaling"]["seed"] == 8

    # Changed again, then the file opened: the panels show the file's settings, their runs rebuilt.
    set_lab(window, seed=1, lr=0.001, d_k=64, seq2seq_seed=0, panel="scaling")
    assert window.open_file(path)
    assert lab_as_shown(window) == {**expected, "scaling": {**expected["scaling"], "seed": 8}}
    scaling = window.training.tab.panels["scaling"]
    assert scaling.runner.wait_idle()
    exp = scaling.runner.snapshot().exp
    assert (exp.d_k, exp.seed, exp.lr) == (16, 8, 0.01) and not scaling.play_button.isChecked()

    # A fresh window whose lab has never been shown: opening the file sets it up as saved.
    other = MainWindow(preset="bank")
    qtbot.addWidget(other)
    assert not other.training.built
    assert other.open_file(path)
    assert other.training.settings()["scaling"]["seed"] == 8
    assert lab_as_shown(other) == {**expected, "scaling": {**expected["scaling"], "seed": 8}}
    other.training.close()


def test_a_bad_training_section_is_refused_and_an_old_file_opens(window, tmp_path):
    set_lab(window, seed=5, lr=0.003, d_k=32, seq2seq_seed=2, panel="seq2seq")
    before_lab, before_state, before_path = lab_as_shown(window), window.studio.state, window.current_path

    bad = tmp_path / "bad.attn.json"
    data = StudioState(sentence="never opened", causal=True).to_dict()
    data["training"] = {"panel": "scaling", "scaling": {"seed": 1, "d_k": 5}}
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert not window.open_file(bad)
    message = window.message_label.text()
    assert "bad.attn.json" in message and "d_k must be one of" in message
    settle(window)
    assert window.studio.state is before_state and window.current_path == before_path
    assert lab_as_shown(window) == before_lab

    old = tmp_path / "old.attn.json"
    write_session(old, StudioState(sentence="written before the lab had a section", d_model=4))
    assert "training" not in json.loads(old.read_text(encoding="utf-8"))
    assert window.open_file(old)
    assert window.studio.state.sentence == "written before the lab had a section"
    assert lab_as_shown(window) == before_lab


def test_autosave_keeps_the_labs_settings_and_recovery_brings_them_back(window, tmp_path):
    set_lab(window, seed=11, lr=0.03, d_k=128, seq2seq_seed=4, panel="seq2seq")
    expected = lab_as_shown(window)
    window.studio.update(causal=True)  # unsaved work: what autosave writes
    assert window.document.autosave() is None
    assert read_session_file(window.recovery.path).training == expected
    copy = window.recovery.path.with_name("crashed.attn.json")
    copy.write_bytes(window.recovery.path.read_bytes())

    set_lab(window, seed=0, lr=0.001, d_k=4, seq2seq_seed=0, panel="scaling")
    assert window.document.restore(copy) is None
    assert lab_as_shown(window) == expected and window.studio.state.causal
    assert not copy.exists()

"""The Model panel's binding table: every state field reaches its widget and back; only visible views draw."""

from __future__ import annotations

import pytest
from PySide6 import QtWidgets

from attn_studio.gui.editing.controls import CHECK, UPDATE, Binding, ControlsPanel
from attn_studio.limits import TEMPERATURE_RANGE
from gui_helpers import find, settle

# (objectName, widget class, a new state value, how a person sets it)
EDITS = [
    ("sentenceEdit", QtWidgets.QLineEdit, "the cat sat", lambda w, v: (w.setText(v), w.textEdited.emit(v))),
    ("targetSentenceEdit", QtWidgets.QLineEdit, "le chat", lambda w, v: (w.setText(v), w.textEdited.emit(v))),
    ("dModelSpin", QtWidgets.QSpinBox, 6, lambda w, v: w.setValue(v)),
    ("headsSpin", QtWidgets.QSpinBox, 3, lambda w, v: w.setValue(v)),
    ("dHeadSpin", QtWidgets.QSpinBox, 5, lambda w, v: w.setValue(v)),
    ("seedSpin", QtWidgets.QSpinBox, 1234, lambda w, v: w.setValue(v)),
    ("causalCheck", QtWidgets.QCheckBox, True, lambda w, v: w.setChecked(v)),
    ("positionalCheck", QtWidgets.QCheckBox, True, lambda w, v: w.setChecked(v)),
    ("temperatureSpin", QtWidgets.QDoubleSpinBox, 2.5, lambda w, v: w.setValue(v)),
    ("softmaxCombo", QtWidgets.QComboBox, "naive",
     lambda w, v: (w.setCurrentIndex(w.findData(v)), w.activated.emit(w.findData(v)))),
    ("scoreCombo", QtWidgets.QComboBox, "additive",
     lambda w, v: (w.setCurrentIndex(w.findData(v)), w.activated.emit(w.findData(v)))),
]


@pytest.fixture
def window(shared_window):
    """One window for the module: each test changes only the Studio's state (undone after it),
    a dock it shows again, or a view's render it puts back."""
    return shared_window


def _field(window, name):
    return next(b.field for b in window.controls.bindings if b.widget.objectName() == name)


def _shown(widget):
    if isinstance(widget, QtWidgets.QLineEdit):
        return widget.text()
    if isinstance(widget, QtWidgets.QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QtWidgets.QComboBox):
        return widget.currentData()
    return widget.value()


@pytest.mark.parametrize("name, cls, value, set_widget", EDITS, ids=[e[0] for e in EDITS])
def test_a_widget_edit_reaches_the_state(window, name, cls, value, set_widget):
    set_widget(find(window, cls, name), value)
    settle(window)
    assert getattr(window.studio.state, _field(window, name)) == value


@pytest.mark.parametrize("name, cls, value, set_widget", EDITS, ids=[e[0] for e in EDITS])
def test_a_state_change_reaches_the_widget_and_undo_brings_it_back(window, name, cls, value, set_widget):
    widget = find(window, cls, name)
    field = _field(window, name)
    old = getattr(window.studio.state, field)
    window.studio.update(**{field: value})
    settle(window)
    assert _shown(widget) == value
    window.studio.undo()
    settle(window)
    assert _shown(widget) == old


def test_every_bound_field_is_a_state_field_and_each_widget_is_bound_once(window):
    fields = [b.field for b in window.controls.bindings]
    assert len(fields) == len(set(fields))
    for field in fields:
        assert hasattr(window.studio.state, field), field
    assert {"sentence", "d_model", "temperature", "head_index", "query_index"} <= set(fields)


def test_temperature_spin_offers_the_states_range(window):
    spin = find(window, QtWidgets.QDoubleSpinBox, "temperatureSpin")
    assert (spin.minimum(), spin.maximum()) == TEMPERATURE_RANGE
    spin.setValue(TEMPERATURE_RANGE[0])
    settle(window)
    assert window.studio.state.temperature == TEMPERATURE_RANGE[0]
    assert not window.message_label.isVisible()


def test_adding_a_control_is_one_row(window):
    panel = ControlsPanel(window.studio, window.show_message, window.clear_message)
    box = QtWidgets.QCheckBox("mask the future")
    box.setObjectName("extraCausalCheck")
    panel.add_binding("", Binding("causal", box, CHECK, UPDATE))
    panel.sync()
    assert box.isChecked() == window.studio.state.causal
    box.setChecked(not box.isChecked())
    assert window.studio.state.causal == box.isChecked()
    assert panel.extra_causal_check is box


def test_hidden_plot_dock_draws_only_when_shown(window):
    plot, dock = window.variance_plot, window.findChild(QtWidgets.QDockWidget, "varianceDock")
    label = plot.model_label
    dock.hide()
    settle(window)
    window.studio.update(d_model=7, d_head=7)  # d_k = 7 with projections or without
    settle(window)
    assert window.studio.state.d_k == 7
    assert "d_k = 7" not in label.toPlainText()  # hidden: not drawn
    dock.show()
    settle(window)
    assert "d_k = 7" in label.toPlainText()


def test_hidden_tab_draws_when_shown(window):
    tabs = window.view_tabs
    tabs.setCurrentWidget(window.heatmap_view)
    settle(window)
    drawn = []
    original = window.positional_view.render
    window.positional_view.render = lambda: (drawn.append(1), original())[1]
    try:
        window.studio.update(causal=not window.studio.state.causal)
        settle(window)
        assert drawn == []
        tabs.setCurrentWidget(window.positional_view)
        settle(window)
        assert drawn == [1]
    finally:
        del window.positional_view.render  # the shared window draws with its own method again

"""The Heads tab: the Head Lab of a trained model in the window.

- the report card (one sortable row per layer and head) and a grid of the
  heads' roles; clicking a row selects that head in the trained studio;
- find the head: two words (or a click on a cell of the selected head's
  heatmap) rank every head by how much the query sends to the key;
- the selected head as weights α or as norms ‖α f(x)‖ (Kobayashi et al. 2020);
- importance by ablation, computed off the GUI thread with progress and Cancel,
  marked stale after any edit of the model or the sentence;
- raw attention beside rollout and flow, on one colour scale;
- what silencing or scaling a head changed, in words and as drift per layer;
- the head detector (`detecting`): previous-token, duplicate-token and induction scores in the
  report card, the kinds it names marked in the grid of roles, "Detect" on random tokens twice.

The tab imports no other wing: the window hands it a callback that selects a
head (``select(layer, head[, query])``, 0-based), one that shows the Attention view and
one that runs work on the model's worker thread (``submit(work, on_result, on_error)``),
and calls :meth:`HeadsTab.set_studio` with the trained studio (or None).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...pretrained.errors import ModelError
from ...pretrained.head_table import HeadTable, parse_item, table_csv
from ...pretrained.heads import (
    attention_flow,
    find_heads,
    head_importance,
    head_report,
    norm_attention,
)
from ...formatting import format_importance, format_number
from ...safe_files import write_atomic
from .. import presentation
from ..files import export
from .pages import NORM_NOTE, WEIGHT_NOTE, HeadsPages  # noqa: F401 (the notes: still importable from here)
from .readout import head_name, silencing_readout  # noqa: F401 (importable from here)
from .detecting import DetectPart
from .report_card import IMPORTANCE_COLUMN, size_columns
from .worker import HeadJob



# Above this many multiply-adds (measures_cost) the report card and norm attention of a new run are
# measured off the GUI thread: MiniLM at about 32 tokens stays under it (some 30 ms, drawn in the
# same turn); a 480-word sentence is near 40x over it (about a second, measured in the background).
GUI_THREAD_MEASURES = 1_000_000


def measures_cost(run) -> int:
    """About how much work the report card and norm attention of ``run`` are (layers x heads x T x (T + d_model))."""
    layers, heads, t, _ = run.attentions.shape
    return int(layers * heads * t * (t + run.hidden_states.shape[-1]))


class HeadsTab(DetectPart, HeadsPages, QtWidgets.QWidget):
    """The Head Lab's widgets (see the module docstring). ``select(layer, head[, query])`` selects a
    head (and a query token) in the trained studio; ``show_attention()`` brings the Attention view forward;
    ``submit(work, on_result, on_error)`` runs the detector's pass on the model's worker (without it, on
    the tab's own job)."""

    message = QtCore.Signal(str)

    def __init__(self, select: Callable[..., object], show_attention: Callable[[], object] | None = None,
                 parent=None, submit: Callable[..., object] | None = None):
        super().__init__(parent)
        self.setObjectName("headsTab")
        self._select, self._show_attention = select, show_attention
        self._submit = submit
        self.studio = None
        self._unsubscribe = None
        self._run = None            # the run the report was drawn for
        self._dirty = False
        self._norm = None
        self.importance: np.ndarray | None = None
        self._importance_key = None
        self.found: list | None = None
        self._found_words = ("", "")
        self.flow: np.ndarray | None = None
        self._flow_key = None

        self.job = HeadJob(self)          # importance
        self.flow_job = HeadJob(self)     # attention flow
        self.measures_job = HeadJob(self)  # a long sentence's report card and norm attention
        self.detect_job = HeadJob(self)    # the detector's pass when the window gives no model worker
        self._measuring = None
        self._build()
        self.job.progress.connect(self._on_progress)
        self.job.finished.connect(self._on_importance)
        self.job.failed.connect(lambda tag, text: self._importance_done(f"Importance failed: {text}"))
        self.job.cancelled.connect(lambda tag: self._importance_done("Cancelled: the importance shown is the last "
                                                                     "complete one, if any."))
        self.job.running.connect(self._on_running)
        self.flow_job.finished.connect(self._on_flow)
        self.flow_job.failed.connect(lambda tag, text: self.flow_status.setText(f"Flow failed: {text}"))
        self.flow_job.running.connect(lambda on: self.flow_button.setEnabled(not on))
        self.measures_job.finished.connect(self._on_measures)
        self.detect_job.finished.connect(self._on_detect_job)
        self.detect_job.failed.connect(self._on_detect_job_failed)

    def set_studio(self, studio) -> None:
        """Show ``studio`` (a ``TrainedStudio``), or nothing (None). A running sweep is cancelled."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.job.cancel(quiet=True)
        self.flow_job.cancel(quiet=True)
        self.measures_job.cancel(quiet=True)
        self.detect_job.cancel(quiet=True)
        self._measuring = None
        self.studio = studio
        self._detect_reset()
        self._run = None
        self.importance, self._importance_key = None, None
        self.flow, self._flow_key = None, None
        self.found = None
        self.found_table.setRowCount(0)
        if studio is not None:
            self._unsubscribe = studio.subscribe(lambda change: self._changed())
        self.importance_status.setText("Not computed yet: it silences every head once.")
        self.importance_bar.setValue(0)
        if studio is not None and not self.isVisible():
            # Drawn when shown: the report card and the maps of a just-loaded model cost the
            # window a tenth of a second it needs to show the model.
            self._dirty = True
        else:
            self.refresh(force=True)

    def _changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._dirty = True

    def set_digits(self, digits: int) -> None:
        """Write the readouts again at the precision setting (``presentation.set_digits``; the report
        card and the matrices have their own)."""
        if self.studio is None:
            return
        self._run = None  # the found heads and the readout are written again with the run
        self._changed()
        self._refresh_importance()

    def showEvent(self, event):
        super().showEvent(event)
        if self._dirty:
            self.refresh()
        self.apportion()

    @staticmethod
    def _key(state):
        return (state.sentence, state.edits)

    def refresh(self, force: bool = False) -> None:
        """Redraw from the studio's computed numbers (cheap when only the selection moved)."""
        self._dirty = False
        studio = self.studio
        if studio is None:
            self.report_model.set_report(None)
            self.report_model.set_detection(None)
            self.role_grid.set_matrix(None, [], [], note="No trained model.")
            self.detect_map.set_matrix(None, [], [], note="No trained model.")
            self.head_map.set_matrix(None, [], [], note="No trained model.")
            self.importance_map.set_matrix(None, [], [], note="No trained model.")
            for canvas in (self.raw_map, self.rollout_map, self.flow_map):
                canvas.set_matrix(None, [], [])
            self.readout.setText("")
            self.drift.show_drift(None)
            return
        computed = studio.computed
        run = computed.run
        if force or run is not self._run:
            if measures_cost(run) <= GUI_THREAD_MEASURES:
                self._show_run(run, head_report(run), norm_attention(run))
            else:
                # A long sentence: the report card and norm attention take up to a second; they are
                # measured off the GUI thread and the tab is drawn when they come back (_on_measures).
                if self._measuring is not run:
                    self._measuring = run
                    self.measures_job.start(lambda progress, cancel: (head_report(run), norm_attention(run)), run)
                return
        self._show_selection()

    def _on_measures(self, run, measured) -> None:
        self._measuring = None
        if self.studio is None or self.studio.computed.run is not run:
            return  # a newer run is measured or shown already
        self._show_run(run, *measured)
        self._show_selection()

    def measuring(self) -> bool:
        """True while the report card and norm attention of a long sentence are measured off the GUI thread."""
        return self.measures_job.is_running()

    def _size_columns(self) -> None:
        size_columns(self.table, self.report_model)

    def _show_run(self, run, report, norm) -> None:
        computed = self.studio.computed
        self._run = run
        sized = self.report_model.report is not None
        self.report_model.set_report(report)
        if not sized:
            self._size_columns()
        self._norm = norm
        layers = report.role.shape[0]
        self._detect_follow(run)  # draws the grid of roles with the detector's marks
        self.flow_layer.setRange(1, layers)
        if self.flow_layer.value() == 1 and layers > 1 and self._flow_key is None:
            self.flow_layer.setValue(layers)
        self.readout.setText(silencing_readout(computed, self._found_query(run)))
        self.drift.show_drift(computed.drift, edits=computed.state.edits.edit_names())
        self._draw_flow()
        self._refresh_importance()
        if self.found is not None:
            self.find(*self._found_words, open_top=False)

    def _show_selection(self) -> None:
        computed = self.studio.computed
        state = computed.state
        self._draw_head()
        self._draw_detect_head()
        self.role_grid.set_highlight(state.layer_index, state.head_index)
        self.importance_map.set_highlight(state.layer_index, state.head_index)
        self._select_row(state.layer_index, state.head_index)

    # -- the report card -------------------------------------------------------------------
    def _select_row(self, layer: int, head: int) -> None:
        model = self.report_model
        if model.report is None:
            return
        source = model.index(layer * model.report.role.shape[1] + head, 0)
        index = self.proxy.mapFromSource(source)
        if self.table.currentIndex().row() != index.row():
            blocker = QtCore.QSignalBlocker(self.table.selectionModel())
            self.table.selectRow(index.row())
            del blocker

    def _head_at(self, index) -> tuple[int, int]:
        return self.report_model.head_of_row(self.proxy.mapToSource(index).row())

    def _on_row_clicked(self, index) -> None:
        self.open_head(*self._head_at(index))

    def _on_row_double_clicked(self, index) -> None:
        self.open_head(*self._head_at(index))
        if self._show_attention is not None:
            self._show_attention()

    def open_head(self, layer: int, head: int, query: int | None = None) -> None:
        """Select head ``head`` of layer ``layer`` (0-based) in the trained studio, and the query token
        ``query`` when given."""
        if query is None:
            self._select(int(layer), int(head))
        else:
            self._select(int(layer), int(head), int(query))

    # -- find the head ---------------------------------------------------------------------
    def find(self, query: str, key: str, open_top: bool = True) -> bool:
        """Rank every head by the share of ``query``'s attention that goes to ``key`` and open the first.

        A word not in the sentence (or a bad ``#N``) is said in the message line and nothing else changes.
        """
        if self.studio is None:
            self.find_message.setText("Choose a trained model first.")
            return False
        run = self.studio.computed.run
        try:
            found = find_heads(run, parse_item(query), parse_item(key))
        except ModelError as exc:
            self.find_message.setText(f"<span style='color:#c0392b'>{exc}</span>")
            return False
        self.found, self._found_words = found, (query, key)
        role = self.report_model.report.role if self.report_model.report is not None else head_report(run).role
        shown = found[:24]
        self.found_table.setRowCount(len(shown))
        for row, (layer, head, weight) in enumerate(shown):
            for col, text in enumerate((head_name(layer, head), format_number(weight, presentation.digits()), str(role[layer, head]))):
                item = QtWidgets.QTableWidgetItem(text)
                item.setData(QtCore.Qt.UserRole, (layer, head))
                self.found_table.setItem(row, col, item)
        layer, head, weight = found[0]
        self.find_message.setText(f"'{query}' → '{key}': head {head_name(layer, head)} sends {weight:.0%} of "
                                  f"'{query}''s attention to '{key}' (layer.head, from 1).")
        if open_top:
            self.found_table.selectRow(0)
            self.open_head(layer, head, self._found_query(run))
        return True

    def _found_query(self, run) -> int | None:
        # The readout follows the word of the last find ("it"), else the selected query.
        if self.found is None:
            return None
        try:
            item = parse_item(self._found_words[0])
            return item if isinstance(item, int) and item < len(run.tokens) else run.word_tokens(item)[0]
        except ModelError:
            return None

    def _on_found_clicked(self, row: int, col: int) -> None:
        item = self.found_table.item(row, 0)
        if item is not None:
            self.open_head(*item.data(QtCore.Qt.UserRole))

    def _token_item(self, index: int) -> str:
        run = self.studio.computed.run
        word = run.tokens[index]
        try:
            if word.isalnum() and run.word_tokens(word)[0] == index:
                return word
        except ModelError:
            pass
        return f"#{index}"

    def _on_head_cell(self, row: int, col: int) -> None:
        if self.studio is None:
            return
        query, key = self._token_item(row), self._token_item(col)
        self.query_edit.setText(query)
        self.key_edit.setText(key)
        self.find(query, key)

    def _draw_head(self) -> None:
        if self.studio is None or self._run is None:
            return
        state = self.studio.computed.state
        run = self._run
        layer, head = state.layer_index, state.head_index
        tokens = list(run.tokens)
        if self.norm_radio.isChecked():
            values = self._norm[layer, head]
            top = float(self._norm[layer].max())
            self.head_map.set_matrix(values, tokens, tokens, 0.0, top if top > 0 else 1.0,
                                     title=f"Head {head_name(layer, head)}: norm ‖α·f(x)‖ "
                                           f"(scale: 0 to the layer's largest)")
            self.norm_note.setText(NORM_NOTE)
        else:
            self.head_map.set_matrix(run.attentions[layer, head], tokens, tokens, 0.0, 1.0,
                                     title=f"Head {head_name(layer, head)}: weights α (scale 0 to 1)")
            self.norm_note.setText(WEIGHT_NOTE)
        self.head_map.set_highlight(state.query_index, None)

    # -- importance ------------------------------------------------------------------------
    def run_importance(self) -> None:
        """Ablate every head in the background (progress in the bar; Cancel stops it)."""
        if self.studio is None:
            return
        computed = self.studio.computed
        run, key = computed.run, self._key(computed.state)
        layers, heads = run.head_scale.shape
        self.importance_bar.setRange(0, layers * heads)
        self.importance_bar.setValue(0)
        self.importance_status.setText("Silencing each head in turn…")
        self.job.start(lambda progress, cancel: head_importance(run, progress, cancel=cancel), tag=key)

    def _on_running(self, on: bool) -> None:
        self.importance_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)

    def _on_progress(self, done: int, total: int) -> None:
        self.importance_bar.setMaximum(total)
        self.importance_bar.setValue(done)

    def _on_importance(self, key, importance) -> None:
        self.importance, self._importance_key = importance, key
        self._refresh_importance()
        self.table.resizeColumnToContents(IMPORTANCE_COLUMN)

    def _importance_done(self, text: str) -> None:
        self.importance_status.setText(text)
        self.importance_bar.setValue(0)

    def importance_stale(self) -> bool:
        """True when the importance shown was computed before the last edit of the model or sentence."""
        return (self.importance is not None and self.studio is not None
                and self._importance_key != self._key(self.studio.computed.state))

    def _refresh_importance(self) -> None:
        if self.importance is None:
            self.report_model.set_importance(None)
            self.importance_map.set_matrix(None, [], [], note="Run importance to see it here.")
            return
        stale = self.importance_stale()
        layers, heads = self.importance.shape
        top = float(self.importance.max())
        self.report_model.set_importance(self.importance, stale)
        self.importance_map.set_matrix(self.importance, [str(i + 1) for i in range(layers)],
                                       [str(i + 1) for i in range(heads)], 0.0, top if top > 0 else 1.0)
        self.importance_map.set_stale(stale)
        l, h = np.unravel_index(int(np.argmax(self.importance)), self.importance.shape)
        self.importance_status.setText(
            "Stale: the model or the sentence changed since; run again." if stale else
            f"Most important: head {head_name(l, h)} (1 − cosine {format_importance(top)}).")

    # -- flow ------------------------------------------------------------------------------
    def run_flow(self) -> None:
        """Compute attention flow for the whole model in the background, then draw it beside rollout."""
        if self.studio is None:
            return
        computed = self.studio.computed
        run, key = computed.run, self._key(computed.state)
        self.flow_status.setText("Computing attention flow…")
        self.flow_job.start(lambda progress, cancel: attention_flow(run), tag=key)

    def _on_flow(self, key, flow) -> None:
        self.flow, self._flow_key = flow, key
        self.flow_status.setText("Raw: one layer's attention, mean over its heads. Rollout and flow: the whole "
                                 "model. Rollout multiplies the layers' attention; flow asks how much can pass the "
                                 "narrowest cut. All three on one colour scale.")
        self._draw_flow()

    def _draw_flow(self) -> None:
        if self.studio is None:
            return
        computed = self.studio.computed
        tokens = list(computed.run.tokens)
        layer = min(self.flow_layer.value(), computed.mean_attention.shape[0]) - 1
        raw, rollout = computed.mean_attention[layer], computed.rollout[-1]
        flow = self.flow if self._flow_key == self._key(computed.state) else None
        top = max(float(raw.max()), float(rollout.max()), float(flow.max()) if flow is not None else 0.0)
        self.raw_map.set_matrix(raw, tokens, tokens, 0.0, top, title=f"Raw, layer {layer + 1}")
        self.rollout_map.set_matrix(rollout, tokens, tokens, 0.0, top)
        if flow is None:
            self.flow_map.set_matrix(None, [], [], note="Compute flow to see it here.")
        else:
            self.flow_map.set_matrix(flow, tokens, tokens, 0.0, top)

    # -- export ----------------------------------------------------------------------------
    def figure_widgets(self) -> dict:
        """The tab's figures by name: the selected head, importance, flow beside rollout, silencing, roles."""
        return {"head": self.head_map, "importance": self.importance_map, "flow": self.flow_panel,
                "silencing": self.drift, "roles": self.role_grid, "detect": self.detect_map}

    def export_figure(self, name: str, path) -> str:
        """Save figure ``name`` (see :meth:`figure_widgets`) as PNG, SVG or PDF by ``path``'s extension."""
        widget = self.figure_widgets()[name]
        title = None
        if self.studio is not None:
            s = self.studio.computed.state
            title = f"{s.sentence} — {self.studio.model.name}"
        return export.export_figure(export.Panel(widget, name=f"heads-{name}", title=title), path)

    def head_table(self) -> HeadTable | None:
        """The report card (with importance and the last find, when there are) as a ``HeadTable``."""
        if self.studio is None or self.report_model.report is None:
            return None
        run = self.studio.computed.run
        importance = None if self.importance_stale() else self.importance
        found = None if self.found is None else tuple(self.found)
        q, k = self._found_words if self.found is not None else (None, None)
        return HeadTable(run.model.name, tuple(run.tokens), self.report_model.report, importance, found, q, k,
                         self.detection)

    def export_csv(self, path) -> None:
        """Write the report card as CSV (atomically)."""
        table = self.head_table()
        if table is None:
            raise ModelError("no trained model: nothing to write")
        write_atomic(Path(path), table_csv(table).encode("utf-8"))

    def _ask_figure(self, name: str) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export figure", f"heads-{name}.png",
                                                        "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)")
        if path:
            try:
                self.export_figure(name, path)
            except (OSError, ValueError) as exc:
                self.message.emit(f"Could not export: {exc}")
            else:
                self.message.emit(f"Exported {path}")

    def _ask_csv(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save report card", "heads.csv", "CSV (*.csv)")
        if path:
            try:
                self.export_csv(path)
            except (OSError, ValueError) as exc:
                self.message.emit(f"Could not save: {exc}")
            else:
                self.message.emit(f"Saved {path}")

    def shutdown(self) -> None:
        """Stop listening and wait for the background measures (the window closing)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.job.wait()
        self.flow_job.wait()
        self.measures_job.wait()
        self.detect_job.wait()

"""The trained-model room: the model panel, the model view, the drift plot and the meaning view,
driven by one :class:`~attn_studio.trained.TrainedStudio` whose heavy work runs off the GUI thread.

A window adds it in a few lines::

    room = TrainedRoom(window)
    layout.addWidget(room.panel)                       # the controls, in the Model panel
    tabs.addTab(room.model_view, "Model view")         # and the three views wherever they fit
    room.studioChanged.connect(window.on_trained_studio)   # None: back to the toy model

Every change the lecturer asks for goes ``prepare`` (GUI thread, cheap) →
``compute`` (the worker thread) → ``install`` (GUI thread; a stale result is
refused by the studio and dropped). Changes asked for while a computation
runs are merged, so a head silenced just before a keystroke is not lost when
the keystroke's computation supersedes the silencing one.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Callable

import numpy as np
from PySide6 import QtCore

from ...pretrained import DEFAULT_MODEL, Edits, load_pretrained
from ...trained import SELECTION_FIELDS, TrainedStudio, is_default_model
from ..files import export
from .model_panel import ModelPanel
from .model_worker import BUSY_WORDS, INTACT, LOAD, MEASURE, RUN, ModelWorker

# A model pass of a sentence takes a few tens of milliseconds: the moving bar shows only when one
# runs longer than this (a bar flashing for every keystroke relaid the Model panel twice an edit).
# A load shows it at once.
BUSY_BAR_DELAY_MS = 400
INTACT_WAIT_MS = 30  # how often a wait for the window to finish drawing an edit looks again
EARLY_WAIT_S = 0.25  # the longest a pass waits for the window to draw its selected layer (see _shown_early)
from ..views.drift_plot import DriftPlot
from ..views.meaning_view import MeaningData, MeaningView
from ..views.model_view import ModelView, ModelViewData


def _open_studio(path, sentence: str | None) -> TrainedStudio:
    """Load a model and compute its first state (runs on the worker thread)."""
    studio = TrainedStudio(load_pretrained(path))
    if sentence:
        try:
            studio.update(sentence=sentence)
        except ValueError:
            pass  # e.g. longer than the model's positions: the model's own example sentence stays
    return studio


class TrainedRoom(QtCore.QObject):
    """Owns the trained-model widgets and the studio they show; see the module docstring.

    Signals: ``studioChanged(object)`` with the new :class:`TrainedStudio`, or
    None when the lecturer went back to the toy model; ``message(str)`` a
    line for the status bar (also shown in the panel).
    """

    studioChanged = QtCore.Signal(object)
    message = QtCore.Signal(str)
    # A change is being computed: the state it brings (views lay themselves out for its tokens meanwhile);
    # None once nothing more is computing (a view laid out for a change that never came goes back).
    coming = QtCore.Signal(object)
    _early = QtCore.Signal(object, object, object)  # from the worker: (pending, result, drawn), see _on_early

    def __init__(self, parent=None, models=None):
        super().__init__(parent)
        self.studio: TrainedStudio | None = None
        self.worker = ModelWorker(self)
        self.panel = ModelPanel(models=models)
        self.model_view = ModelView()
        self.drift_plot = DriftPlot()
        self.meaning_view = MeaningView()
        self._wanted: dict = {}      # changes asked for and not installed yet
        self._unsubscribe = None
        self._shown = None           # the Computed drawn last
        self._deferred: dict = {}    # view name -> its drawing, waiting until the view is shown
        # Whether a view in sight reads the unedited model's run (the window says: Drift, the Heads tab,
        # Compare, the stage); when none does, an edit's pass leaves it for after the edit is drawn.
        self.needs_intact: Callable[[], bool] = lambda: True
        self.drawing: Callable[[], bool] = lambda: False  # the window still draws the last change (it says)
        # A new sentence's selected layer, computed before the rest of its pass: the window draws it at once
        # if it shows it (``draw_early(state, result, drawn)`` True, then ``drawn()`` once it is drawn).
        self.draw_early: Callable[..., bool] = lambda state, result, drawn: False
        # The unedited run left for later is worked out once the edit is drawn: beside the drawing, the pass
        # took Python's lock from it (an edited model's sentence drawn 20-30 ms later).
        self._intact_timer = QtCore.QTimer(self)
        self._intact_timer.setInterval(INTACT_WAIT_MS)
        self._intact_timer.timeout.connect(self._work_out_intact)

        self._early.connect(self._on_early, QtCore.Qt.QueuedConnection)

        self._busy_timer = QtCore.QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_BAR_DELAY_MS)
        self._busy_timer.timeout.connect(lambda: self.panel.set_busy(self.worker.is_busy()))
        self.worker.busy.connect(self._on_busy)
        self.worker.progress.connect(self._on_progress)
        p = self.panel
        p.toyRequested.connect(self.use_toy)
        p.modelRequested.connect(self.load_model)
        p.layerChanged.connect(lambda layer: self.select(layer=layer))
        p.headScaleChanged.connect(self.set_head_scale)
        p.headReset.connect(self.reset_head)
        p.allReset.connect(lambda: self.request(edits=Edits()))
        p.secondSentenceChanged.connect(lambda text: self.request(coalesce="second sentence", second_sentence=text))
        p.wordChanged.connect(lambda text: self.request(coalesce="word", word=text))
        p.randomRequested.connect(self.random_example)
        self._rng = np.random.default_rng()
        self.model_view.headClicked.connect(lambda layer, head: self.select(layer=layer, head=head))
        self.model_view.layerClicked.connect(lambda layer: self.select(layer=layer))
        self.model_view.rolloutToggled.connect(lambda on: self.request(rollout=bool(on)))

    # -- the model -----------------------------------------------------------------------

    def load_model(self, path=None, sentence: str | None = None, on_loaded=None) -> int:
        """Load a model folder (None: the default model) off the GUI thread and show it.

        ``sentence``: the text to open on (default: the current one, if any; a text the model
        refuses, such as a sentence given to a lab model, leaves the model's own example).
        ``on_loaded(studio)`` once it is shown. A model that fails to load leaves everything as it
        was and says why.
        """
        if sentence is None and self.studio is not None:
            sentence = self.studio.state.sentence
        name = DEFAULT_MODEL if path is None else Path(path).name

        def loaded(studio):
            self.set_studio(studio)
            model = studio.model
            # To the status bar only: the panel's line is for work going on and refusals.
            self.message.emit(f"Loaded {model.name}: {model.layers} layers × {model.heads} heads")
            if on_loaded is not None:
                on_loaded(studio)

        # A failed load only says why: the model shown and the changes computing for it stay.
        return self.worker.submit(lambda: _open_studio(path, sentence), loaded, self.show_message,
                                  kind=LOAD, label=f"Loading {name}…")

    def use_toy(self) -> None:
        """Back to the toy model: the trained studio is let go, the window shows its toy session."""
        self.worker.cancel(LOAD)
        self.set_studio(None)
        self.panel.set_current_model(toy=True)

    def set_studio(self, studio: TrainedStudio | None) -> None:
        """Show ``studio`` (None: no trained model) and announce it with ``studioChanged``."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.worker.cancel(RUN)
        self._wanted = {}
        self.studio = studio
        if studio is not None:
            self._unsubscribe = studio.subscribe(lambda change: self.render())
            path = None if is_default_model(studio.model) else studio.model.path
            self.panel.set_current_model(path, name=studio.model.name)
        self.render()
        self.show_message("")
        self.studioChanged.emit(studio)

    # -- changes -------------------------------------------------------------------------

    def request(self, coalesce: str | None = None, **changes) -> bool:
        """Ask for ``changes`` (fields of ``TrainedState``); computed off the GUI thread.

        Returns False (and shows why, keeping the old state) when the studio
        refuses them at once.
        """
        studio = self.studio
        if studio is None:
            return False
        wanted = {**self._wanted, **changes}
        try:
            pending = studio.prepare(coalesce=coalesce, **wanted)
        except ValueError as exc:
            self.show_message(str(exc))
            return False
        self._wanted = wanted
        self.show_message("")
        if not (pending.changed - SELECTION_FIELDS) and pending.base_computed is not None:
            # Only what is looked at moved: nothing to compute, install now. A change still computing is
            # no longer wanted (the sentence typed back as it was): it must not arrive after this.
            self.worker.cancel(RUN)
            self._install(studio, studio.compute(pending))
        else:
            pending = dataclasses.replace(pending, intact=self.needs_intact())
            self._intact_timer.stop()
            self.worker.cancel(INTACT)  # the unedited run of a sentence left behind is not wanted any more
            self.worker.submit(lambda: studio.compute(pending, shown=lambda result: self._shown_early(pending, result)),
                               lambda c: self._install(studio, c), self._on_error, kind=RUN)
            self.coming.emit(pending.state)
        return True

    def set_sentence(self, text: str) -> bool:
        """The window's sentence box for a trained model."""
        return self.request(coalesce="sentence", sentence=text)

    def random_example(self, seed: int | None = None) -> bool:
        """A lab model's sentence: a new random sequence like its training data (a stretch twice), as
        the panel's button asks; False for a model that has none."""
        example = getattr(self.studio.model, "example_text", None) if self.studio is not None else None
        if not callable(example):
            return False
        seed = int(self._rng.integers(2**31)) if seed is None else int(seed)
        return self.request(sentence=example(seed))

    def measure(self, work, on_result=None, on_error=None) -> int:
        """Run ``work()`` on the model's worker after the passes asked for (a measure of the model, the
        Head Lab's detector): ``on_result(result)`` or ``on_error(message)`` on the GUI thread."""
        return self.worker.submit(work, on_result, on_error, kind=MEASURE)

    def select(self, layer: int | None = None, head: int | None = None, query: int | None = None) -> None:
        """Select a layer, head and/or query (0-based)."""
        changes = {k: v for k, v in (("layer_index", layer), ("head_index", head), ("query_index", query))
                   if v is not None}
        if changes:
            self.request(**changes)

    def _edits(self) -> Edits:
        return self._wanted.get("edits", self.studio.state.edits)

    def set_head_scale(self, layer: int, head: int, scale) -> bool:
        """Scale a head (0 silences, up to 2); one undo step per head while dragging."""
        if self.studio is None:
            return False
        try:
            self.studio.edits_with_head_scale(layer, head, scale)  # checks the value; the edits come next
        except ValueError as exc:
            self.show_message(str(exc))
            return False
        return self.request(coalesce=f"scale {layer} {head}",
                            edits=self._edits().with_head_scale(layer, head, float(scale)))

    def reset_head(self, layer: int, head: int) -> bool:
        """A head back to the trained model."""
        if self.studio is None:
            return False
        return self.request(edits=self._edits().reset_head(layer, head))

    def undo(self) -> bool:
        """Undo the last installed edit (changes still computing are dropped)."""
        return self._step(lambda s: s.undo())

    def redo(self) -> bool:
        """Redo the last undone edit."""
        return self._step(lambda s: s.redo())

    def _step(self, action) -> bool:
        if self.studio is None:
            return False
        self.worker.cancel(RUN)
        self._wanted = {}
        return action(self.studio)

    def _shown_early(self, pending, result) -> None:
        """On the worker: the selected layer of a new sentence is computed. The window draws it now; the rest
        of the pass waits until it is drawn (at most EARLY_WAIT_S): beside the drawing, both took turns with
        Python's lock, and the heatmaps came no sooner."""
        drawn = threading.Event()
        self._early.emit(pending, result, drawn)
        drawn.wait(EARLY_WAIT_S)

    def _on_early(self, pending, result, drawn) -> None:
        studio = self.studio
        if studio is None or not studio.is_current(pending) or not self.draw_early(pending.state, result, drawn.set):
            drawn.set()

    def _install(self, studio: TrainedStudio, computed) -> None:
        if studio is not self.studio:
            return  # a result for a model no longer shown
        if not studio.install(computed):
            return
        if not self.worker.is_busy():
            self._wanted = {}
        if not studio.computed.intact_known:
            self._intact_timer.start()  # left for later by the pass: worked out once the edit is drawn

    def _work_out_intact(self) -> None:
        """The unedited model's run and the drift of the current edit, on the worker once the window has drawn
        the edit and no pass is waiting: Drift, the Heads tab or Compare then find them ready."""
        studio = self.studio
        if studio is None or studio.computed.intact_known:
            self._intact_timer.stop()
            return
        if self.drawing() or self.worker.is_busy():
            return  # the next tick
        self._intact_timer.stop()
        current = studio.computed
        self.worker.submit(lambda: current.drift, kind=INTACT)

    def _on_error(self, text: str) -> None:
        self._wanted = {}
        self.show_message(text)

    def _on_busy(self, busy: bool) -> None:
        if not busy:
            self.coming.emit(None)  # whatever was coming has come, failed or been dropped
        if busy:
            self._busy_timer.start()  # a load says so at once (_on_progress)
        else:
            self._busy_timer.stop()
            self.panel.set_busy(False)

    def _on_progress(self, text: str) -> None:
        if text.startswith(BUSY_WORDS):
            self.panel.set_busy(True)
        if text:
            self.show_message(text)
        elif self.panel.status.text().startswith(BUSY_WORDS):
            self.show_message("")

    def show_message(self, text: str) -> None:
        """Say ``text`` in the panel and to the window."""
        self.panel.show_message(text)
        self.message.emit(text)

    # -- drawing -------------------------------------------------------------------------

    def render(self) -> None:
        """Draw the current computed numbers in every view and set the panel's controls."""
        studio = self.studio
        if studio is None:
            self._shown = None
            self._deferred.clear()
            self.panel.show_state(None)
            self.model_view.show_data(None)
            self.drift_plot.show_drift(None)
            self.meaning_view.show_data(None)
            return
        computed, state = studio.computed, studio.state
        old = self._shown
        self._shown = computed
        self.panel.show_state(_PanelState(state, studio.head_scale(state.layer_index, state.head_index)))
        if old is None or old.run is not computed.run or old.state.rollout != state.rollout:
            self._draw("model", lambda: self.model_view.show_data(ModelViewData.from_computed(computed)))
        if old is None or old.run is not computed.run or old._drift is not computed._drift:
            self._draw("drift", lambda: self.drift_plot.show_drift(computed.drift, edits=state.edits.edit_names()))
        if old is None or old.words is not computed.words or old.word_message != computed.word_message:
            self._draw("meaning", lambda: self._draw_meaning(computed, state))
        self.model_view.set_selection(state.layer_index, state.head_index)
        self.model_view.set_query(state.query_index)

    def _draw_meaning(self, computed, state) -> None:
        if computed.words is not None:
            self.meaning_view.show_data(MeaningData.from_words(computed.words, state.sentence,
                                                               state.second_sentence))
        elif computed.word_message:
            self.meaning_view.show_message(computed.word_message)
        else:
            self.meaning_view.show_data(None)

    def _widget(self, name: str):
        return {"model": self.model_view, "drift": self.drift_plot, "meaning": self.meaning_view}[name]

    def _draw(self, name: str, draw) -> None:
        # A view placed in a window but hidden (another tab on top) is drawn when shown:
        # at 128 tokens the model view's 78 maps cost more than the keystroke's own views.
        widget = self._widget(name)
        if widget.parentWidget() is not None and not widget.isVisible():
            self._deferred[name] = draw
        else:
            self._deferred.pop(name, None)
            draw()

    def render_shown(self, force: bool = False) -> None:
        """Draw the views whose drawing waited while they were hidden (all of them with ``force``)."""
        for name, draw in list(self._deferred.items()):
            if force or self._widget(name).isVisible():
                del self._deferred[name]
                draw()

    # -- export ----------------------------------------------------------------------------

    def figure_panel(self, name: str) -> export.Panel:
        """The room's figure ``name`` ("model", "drift", "meaning") for ``export.render_panel``: laid out for the
        page from the numbers its view shows (``files.trained_figures``), the same at any window size.
        ``ExportError`` when the view has nothing to show."""
        from ..files import trained_figures as pages

        self.render_shown(force=True)
        studio = self.studio
        if studio is None:
            raise export.ExportError(f"the {name} panel shows a trained model; choose one in the Model panel first")
        s, model = studio.state, studio.model.name
        if name == "model":
            figure, what = pages.model_figure(self.model_view, s.layer_index)
            return export.Panel(figure, name=name, title=f"{s.sentence} — {model} {what}")
        if name == "drift":
            figure, what = pages.drift_figure(self.drift_plot.drift, self.drift_plot.edited_layers,
                                               edits=self.drift_plot.edit_names)
            return export.Panel(figure, name=name, title=f"{s.sentence} — {model}: {what}")
        data = self.meaning_view.data
        if data is None:
            raise export.ExportError(self.meaning_view.header.text() or "the meaning view shows no word")
        title = f"“{data.word}” in two sentences — {model}"
        return export.Panel(pages.meaning_figure(data), name=name, title=title)

    def close(self) -> None:
        """Stop listening and wait for the worker thread (the window calls it when it closes)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.worker.cancel(RUN)
        self.worker.cancel(LOAD)
        self.worker.wait()


class _PanelState:
    """What :meth:`ModelPanel.show_state` reads, from a ``TrainedState``."""

    def __init__(self, state, head_scale: float):
        self.layers, self.heads = state.layers, state.heads
        self.layer_index, self.head_index = state.layer_index, state.head_index
        self.head_scale = head_scale
        self.second_sentence, self.word = state.second_sentence, state.word
        config = getattr(state.source, "config", None)
        self.example = getattr(config, "example", None)  # a lab model's kind of example, else None

"""Studio callbacks -> one Qt signal per event-loop turn; large toy edits computed off the GUI thread."""

from __future__ import annotations

from PySide6 import QtCore

from ..state import SELECTION_FIELDS
from .qt.worker import Job, one_blas_thread

# A toy edit whose model is predicted (``StudioState.cost``) to need more than this is computed
# off the GUI thread: at about 8 MB of attention arrays (some 450 tokens with one head) the
# engine alone takes some 30 ms on a 2-core machine, and the window must not freeze longer.
BACKGROUND_BYTES = 8 * 1024**2
BACKGROUND_FLOPS = 1e8


class StudioBridge(QtCore.QObject):
    """Collects the studio's changes and emits ``changed`` once per event-loop turn.

    A burst of edits (a spin box held down, fast typing) thus costs one
    repaint, not one per edit. ``changed`` carries the union of changed fields.
    """

    changed = QtCore.Signal(frozenset)

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.studio = studio
        self._pending: set[str] = set()
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.flush)
        self._unsubscribe = studio.subscribe(self._on_change)

    def _on_change(self, change):
        self._pending |= change.changed
        if not self._timer.isActive():
            self._timer.start()

    def flush(self):
        """Emit now whatever has changed since the last emission (tests and exports call this)."""
        self._timer.stop()
        if self._pending:
            fields = frozenset(self._pending)
            self._pending.clear()
            self.changed.emit(fields)

    def close(self):
        self._unsubscribe()


def _compute(compute, pending, preparers):
    """The background half of an edit: the engine, then the views' preparers (NumPy only)."""
    with one_blas_thread():
        computed = compute(pending)
        prepared = []  # (accept, what prepare made) per preparer that worked
        for prepare, accept in preparers:
            try:
                prepared.append((accept, prepare(computed.pending.state, computed.result)))
            except Exception:  # a view that cannot prepare draws everything itself, as it always could
                pass
    return computed, prepared


def is_large(state) -> bool:
    """True when computing ``state`` would freeze the window noticeably (see ``BACKGROUND_BYTES``)."""
    cost = state.cost()
    return cost.bytes > BACKGROUND_BYTES or cost.flops > BACKGROUND_FLOPS


class BackgroundEdits(QtCore.QObject):
    """Edits of the toy :class:`~attn_studio.studio.Studio` that compute off the GUI thread when large.

    Every edit is prepared on the GUI thread (a refused value raises at once and
    nothing changes). A small model, or a change of the selection only, is then
    computed and installed at once, as ``Studio.update`` does; a large one is
    computed on one background thread and installed when it is done. Only the
    newest change is computed: one prepared meanwhile makes the older stale (the
    studio refuses it), and one waiting never starts. ``update`` changes asked for
    while a change computes are merged with it, so nothing asked for is lost; any
    other edit (a cell, undo, an example) first completes the change computing.

    Signals: ``busy(bool)`` when computing starts and ends; ``failed(str)`` when
    the engine refused a change (the state stays as it was).
    """

    busy = QtCore.Signal(bool)
    failed = QtCore.Signal(str)

    def __init__(self, studio, parent=None):
        super().__init__(parent)
        self.studio = studio
        self._wanted: dict = {}      # update() changes asked for and not installed yet
        self._waiting = None         # the newest PendingChange, not started
        self._job: Job | None = None  # the one computing: one at a time, the GUI thread needs the other core
        self._busy = False
        self.dropped = 0  # stale results thrown away (a figure for tests and benchmarks)
        self._preparers: list = []

    def add_preparer(self, prepare, accept) -> None:
        """After a change computes in the background, also run ``prepare(state, result)`` there
        (NumPy only: what a view would otherwise work out on the GUI thread, such as a heatmap's
        coloured picture), and hand what it made to ``accept`` on the GUI thread just before the
        result is installed. A ``prepare`` that raises is skipped: the view draws it all itself."""
        self._preparers.append((prepare, accept))

    def computing(self) -> bool:
        """True while a change computes or waits to."""
        return self._job is not None or self._waiting is not None

    def wanted(self) -> dict:
        """The ``update`` changes asked for and not installed yet (field -> value)."""
        return dict(self._wanted) if self.computing() else {}

    # -- edits ---------------------------------------------------------------------------
    def update(self, *, coalesce: str | None = None, **changes) -> None:
        """``Studio.update``: computed in the background when the model is large."""
        if set(changes) <= SELECTION_FIELDS:
            self.run(self.studio.prepare(**changes))  # nothing to compute: at once
            return
        wanted = {**self.wanted(), **changes}
        pending = self.studio.prepare(coalesce=coalesce, **wanted)  # refuses before anything changes
        self._wanted = wanted
        self.run(pending)

    def select(self, **changes) -> None:
        """``Studio.select``: the selection only, at once (a change computing keeps it)."""
        self.run(self.studio.prepare_call("select", **changes))

    def call(self, edit: str, *args, **kwargs):
        """Any other edit by name ("set_weight", "set_state", "randomize", "pin"...), after the change
        computing now is installed."""
        self.finish()
        self.run(self.studio.prepare_call(edit, *args, **kwargs))

    def undo(self) -> bool:
        self.finish()
        return self.run(self.studio.prepare_undo())

    def redo(self) -> bool:
        self.finish()
        return self.run(self.studio.prepare_redo())

    def run(self, pending) -> bool:
        """Compute ``pending`` (a ``Studio.prepare`` result; None: nothing to do) at once or in the
        background; False when it is None."""
        if pending is None:
            return False
        if pending.selection_only or not pending.changed:
            self.studio.install(self.studio.compute(pending))
            return True
        if not is_large(pending.state):
            # Small now (e.g. the long sentence cut short): at once; whatever computes is stale.
            self._waiting, self._wanted = None, {}
            self.studio.install(self.studio.compute(pending))
            return True
        self._waiting = pending
        self._start_next()
        return True

    def finish(self) -> None:
        """Install the newest change now, on this thread (waiting for it if it is computing)."""
        if not self.computing():
            return
        job, pending = self._job, self._waiting
        self._waiting = None
        try:
            if job is not None:
                job.take()  # installs it when it is the newest; drops it (stale) when one waits
            if pending is not None:
                self._wanted = {}
                self.studio.install(self.studio.compute(pending))
        finally:
            self._wanted = {} if not self.computing() else self._wanted
            self._set_busy(self.computing())

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the change computing has ended (closing the window)."""
        job = self._job
        return job is None or job.wait(msecs / 1000)

    # -- the queue -----------------------------------------------------------------------
    def _start_next(self) -> None:
        if self._job is not None or self._waiting is None:
            return
        pending, self._waiting = self._waiting, None
        self._set_busy(True)
        self._job = Job(_compute, self.studio.compute, pending, list(self._preparers),
                        current=lambda: self.studio.is_current(pending), on_result=self._on_result,
                        on_error=self._on_error, on_stale=self._on_stale, on_end=self._on_end).submit()

    def _on_result(self, value) -> None:
        computed, prepared = value
        if self._waiting is None:
            self._wanted = {}
        for accept, made in prepared:
            accept(made)
        self.studio.install(computed)

    def _on_error(self, exc: BaseException) -> None:
        self._wanted = {}
        self.failed.emit(_message(exc))

    def _on_stale(self) -> None:
        self.dropped += 1

    def _on_end(self) -> None:
        self._job = None
        self._start_next()
        if not self.computing():
            self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy.emit(busy)


def _message(exc: BaseException) -> str:
    # StateError and EngineError are ValueErrors written for people.
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"


class _Switched:
    """What subscribers hear when the proxy switches studios: everything may have changed."""

    changed = frozenset({"studio"})


class StudioProxy:
    """One studio object the window's rooms and views hold, whose target can switch.

    The toy :class:`~attn_studio.studio.Studio` and a trained
    :class:`~attn_studio.trained.TrainedStudio` have the same reading shape
    (``state``, ``result``, ``x``, ``weights_with``...), so every view draws
    whichever is the ``target`` without knowing which. Attribute reads go to
    the target; subscribers stay subscribed across a switch and are told of
    it as a change of every field.

    While a trained studio is shown, ``trained`` (the window's trained-model
    room) takes the edits that must not compute on the GUI thread: the
    sentence (``update(sentence=...)``), the selection, undo and redo, and
    the W_Q/W_K/W_V cells (``set_weight``). Toy-only edits are refused with a
    ``StateError`` saying why.
    """

    def __init__(self, target):
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "room", None)
        object.__setattr__(self, "background", None)  # BackgroundEdits of the toy studio, if any
        object.__setattr__(self, "_callbacks", [])
        object.__setattr__(self, "_unsubscribes", [])

    def __getattr__(self, name):
        return getattr(self.target, name)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)

    @property
    def is_trained(self) -> bool:
        """True while the target is a trained-model studio."""
        return self.room is not None

    def set_target(self, target, room=None) -> None:
        """Point every holder at ``target`` (``room``: the trained room when it is a trained studio)."""
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "room", room)
        self._unsubscribes[:] = [target.subscribe(cb) for cb in self._callbacks]
        for cb in list(self._callbacks):
            cb(_Switched())

    def subscribe(self, callback):
        """Like the studio's: ``callback(change)`` after every change, of whichever studio is shown."""
        self._callbacks.append(callback)
        unsub = self.target.subscribe(callback)
        self._unsubscribes.append(unsub)

        def unsubscribe():
            if callback in self._callbacks:
                i = self._callbacks.index(callback)
                self._callbacks.pop(i)
                self._unsubscribes.pop(i)()

        return unsubscribe

    def _toy(self):
        """The toy edits' way in: the background runner of the toy studio shown, else the studio."""
        background = self.background
        return background if background is not None and background.studio is self.target else None

    def computing(self) -> bool:
        """True while an edit of the toy model computes off the GUI thread."""
        toy = self._toy()
        return toy is not None and toy.computing()

    def wanted(self) -> dict:
        """Toy changes asked for and still computing (field -> value): the controls keep showing them."""
        toy = self._toy()
        return toy.wanted() if toy is not None else {}

    def _toy_edit(self, edit: str, *args, **kwargs):
        toy = self._toy()
        if toy is None:
            return getattr(self.target, edit)(*args, **kwargs)
        return toy.call(edit, *args, **kwargs)

    # -- edits a trained model takes through its room (off the GUI thread) -----------------
    def update(self, *, coalesce=None, **changes):
        if not self.is_trained:
            toy = self._toy()
            if toy is not None:
                return toy.update(coalesce=coalesce, **changes)
            return self.target.update(coalesce=coalesce, **changes)
        if set(changes) == {"sentence"}:
            self.room.set_sentence(changes["sentence"])
            return None
        raise _refused(", ".join(sorted(changes)))

    def select(self, **changes):
        if not self.is_trained:
            toy = self._toy()
            return toy.select(**changes) if toy is not None else self.target.select(**changes)
        return self.room.select(**changes)

    def undo(self):
        if self.is_trained:
            return self.room.undo()
        toy = self._toy()
        return toy.undo() if toy is not None else self.target.undo()

    def redo(self):
        if self.is_trained:
            return self.room.redo()
        toy = self._toy()
        return toy.redo() if toy is not None else self.target.redo()

    def randomize(self, seed=None):
        if self.is_trained:
            raise _refused("Randomize")
        return self._toy_edit("randomize", seed)

    def pin(self):
        return self._toy_edit("pin") if not self.is_trained else self.target.pin()

    def unpin(self):
        return self._toy_edit("unpin") if not self.is_trained else self.target.unpin()

    def set_weight(self, key, head, row, col, text):
        if not self.is_trained:
            return self._toy_edit("set_weight", key, head, row, col, text)
        if key not in ("w_q", "w_k", "w_v"):
            raise _refused(key.upper().replace("_", ""))
        studio = self.target
        edits = studio.edits_with_cell(key[-1], studio.state.layer_index, head, row, col, text)  # may refuse
        self.room.request(edits=edits)
        return None

    def set_block(self, key, head, row, col, block):
        if self.is_trained:
            raise _refused("pasting a block")
        return self._toy_edit("set_block", key, head, row, col, block)

    def set_embedding(self, word, col, text):
        if self.is_trained:
            raise _refused("Embeddings X")
        return self._toy_edit("set_embedding", word, col, text)

    def set_embedding_block(self, words, col, block):
        if self.is_trained:
            raise _refused("Embeddings X")
        return self._toy_edit("set_embedding_block", words, col, block)

    def set_state(self, state, *, label: str = ""):
        """A toy state (New, Open, an example) brings the toy model back first; ``label`` names the undo step."""
        if self.is_trained and not hasattr(state, "source"):
            self.room.use_toy()
        if self.is_trained:
            return self.target.set_state(state)
        return self._toy_edit("set_state", state, label=label)

    def embeddings(self, words):
        """Toy: the editable embedding rows; trained: the vectors the selected layer projects (read only)."""
        return self.target.x if self.is_trained else self.target.embeddings(words)


def _refused(what: str):
    from ..state import StateError

    return StateError(f"{what} belongs to the toy model; a trained model's architecture is fixed "
                      "(choose \"Toy model (editable)\" to change it)")

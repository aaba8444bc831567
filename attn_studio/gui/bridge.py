"""Studio callbacks -> one Qt signal per event-loop turn."""

from __future__ import annotations

from PySide6 import QtCore


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

    # -- edits a trained model takes through its room (off the GUI thread) -----------------
    def update(self, *, coalesce=None, **changes):
        if not self.is_trained:
            return self.target.update(coalesce=coalesce, **changes)
        if set(changes) == {"sentence"}:
            self.room.set_sentence(changes["sentence"])
            return None
        raise _refused(", ".join(sorted(changes)))

    def select(self, **changes):
        if not self.is_trained:
            return self.target.select(**changes)
        return self.room.select(**changes)

    def undo(self):
        return self.room.undo() if self.is_trained else self.target.undo()

    def redo(self):
        return self.room.redo() if self.is_trained else self.target.redo()

    def set_weight(self, key, head, row, col, text):
        if not self.is_trained:
            return self.target.set_weight(key, head, row, col, text)
        if key not in ("w_q", "w_k", "w_v"):
            raise _refused(key.upper().replace("_", ""))
        studio = self.target
        edits = studio.edits_with_cell(key[-1], studio.state.layer_index, head, row, col, text)  # may refuse
        self.room.request(edits=edits)
        return None

    def set_block(self, key, head, row, col, block):
        if self.is_trained:
            raise _refused("pasting a block")
        return self.target.set_block(key, head, row, col, block)

    def set_embedding(self, word, col, text):
        if self.is_trained:
            raise _refused("Embeddings X")
        return self.target.set_embedding(word, col, text)

    def set_embedding_block(self, words, col, block):
        if self.is_trained:
            raise _refused("Embeddings X")
        return self.target.set_embedding_block(words, col, block)

    def set_state(self, state, *, label: str = ""):
        """A toy state (New, Open, an example) brings the toy model back first; ``label`` names the undo step."""
        if self.is_trained and not hasattr(state, "source"):
            self.room.use_toy()
        if self.is_trained:
            return self.target.set_state(state)
        return self.target.set_state(state, label=label)

    def embeddings(self, words):
        """Toy: the editable embedding rows; trained: the vectors the selected layer projects (read only)."""
        return self.target.x if self.is_trained else self.target.embeddings(words)


def _refused(what: str):
    from ..state import StateError

    return StateError(f"{what} belongs to the toy model; a trained model's architecture is fixed "
                      "(choose \"Toy model (editable)\" to change it)")

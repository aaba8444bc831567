"""A trained model in the studio: its state, undo/redo, live edits and derived numbers. No Qt.

``TrainedStudio`` has the shape of :class:`attn_studio.studio.Studio` (``state``,
``result``, ``update``, ``select``, ``undo``, ``redo``, ``subscribe``,
``is_modified``, ``mark_saved``), so the toy views draw the selected layer of
a trained model unchanged::

    >>> from attn_studio.pretrained import load_pretrained
    >>> from attn_studio.trained import TrainedStudio
    >>> studio = TrainedStudio(load_pretrained())
    >>> studio.update(sentence="The animal didn't cross the street because it was too tired.")
    >>> studio.select(layer=3, head=5, query=8)
    >>> studio.result.weights.shape          # (heads, T, T) of layer 3 (1-based: 4)
    (12, 16, 16)
    >>> studio.set_head_scale(3, 5, 0.0)      # silence it: layers 3..5 are recomputed
    >>> studio.drift()                         # how far each layer moved from the trained model

Layers, heads and queries are counted from 0 here (the window shows them
from 1).

Threading rules (the window computes off the GUI thread):

- :meth:`TrainedStudio.prepare` (cheap: validates and tokenizes) and
  :meth:`TrainedStudio.install` (records undo, notifies subscribers) run on
  the thread that owns the studio (the GUI thread), as do every other method
  that changes the studio (``update``, ``select``, ``undo``, ``redo``,
  ``set_*``, ``reset_*``) and ``subscribe``.
- :meth:`TrainedStudio.compute` is pure: it reads only the model (immutable,
  read-only arrays) and the :class:`Pending` it is given, and returns a new
  :class:`Computed`. Call it from any thread, several at once if you like.
- ``install`` refuses (returns False, changes nothing) a computation that is
  stale: a later ``prepare`` that changes more than the selection was made
  (an edit, a new sentence, an undo), or such a change was installed since.
  So a worker may finish late and the window simply drops its result. A
  selection moved meanwhile (layer, head, query, the view switches) does not
  make it stale: it is installed with the selection the person has now.
- Reading ``state``, ``result``, ``drift()`` and the other derived numbers on the
  GUI thread is always safe: they come from the installed :class:`Computed`,
  which is immutable and computed in full by ``compute``.
- ``undo``, ``redo``, ``select`` and the ``set_*`` edits compute on the calling
  thread (an undone edit is a rerun from the edited layer only; the last step's
  result is kept, so undoing it is instant).

A window's keystroke, off the GUI thread::

    pending = studio.prepare(sentence=text, coalesce="sentence")   # GUI thread; may raise
    computed = studio.compute(pending)                              # worker thread
    studio.install(computed)                                        # GUI thread; False: dropped

and an edit the same way with ``prepare(edits=studio.edits_with_head_scale(l, h, s))``
(or ``edits_with_head_reset``, ``edits_with_cell``, ``Edits()`` for all).
"""


from .models import attention_matrix, open_model, resolve_model, session_from_dict, state_from_session
from .state import (DEFAULT_SECOND, DEFAULT_SENTENCE, SELECTION_FIELDS, TrainedState, is_default_model,
                    model_ref)
from .studio import (COALESCE_SECONDS, KEEP_COMPUTED, UNDO_LIMIT, Computed, Pending, TrainedChange,
                     TrainedStudio, WordPaths)

__all__ = [
    "COALESCE_SECONDS", "Computed", "DEFAULT_SECOND", "DEFAULT_SENTENCE", "KEEP_COMPUTED", "Pending",
    "SELECTION_FIELDS", "TrainedChange", "TrainedState", "TrainedStudio", "UNDO_LIMIT", "WordPaths",
    "attention_matrix", "is_default_model", "model_ref", "open_model", "resolve_model", "session_from_dict",
    "state_from_session",
]

"""A table reads the studio's array once per state: an edit's refresh reuses what the edit read,
and a new state (another edit, an undo) is always read again."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore

from attn_studio.gui.editing.tables import MatrixModel
from attn_studio.state import StudioState
from attn_studio.studio import Studio


def test_a_table_reads_once_per_state_and_follows_every_new_one(qtbot):
    studio = Studio(StudioState(sentence="the cat sat", d_model=4, heads=1, d_head=4))
    reads = []

    def read():
        reads.append(studio.state)
        return studio.embeddings(studio.state.key_tokens)

    model = MatrixModel("X", read, lambda: studio.state.key_tokens, lambda: ["d1", "d2", "d3", "d4"],
                        write=lambda r, c, text: studio.set_embedding(studio.state.key_tokens[r], c, text),
                        version=lambda: studio.state)
    changed = []
    model.dataChanged.connect(lambda *args: changed.append(args))
    assert len(reads) == 1
    assert model.setData(model.index(1, 2), "0.75", QtCore.Qt.EditRole)
    assert model.data(model.index(1, 2), QtCore.Qt.UserRole) == 0.75  # read at once for a script
    assert len(reads) == 2
    model.refresh()  # the window's refresh after the change: the same state, not read again
    assert len(reads) == 2 and changed  # ...and the view is still told of the new number
    studio.undo()
    model.refresh()
    assert len(reads) == 3  # a new state is read
    np.testing.assert_array_equal(model.array(), studio.embeddings(studio.state.key_tokens))
    assert model.data(model.index(1, 2), QtCore.Qt.UserRole) != 0.75

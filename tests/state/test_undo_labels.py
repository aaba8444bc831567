"""The undo list names its entries, so the Edit menu can say what Undo takes back."""

from attn_studio.session import load_preset
from attn_studio.studio import Studio


def test_a_named_state_change_is_named_in_undo_and_redo():
    studio = Studio()
    assert studio.undo_label == "" and studio.redo_label == ""
    studio.set_state(load_preset("bank"), label="load example 'bank'")
    assert studio.undo_label == "load example 'bank'"
    studio.undo()
    assert studio.undo_label == "" and studio.redo_label == "load example 'bank'"
    studio.redo()
    assert studio.undo_label == "load example 'bank'" and studio.redo_label == ""


def test_an_edit_without_a_name_says_which_field_changed():
    studio = Studio()
    studio.update(heads=3)
    assert studio.undo_label == "change heads"
    studio.update(heads=1, d_head=3)
    assert studio.undo_label == "edit"
    studio.select(query=1)  # the selection is not an edit: the label stays
    assert studio.undo_label == "edit"


def test_a_coalesced_burst_keeps_the_name_of_its_first_edit():
    now = [0.0]
    studio = Studio(clock=lambda: now[0])
    studio.update(coalesce="seed", seed=1)
    now[0] += 0.1
    studio.update(coalesce="seed", seed=2)
    assert studio.undo_label == "change seed"
    studio.undo()
    assert studio.state.seed == Studio().state.seed

"""Words a student can trust: the toy model says which words of a sentence got seeded random vectors
(a German sentence, say), so their attention is not read as meaning."""

from __future__ import annotations

from PySide6 import QtWidgets

from gui_helpers import find, settle


def note(w) -> QtWidgets.QLabel:
    return find(w, QtWidgets.QLabel, "randomWordsNote")


def type_sentence(w, text: str) -> None:
    """As a person types it: the text edited, then Enter."""
    edit = w.sentence_edit
    edit.setText(text)
    edit.textEdited.emit(text)
    edit.returnPressed.emit()
    settle(w)


def test_words_without_a_set_vector_are_named_under_the_sentence(shared_window):
    w = shared_window
    w.load_preset("journey")  # the seed's six words, each with the table's vector
    settle(w)
    assert w.studio.state.random_vector_words() == []
    assert not note(w).isVisible()
    type_sentence(w, "Your journey beginnt heute mit einem Schritt")
    assert w.studio.state.tokens[:2] == ["Your", "journey"]
    words = w.studio.state.random_vector_words()
    assert words == ["beginnt", "heute", "mit", "einem", "Schritt"]
    text = note(w).text()
    assert note(w).isVisible()
    for word in words:
        assert f"“{word}”" in text
    assert "“Your”" not in text and "“journey”" not in text
    # A vector typed into the table makes the word known: it leaves the note.
    w.studio.set_embedding("heute", 0, "0.5")
    settle(w)
    assert "“heute”" not in note(w).text() and "“mit”" in note(w).text()


def test_a_sentence_of_random_vectors_says_so(shared_window):
    w = shared_window
    w.load_preset("animal")  # two heads of random projections over random word vectors
    settle(w)
    assert len(w.studio.state.random_vector_words()) == len(set(w.studio.state.tokens))
    assert note(w).isVisible() and note(w).text().startswith("Every word here has a seeded random vector")

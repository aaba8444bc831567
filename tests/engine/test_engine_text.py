"""tokenize, Vocabulary, sinusoidal_positions."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn_studio.engine import EngineError, Vocabulary, sinusoidal_positions, tokenize

# --------------------------------------------------------------------------- tokenize


def test_words_and_punctuation_are_separate():
    assert tokenize("Hello, world!") == ["Hello", ",", "world", "!"]
    assert tokenize("The bank. The river.") == ["The", "bank", ".", "The", "river", "."]


def test_case_is_kept():
    assert tokenize("Your journey STARTS") == ["Your", "journey", "STARTS"]


def test_empty_and_blank_give_no_tokens():
    assert tokenize("") == []
    assert tokenize("   \n\t ") == []


def test_contraction_stays_one_token():
    assert tokenize("The animal didn't cross the street.") == [
        "The", "animal", "didn't", "cross", "the", "street", ".",
    ]


def test_seed_sentences():
    assert tokenize("Your journey starts with one step") == [
        "Your", "journey", "starts", "with", "one", "step",
    ]
    assert len(tokenize("A man has kept money in the bank")) == 8


# Grapheme clusters: what a reader sees as one character is never split.
@pytest.mark.parametrize("text, expected", [
    ("cafe\u0301 ok", ["cafe\u0301", "ok"]),                      # combining acute accent
    ("e\u0301\u0302!", ["e\u0301\u0302", "!"]),                   # two stacked marks
    ("\U0001F469\u200d\U0001F4BB codes", ["\U0001F469\u200d\U0001F4BB", "codes"]),  # woman technologist
    ("\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 home",
     ["\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "home"]),      # family
    ("ok \U0001F44D\U0001F3FD!", ["ok", "\U0001F44D\U0001F3FD", "!"]),  # thumbs up, skin tone
    ("Vive \U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA", ["Vive", "\U0001F1EB\U0001F1F7", "\U0001F1E9\U0001F1EA"]),  # two flags
    ("\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F go",
     ["\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", "go"]),  # Scotland
    ("1\ufe0f\u20e3 key", ["1\ufe0f\u20e3", "key"]),               # keycap
    ("\u1112\u1161\u11ab \ud55c", ["\u1112\u1161\u11ab", "\ud55c"]),  # Hangul jamo make one syllable
    ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"]),  # ZWNJ inside a Persian word
])
def test_grapheme_clusters_stay_whole(text, expected):
    assert tokenize(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("a\u200bb", ["a", "b"]),                # zero-width space separates like a space
    ("co\u00adoperate", ["cooperate"]),      # soft hyphen dropped, the word stays whole
    ("x \u200d y \u200c z", ["x", "y", "z"]),  # joiners on their own are no tokens
    ("\ufeffHello", ["Hello"]),               # byte-order mark
    ("a\u2060b", ["ab"]),                     # word joiner
    ("\u202eabc\u202c d\u200e\u200f", ["abc", "d"]),  # bidirectional controls
    ("hi\u200d", ["hi"]),                     # a trailing joiner joins nothing
    ("\u200b\u200d\u00ad\ufeff", []),          # nothing visible, no tokens
])
def test_invisible_characters_never_become_tokens(text, expected):
    assert tokenize(text) == expected


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_every_token_is_visible_text_from_the_sentence(text):
    tokens = tokenize(text)
    invisible = {"\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff"}
    for token in tokens:
        assert token and not token.isspace()
        assert not set(token) <= invisible
    # the non-space, non-format characters are all kept, in order
    import unicodedata
    kept = [c for c in text if not c.isspace() and unicodedata.category(c) != "Cf"]
    assert [c for c in "".join(tokens) if unicodedata.category(c) != "Cf"] == kept


def test_ascii_and_unicode_paths_agree_on_ascii_rules():
    # one non-ASCII character switches to the grapheme path; the rest must tokenize alike
    text = "The animal didn't cross the street, 'twas too tired_ok... 3.5"
    assert tokenize(text + " \u00e9") == tokenize(text) + ["\u00e9"]


def test_tokenize_refuses_non_string():
    with pytest.raises(EngineError, match="string"):
        tokenize(None)


# --------------------------------------------------------------------------- Vocabulary

WORDS = st.text(alphabet="abcdefghijXYZ'", min_size=1, max_size=8)


@settings(max_examples=30, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8, unique=True), st.integers(0, 2**31), st.integers(1, 10))
def test_same_word_same_seed_same_vector_in_any_order(words, seed, dim):
    a = Vocabulary(dim, seed)
    b = Vocabulary(dim, seed)
    forward = {w: a.vector(w) for w in words}
    backward = {w: b.vector(w) for w in reversed(words)}
    for w in words:
        assert forward[w].shape == (dim,)
        assert forward[w].dtype == np.float64
        np.testing.assert_array_equal(forward[w], backward[w])
        np.testing.assert_array_equal(a.vector(w), forward[w])  # asking again changes nothing
    np.testing.assert_array_equal(a.vectors(words), np.stack([forward[w] for w in words]))


def test_different_seed_different_vector():
    assert not np.array_equal(Vocabulary(8, 0).vector("bank"), Vocabulary(8, 1).vector("bank"))


def test_different_words_different_vectors():
    v = Vocabulary(8, 0)
    assert not np.array_equal(v.vector("bank"), v.vector("river"))


def test_vectors_of_no_words_is_empty():
    assert Vocabulary(5, 0).vectors([]).shape == (0, 5)


def test_set_vector_sticks():
    v = Vocabulary(3, 0)
    v.set_vector("bank", [0.02, -0.286, 0.524])
    np.testing.assert_array_equal(v.vector("bank"), [0.02, -0.286, 0.524])
    v.vector("money")
    np.testing.assert_array_equal(v.vector("bank"), [0.02, -0.286, 0.524])
    # Other words keep their generated vectors.
    np.testing.assert_array_equal(v.vector("money"), Vocabulary(3, 0).vector("money"))


def test_returned_vector_is_a_copy():
    v = Vocabulary(4, 0)
    vec = v.vector("bank")
    before = vec.copy()
    vec[:] = 99.0
    np.testing.assert_array_equal(v.vector("bank"), before)


def test_shrinking_and_growing_back_restores_edits():
    v4 = Vocabulary(4, 5)
    v4.set_vector("bank", [1.0, 2.0, 3.0, 4.0])
    v2 = v4.resized(2)
    assert v2.dim == 2
    np.testing.assert_array_equal(v2.vector("bank"), [1.0, 2.0])
    np.testing.assert_array_equal(v2.resized(4).vector("bank"), [1.0, 2.0, 3.0, 4.0])


def test_edit_after_shrinking_keeps_the_hidden_components():
    v4 = Vocabulary(4, 5)
    v4.set_vector("bank", [1.0, 2.0, 3.0, 4.0])
    v2 = v4.resized(2)
    v2.set_vector("bank", [9.0, 8.0])
    np.testing.assert_array_equal(v2.resized(4).vector("bank"), [9.0, 8.0, 3.0, 4.0])
    # The original vocabulary is not changed by edits to the resized one.
    np.testing.assert_array_equal(v4.vector("bank"), [1.0, 2.0, 3.0, 4.0])


def test_resized_keeps_prefix_of_unedited_vectors():
    v = Vocabulary(6, 11)
    for word in ["A", "man", "bank"]:
        full = v.vector(word)
        np.testing.assert_array_equal(v.resized(3).vector(word), full[:3])
        np.testing.assert_array_equal(v.resized(10).vector(word)[:6], full)


def test_set_vector_wrong_length_raises():
    v = Vocabulary(3, 0)
    with pytest.raises(EngineError, match="3"):
        v.set_vector("bank", [1.0, 2.0])
    with pytest.raises(EngineError):
        v.set_vector("bank", [1.0, 2.0, 3.0, 4.0])


def test_set_vector_non_finite_raises_and_keeps_old_value():
    v = Vocabulary(3, 0)
    v.set_vector("bank", [1.0, 2.0, 3.0])
    with pytest.raises(EngineError, match="non-finite"):
        v.set_vector("bank", [1.0, float("nan"), 3.0])
    np.testing.assert_array_equal(v.vector("bank"), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dim", [0, -1, 2.5])
def test_vocabulary_bad_dim_raises(dim):
    with pytest.raises(EngineError):
        Vocabulary(dim, 0)


# --------------------------------------------------------------------------- positions


def reference_positions(n, dim, base):
    pe = [[0.0] * dim for _ in range(n)]
    for pos in range(n):
        for col in range(dim):
            i = col // 2
            angle = pos / base ** (2 * i / dim)
            pe[pos][col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return np.array(pe).reshape(n, dim)


@pytest.mark.parametrize(
    "n, dim, base",
    [(1, 1, 10000.0), (6, 3, 10000.0), (10, 4, 10000.0), (50, 16, 10000.0), (7, 5, 100.0), (12, 9, 10.0)],
)
def test_sinusoidal_matches_formula(n, dim, base):
    pe = sinusoidal_positions(n, dim, base=base)
    assert pe.shape == (n, dim)
    assert pe.dtype == np.float64
    np.testing.assert_allclose(pe, reference_positions(n, dim, base), rtol=0, atol=1e-12)


def test_sinusoidal_first_row_and_odd_dim():
    pe = sinusoidal_positions(4, 5)
    # Position 0: sin(0) = 0 in even columns, cos(0) = 1 in odd ones.
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0])
    # Column 4 (odd dim's last) is a sine with angle pos / 10000^(4/5).
    np.testing.assert_allclose(pe[:, 4], np.sin(np.arange(4) / 10000 ** (4 / 5)), atol=1e-15)


def test_sinusoidal_default_base_is_10000():
    pos = np.arange(5)[:, None]
    angle = pos / 10000.0 ** (2 * (np.arange(6) // 2) / 6)
    expected = np.where(np.arange(6) % 2 == 0, np.sin(angle), np.cos(angle))
    np.testing.assert_allclose(sinusoidal_positions(5, 6), expected, atol=1e-15)
    # The base is used, not only accepted: another base gives another encoding.
    assert not np.allclose(sinusoidal_positions(5, 6, base=100.0), expected)


@pytest.mark.parametrize("dim", [1, 4, 7])
def test_sinusoidal_zero_positions(dim):
    assert sinusoidal_positions(0, dim).shape == (0, dim)


@pytest.mark.parametrize("n, dim", [(-1, 4), (3, 0), (2.5, 4)])
def test_sinusoidal_bad_arguments(n, dim):
    with pytest.raises(EngineError):
        sinusoidal_positions(n, dim)


def test_vectors_of_a_text_that_repeats_its_words_are_each_words_vector():
    vocab = Vocabulary(4, 3)
    vocab.set_vector("the", [1.0, 2.0, 3.0, 4.0])
    words = ["the", "cat", "the", "mat", "cat", "the"]
    got = vocab.vectors(words)
    np.testing.assert_array_equal(got, np.stack([vocab.vector(w) for w in words]))
    got[0, 0] = 99.0  # a row of the result is its own: the other "the" rows and the vocabulary keep theirs
    assert got[2, 0] == 1.0 and vocab.vector("the")[0] == 1.0

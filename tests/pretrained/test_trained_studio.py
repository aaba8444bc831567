"""TrainedStudio: a trained model behind the studio's interface (state, result, undo,
edits that recompute only the layers above, prepare / compute / install)."""

import dataclasses
import math

import numpy as np
import pytest

from attn_studio.engine import MultiHeadResult
from attn_studio.pretrained import Edits, ModelError
from attn_studio.state import StateError
from attn_studio.trained import SELECTION_FIELDS, TrainedStudio, attention_matrix

TEXT = "The animal didn't cross the street because it was too tired."


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture(params=["tiny_bert", "tiny_gpt2"])
def model(request):
    return request.getfixturevalue(request.param)


@pytest.fixture
def studio(model):
    clock = Clock()
    s = TrainedStudio(model, clock=clock)
    s.test_clock = clock
    return s


# -- by hand, in NumPy, for independent references ------------------------------------------

def _layer_norm(x, gamma, beta, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


_erf = np.vectorize(math.erf)


def _bert_layer(model, layer, x, zero_head=None):
    """One BERT layer written out; ``zero_head`` zeroes that head's rows of W_O (y = concat · W_O)."""
    lw = model._weights.layers[layer]
    heads, d_head = model.heads, model.d_head
    outs = []
    for h in range(heads):
        q = x @ lw.w_q[h] + lw.b_q[h]
        k = x @ lw.w_k[h] + lw.b_k[h]
        v = x @ lw.w_v[h] + lw.b_v[h]
        logits = q @ k.T / np.sqrt(d_head)
        e = np.exp(logits - logits.max(-1, keepdims=True))
        outs.append((e / e.sum(-1, keepdims=True)) @ v)
    w_o = np.array(lw.w_o)
    if zero_head is not None:
        w_o[zero_head * d_head:(zero_head + 1) * d_head] = 0.0
    att = np.concatenate(outs, axis=-1) @ w_o + lw.b_o
    h1 = _layer_norm(att + x, *lw.ln_1, model.config.eps)
    pre = h1 @ lw.w_1 + lw.b_1
    ff = 0.5 * pre * (1.0 + _erf(pre / np.sqrt(2.0))) @ lw.w_2 + lw.b_2
    return _layer_norm(ff + h1, *lw.ln_2, model.config.eps)


def _cosine_rows(a, b):
    return np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


# -- what the toy views read ----------------------------------------------------------------

def test_the_state_speaks_the_views_language(studio, model):
    s = studio.state
    run = model.run(TEXT)
    assert s.key_tokens == s.query_tokens == run.tokens
    assert s.target_tokens == [] and s.cross is False and s.target_sentence == ""
    assert (s.projections, s.softmax, s.temperature, s.score, s.scale) == (True, "stable", 1.0, "dot", True)
    assert s.causal is (model.kind == "gpt2")
    assert (s.heads, s.d_head, s.d_k, s.d_model, s.effective_heads) == \
        (model.heads, model.d_head, model.d_head, model.d_model, model.heads)
    assert s.pinned is None and s.positional is False and dict(s.embedding_edits) == {}
    studio.select(layer=1, head=2, query=3)
    s = studio.state
    assert (s.layer_index, s.head_index, s.shown_head, s.query_index) == (1, 2, 2, 3)
    assert isinstance(studio.result, MultiHeadResult)
    np.testing.assert_array_equal(studio.result.weights, run.attentions[1])
    np.testing.assert_array_equal(studio.result.q, run.q[1])
    np.testing.assert_array_equal(studio.result.logits, run.logits[1])
    # x is what the layer projects: q = x·W_Q + b_Q for every head (GPT-2 normalises first).
    lw = model._weights.layers[1]
    for h in range(model.heads):
        np.testing.assert_allclose(studio.x @ lw.w_q[h] + lw.b_q[h], studio.result.q[h], atol=1e-12)
        np.testing.assert_allclose(studio.x @ lw.w_v[h] + lw.b_v[h], studio.result.v[h], atol=1e-12)
    if model.kind == "bert":
        np.testing.assert_array_equal(studio.x, run.hidden_states[1])
    assert studio.x_kv is studio.x and not studio.x.flags.writeable
    assert studio.result.blocked.any() is np.bool_(model.kind == "gpt2")


def test_the_state_shows_the_selected_layers_weights(studio, model):
    studio.select(layer=1)
    studio.set_weight("q", 1, 2, 0, 1, "0.5")
    s = studio.state
    lw = model._weights.layers[1]
    assert s.w_q.shape == (model.heads, model.d_model, model.d_head)
    assert s.w_q[2, 0, 1] == 0.5 and lw.w_q[2, 0, 1] != 0.5
    np.testing.assert_array_equal(np.delete(s.w_q, 2, axis=0), np.delete(lw.w_q, 2, axis=0))
    np.testing.assert_array_equal(s.w_k, lw.w_k)
    np.testing.assert_array_equal(s.w_o, lw.w_o)
    # The concatenated heads times W_O (plus its bias) is the attention's output.
    np.testing.assert_allclose(studio.result.concat @ s.w_o + lw.b_o, studio.result.output, atol=1e-12)
    assert "source" not in s.changed_fields(studio.state) and "w_q" not in s.to_dict()
    studio.select(layer=0)
    np.testing.assert_array_equal(studio.state.w_q, model._weights.layers[0].w_q)


def test_weights_with_and_score_variance_use_the_selected_layer(studio):
    studio.select(layer=1)
    logits = studio.result.logits
    e = np.exp(logits)
    np.testing.assert_allclose(studio.weights_with("naive"), e / e.sum(-1, keepdims=True), atol=1e-15)
    raw, scaled = studio.measured_score_variance()
    assert raw == pytest.approx(np.var(studio.result.scores))
    assert scaled == pytest.approx(raw / studio.state.d_k)
    assert studio.variance_curve().dims.size > 0


def test_selecting_is_not_an_edit(studio):
    seen = []
    studio.subscribe(seen.append)
    studio.select(layer=1, head=3, query=2)
    studio.update(rollout=True, mean_heads=True)
    assert not studio.can_undo and not studio.is_modified
    assert [c.selection_only for c in seen] == [True, True]
    assert seen[0].changed == {"layer_index", "head_index", "query_index"}
    with pytest.raises(StateError, match="head must be 1 to"):
        studio.select(head=studio.state.heads)
    assert studio.state.head_index == 3


# -- edits and undo ---------------------------------------------------------------------------

def _check_matches_fresh_run(studio, model):
    fresh = model.run(studio.state.sentence, edits=studio.state.edits)
    np.testing.assert_allclose(studio.run.hidden_states, fresh.hidden_states, atol=1e-12)
    np.testing.assert_allclose(studio.result.weights, fresh.attentions[studio.state.layer_index], atol=1e-12)


def test_every_edit_kind_is_one_undo_step(studio, model):
    seen = []
    studio.subscribe(seen.append)
    trained = studio.state
    steps = [
        lambda: studio.set_head_scale(1, 2, 0.0),
        lambda: studio.set_head_scale(0, 1, "1.5"),
        lambda: studio.set_weight("q", 1, 0, 3, 4, "0.75"),
        lambda: studio.set_weight("v", 0, 3, 0, 0, "−2"),
        lambda: studio.reset_head(1, 2),
        lambda: studio.reset_all(),
        lambda: studio.update(sentence="It was too tired to cross."),
        lambda: studio.update(second_sentence="The animal slept.", word="animal"),
    ]
    states = [trained]
    for step in steps:
        step()
        states.append(studio.state)
        _check_matches_fresh_run(studio, model)
        assert seen[-1].state is studio.state
    assert len(seen) == len(steps)
    assert studio.state.edits.is_trained  # after reset_all
    assert states[1].edits.head_scale == {(1, 2): 0.0}
    assert states[2].edits.head_scale == {(1, 2): 0.0, (0, 1): 1.5}
    assert states[3].edits.weights[(1, 0, "q")][3, 4] == 0.75
    assert states[4].edits.weights[(0, 3, "v")][0, 0] == -2.0
    assert (1, 2) not in states[5].edits.head_scale and (1, 0, "q") in states[5].edits.weights
    for expected in reversed(states[:-1]):
        assert studio.undo()
        assert studio.state == expected
        _check_matches_fresh_run(studio, model)
    assert not studio.undo() and not studio.is_modified
    for expected in states[1:]:
        assert studio.redo()
        assert studio.state == expected
        _check_matches_fresh_run(studio, model)
    assert not studio.redo()


def test_undo_after_many_steps_recomputes_what_was_forgotten(studio, model):
    for i in range(12):
        studio.set_head_scale(i % model.layers, i % model.heads, 0.1 * (i + 1))
    for _ in range(12):
        studio.undo()
        _check_matches_fresh_run(studio, model)
    assert studio.state.edits.is_trained


def test_bad_cells_are_refused_and_nothing_changes(studio, model):
    seen = []
    studio.subscribe(seen.append)
    before, result = studio.state, studio.result
    for text in ("abc", "nan", "1e400", "", "inf", "2e6"):
        with pytest.raises(StateError):
            studio.set_weight("k", 0, 0, 0, 0, text)
    with pytest.raises(StateError, match="row must be 1 to"):
        studio.set_weight("k", 0, 0, model.d_model, 0, "1")
    with pytest.raises(StateError, match="one of q, k, v"):
        studio.set_weight("o", 0, 0, 0, 0, "1")
    with pytest.raises(StateError, match="between 0 and 2"):
        studio.set_head_scale(0, 0, 2.5)
    with pytest.raises(StateError, match="layer must be 1 to"):
        studio.set_head_scale(model.layers, 0, 0.0)
    assert studio.state is before and studio.result is result
    assert not seen and not studio.can_undo


def test_text_longer_than_the_positions_is_refused(studio, model):
    before = studio.state
    seen = []
    studio.subscribe(seen.append)
    with pytest.raises(ModelError, match=f"knows only {model.max_positions} positions"):
        studio.update(sentence="word " * (model.max_positions + 5))
    with pytest.raises(ModelError, match="second sentence"):
        studio.update(second_sentence="word " * (model.max_positions + 5))
    assert studio.state is before and not seen


def test_typing_coalesces_into_one_undo_step(studio):
    for text in ("The", "The an", "The animal"):
        studio.update(sentence=text, coalesce="sentence")
        studio.test_clock.now += 0.2
    assert studio.state.sentence == "The animal"
    studio.undo()
    assert studio.state.sentence == TEXT and not studio.can_undo


def test_query_index_stays_inside_a_shorter_sentence(studio):
    studio.select(query=len(studio.state.tokens) - 1)
    studio.update(sentence="Short.")
    assert studio.state.query_index == len(studio.state.tokens) - 1


def test_is_modified_follows_edits_not_selection(studio):
    studio.set_head_scale(0, 0, 0.5)
    assert studio.is_modified
    studio.mark_saved()
    studio.select(head=1)
    assert not studio.is_modified
    studio.undo()
    assert studio.is_modified


# -- only the layers above an edit are recomputed -----------------------------------------------

def test_an_edit_recomputes_only_the_layers_above(studio, model):
    top = model.layers - 1
    before = studio.run
    studio.set_head_scale(top, 1, 0.0)
    after = studio.run
    for layer in range(top):
        assert after.layer_results[layer] is before.layer_results[layer]
    assert after.layer_results[top] is not before.layer_results[top]
    np.testing.assert_array_equal(after.hidden_states[:top + 1], before.hidden_states[:top + 1])
    assert not np.allclose(after.hidden_states[top + 1], before.hidden_states[top + 1])
    drift = studio.drift()
    assert np.all(drift[:top + 1] < 1e-12) and drift[top + 1] > 1e-9


def test_silencing_a_head_equals_zeroing_its_rows_of_w_o(tiny_bert):
    model = tiny_bert
    studio = TrainedStudio(model)
    layer, head = 0, 2
    studio.set_head_scale(layer, head, 0.0)
    trained = model.run(TEXT)
    x = trained.hidden_states[layer]
    expected = [_bert_layer(model, layer, x, zero_head=head)]
    for above in range(layer + 1, model.layers):
        expected.append(_bert_layer(model, above, expected[-1]))
    np.testing.assert_allclose(studio.run.hidden_states[layer + 1:], np.stack(expected), atol=1e-10)
    # And the by-hand layer is right: without zeroing it gives the trained run.
    np.testing.assert_allclose(_bert_layer(model, layer, x), trained.hidden_states[layer + 1], atol=1e-10)


def test_drift_mean_attention_and_rollout_by_hand(studio, model):
    studio.set_head_scale(0, 1, 0.0)
    trained, edited = model.run(TEXT), model.run(TEXT, edits=Edits().with_head_scale(0, 1, 0.0))
    expected_drift = [np.mean(1.0 - _cosine_rows(a, b)) for a, b in zip(edited.hidden_states, trained.hidden_states)]
    np.testing.assert_allclose(studio.drift(), expected_drift, atol=1e-12)
    np.testing.assert_allclose(studio.mean_attention(), edited.attentions.mean(axis=1), atol=1e-14)
    t = len(edited.tokens)
    current = np.eye(t)
    for layer in range(model.layers):
        a = 0.5 * edited.attentions[layer].mean(axis=0) + 0.5 * np.eye(t)
        a = a / a.sum(axis=1, keepdims=True)
        current = a @ current
        np.testing.assert_allclose(studio.rollout()[layer], current, atol=1e-13)
    for name in ("drift", "mean_attention", "rollout"):
        assert not getattr(studio, name)().flags.writeable


def test_word_paths_share_one_plane(studio, model):
    studio.update(sentence="The river bank was muddy.", second_sentence="The savings bank was closed.", word="bank")
    paths = studio.word_paths()
    assert studio.word_message == ""
    ra, rb = model.run("The river bank was muddy."), model.run("The savings bank was closed.")
    va = ra.hidden_states[:, list(ra.word_tokens("bank"))].mean(axis=1)
    vb = rb.hidden_states[:, list(rb.word_tokens("bank"))].mean(axis=1)
    np.testing.assert_allclose(paths.cosine, _cosine_rows(va, vb), atol=1e-12)
    stacked = np.concatenate([va, vb])
    plane = paths.projection
    np.testing.assert_allclose(np.concatenate([paths.path_a, paths.path_b]),
                               (stacked - plane.mean) @ plane.components.T, atol=1e-10)
    assert paths.path_a.shape == paths.path_b.shape == (model.layers + 1, 2)
    studio.update(word="zebra")
    assert studio.word_paths() is None and "zebra" in studio.word_message


# -- working off the GUI thread -------------------------------------------------------------------

def test_a_stale_computation_is_not_installed(studio):
    first = studio.prepare(sentence="The first text.")
    second = studio.prepare(sentence="The second text.")
    late = studio.compute(first)
    assert studio.install(late) is False
    assert studio.state.sentence == TEXT
    assert studio.install(studio.compute(second)) is True
    assert studio.state.sentence == "The second text."
    # A result prepared before another edit was installed is stale too.
    pending = studio.prepare(sentence="Third.")
    work = studio.compute(pending)
    studio.set_head_scale(0, 0, 0.0)
    assert studio.install(work) is False
    assert studio.state.sentence == "The second text." and studio.state.edits.head_scale == {(0, 0): 0.0}


def test_selection_while_computing_is_kept(studio):
    pending = studio.prepare(sentence="The animal was tired.")
    last = len(studio.state.tokens) - 1
    studio.select(head=3, layer=1, query=last)  # beyond the new, shorter text: pulled inside it
    assert studio.install(studio.compute(pending)) is True
    s = studio.state
    assert (s.sentence, s.head_index, s.layer_index) == ("The animal was tired.", 3, 1)
    assert s.query_index == len(s.tokens) - 1 < last
    assert studio.undo() and studio.state.sentence == TEXT


def test_compute_changes_nothing_and_is_pure(studio):
    pending = studio.prepare(sentence="Something else.")
    state, result = studio.state, studio.result
    a, b = studio.compute(pending), studio.compute(pending)
    assert studio.state is state and studio.result is result
    np.testing.assert_array_equal(a.run.attentions, b.run.attentions)


# -- headless matrices -----------------------------------------------------------------------------

def test_attention_matrix_headless(model):
    weights, rows, cols = attention_matrix(model, TEXT, 1, 2)
    run = model.run(TEXT)
    np.testing.assert_array_equal(weights, run.attentions[1, 2])
    assert rows == cols == run.tokens
    with pytest.raises(ModelError, match="layer must be"):
        attention_matrix(model, TEXT, model.layers, 0)
    edited, _, _ = attention_matrix(model, TEXT, 1, 2, Edits().with_head_scale(0, 0, 0.0))
    assert not np.allclose(edited, weights)


def test_studio_attention_matrix_is_the_selected_head(studio):
    studio.select(layer=1, head=3)
    weights, rows, cols = studio.attention_matrix()
    np.testing.assert_array_equal(weights, studio.result.weights[3])
    assert rows == cols == studio.state.key_tokens


def test_selection_fields_are_what_the_window_moves():
    assert SELECTION_FIELDS == {"layer_index", "head_index", "query_index", "rollout", "mean_heads"}


# -- MiniLM, where installed -------------------------------------------------------------------------

class TestMiniLM:
    def test_it_to_animal_and_silencing_that_head(self, minilm, golden):
        ref = golden("minilm")
        studio = TrainedStudio(minilm)
        tokens = studio.state.tokens
        it, animal = tokens.index("it"), tokens.index("animal")
        expected = ref["t0_attentions"][:, :, it, animal]
        layer, head = (int(i) for i in np.unravel_index(np.argmax(expected), expected.shape))
        studio.select(layer=layer, head=head, query=it)
        assert abs(studio.result.weights[head, it, animal] - expected[layer, head]) < 1e-9
        assert studio.result.weights[head, it, animal] > 0.6
        before = studio.run
        studio.set_head_scale(layer, head, 0.0)
        drift = studio.drift()
        assert np.all(drift[:layer + 1] < 1e-12) and np.all(drift[layer + 1:] > 1e-6)
        for lower in range(layer):
            assert studio.run.layer_results[lower] is before.layer_results[lower]

    def test_an_edit_in_layer_3_leaves_layers_0_to_2(self, minilm):
        studio = TrainedStudio(minilm)
        before = studio.run
        studio.set_weight("k", 3, 4, 0, 0, "0.5")
        for layer in range(3):
            assert studio.run.layer_results[layer] is before.layer_results[layer]
        for layer in range(3, minilm.layers):
            assert not np.array_equal(studio.run.attentions[layer], before.attentions[layer])
        studio.undo()
        np.testing.assert_array_equal(studio.run.attentions, before.attentions)

    def test_bank_curve(self, minilm):
        studio = TrainedStudio(minilm)
        a, b = "The river bank was muddy.", "The savings bank was closed."
        studio.update(sentence=a, second_sentence=b, word="bank")
        cosine = studio.word_paths().cosine
        ra, rb = minilm.run(a), minilm.run(b)
        ia, ib = ra.tokens.index("bank"), rb.tokens.index("bank")
        expected = _cosine_rows(ra.hidden_states[:, ia], rb.hidden_states[:, ib])
        np.testing.assert_allclose(cosine, expected, atol=1e-12)
        assert ia == ib and cosine[0] == pytest.approx(1.0, abs=1e-12)  # same token, same position
        assert cosine[-3:].max() < 0.95


def test_old_results_are_let_go(tiny_bert):
    # Each result once held the one before it: memory grew with every edit.
    import gc
    import weakref

    from attn_studio.trained import KEEP_COMPUTED

    studio = TrainedStudio(tiny_bert)
    refs = []
    for i in range(30):
        studio.set_head_scale(i % tiny_bert.layers, i % tiny_bert.heads, 0.05 * (i + 1))
        refs.append(weakref.ref(studio.run))
    gc.collect()
    assert len({id(r()) for r in refs if r() is not None}) == len([r for r in refs if r() is not None])
    alive = sum(r() is not None for r in refs)
    assert alive <= KEEP_COMPUTED + 1
    for _ in range(30):
        studio.undo()
    assert studio.state.edits.is_trained
    np.testing.assert_array_equal(studio.run.hidden_states, tiny_bert.run(TEXT).hidden_states)


def test_the_shared_plane_of_wide_vectors_needs_little_memory():
    # Two 7-layer paths of 384-wide vectors: the plane once built hundreds of
    # identity matrices on the way (450 MB for a picture of 14 points).
    import tracemalloc

    from attn_studio.engine import pca_2d

    points = np.random.default_rng(0).standard_normal((14, 384))
    tracemalloc.start()
    try:
        projection = pca_2d(points)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20
    np.testing.assert_allclose(projection.components @ projection.components.T, np.eye(2), atol=1e-12)


def test_open_model_by_folder_or_name(data_dir, tmp_path, monkeypatch):
    from attn_studio.trained import open_model

    assert open_model(str(data_dir / "tiny-gpt2")).kind == "gpt2"
    # A model in the Hugging Face cache is found by its name.
    snap = tmp_path / "hub" / "models--someone--tiny-bert" / "snapshots" / "abc1234"
    snap.parent.mkdir(parents=True)
    import shutil

    shutil.copytree(data_dir / "tiny-bert", snap)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    model = open_model("someone/tiny-bert")
    assert model.kind == "bert" and model.path == snap
    with pytest.raises(ModelError, match="no model folder or known model is called 'nothing-here'.*someone/tiny-bert"):
        open_model("nothing-here")


def test_an_edit_can_leave_the_unedited_run_for_later_and_gets_the_same_numbers(studio):
    # The window's pass for an edited model's new sentence runs the edited model alone when no view in
    # sight reads the unedited one; the unedited run and the drift are then worked out when first read.
    studio.update(sentence=TEXT, edits=Edits().with_head_scale(1, 0, 0.0))
    pending = studio.prepare(sentence="She went to the bank to get money out.")
    eager, later = studio.compute(pending), studio.compute(dataclasses.replace(pending, intact=False))
    assert not later.intact_known and eager.intact_known
    for a, b in zip(eager.run.layer_results, later.run.layer_results):
        assert np.array_equal(a.weights, b.weights) and np.array_equal(a.scores, b.scores)
    assert np.array_equal(eager.mean_attention, later.mean_attention)
    trained = later.trained_run  # worked out now, from layer 1 up (below it the edited run is the trained one)
    assert later.trained_run is trained  # kept
    for a, b in zip(eager.trained_run.layer_results, trained.layer_results):
        assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(eager.drift, later.drift) and later.drift[2:].max() > 0  # the edit moved layers 2..
    assert later.intact_known
    assert studio.install(later) and np.array_equal(studio.drift(), eager.drift)


def test_an_unedited_model_computes_its_one_run_whatever_is_asked(studio):
    studio.update(sentence=TEXT)
    computed = studio.compute(dataclasses.replace(studio.prepare(sentence="She went to the bank."), intact=False))
    assert computed.intact_known and computed.trained_run is computed.run
    assert not computed.drift.any()


def test_a_new_sentence_hands_its_selected_layer_over_before_the_pass_ends(studio, model):
    # The window draws the layer it shows while the rest of the pass runs: the hand-over comes once, before
    # the layers above it are computed, and is the very result the studio gives once installed.
    studio.update(sentence=TEXT)
    studio.select(layer=1)
    computed_layers = []
    real_layer = type(model)._layer

    def layer(m, index, *args):
        computed_layers.append(index)
        return real_layer(m, index, *args)

    shown = []
    type(model)._layer, saved = layer, real_layer
    try:
        sentences = iter(["She went to the bank to get money out.", "The river bank was muddy.",
                          "He sat on the bank.", "A bank lends money."])
        for edits in (Edits(), Edits().with_head_scale(0, 1, 0.0)):
            studio.update(edits=edits)
            for intact in (True, False):
                del computed_layers[:], shown[:]
                pending = dataclasses.replace(studio.prepare(sentence=next(sentences)), intact=intact)
                computed = studio.compute(pending, shown=lambda result: shown.append((result, list(computed_layers))))
                if intact and edits.head_scale:
                    assert not shown  # the edited run remade from the trained one: nothing handed over
                    continue
                assert len(shown) == 1
                result, done = shown[0]
                assert result is computed.run.layer_results[1] and done == [0, 1]
                assert studio.install(computed) and studio.result is result
        # The same sentence with other edits remakes the layers from the lowest edit: nothing handed over.
        del shown[:]
        computed = studio.compute(studio.prepare(edits=Edits().with_head_scale(1, 0, 0.0)), shown=shown.append)
        assert not shown and computed.run.layer_results[1] is not None
    finally:
        type(model)._layer = saved


def test_a_run_tells_each_layer_as_it_is_computed(model):
    told = []
    run = model.run(TEXT, on_layer=lambda layer, result: told.append((layer, result)))
    assert [layer for layer, _ in told] == list(range(model.layers))
    assert all(result is run.layer_results[layer] for layer, result in told)

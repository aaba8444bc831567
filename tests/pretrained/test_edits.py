"""Editing a trained model: silence or scale a head, replace a head's W_Q/W_K/W_V,
rerun from the lowest changed layer, measure how far the layers drifted."""

import numpy as np
import pytest

from attn_studio.engine import softmax
from attn_studio.pretrained import Edits, ModelError

TEXT = "The animal didn't cross the street because it was too tired."


@pytest.fixture(params=["tiny_bert", "tiny_gpt2"])
def model(request):
    return request.getfixturevalue(request.param)


def test_trained_edits_change_nothing(model):
    run = model.run(TEXT)
    again = model.run(TEXT, edits=Edits())
    np.testing.assert_array_equal(run.hidden_states, again.hidden_states)
    assert Edits().is_trained


def test_silencing_a_head_equals_a_zero_head_mask(model):
    edits = Edits().with_head_scale(1, 2, 0.0)
    mask = np.ones((model.layers, model.heads))
    mask[1, 2] = 0.0
    np.testing.assert_allclose(model.run(TEXT, edits=edits).hidden_states,
                               model.run(TEXT, head_mask=mask).hidden_states, atol=1e-13)


def test_head_scale_range_is_checked():
    with pytest.raises(ModelError, match="between 0 and 2"):
        Edits().with_head_scale(0, 0, 2.5)
    with pytest.raises(ModelError):
        Edits().with_head_scale(0, 0, "loud")


def test_rerun_recomputes_only_from_the_edited_layer(model):
    run = model.run(TEXT)
    edited = run.rerun(Edits().with_head_scale(1, 0, 0.0))
    # Layer 0 is reused as it was, object for object; layer 1 is new.
    assert edited.layer_results[0] is run.layer_results[0]
    assert edited.layer_results[1] is not run.layer_results[1]
    full = model.run(TEXT, edits=Edits().with_head_scale(1, 0, 0.0))
    np.testing.assert_allclose(edited.hidden_states, full.hidden_states, atol=1e-14)
    np.testing.assert_allclose(edited.attentions, full.attentions, atol=1e-14)


def test_rerun_finds_the_lowest_changed_layer(model):
    base_edits = Edits().with_head_scale(1, 3, 0.5)
    run = model.run(TEXT, edits=base_edits)
    lower = run.rerun(base_edits.with_head_scale(0, 1, 1.5))
    assert lower.layer_results[0] is not run.layer_results[0]
    # Going back to the trained model undoes everything.
    back = lower.rerun(Edits())
    np.testing.assert_allclose(back.hidden_states, model.run(TEXT).hidden_states, atol=1e-13)
    same = run.rerun(base_edits)
    assert all(a is b for a, b in zip(same.layer_results, run.layer_results))


def test_rerun_from_an_explicit_layer(model):
    run = model.run(TEXT)
    edits = Edits().with_head_scale(model.layers - 1, 0, 0.0)
    top = run.rerun_from(model.layers - 1, edits=edits)
    np.testing.assert_allclose(top.hidden_states, model.run(TEXT, edits=edits).hidden_states, atol=1e-14)
    with pytest.raises(ModelError):
        run.rerun_from(model.layers + 1)


def test_replacing_w_q_changes_that_head_as_the_formula_says(model):
    run = model.run(TEXT)
    layer, head = 1, 2
    rng = np.random.default_rng(0)
    new_w_q = rng.standard_normal((model.d_model, model.d_head))
    edited = run.rerun(Edits().with_weights(layer, head, "q", new_w_q))
    # By hand: the layer's input (layer-normed first for GPT-2), the new W_Q, the trained
    # bias, the unchanged keys; scaled dot product, softmax.
    x = run.hidden_states[layer]
    if model.kind == "gpt2":
        gamma, beta = model.weights.layers[layer].ln_1
        x = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + model.config.eps) * gamma + beta
    q = x @ new_w_q + model.weights.layers[layer].b_q[head]
    logits = q @ run.k[layer, head].T / np.sqrt(model.d_head)
    if model.kind == "gpt2":
        logits[np.triu(np.ones_like(logits, dtype=bool), 1)] = -np.inf
    np.testing.assert_allclose(edited.attentions[layer, head], softmax(logits), atol=1e-12)
    # The other heads of that layer and the layers below keep their weights.
    others = [h for h in range(model.heads) if h != head]
    np.testing.assert_array_equal(edited.attentions[layer, others], run.attentions[layer, others])
    np.testing.assert_array_equal(edited.attentions[:layer], run.attentions[:layer])
    # The trained weights themselves are untouched, and reset brings them back.
    np.testing.assert_array_equal(model.head_weights(layer, head)["q"], model.weights.layers[layer].w_q[head])
    reset = edited.rerun(edited.edits.reset_head(layer, head))
    np.testing.assert_allclose(reset.attentions, run.attentions, atol=1e-14)


def test_head_weights_for_tables(model):
    trained = model.head_weights(0, 1)
    assert trained["q"].shape == trained["k"].shape == trained["v"].shape == (model.d_model, model.d_head)
    with pytest.raises(ValueError):
        trained["q"][0, 0] = 1.0  # read-only: an edit is a new matrix, never in place
    changed = trained["v"].copy()
    changed[0, 0] += 1.0
    edits = Edits().with_weights(0, 1, "v", changed)
    assert model.head_weights(0, 1, edits)["v"][0, 0] == changed[0, 0]
    run = model.run(TEXT)
    # Values (not weights) changed: the attention pattern of that layer stays.
    edited = run.rerun(edits)
    np.testing.assert_array_equal(edited.attentions[0], run.attentions[0])
    assert not np.allclose(edited.hidden_states[1], run.hidden_states[1])


def test_wrong_edit_shape_is_refused(model):
    edits = Edits().with_weights(0, 0, "k", np.zeros((3, 3)))
    with pytest.raises(ModelError, match="d_model, d_head"):
        model.run(TEXT, edits=edits)
    with pytest.raises(ModelError, match="q, k, v"):
        Edits().with_weights(0, 0, "o", np.zeros((3, 3)))
    with pytest.raises(ModelError, match="finite"):
        Edits().with_weights(0, 0, "q", np.full((3, 3), np.inf))
    with pytest.raises(ModelError, match="layer"):
        model.run(TEXT, edits=Edits().with_head_scale(model.layers, 0, 0.0))


def test_drift_is_zero_below_the_edit_and_grows_above(model):
    run = model.run(TEXT)
    edited = run.rerun(Edits().with_head_scale(1, 1, 0.0))
    drift = edited.drift(run)
    assert drift.shape == (model.layers + 1,)
    np.testing.assert_allclose(drift[:2], 0.0, atol=1e-15)   # embeddings and layer 0's output
    assert drift[2] > 1e-6
    # By hand: mean over tokens of 1 - cos.
    a, b = edited.hidden_states[2], run.hidden_states[2]
    cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert drift[2] == pytest.approx(np.mean(1 - cos), abs=1e-14)
    with pytest.raises(ModelError):
        edited.drift(model.run("another text"))


def test_edits_round_trip_through_plain_data(model):
    edits = Edits().with_head_scale(1, 2, 0.25).with_weights(0, 3, "k", np.arange(model.d_model * model.d_head)
                                                               .reshape(model.d_model, model.d_head) / 100)
    data = edits.to_dict()
    import json
    back = Edits.from_dict(json.loads(json.dumps(data)))
    assert back.first_difference(edits) is None
    assert dict(back.head_scale) == {(1, 2): 0.25}
    with pytest.raises(ModelError):
        Edits.from_dict({"head_scale": [[0, 0, 9.0]]})
    with pytest.raises(ModelError):
        Edits.from_dict({"head_scale": [["x", 0, 1.0]]})
    with pytest.raises(ModelError):
        Edits.from_dict({"weights": [[0, 0]]})


def test_rollout_and_mean_attention_of_a_run(tiny_bert):
    run = tiny_bert.run(TEXT)
    mean = run.mean_attention()
    np.testing.assert_allclose(mean, run.attentions.mean(axis=1))
    rollout = run.rollout()
    assert rollout.shape == (2, len(run.tokens), len(run.tokens))
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-12)


def test_word_tokens_cover_word_pieces(tiny_bert):
    run = tiny_bert.run("The feedforward street.")
    pieces = run.word_tokens("feedforward")
    assert len(pieces) > 1
    assert "".join(run.tokens[i].removeprefix("##") for i in pieces) == "feedforward"
    assert run.word_tokens("FEEDFORWARD") == pieces
    assert run.word_tokens("street") == (run.tokens.index("street"),)
    with pytest.raises(ModelError, match="does not occur"):
        run.word_tokens("bank")
    with pytest.raises(ModelError, match="does not occur"):
        run.word_tokens("feed")  # whole words only


def test_compare_word_in_two_sentences(tiny_gpt2):
    cmp = tiny_gpt2.compare_word("I sat by the river bank.", "The money is in the bank.", "bank")
    assert cmp.cosine.shape == (tiny_gpt2.layers + 1,)
    manual = [np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b) for a, b in zip(cmp.vectors_a, cmp.vectors_b)]
    np.testing.assert_allclose(cmp.cosine, manual, atol=1e-12)
    np.testing.assert_allclose(cmp.vectors_a, cmp.run_a.hidden_states[:, list(cmp.tokens_a)].mean(1))


def test_empty_text(tiny_bert, tiny_gpt2):
    assert tiny_bert.run("").tokens == ["[CLS]", "[SEP]"]
    run = tiny_gpt2.run("")
    assert run.tokens == [] and run.attentions.shape == (2, 4, 0, 0)
    assert run.hidden_states.shape == (3, 0, 32)


def test_table_cell_edits(model):
    edits = model.with_cell(None, 1, 2, "k", 3, 4, 0.5)
    edits = model.with_cell(edits, 1, 2, "k", 0, 0, -1.25)
    w_k = model.head_weights(1, 2, edits)["k"]
    trained = model.head_weights(1, 2)["k"]
    assert w_k[3, 4] == 0.5 and w_k[0, 0] == -1.25
    changed = np.argwhere(w_k != trained)
    assert {tuple(c) for c in changed} <= {(3, 4), (0, 0)}
    for bad in ("abc", float("nan"), 1e400):
        with pytest.raises(ModelError):
            model.with_cell(edits, 1, 2, "k", 0, 0, bad)
    with pytest.raises(ModelError, match="outside"):
        model.with_cell(edits, 1, 2, "k", model.d_model, 0, 1.0)
    assert model.head_weights(1, 2, edits)["k"][0, 0] == -1.25  # a refused edit keeps the old value


def test_weights_hash_names_the_file(model):
    import hashlib

    expected = hashlib.sha256((model.path / "model.safetensors").read_bytes()).hexdigest()
    assert model.weights_sha256() == expected


@pytest.mark.parametrize("edit", ["silence", "scale", "w_q", "w_k", "w_v", "last layer", "two"])
def test_the_first_layer_whose_attention_changes_is_the_engine_s(model, edit):
    """first_attention_changed says which layers' attention an edit leaves as trained (the Compare view
    writes it under a difference of zeros): checked against the attention the engine computes."""
    rng = np.random.default_rng(3)
    w = rng.normal(0.0, 0.5, (model.d_model, model.d_head))
    last = model.layers - 1
    edits = {"silence": Edits().with_head_scale(1, 2, 0.0), "scale": Edits().with_head_scale(0, 1, 1.5),
             "w_q": Edits().with_weights(1, 0, "q", w), "w_k": Edits().with_weights(0, 3, "k", w),
             "w_v": Edits().with_weights(0, 0, "v", w), "last layer": Edits().with_head_scale(last, 0, 0.0),
             "two": Edits().with_head_scale(1, 0, 0.0).with_weights(1, 1, "k", w)}[edit]
    trained, edited = model.run(TEXT).attentions, model.run(TEXT, edits=edits).attentions
    first = edits.first_attention_changed()
    changed = [layer for layer in range(model.layers) if not np.array_equal(trained[layer], edited[layer])]
    assert changed == list(range(first, model.layers))
    assert Edits().first_attention_changed() is None

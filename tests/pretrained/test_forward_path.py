"""The trained model's forward pass: the same numbers as the engine's checked functions, and an edit
recomputes only the layers at and above the one it changes."""

from __future__ import annotations

import numpy as np
import pytest

from attn_studio.engine import feed_forward, layer_norm, multi_head_attention
from attn_studio.pretrained import Edits
from attn_studio.pretrained import model as model_module


def _engine_layer(model, layer, x, scale):
    """One layer through the engine's public (checked) functions, as the forward pass did before."""
    cfg, lw = model.config, model.weights.layers[layer]
    common = dict(b_q=lw.b_q, b_k=lw.b_k, b_v=lw.b_v, b_o=lw.b_o, head_mask=scale[layer],
                  scale=cfg.scale_attention, temperature=float(layer + 1) if cfg.scale_by_layer else 1.0)
    if cfg.kind == "bert":
        att = multi_head_attention(x, lw.w_q, lw.w_k, lw.w_v, lw.w_o, **common)
        h = layer_norm(att.output + x, *lw.ln_1, eps=cfg.eps)
        ff = feed_forward(h, lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)
        return layer_norm(ff + h, *lw.ln_2, eps=cfg.eps), att
    a_in = layer_norm(x, *lw.ln_1, eps=cfg.eps)
    att = multi_head_attention(a_in, lw.w_q, lw.w_k, lw.w_v, lw.w_o, causal=True, **common)
    h = x + att.output
    ff = feed_forward(layer_norm(h, *lw.ln_2, eps=cfg.eps), lw.w_1, lw.b_1, lw.w_2, lw.b_2, cfg.activation)
    return h + ff, att


@pytest.mark.parametrize("name", ["tiny_bert", "tiny_gpt2"])
def test_the_forward_pass_gives_the_engines_numbers_exactly(name, request):
    # The same operations in the same order in one process: equal to the last bit.
    model = request.getfixturevalue(name)
    mask = np.ones((model.layers, model.heads))
    mask[0, 1] = 0.0
    mask[-1, 0] = 1.5
    run = model.run("the cat sat on the mat", head_mask=mask)
    x = run._stream[0]
    for layer in range(model.layers):
        x, att = _engine_layer(model, layer, x, mask)
        mine = run.layer_results[layer]
        for field in ("q", "k", "v", "scores", "logits", "weights", "head_outputs", "concat", "output"):
            assert np.array_equal(getattr(mine, field), getattr(att, field)), (layer, field)
        assert np.array_equal(run._stream[layer + 1], x), layer


def test_an_edit_of_the_last_layer_recomputes_only_that_layer(tiny_bert, monkeypatch):
    run = tiny_bert.run("the cat sat on the mat")
    top = tiny_bert.layers - 1
    computed = []
    real = model_module.TrainedModel._layer

    def counting(self, layer, *args, **kwargs):
        computed.append(layer)
        return real(self, layer, *args, **kwargs)

    monkeypatch.setattr(model_module.TrainedModel, "_layer", counting)
    edits = Edits().with_head_scale(top, 1, 0.0)
    edited = run.rerun(edits)
    assert computed == [top]
    # Reusing the layers below gives what a whole pass with the same edits gives.
    computed.clear()
    whole = tiny_bert.run("the cat sat on the mat", edits=edits)
    assert computed == list(range(tiny_bert.layers))
    assert np.array_equal(edited.hidden_states, whole.hidden_states)
    assert np.array_equal(edited.attentions, whole.attentions)
    assert all(edited.layer_results[l] is run.layer_results[l] for l in range(top))


def test_a_studio_edit_of_the_top_layer_recomputes_only_it_in_both_sentences(tiny_bert, monkeypatch):
    from attn_studio.trained import TrainedStudio

    studio = TrainedStudio(tiny_bert)
    studio.update(sentence="the cat sat on the mat", second_sentence="a cat on a mat", word="cat")
    top = tiny_bert.layers - 1
    computed = []
    real = model_module.TrainedModel._layer
    monkeypatch.setattr(model_module.TrainedModel, "_layer",
                        lambda self, layer, *a, **k: computed.append(layer) or real(self, layer, *a, **k))
    studio.set_head_scale(top, 0, 0.0)
    assert computed == [top, top]  # the sentence and the second sentence; the trained run is reused
    # Below the edit the vectors are the trained ones (a cosine of a vector with itself: rounding only).
    assert studio.computed.drift[top + 1] > 1e-9 and np.abs(studio.computed.drift[: top + 1]).max() < 1e-12

"""Head Lab: each head's report card, finding heads, norm attention, importance by ablation.

Hand-built attention patterns (a run needs only ``attentions``, ``tokens`` and the
model's ``kind`` for the report and for find_heads), the tiny checkpoints for what
needs a real forward pass, and MiniLM for the classic "it" -> "animal" heads.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from attn_studio.engine import layer_norm
from attn_studio.pretrained import (
    Cancelled,
    Edits,
    HeadReport,
    ModelError,
    find_heads,
    head_importance,
    head_report,
    norm_attention,
)
from attn_studio.pretrained import heads as heads_module

ANIMAL = "The animal didn't cross the street because it was too tired."


def pattern_run(attentions, tokens, kind="bert"):
    """A stand-in for a ModelRun with hand-built attention (L, H, T, T)."""
    a = np.asarray(attentions, dtype=np.float64)
    return SimpleNamespace(attentions=a, tokens=list(tokens), model=SimpleNamespace(kind=kind))


@pytest.fixture(params=["tiny_bert", "tiny_gpt2"])
def model(request):
    return request.getfixturevalue(request.param)


# -- the report card ------------------------------------------------------------------------------

PREVIOUS = [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]
UNIFORM = [[0.25] * 4] * 4
FIRST = [[1, 0, 0, 0]] * 4
# previous = (0.5 + 0.5 + 0.5) / 3 and self = 4 * 0.5 / 4: an exact tie at 0.5.
TIE = [[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0.5, 0.5]]
# Mostly on token 2, a word that is not punctuation: nothing reaches 0.5, not spread out.
PEAKED = [[0.05, 0.05, 0.85, 0.05]] * 4
NEXT = [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1]]


def test_report_of_hand_built_heads():
    run = pattern_run([[PREVIOUS, UNIFORM, FIRST, TIE, PEAKED, NEXT]], ["[CLS]", "a", "b", "[SEP]"])
    report = head_report(run)
    assert isinstance(report, HeadReport)
    for name in HeadReport.MEASURES + ("role",):
        assert getattr(report, name).shape == (1, 6)
    np.testing.assert_allclose(report.previous[0], [1, 0.25, 1 / 3, 0.5, (0.05 + 0.85 + 0.05) / 3, 0], atol=1e-15)
    np.testing.assert_allclose(report.next[0], [0, 0.25, 0, 0.5 / 3, (0.85 + 0.05 + 0.05) / 3, 1], atol=1e-15)
    np.testing.assert_allclose(report.self_[0], [0.25, 0.25, 0.25, 0.5, 0.25, 0.25], atol=1e-15)
    np.testing.assert_allclose(report.first[0], [0.5, 0.25, 1, 0.25, 0.05, 0], atol=1e-15)
    np.testing.assert_allclose(report.last[0], [0, 0.25, 0, 0.125, 0.05, 0.5], atol=1e-15)
    np.testing.assert_allclose(report.confidence[0], [1, 0.25, 1, 0.5, 0.85, 1], atol=1e-15)
    peaked_entropy = -(3 * 0.05 * math.log(0.05) + 0.85 * math.log(0.85))
    np.testing.assert_allclose(report.entropy[0], [0, math.log(4), 0, math.log(2), peaked_entropy, 0], atol=1e-15)
    np.testing.assert_allclose(report.entropy_norm[0], report.entropy[0] / math.log(4), atol=1e-15)
    assert report.entropy_norm[0, 1] == pytest.approx(1.0)
    assert list(report.role[0]) == ["previous token", "broad", "first token", "previous token", "mixed",
                                    "next token"]


def test_report_arrays_are_read_only():
    report = head_report(pattern_run([[UNIFORM]], ["[CLS]", "a", "b", "[SEP]"]))
    with pytest.raises(ValueError):
        report.entropy[0, 0] = 1.0
    with pytest.raises(AttributeError):
        report.entropy = None


def test_roles_last_and_punctuation_and_the_broad_threshold():
    last = [[0, 0, 0, 1]] * 4
    on_comma = [[0.1, 0.1, 0.7, 0.1]] * 4
    # Spread out (entropy / ln 4 = 0.93), no measure at 0.5.
    spread = np.array([0.46, 0.18, 0.18, 0.18])
    report = head_report(pattern_run([[last, on_comma, [list(spread)] * 4]], ["[CLS]", "a", ",", "[SEP]"]))
    assert report.punctuation[0, 1] == pytest.approx(0.7)
    h = -(spread * np.log(spread)).sum() / math.log(4)
    assert report.entropy_norm[0, 2] == pytest.approx(h)
    assert h > 0.8
    assert list(report.role[0]) == ["last token", "punctuation", "broad"]


def test_punctuation_rule_on_hand_written_tokens():
    # Unicode categories P*: « » — … % # count; $ + = ^ | ~ € are symbols (S*) and do not.
    tokens = ["[CLS]", "«", "wait", "—", "…", "%", "$", "+", "=", "^", "|", "~", "€", "#", "?!", "[SEP]"]
    counted = [1, 3, 4, 5, 13, 14]
    mask = heads_module.punctuation_tokens(pattern_run(np.zeros((1, 1, 16, 16)), tokens))
    assert list(np.flatnonzero(mask)) == counted


def test_bert_family_never_counts_the_first_and_last_positions():
    a = np.full((1, 1, 3, 3), 1 / 3)
    bert = head_report(pattern_run(a, ["!", "a", "!"], kind="bert"))
    gpt2 = head_report(pattern_run(a, ["!", "a", "!"], kind="gpt2"))
    assert bert.punctuation[0, 0] == 0.0
    assert gpt2.punctuation[0, 0] == pytest.approx(2 / 3)


def test_gpt2_tokens_are_read_without_their_space_marker():
    tokens = ["Well", "Ġ(", "Ġ", "Ġyes", ")", "Ġ\u2014"]
    mask = heads_module.punctuation_tokens(pattern_run(np.zeros((1, 1, 6, 6)), tokens, kind="gpt2"))
    # "Ġ(" is "(", a lone "Ġ" is only a space (not punctuation), "Ġ—" is "—".
    assert list(np.flatnonzero(mask)) == [1, 4, 5]


def test_punctuation_on_a_punctuation_dense_sentence(minilm):
    run = minilm.run("Wait \u2014 no, it was \u00ab fine \u00bb\u2026 (100%); ok?! $5 + 3 = 8 \u20ac ^ | ~ #")
    by_hand = {"\u2014", ",", "\u00ab", "\u00bb", "\u2026", "(", "%", ")", ";", "?", "!", "#"}
    assert not {"$", "+", "=", "\u20ac", "^", "|", "~"} - set(run.tokens)  # the symbols are tokens of their own
    counted = [j for j, tok in enumerate(run.tokens) if tok in by_hand]
    assert len(counted) == 12
    report = head_report(run)
    expected = run.attentions[..., counted].sum(axis=-1).mean(axis=-1)
    np.testing.assert_allclose(report.punctuation, expected, rtol=0, atol=1e-14)


def test_one_token(tiny_gpt2):
    run = tiny_gpt2.run("a")
    assert len(run.tokens) == 1
    report = head_report(run)
    for name, value in (("entropy", 0.0), ("entropy_norm", 0.0), ("previous", 0.0), ("next", 0.0),
                        ("self_", 1.0), ("first", 1.0), ("last", 1.0), ("confidence", 1.0)):
        np.testing.assert_array_equal(getattr(report, name), np.full((2, 4), value), err_msg=name)
    assert (report.role == "self").all()  # self, first and last tie at 1: self comes first


def test_report_of_a_real_run_follows_its_attention(model):
    run = model.run(ANIMAL)
    report = head_report(run)
    a = run.attentions
    t = a.shape[-1]
    np.testing.assert_allclose(report.previous, np.mean([a[..., i, i - 1] for i in range(1, t)], axis=0), atol=1e-14)
    np.testing.assert_allclose(report.last, a[..., -1].mean(axis=-1), atol=1e-14)
    assert set(report.role.ravel()) <= {"previous token", "next token", "self", "first token", "last token",
                                         "punctuation", "broad", "mixed"}
    if model.kind == "gpt2":  # causal: row 0 sees only itself, no row sees its next token
        np.testing.assert_array_equal(report.next, 0.0)


# -- finding heads --------------------------------------------------------------------------------


def test_find_heads_orders_by_weight_then_by_layer_and_head():
    t = 3
    a = np.zeros((2, 2, t, t))
    a[..., :, 0] = 1.0
    a[0, 1, 1] = [0.2, 0.0, 0.8]
    a[1, 0, 1] = [0.5, 0.0, 0.5]
    a[1, 1, 1] = [0.2, 0.0, 0.8]   # ties with (0, 1): (0, 1) first
    found = find_heads(pattern_run(a, ["x", "y", "z"]), 1, 2)
    assert found == [(0, 1, 0.8), (1, 1, 0.8), (1, 0, 0.5), (0, 0, 0.0)]
    assert all(type(n) is int for l, h, _ in found for n in (l, h)) and all(type(w) is float for *_, w in found)


def test_find_heads_with_words_split_into_pieces(tiny_bert):
    run = tiny_bert.run("wait, it was fine")
    assert len(run.word_tokens("fine")) > 1 and len(run.word_tokens("wait")) > 1
    q, k = run.word_tokens("fine"), run.word_tokens("wait")
    found = find_heads(run, "fine", "wait")
    a = run.attentions
    for layer, head, weight in found:
        by_hand = np.mean([sum(a[layer, head, i, j] for j in k) for i in q])
        assert weight == pytest.approx(by_hand, abs=1e-14)
    assert len(found) == tiny_bert.layers * tiny_bert.heads


def test_it_attends_to_animal_in_two_heads(minilm):
    found = find_heads(minilm.run(ANIMAL), "it", "animal")
    # Layer 4 head 2 and layer 6 head 12, counted from 1.
    assert {found[0][:2], found[1][:2]} == {(3, 1), (5, 11)}
    assert found[0][2] == pytest.approx(0.68, abs=0.005) and found[1][2] == pytest.approx(0.68, abs=0.01)
    assert found[2][2] < 0.5


@pytest.mark.parametrize("query, key, words", [
    (99, 0, ["query", "99", "out of range"]),
    (0, 12, ["key", "12", "out of range"]),
    (-1, 0, ["query", "-1", "negative"]),
    ("zebra", 0, ["zebra"]),
    (0, "zebra", ["zebra"]),
    ("", 0, ["query", "empty"]),
    (True, 0, ["query"]),
    (1.5, 0, ["query", "float"]),
])
def test_find_heads_refuses_what_is_not_in_the_sentence(tiny_bert, query, key, words):
    run = tiny_bert.run("the animal was tired")
    assert len(run.tokens) == 6
    with pytest.raises(ModelError) as err:
        find_heads(run, query, key)
    for word in words:
        assert word in str(err.value)


def test_an_empty_text_is_refused(tiny_gpt2):
    run = tiny_gpt2.run("")
    for measure in (norm_attention, head_report, head_importance, heads_module.attention_flow):
        with pytest.raises(ModelError, match="no tokens"):
            measure(run)
    with pytest.raises(ModelError, match="no tokens"):
        find_heads(run, 0, 0)


# -- norm attention -------------------------------------------------------------------------------


def edited(model):
    rng = np.random.default_rng(7)
    edits = (Edits().with_head_scale(1, 2, 0.0).with_head_scale(0, 1, 1.5)
             .with_weights(1, 0, "v", rng.standard_normal((model.d_model, model.d_head))))
    return model.run(ANIMAL, edits=edits)


def test_value_vectors_rebuild_each_layers_attention_output(model):
    run = edited(model)
    for layer in range(model.layers):
        f = heads_module.value_vectors(run, layer)                     # (H, T, d_model)
        a = run.attentions[layer]                                       # (H, T, T)
        rebuilt = np.einsum("hij,hjd->id", a, f) + model.weights.layers[layer].b_o
        np.testing.assert_allclose(rebuilt, run.layer_results[layer].output, rtol=0, atol=1e-12)


def test_norm_attention_is_the_length_of_each_weighted_value(model):
    run = edited(model)
    n = norm_attention(run)
    assert n.shape == run.attentions.shape
    for layer in range(model.layers):
        f = heads_module.value_vectors(run, layer)
        weighted = run.attentions[layer][..., None] * f[:, None, :, :]   # (H, T, T, d_model)
        np.testing.assert_allclose(n[layer], np.linalg.norm(weighted, axis=-1), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(n[1, 2], 0.0)                          # the silenced head
    assert (n[0, 1] > 0).any() and (n[1, 0] > 0).any()


def test_gpt2_values_come_from_the_first_layer_norm(tiny_gpt2):
    run = tiny_gpt2.run(ANIMAL)
    lw = tiny_gpt2.weights.layers[1]
    v = layer_norm(run.hidden_states[1], *lw.ln_1, eps=tiny_gpt2.config.eps) @ lw.w_v[3] + lw.b_v[3]
    w_o = lw.w_o[3 * tiny_gpt2.d_head:4 * tiny_gpt2.d_head]
    by_hand = run.attentions[1, 3] * np.linalg.norm(v @ w_o, axis=-1)[None, :]
    np.testing.assert_allclose(norm_attention(run)[1, 3], by_hand, rtol=1e-12, atol=1e-15)


# -- importance -----------------------------------------------------------------------------------


def importance_by_reruns(run):
    """The definition, one full rerun per head through the model's own forward pass."""
    e = run.hidden_states[-1].mean(axis=0)
    out = np.zeros(run.head_scale.shape)
    for layer, head in np.ndindex(*out.shape):
        if run.head_scale[layer, head] == 0:
            continue
        silenced = run.rerun_from(0, head_mask=run.head_mask, edits=run.edits.with_head_scale(layer, head, 0.0))
        e2 = silenced.hidden_states[-1].mean(axis=0)
        out[layer, head] = 1 - e @ e2 / (np.linalg.norm(e) * np.linalg.norm(e2))
    return out


def test_importance_equals_one_rerun_per_head(model):
    mask = np.ones((model.layers, model.heads))
    mask[0, 3] = 0.0
    run = model.run(ANIMAL, head_mask=mask, edits=edited(model).edits)
    importance = head_importance(run)
    np.testing.assert_allclose(importance, importance_by_reruns(run), rtol=0, atol=1e-12)
    assert importance[0, 3] == 0.0 and importance[1, 2] == 0.0      # silenced by the mask and by an edit
    live = np.ones_like(mask, dtype=bool)
    live[0, 3] = live[1, 2] = False
    assert (importance[live] > 0).all()


def test_importance_of_long_texts_in_smaller_groups(tiny_gpt2, monkeypatch):
    run = tiny_gpt2.run(ANIMAL)
    whole = head_importance(run)
    t = len(run.tokens)
    monkeypatch.setattr(heads_module, "ABLATION_BLOCK", tiny_gpt2.heads * t * t)   # one head at a time
    np.testing.assert_allclose(head_importance(run), whole, rtol=0, atol=1e-14)


def test_progress_counts_every_head_and_can_stop(tiny_bert):
    run = tiny_bert.run(ANIMAL)
    calls = []
    head_importance(run, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 8) for i in range(1, 9)]

    calls.clear()

    def stop_at_three(done, total):
        calls.append(done)
        return done < 3

    with pytest.raises(Cancelled):
        head_importance(run, progress=stop_at_three)
    assert calls == [1, 2, 3]

    with pytest.raises(Cancelled):
        head_importance(run, progress=lambda d, t: calls.append(d), cancel=lambda: True)
    assert calls == [1, 2, 3]   # asked before the first head: nothing computed, nothing reported

    calls.clear()
    with pytest.raises(Cancelled):   # asked again before the second layer's heads
        head_importance(run, progress=lambda d, t: calls.append(d), cancel=lambda: len(calls) >= 4)
    assert calls == [1, 2, 3, 4]


def test_value_vectors_name_a_bad_layer(tiny_bert):
    run = tiny_bert.run("the animal")
    for layer in (2, -1, True):
        with pytest.raises(ModelError, match=f"got {layer!r}"):
            heads_module.value_vectors(run, layer)

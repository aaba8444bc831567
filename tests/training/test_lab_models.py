"""Lab models are models: an arm saved with exp.save_model opens with load_pretrained and gives the
lab's own attention and output scores, from token ids or from typed names; silencing a head is an
independent forward pass with that head zeroed; a run is trained again from its recipe. No Qt."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attn_studio.pretrained import LAB_KIND, LabModel, ModelError, load_pretrained
from attn_studio.training import InductionExperiment, ScalingExperiment, Seq2SeqExperiment, TrainingError
from attn_studio.training import lab_models
from attn_studio.training.lab_models import INDUCTION_TOKENS, recipe, train_arm, train_recipe

TOL = 1e-12  # the same float64 numbers, summed in another order (the lab folds 1/sqrt(d_head) into W_Q)


@pytest.fixture(scope="module")
def induction(tmp_path_factory):
    """Seed 3 after 40 steps (no longer uniform attention) and both arms saved."""
    exp = InductionExperiment(seed=3)
    exp.run(40)
    root = tmp_path_factory.mktemp("lab")
    return exp, {arm: exp.save_model(arm, root / arm.replace(" ", "-")) for arm in exp.arms}


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_saved_arm_is_a_model_folder_with_named_tokens(induction):
    exp, folders = induction
    folder = folders["two layers"]
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "vocab.json"]
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == LAB_KIND == "attention-only"
    assert config["training"] == {"experiment": "induction", "arm": "two layers", "seed": 3, "steps": 40, "lr": 0.003}
    assert json.loads((folder / "vocab.json").read_text())["tokens"] == list("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
    model = load_pretrained(folder)
    assert isinstance(model, LabModel) and model.kind == "attention-only"
    assert (model.name, model.layers, model.heads, model.d_model, model.d_head, model.max_positions) == (
        "lab two layers (seed 3, step 40)", 2, 2, 32, 16, 32)
    assert load_pretrained(folders["one layer"]).layers == 1
    assert not list(folder.parent.glob(".*"))  # no temporary folder left beside it


@pytest.mark.parametrize("arm", ["one layer", "two layers"])
def test_the_loaded_model_gives_the_labs_attention_and_logits(induction, arm):
    exp, folders = induction
    model = load_pretrained(folders[arm])
    for step in (1000, 1001):
        batch = exp.batch(step)
        for row in range(0, 32, 7):
            tokens = batch["tokens"][row]
            run = model.run_ids(tokens)
            expected = exp.models[arm].attention(tokens[None])[:, 0]
            assert run.attentions.dtype == np.float64 and run.attentions.shape == expected.shape
            np.testing.assert_allclose(run.attentions, expected, rtol=0, atol=TOL)
            np.testing.assert_allclose(model.logits(tokens), exp.models[arm].logits(tokens[None])[0], rtol=0,
                                       atol=1e-11)
            assert run.tokens == [INDUCTION_TOKENS[t] for t in tokens]
            assert list(run.ids) == list(tokens)  # as given: no special tokens
        # Rows (B, T) as the lab's own models take them: the same shapes and numbers.
        rows = batch["tokens"][:3]
        np.testing.assert_allclose(model.attention(rows), exp.models[arm].attention(rows), rtol=0, atol=TOL)
        np.testing.assert_allclose(model.logits(rows), exp.models[arm].logits(rows), rtol=0, atol=1e-11)


def _forward(params: dict, layers: int, tokens: np.ndarray, mask: np.ndarray):
    """An independent forward pass of the attention-only transformer from the saved arrays, with head
    (l, h) zeroed before W_O where mask[l, h] is 0: ``(attentions (L, H, T, T), logits (T, vocab))``."""
    t = len(tokens)
    x = params["W_E"][tokens] + params["W_pos"][:t]
    patterns = []
    for layer in range(layers):
        q, k, v = (x @ params[f"layer{layer}.{name}"] for name in ("W_Q", "W_K", "W_V"))
        heads = []
        layer_patterns = []
        for h in range(2):
            cols = slice(16 * h, 16 * (h + 1))
            scores = q[:, cols] @ k[:, cols].T / 4.0
            scores[np.triu_indices(t, 1)] = -np.inf
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights /= weights.sum(axis=1, keepdims=True)
            layer_patterns.append(weights)
            heads.append(mask[layer, h] * weights @ v[:, cols])
        patterns.append(layer_patterns)
        x = x + np.concatenate(heads, axis=1) @ params[f"layer{layer}.W_O"]
    return np.array(patterns), x @ params["W_U"]


def test_silencing_a_head_is_a_forward_pass_with_it_zeroed(induction):
    exp, folders = induction
    model = load_pretrained(folders["two layers"])
    tokens = exp.batch(7)["tokens"][0]
    params = exp.models["two layers"].params
    for mask in (np.ones((2, 2)), np.array([[0, 1], [1, 1]]), np.array([[1, 1], [0, 0]]), np.array([[1, 0], [1, 0]])):
        run = model.run_ids(tokens, head_mask=mask)
        attentions, logits = _forward(params, 2, tokens, mask)
        np.testing.assert_allclose(run.attentions, attentions, rtol=0, atol=TOL)
        np.testing.assert_allclose(model.output_logits(run), logits, rtol=0, atol=1e-11)
    # A silenced first-layer head changes what the second layer sees.
    assert not np.allclose(model.run_ids(tokens, head_mask=[[0, 1], [1, 1]]).attentions[1], model.run_ids(tokens).attentions[1])


def test_a_typed_sequence_is_read_as_token_names(induction):
    _, folders = induction
    model = load_pretrained(folders["two layers"])
    run = model.run("KDQB kdqb")  # letters written together, case ignored
    assert run.tokens == list("KDQBKDQB") and list(run.ids) == [10, 3, 16, 1] * 2
    assert model.run("K D Q 5").tokens == ["K", "D", "Q", "5"]
    assert run.word_tokens("kdqb") == (0, 1, 2, 3)  # each token's place in the text
    np.testing.assert_array_equal(model.run_ids([10, 3, 16, 1] * 2).attentions, run.attentions)
    for bad, words in (("KD!Q", "'!'"), ("KD 9", "'9'"), ("", "at least one token"), ("AB" * 17, "34 tokens")):
        with pytest.raises(ModelError) as info:
            model.run(bad)
        assert words in str(info.value), str(info.value)
    for ids, words in (([32], "0..31"), ([-1], "0..31"), ([[1, 2]], "one non-empty"), ([], "one non-empty"),
                       ([1.5], "whole numbers"), (list(range(32)) + [0], "33 tokens")):
        with pytest.raises(ModelError, match=words):
            model.run_ids(ids)


def test_the_default_sentence_is_a_random_stretch_twice(induction):
    _, folders = induction
    model = load_pretrained(folders["two layers"])
    text = model.example_text(0)
    first, second = text.split()
    assert first == second and len(first) == 10 and set(first) <= set(INDUCTION_TOKENS)
    assert model.example_text(0) == text and model.example_text(1) != text  # seeded
    from attn_studio.trained import TrainedStudio

    assert TrainedStudio(model).state.sentence == text and TrainedStudio(model).state.causal


def test_save_refuses_other_folders_and_replaces_a_lab_model(induction, tmp_path):
    exp, _ = induction
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "lecture.txt").write_text("mine")
    with pytest.raises(TrainingError, match="already holds other files"):
        exp.save_model("two layers", tmp_path / "notes")
    assert (tmp_path / "notes" / "lecture.txt").read_text() == "mine"  # untouched
    (tmp_path / "file").write_text("x")
    with pytest.raises(TrainingError, match="is a file"):
        exp.save_model("two layers", tmp_path / "file")
    with pytest.raises(TrainingError, match="arm must be one of"):
        exp.save_model("three layers", tmp_path / "m")
    empty = tmp_path / "empty"
    empty.mkdir()
    exp.save_model("one layer", empty)
    assert load_pretrained(empty).layers == 1
    exp.save_model("two layers", empty)  # a lab model folder is replaced
    assert load_pretrained(empty).layers == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "file", "notes"]  # nothing left over
    with pytest.raises(TrainingError, match="not attention-only"):
        Seq2SeqExperiment(seed=0).save_model("attention", tmp_path / "s")


def test_the_sqrt_dk_models_give_the_experiments_attention_for_every_query(tmp_path):
    exp = ScalingExperiment(d_k=16, seed=1)
    exp.run(30)
    batch = exp.batch(500)
    keys, labels = batch["keys"][:2], batch["labels"][:2]
    for arm in exp.arms:
        model = load_pretrained(exp.save_model(arm, tmp_path / arm))
        assert (model.layers, model.heads, model.d_head, model.vocab_size, model.causal) == (1, 1, 16, 448, False)
        for row in range(2):
            ids = keys[row] * 8 + labels[row]
            run = model.run_ids(ids)
            assert run.tokens[0] == f"k{keys[row][0]}={labels[row][0]}"
            queries = {"keys": np.repeat(keys[row][None], 32, 0), "labels": np.repeat(labels[row][None], 32, 0),
                       "query": keys[row], "target": labels[row]}  # query i: the key at position i
            scores, weights = exp.models[arm].attention(queries)
            np.testing.assert_allclose(run.attentions[0, 0], weights, rtol=0, atol=TOL)
            np.testing.assert_allclose(run.logits[0, 0], scores, rtol=0, atol=1e-11)
            np.testing.assert_allclose(model.output_logits(run), exp.models[arm].logits(queries), rtol=0, atol=1e-11)
    assert model.run("K3=1 k40=7").tokens == ["k3=1", "k40=7"]
    with pytest.raises(TrainingError, match="d_k >= 8"):
        ScalingExperiment(d_k=4, seed=0).save_model("scaled", tmp_path / "small")


def test_one_arm_trains_alone_as_it_does_beside_the_others():
    both, alone = InductionExperiment(seed=5), InductionExperiment(seed=5)
    both.run(12)
    train_arm(alone, "two layers", 12)
    assert alone.step_count == 12
    for name, value in both.models["two layers"].params.items():
        np.testing.assert_array_equal(alone.models["two layers"].params[name], value)


def test_a_run_whose_learning_rate_changed_names_no_recipe(tmp_path):
    exp = InductionExperiment(seed=0)
    exp.set_lr(1e-3)  # before the first step: the run's own learning rate
    exp.run(2)
    assert recipe(exp, "one layer")["lr"] == 1e-3
    exp.set_lr(3e-3)
    assert recipe(exp, "one layer") is None
    model = load_pretrained(exp.save_model("one layer", tmp_path / "m"))
    assert model.training is None and "training" not in json.loads((tmp_path / "m" / "config.json").read_text())


def test_a_recipe_is_trained_once_and_kept(private_cache, monkeypatch):
    made = {"experiment": "induction", "arm": "one layer", "seed": 4, "steps": 30}
    seen = []
    folder = train_recipe(made, lambda done, total: seen.append((done, total)))
    assert seen == [(25, 30), (30, 30)] and folder.parent == private_cache / "attn-studio" / "lab-models"
    exp = InductionExperiment(seed=4)
    exp.run(30)
    model = load_pretrained(folder)
    assert model.training == {**made, "lr": 0.003}
    np.testing.assert_array_equal(model.unembedding, exp.models["one layer"].params["W_U"])

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(lab_models, "train_arm", no_training)
    assert train_recipe({**made, "lr": 0.003}) == folder  # the same recipe, written out: the cache
    (folder / "vocab.json").write_text("{broken")
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(private_cache))
    assert load_pretrained(train_recipe(made)).layers == 1  # a broken copy is trained again
    for bad, words in (({**made, "steps": -1}, "steps"), ({**made, "arm": "two heads"}, "arm must be"),
                       ({**made, "colour": 1}, "unknown field"), ({"arm": "one layer"}, "experiment")):
        with pytest.raises(TrainingError, match=words):
            train_recipe(bad)


def test_after_1800_steps_the_heads_are_where_the_lesson_says():
    """The hand check of the issue: seed 0, 1,800 steps, on a stretch typed twice: layer 1's
    previous-token head is the stripe one left of the diagonal, layer 2's induction head the stripe
    n - 1 left of it in the repeat (kept in the machine's cache, as the lecture's scene has it)."""
    model = load_pretrained(train_recipe({"experiment": "induction", "arm": "two layers", "seed": 0, "steps": 1800}))
    stretch = "QXBFMRKDWT"
    run = model.run(f"{stretch} {stretch}")
    a, n, t = run.attentions, len(stretch), 2 * len(stretch)
    rows = np.arange(1, t)
    previous = a[0][:, rows, rows - 1].mean(axis=1)
    assert previous.max() > 0.45 and previous.argmax() == 0  # layer 1, head 1
    repeat = np.arange(n, t)
    induction = a[1][:, repeat, repeat - n + 1].mean(axis=1)
    assert induction.min() > 0.6  # both heads of layer 2 read the token after the first copy
    # The stripe is where the weight is: the induction cell is each repeat row's largest in layer 2's best head.
    best = a[1][induction.argmax()]
    assert (best[repeat].argmax(axis=1) == repeat - n + 1).mean() >= 0.8

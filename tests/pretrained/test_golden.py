"""Our forward pass against transformers' own numbers (eager attention, float64),
stored by tests/data/pretrained/make_golden.py. Tolerance 1e-9."""

import numpy as np
import pytest

from attn_studio.pretrained import load_pretrained

TOL = 1e-9


@pytest.mark.parametrize("folder, reference", [
    ("tiny-bert", "tiny_bert"),
    ("tiny-bert-legacy", "tiny_bert"),   # bert. prefix, LayerNorm gamma/beta
    ("tiny-gpt2", "tiny_gpt2"),
])
def test_tiny_models_match_transformers(folder, reference, golden, data_dir):
    model = load_pretrained(data_dir / folder)
    ref = golden(reference)
    texts = [str(t) for t in ref["texts"]]
    assert len(texts) >= 3
    for i, text in enumerate(texts):
        run = model.run(text)
        np.testing.assert_array_equal(run.ids, ref[f"t{i}_ids"])
        assert run.attentions.shape == ref[f"t{i}_attentions"].shape
        assert run.hidden_states.shape == ref[f"t{i}_hidden"].shape
        np.testing.assert_allclose(run.attentions, ref[f"t{i}_attentions"], rtol=0, atol=TOL)
        np.testing.assert_allclose(run.hidden_states, ref[f"t{i}_hidden"], rtol=0, atol=TOL)


@pytest.mark.parametrize("folder, reference", [("tiny-bert", "tiny_bert"), ("tiny-gpt2", "tiny_gpt2")])
def test_head_mask_matches_scaled_output_projection(folder, reference, golden, data_dir):
    model = load_pretrained(data_dir / folder)
    ref = golden(reference)
    text = str(ref["texts"][1])
    masked = model.run(text, head_mask=ref["head_mask"])
    np.testing.assert_allclose(masked.hidden_states, ref["masked_hidden"], rtol=0, atol=TOL)
    # The mask changes the numbers at all (else the comparison above proves nothing).
    assert np.abs(ref["masked_hidden"] - ref["t1_hidden"]).max() > 1e-3


def test_model_describes_itself(tiny_bert, tiny_gpt2):
    assert (tiny_bert.kind, tiny_bert.layers, tiny_bert.heads, tiny_bert.d_model, tiny_bert.d_head) == \
        ("bert", 2, 4, 32, 8)
    assert tiny_bert.max_positions == 64
    assert tiny_bert.name == "tiny-bert"
    assert (tiny_gpt2.kind, tiny_gpt2.layers, tiny_gpt2.heads, tiny_gpt2.d_model) == ("gpt2", 2, 4, 32)


def test_tokens_are_the_tokenizers_own(tiny_bert, tiny_gpt2):
    run = tiny_bert.run("I sat by the river bank.")
    assert run.tokens == ["[CLS]", "i", "sat", "by", "the", "river", "bank", ".", "[SEP]"]
    run = tiny_gpt2.run("I sat by the river bank.")
    assert run.tokens[0] == "I" and "Ġbank" in run.tokens and "[CLS]" not in run.tokens


def test_gpt2_attention_is_causal(tiny_gpt2):
    weights = tiny_gpt2.run("Attention is all you need!").attentions
    upper = np.triu(np.ones(weights.shape[-2:], dtype=bool), k=1)
    assert np.all(weights[..., upper] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-12)


def test_intermediates_are_consistent_per_layer(tiny_bert):
    run = tiny_bert.run("The cat sat on the mat.")
    t = len(run.tokens)
    assert run.q.shape == (2, 4, t, 8) and run.k.shape == run.v.shape == run.q.shape
    assert run.scores.shape == run.logits.shape == run.attentions.shape == (2, 4, t, t)
    # q and k of the same pass give the scores; scores / sqrt(d_head) the logits.
    np.testing.assert_allclose(run.scores, run.q @ np.swapaxes(run.k, -1, -2), atol=1e-12)
    np.testing.assert_allclose(run.logits, run.scores / np.sqrt(8), atol=1e-12)
    assert run.layer_results[1].weights is not None
    np.testing.assert_array_equal(run.layer_results[1].weights, run.attentions[1])


class TestMiniLM:
    """The default model against transformers (float64) on the lecture's sentences."""

    def test_attentions_and_hidden_states(self, minilm, golden):
        ref = golden("minilm")
        assert (minilm.name, minilm.kind, minilm.layers, minilm.heads, minilm.d_model) == \
            ("all-MiniLM-L6-v2", "bert", 6, 12, 384)
        assert minilm.max_positions == 512
        run = minilm.run(str(ref["texts"][0]))
        np.testing.assert_array_equal(run.ids, ref["t0_ids"])
        np.testing.assert_allclose(run.attentions, ref["t0_attentions"], rtol=0, atol=TOL)
        np.testing.assert_allclose(run.hidden_states[:, :, :32], ref["t0_hidden_32"], rtol=0, atol=TOL)

    def test_it_attends_to_animal(self, minilm, golden):
        ref = golden("minilm")
        run = minilm.run("The animal didn't cross the street because it was too tired.")
        it, animal = run.tokens.index("it"), run.tokens.index("animal")
        weights = run.attentions[:, :, it, animal]
        expected = ref["t0_attentions"][:, :, it, animal]
        best = np.unravel_index(np.argmax(expected), expected.shape)
        assert abs(weights[best] - expected[best]) < TOL
        assert weights[best] > 0.6  # the head the lecture looks for

    def test_bank_in_two_sentences(self, minilm, golden):
        ref = golden("minilm")
        cmp = minilm.compare_word(str(ref["texts"][1]), str(ref["texts"][2]), "bank")
        assert cmp.tokens_a == (int(ref["t1_bank_index"]),)
        assert cmp.tokens_b == (int(ref["t2_bank_index"]),)
        np.testing.assert_allclose(cmp.vectors_a, ref["t1_bank"], rtol=0, atol=TOL)
        np.testing.assert_allclose(cmp.vectors_b, ref["t2_bank"], rtol=0, atol=TOL)
        a, b = ref["t1_bank"], ref["t2_bank"]
        expected = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
        np.testing.assert_allclose(cmp.cosine, expected, atol=1e-12)
        assert cmp.cosine[0] > cmp.cosine[1:].min() + 0.05  # context pulls the meanings apart


def test_gpt2_with_lm_head_prefix_matches(tmp_path, data_dir, golden):
    # GPT2LMHeadModel checkpoints name the body "transformer." and add lm_head.weight.
    import shutil

    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "gpt2-lm"
    shutil.copytree(data_dir / "tiny-gpt2", folder)
    tensors = {"transformer." + k: v for k, v in load_file(folder / "model.safetensors").items()}
    tensors["lm_head.weight"] = tensors["transformer.wte.weight"].copy()
    (folder / "model.safetensors").unlink()
    save_file(tensors, folder / "model.safetensors")
    ref = golden("tiny_gpt2")
    run = load_pretrained(folder).run(str(ref["texts"][0]))
    np.testing.assert_allclose(run.hidden_states, ref["t0_hidden"], rtol=0, atol=TOL)

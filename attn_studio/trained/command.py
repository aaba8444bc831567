"""What a command line asks of a trained model, checked: heads to silence or scale, the query, a saved session.

``attn-studio export`` reads these before it draws (layers, heads and token positions count from 1
on the command line, as in the window; from 0 in the studio). No Qt: a script can use them too::

    >>> studio = open_session("trained.attn.json")          # its model, its edits, its selection
    >>> apply_head_edits(studio, silence=["4.2"], scale=["6.12=0.5"])
    >>> studio.select(query=query_index(studio.state.query_tokens, "it", studio.run.word_tokens))

Every refusal is a :class:`CommandError` (a ``ValueError``) whose message names the flag and
what was wrong, fit to print as one line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

from ..pretrained import ModelError
from ..state import StateError, parse_number

__all__ = ["CommandError", "apply_head_edits", "check_text", "learned_positions", "open_model_on", "open_session",
           "parse_head", "query_index", "set_up"]

_HEAD = re.compile(r"^\s*(\d+)\s*\.\s*(\d+)\s*$")
_SHOWN_TOKENS = 24  # tokens listed in a message before "…"


class CommandError(ValueError):
    """A command-line request that cannot be done; its message says why, in one line."""


def check_text(text: str | None, flag: str = "--text") -> str:
    """``text`` when it has something to run; a missing, empty or blank one is refused (nothing to draw
    or report)."""
    if text is None:
        raise CommandError(f"--model needs {flag} \"the sentence to run\"")
    if not text.strip():
        raise CommandError(f"{flag} is empty: give the sentence to run, e.g. {flag} \"The animal didn't "
                           "cross the street because it was too tired.\"")
    return text


def parse_head(spec: str, flag: str, layers: int, heads: int, model_name: str = "the model") -> tuple[int, int]:
    """``"L.H"`` (both from 1) as ``(layer, head)`` from 0; ``CommandError`` naming ``flag`` otherwise."""
    found = _HEAD.match(spec or "")
    if found is None:
        raise CommandError(f"{flag} {spec!r}: name a head as LAYER.HEAD, both from 1 (e.g. {flag} 4.2 "
                           f"for layer 4, head 2)")
    layer, head = int(found.group(1)), int(found.group(2))
    for name, value, n in (("layer", layer, layers), ("head", head, heads)):
        if not 1 <= value <= n:
            raise CommandError(f"{flag} {spec.strip()}: the {name} must be 1 to {n} for {model_name}, got {value}")
    return layer - 1, head - 1


def apply_head_edits(studio, silence: Sequence[str] = (), scale: Sequence[str] = ()) -> None:
    """Silence heads (``"L.H"``) and scale heads (``"L.H=F"``, F from 0 to 2) of a trained studio, on top
    of the edits it has, as one undoable edit. Everything is checked before anything changes; a head
    named twice is refused (which of the two was meant cannot be guessed)."""
    m = studio.model
    wanted: dict[tuple[int, int], tuple[str, str]] = {}
    requests = [("--silence", spec, spec, "0") for spec in silence]
    for spec in scale:
        head_part, sep, value = (spec or "").partition("=")
        if not sep or not value.strip():
            raise CommandError(f"--scale-head {spec!r}: write LAYER.HEAD=FACTOR, e.g. --scale-head 4.2=0.5 "
                               "(0 silences the head, 1 is as trained, up to 2)")
        requests.append(("--scale-head", spec, head_part, value.strip()))
    for flag, spec, head_part, value in requests:
        key = parse_head(head_part, flag, m.layers, m.heads, m.name)
        if key in wanted:
            raise CommandError(f"{flag} {spec} and {wanted[key][0]} {wanted[key][1]} both edit head "
                               f"{key[0] + 1}.{key[1] + 1}; keep one of them")
        wanted[key] = (flag, spec)
    if not wanted:
        return
    edits = studio.state.edits
    for (layer, head), (flag, spec) in wanted.items():
        value = "0" if flag == "--silence" else spec.partition("=")[2].strip()
        try:
            studio.edits_with_head_scale(layer, head, value)  # the studio's own check of a scale (0 to 2)
        except StateError as exc:
            raise CommandError(f"{flag} {spec}: {exc}") from None
        edits = edits.with_head_scale(layer, head, parse_number(value))  # on top of the edits before it
    studio.update(edits=edits)


def query_index(tokens: Sequence[str], spec: str, word_tokens: Callable[[str], tuple] | None = None) -> int:
    """The query named by ``spec`` as a position from 0 in ``tokens``.

    ``spec`` is a position from 1 (special tokens count: [CLS] is 1 in a BERT-style model) or a
    token of the sentence: the first that is exactly it, else the first equal to it ignoring case,
    else (given ``word_tokens``, a trained run's) the first token of the word it names (a word the
    tokenizer split into pieces). ``CommandError`` listing the tokens when there is no such query.
    """
    spec = (spec or "").strip()
    tokens = list(tokens)
    if not tokens:
        raise CommandError("--query: the sentence has no tokens to choose from")
    if spec.isdigit() and spec.isascii():
        n = int(spec)
        if not 1 <= n <= len(tokens):
            raise CommandError(f"--query {spec}: the sentence has {len(tokens)} tokens; give a position from 1 "
                               f"to {len(tokens)} or a token ({_listed(tokens)})")
        return n - 1
    if not spec:
        raise CommandError("--query is empty: give a token of the sentence or its position from 1")
    if spec in tokens:
        return tokens.index(spec)
    folded = [t.casefold() for t in tokens]
    if spec.casefold() in folded:
        return folded.index(spec.casefold())
    if word_tokens is not None:
        try:
            return int(word_tokens(spec)[0])
        except (ModelError, IndexError):
            pass
    raise CommandError(f"--query {spec!r} is not a token of the sentence; its tokens: {_listed(tokens)} "
                       "(or give a position from 1)")


def _listed(tokens: list[str]) -> str:
    shown = ", ".join(f"{i + 1} {t}" for i, t in enumerate(tokens[:_SHOWN_TOKENS]))
    return shown + (", …" if len(tokens) > _SHOWN_TOKENS else "")


def open_session(path):
    """A :class:`TrainedStudio` on the trained-model session at ``path``: the model it names (found and
    checked by its weights' hash), its sentences, edits and selection; or None when the file holds a toy
    session. ``CommandError`` when the file or its model cannot be opened. Slow: loads the model."""
    from ..session import SessionError, read_any_session
    from ..schema import TrainedSession
    from .models import resolve_model
    from .studio import TrainedStudio

    try:
        session = read_any_session(path)
    except SessionError as exc:
        raise CommandError(str(exc)) from None
    if not isinstance(session, TrainedSession):
        return None
    if not session.sentence.strip():
        raise CommandError(f"{path} has an empty sentence: there is nothing to draw; type one in the window "
                           "and save the session again")
    try:
        model = resolve_model(session.model)
        return TrainedStudio.from_session(session, model)
    except (ModelError, StateError) as exc:
        raise CommandError(f"{path}: {exc}") from None


def open_model_on(spec: str | None, text: str | None, second: str | None = None, word: str | None = None):
    """A :class:`TrainedStudio` of the model ``spec`` names (see :func:`open_model`) on ``text``, with a
    ``second`` sentence and the ``word`` followed in both (a lab model's folder without ``text``: its own
    example, a random stretch twice); ``CommandError`` for an empty text, a model
    not found, a text the model refuses or a word missing from a sentence. Slow: loads the model."""
    from ..pretrained.lab_files import is_lab_folder
    from .models import open_model
    from .studio import TrainedStudio

    # A lab model opens on its own example (a random stretch twice) when no text is given.
    lab = text is None and spec is not None and is_lab_folder(Path(str(spec)).expanduser())
    if not lab:
        check_text(text)
    try:
        studio = TrainedStudio(open_model(spec))
        studio.update(sentence=studio.state.sentence if lab else text, second_sentence=second or "",
                      word=word or "")
    except (ModelError, StateError) as exc:
        raise CommandError(str(exc)) from None
    if word and studio.word_message:  # e.g. the word is not in one of the sentences
        raise CommandError(studio.word_message)
    return studio


def set_up(studio, *, layer: int | None = None, head: int | None = None, silence: Sequence[str] = (),
           scale: Sequence[str] = (), query: str | None = None) -> None:
    """Apply a command line's requests to a trained studio, in the order a person reads them: the layer
    and head shown (from 1; None keeps the studio's), the heads silenced and scaled, then the query
    (named in the edited sentence's tokens). ``CommandError`` before the first change when a layer or
    head is out of range."""
    m = studio.model
    for name, value, n in (("layer", layer, m.layers), ("head", head, m.heads)):
        if value is not None and not 1 <= value <= n:
            raise CommandError(f"--{name} must be 1 to {n} for {m.name}, got {value}")
    apply_head_edits(studio, silence, scale)
    studio.select(layer=None if layer is None else layer - 1, head=None if head is None else head - 1)
    if query is not None:
        studio.select(query=query_index(studio.state.query_tokens, query, studio.run.word_tokens))


def learned_positions(model) -> str:
    """Why a trained model has no sinusoidal encoding to draw: it learned a table of positions."""
    return (f"{model.name} learns its positions (a table of {model.max_positions} position embeddings of "
            f"{model.d_model} numbers, added to each token's vector); the positions panel draws a sinusoidal "
            "encoding, which this model does not use")

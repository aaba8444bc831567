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
from typing import Callable, Sequence

from ..pretrained import ModelError
from ..state import StateError, parse_number

__all__ = ["CommandError", "apply_head_edits", "check_text", "open_session", "parse_head", "query_index"]

_HEAD = re.compile(r"^\s*(\d+)\s*\.\s*(\d+)\s*$")
_SHOWN_TOKENS = 24  # tokens listed in a message before "…"


class CommandError(ValueError):
    """A command-line request that cannot be done; its message says why, in one line."""


def check_text(text: str | None, flag: str = "--text") -> str:
    """``text`` when it has something to run; an empty or blank one is refused (nothing to draw or report)."""
    if text is None or not text.strip():
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
    try:
        model = resolve_model(session.model)
        return TrainedStudio.from_session(session, model)
    except (ModelError, StateError) as exc:
        raise CommandError(f"{path}: {exc}") from None

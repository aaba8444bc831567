"""A scene and the window: what the window shows taken as a scene (:func:`capture_scene`), and a scene
applied to the window (:func:`show_scene`: its model, view and selection; a trained model is opened off
the GUI thread). The Scenes panel (:mod:`.scenes_panel`) plays them."""

from __future__ import annotations

import json

from PySide6 import QtCore, QtGui, QtWidgets

from ...scenes import DIGITS, TOY_ONLY, Scene
from ...session import session_from_json, state_to_json
from ...state import StudioState


STAGE_DIGITS = 2  # the stage's own precision: a scene records its precision only when it differs


def pinned_cell(window) -> tuple[int, int] | None:
    """The cell (query, key) pinned in ``window``'s Attention view by a click, when the model shown
    has it; else None."""
    pinned = getattr(window.heatmap_view, "pinned", None)
    if pinned is None:
        return None
    _, query, key = pinned
    t_q, t_k = window.studio.result.weights.shape[1:]
    return (int(query), int(key)) if 0 <= query < t_q and 0 <= key < t_k else None


def capture_scene(window, title: str, pin: tuple[int, int] | None = None) -> Scene:
    """What ``window`` shows now as a scene called ``title``: its model, view and selection, the
    stage's precision when it is not the stage's own, and ``pin`` (query, key) as its pinned cell."""
    present = window.present
    view = present.view if present.active else present.current_view()
    state = window.studio.state
    selection = {"query": int(state.query_index), "head": int(getattr(state, "shown_head", state.head_index)),
                 "step": int(window.pipeline_view.current_step)}
    if window.studio.is_trained:
        selection["layer"] = int(state.layer_index)
        selection["head"] = int(state.head_index)
    if present.active:
        selection["page"] = int(present.page)
    stage_digits = getattr(present, "stage_digits", None)  # the stage's precision (View → Precision on the stage)
    digits = stage_digits() if callable(stage_digits) else None
    if digits in DIGITS and digits != STAGE_DIGITS:
        selection["digits"] = int(digits)
    if pin is not None:
        selection["pin_query"], selection["pin_key"] = int(pin[0]), int(pin[1])
    if view in TOY_ONLY and window.studio.is_trained:
        view = "Attention"
    return Scene(title=title, view=view, selection=selection, session=json.loads(state_to_json(state)))


def show_scene(window, scene: Scene, on_shown=None, wanted=lambda: True) -> None:
    """Show ``scene`` in ``window``: its model, then its view and selection (a trained model is opened
    off the GUI thread; ``on_shown(ok)`` is called once it is shown, or refused with a message). A
    model that arrives when ``wanted()`` is False (another scene was asked for meanwhile) only opens."""
    session = session_from_json(json.dumps(scene.session))
    sel = scene.selection

    def select_and_show(ok: bool = True) -> None:
        if ok and wanted():
            studio = window.studio
            if studio.is_trained:
                window.trained.room.select(layer=sel.get("layer"), head=sel.get("head"), query=sel.get("query"))
            else:
                heads = int(studio.result.weights.shape[0])
                tokens = len(studio.state.query_tokens)
                studio.select(head=min(sel["head"], heads - 1) if "head" in sel else None,
                              query=min(sel["query"], tokens - 1) if "query" in sel and tokens else None)
            pipe, drawer = window.pipeline_view, window.drawer
            if "step" in sel and (pipe in drawer.stale or pipe in drawer.steps):
                pipe.keep_step(sel["step"])  # not drawn for it: drawn when shown (in the window or on the stage)
            elif "step" in sel:
                pipe.set_current_step(sel["step"])
            window.bridge.flush()  # the selection's redraw of the window now, the stage's below
        if ok and wanted() or not ok:
            window.present.deferred = False
        if ok and wanted():
            window.present.show_view(scene.view, page=sel.get("page", 0))
        if on_shown is not None:
            on_shown(ok)

    # The stage is drawn once, with the scene's view and selection: not first with the view before.
    window.present.deferred = True
    if isinstance(session, StudioState):
        window.studio.set_state(session, label=f"show scene “{scene.title}”")
        window.bridge.flush()
        select_and_show(True)
    else:
        window.trained.open_session(session, None, on_done=select_and_show)


def paint_offscreen(view: QtWidgets.QGraphicsView) -> None:
    # The scene painted into an image of the view's size (a widget whose window is not painted
    # meanwhile cannot be grabbed: its items are painted directly).
    image = QtGui.QImage(view.viewport().size(), QtGui.QImage.Format_ARGB32_Premultiplied)
    painter = QtGui.QPainter(image)
    try:
        view.scene().render(painter, QtCore.QRectF(image.rect()),
                            view.mapToScene(view.viewport().rect()).boundingRect())
    finally:
        painter.end()

"""A scene and the window: what the window shows taken as a scene (:func:`capture_scene`), and a scene
applied to the window (:func:`show_scene`: its model, view and selection; a trained model is opened off
the GUI thread). The Scenes panel (:mod:`.scenes_panel`) plays them."""

from __future__ import annotations

import json

from PySide6 import QtCore, QtGui, QtWidgets

from ...scenes import MAX_TRAINING_STEPS, TOY_ONLY, Scene
from ...session import session_from_json, state_to_json
from ...state import StudioState


def capture_scene(window, title: str) -> Scene:
    """What ``window`` shows now as a scene called ``title``: its model, view and selection."""
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
    if view in TOY_ONLY and window.studio.is_trained:
        view = "Attention"
    lab = present.training_panel(view) if view.startswith("Training: ") else None
    if lab is not None:
        # The run it shows, by its step count: a hand-out trains it again to there (never an empty run).
        snap = lab.runner.snapshot()
        steps = int(snap.exp.step_count) if snap.exp is not None else int(snap.steps)
        if steps > 0:
            selection["steps"] = min(steps, MAX_TRAINING_STEPS)
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

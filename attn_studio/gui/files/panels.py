"""Panels by name: which part of the window a figure shows, and the title that states its setting.

A *panel* is a part of the window that can become a figure: ``find_panel(window,
name)`` looks one up by name (see ``PANELS``) and returns a :class:`Panel` ready
for the figure code (:mod:`.figures`). A panel of heatmaps is never the widget on
screen: it is a :class:`~.sheet.FigureSheet` drawn again from the same numbers and
laid out for the page, whatever the window's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6 import QtCore, QtWidgets

from ...formatting import format_setting
from ...matrices import ExportError
from ..views.geometry_page import geometry_page
from . import sheet as sheets

# The training lab's panels ("Why √d_k", "Why attention", "Why two layers"), by experiment name.
TRAINING_PANELS = ("training:scaling", "training:seq2seq", "training:induction")
PANELS = ("heatmaps", "head:N", "compare", "outputs", "positions", "steps", "variance", "saturation", "geometry",
          "window", "stage", "model", "drift", "meaning", *TRAINING_PANELS)
"""Panel names for :func:`find_panel` (``stage``, the Present stage, is drawn by the window's picture code); ``head:N`` is one head's weights (N from 1); "model", "drift"
and "meaning" exist while a trained model is shown; ``training:NAME`` is a panel of the training lab
(its whole figure; its history is :func:`training_panel`'s ``export_csv``)."""
TRAINED_PANELS = ("model", "drift", "meaning")
# Views of the toy model's own settings, hidden while a trained model is shown: Positions draws the
# sinusoidal table it does not use. (Compare shows a trained model against its edited self.)
TOY_PANELS = ("positions",)
# The views each panel is drawn from (window attribute), for the figures built from a view's numbers.
VIEW_OF = {"heatmaps": "heatmap_view", "compare": "compare_view", "outputs": "heads_summary_view",
           "positions": "positional_view", "steps": "pipeline_view", "geometry": "geometry_view"}
PLOT_SIZE = QtCore.QSize(1100, 440)  # the √d_k plots in a figure: both side by side, each about 540 × 380

_HEAD_RE = re.compile(r"^head:(\d+)$")


@dataclass(frozen=True)
class Panel:
    """Something the figure code can draw.

    ``widget`` is drawn whole, or only the part given by ``source``: a
    ``QGraphicsItem`` in ``widget``'s scene (e.g. one PlotItem of a
    GraphicsLayoutWidget) or a callable returning a ``QRect`` in widget
    coordinates; either is measured when the figure is drawn. ``title`` is the
    default title (None: no header band unless one is passed). ``keep`` holds
    what must live as long as the panel (the offscreen view a plot belongs to).
    """

    widget: QtWidgets.QWidget
    source: object = None
    name: str = ""
    title: str | None = None
    row_title: str | None = None
    keep: object = None


def check_panel_name(name: str) -> str:
    """Normalise a panel name ("Head:2" -> "head:2") or raise ``ExportError`` (syntax only)."""
    text = str(name).strip().lower()
    if text in PANELS:
        return text
    m = _HEAD_RE.match(text)
    if m and int(m.group(1)) >= 1:
        return f"head:{int(m.group(1))}"
    raise ExportError(f"unknown panel {name!r}; choose one of {', '.join(PANELS)} (N = head number from 1)")


def _head_count(window) -> int:
    return int(window.studio.result.weights.shape[0])


def available(window) -> list[str]:
    """The panel names ``window`` can draw now (heads spelled out)."""
    names = ["heatmaps"]
    heads = _head_count(window)
    names.append("head:1" if heads == 1 else f"head:1…head:{heads}")
    trained = _trained_room(window) is not None
    for name in ("compare", "outputs", "positions", "steps"):
        if getattr(window, VIEW_OF[name], None) is not None and not (trained and name in TOY_PANELS):
            names.append(name)
    names += ["variance", "saturation"]
    if getattr(window, "geometry_view", None) is not None:
        names.append("geometry")
    names.append("window")
    if trained:
        names += list(TRAINED_PANELS)
    if getattr(window, "training", None) is not None:
        names += list(TRAINING_PANELS)
    return names


def training_panel(window, name: str):
    """The training lab's panel ``name`` ("training:scaling"...) of ``window``, its latest step drawn.

    It is the panel itself (its ``figure_panel()`` is the figure its own Export button writes, its
    ``export_csv(path)`` the history); ``ExportError`` for a name that is not one or a window without a lab.
    """
    key = str(name).strip().lower()
    if key not in TRAINING_PANELS:
        raise ExportError(f"unknown training panel {name!r}; choose one of {', '.join(TRAINING_PANELS)}")
    lab = getattr(window, "training", None)
    if lab is None:
        raise ExportError("this window has no training lab")
    panel = lab.tab.panels[key.split(":", 1)[1]]
    panel.wait_built()
    panel.redraw()
    return panel


def _trained_room(window):
    """The window's trained-model room while it shows a trained model, else None."""
    wiring = getattr(window, "trained", None)
    return wiring.room if wiring is not None and wiring.is_trained else None


def _view(window, key: str):
    view = getattr(window, VIEW_OF[key], None)
    if view is None:
        raise ExportError(f"this window has no {key} panel yet; choose one of {', '.join(available(window))}")
    _bring_up_to_date(window, view)
    return view


def _sheet_panel(blocks, key: str, title: str) -> Panel:
    return Panel(sheets.heatmap_sheet(blocks), None, key, title)


def heatmap_panel(heatmap, title: str | None = None, bar: bool = True) -> Panel:
    """One on-screen heatmap as a figure of its own, laid out for the page (its right-click "Copy figure")."""
    return _sheet_panel([sheets.Block([sheets.Tile(heatmap, bar=bar)])], "heatmap", title)


def find_panel(window, name: str) -> Panel:
    """The panel ``name`` of ``window`` (a MainWindow), ready for the figure code.

    - ``heatmaps``: the chosen head's stages (scores, logits, weights) and every head;
    - ``head:N``: head N's weights (with one head: the weights stage);
    - ``compare``: the two settings and their difference; ``outputs``: the heads'
      outputs, W_O and the output; ``positions``: the positional encoding;
    - ``steps``: the step-by-step table, whole; ``variance`` / ``saturation``: one √d_k plot;
    - ``geometry``: the geometry view's arrows, caption and readout; ``window``: the whole window;
    - ``training:scaling`` / ``training:seq2seq`` / ``training:induction``: a training lab panel's
      whole figure, as its own Export button writes it, titled with its run.

    Heatmap panels and geometry are drawn again from their numbers, laid out for the page (every
    token on every axis, no scroll bars or hints), whatever the window's size. The
    panel's default title is :func:`setting_title` of the current state. Raises
    ``ExportError`` (one line, listing the valid names) for an unknown name, a head out
    of range or a view the window does not have.
    """
    try:
        key = check_panel_name(name)
    except ExportError:
        raise ExportError(f"unknown panel {name!r}; choose one of {', '.join(available(window))}") from None
    state = window.studio.state
    title = setting_title(state, key)
    m = _HEAD_RE.match(key)
    if key == "heatmaps" or m:
        view = _view(window, "heatmaps")
        if m:
            n = int(m.group(1))
            heads = _head_count(window)
            if not 1 <= n <= heads:
                raise ExportError(f"there is no head {n} (the model has {heads} head{'s' if heads > 1 else ''}); "
                                  f"choose one of {', '.join(available(window))}")
            source = view.head_maps[n - 1] if heads > 1 and n <= len(view.head_maps) else view.stages["weights"]
            return _sheet_panel([sheets.Block([sheets.Tile(source, title=f"head {n}" if heads > 1 else None)])],
                                key, title)
        stages = [sheets.Tile(view.stages[k], bar=k != "stable") for k in ("scores", "logits", "weights", "stable")
                  if k != "stable" or not view.canvases["stable"].isHidden()]
        blocks = [sheets.Block(stages)]
        shown = max(view.heads_shown, 0)
        if shown > 1:
            data = view.head_maps[0].data
            rows, cols = data.values.shape if data is not None else (1, 1)
            heads = [sheets.Tile(hm, bar=False) for hm in view.head_maps[:shown]]
            blocks.append(sheets.Block(heads, sheets.slide_columns(shown, rows, cols), shared_bar=True, small=True))
        return _sheet_panel(blocks, key, title)
    if key == "window":
        drawer = getattr(window, "drawer", None)
        if drawer is not None:
            drawer.show_for_picture()  # under the stage it waited to be seen: a picture of it sees it
        return Panel(window, None, key, title)
    if key == "stage":
        raise ExportError("the stage is Present's window: draw it with attn-studio export --panel stage --view NAME")
    if key in TRAINING_PANELS:
        return training_panel(window, key).figure_panel()
    if key in TRAINED_PANELS:
        room = _trained_room(window)
        if room is None:
            raise ExportError(f"the {key} panel shows a trained model; choose one in the Model panel first "
                              f"(or choose one of {', '.join(available(window))})")
        return room.figure_panel(key)
    if key in TOY_PANELS and _trained_room(window) is not None:
        raise ExportError(f"the {key} panel shows the toy model's settings; choose “Toy model (editable)” "
                          f"in the Model panel first (or choose one of {', '.join(available(window))})")
    if key in ("variance", "saturation"):
        from ..views.plots import VariancePlot

        plot = VariancePlot(window.studio)  # drawn again at a page's size: the dock may be a thin strip
        plot.set_digits(window.variance_plot.digits)
        sheets.lay_out_offscreen(plot, PLOT_SIZE)
        plot.render()
        sheets.lay_out_offscreen(plot, PLOT_SIZE)
        return Panel(plot.canvas, getattr(plot, key), key, title, keep=plot)
    view = _view(window, key)
    if key == "compare":
        maps = view.maps
        tiles = [sheets.Tile(maps["a"], bar=False), sheets.Tile(maps["b"]), sheets.Tile(maps["diff"])]
        # Side by side where a slide's width holds the three, else stacked.
        return Panel(sheets.slide_sheet([[sheets.Block(tiles)], [sheets.Block(tiles, 1)]]), None, key, title)
    if key == "outputs" and _trained_room(window) is not None:
        from .trained_figures import outputs_figure

        return Panel(outputs_figure(view), None, key, title)
    if key == "outputs":
        tiles = [sheets.Tile(view.maps["concat"], vlines=view.separators)]
        if not view.canvases["w_o"].isHidden():
            tiles.append(sheets.Tile(view.maps["w_o"]))
        tiles.append(sheets.Tile(view.maps["output"]))
        return _sheet_panel([sheets.Block(tiles)], key, title)
    if key == "positions":
        return _sheet_panel([sheets.Block([sheets.Tile(view.heatmap)])], key, title)
    if key == "steps":
        page = sheets.steps_figure(view)
        return Panel(page, None, key, title)
    if key == "geometry":
        page = geometry_page(view.drawing)
        sheets.lay_out_offscreen(page, page.size())
        return Panel(page, None, key, title)
    return Panel(view, None, key, title)


def _bring_up_to_date(window, view) -> None:
    # Views in tabs that are not shown are redrawn only when shown; a figure needs them now.
    render_view = getattr(window, "render_view", None)
    if callable(render_view):
        render_view(view)


def show_panel(panel) -> None:
    """Make ``panel``'s widget visible in its window: select the tabs that hold it and show its dock.

    A figure built for the page (a sheet) is not in the window: nothing to show. The
    whole window and the trained model's views are drawn as they are laid out, so the
    ``attn-studio export`` command calls this before drawing.
    """
    child = as_panel(panel).widget
    parent = child.parentWidget()
    while parent is not None:
        if isinstance(parent, QtWidgets.QStackedWidget):
            tabs = parent.parentWidget()
            if isinstance(tabs, QtWidgets.QTabWidget) and tabs.indexOf(child) >= 0:
                tabs.setCurrentWidget(child)
            else:
                parent.setCurrentWidget(child)
        elif isinstance(parent, QtWidgets.QDockWidget) and parent.isHidden():
            parent.show()
        child, parent = parent, parent.parentWidget()


def as_panel(panel) -> Panel:
    """``panel`` as a :class:`Panel` (a QWidget, or a (widget, source) pair, is drawn as it is)."""
    if isinstance(panel, Panel):
        return panel
    if isinstance(panel, QtWidgets.QWidget):
        return Panel(panel)
    if isinstance(panel, tuple) and len(panel) == 2 and isinstance(panel[0], QtWidgets.QWidget):
        return Panel(panel[0], panel[1])
    raise ExportError(f"cannot draw a {type(panel).__name__}; pass a Panel from find_panel or a QWidget")


# -- titles ------------------------------------------------------------------------

def _shorten(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def setting_title(state, panel_name: str = "heatmaps") -> str:
    """A title that states the setting of ``state`` for panel ``panel_name``.

    E.g. "Your journey starts with one step — head 1 · scaled ÷√3 · causal".
    The head comes from a ``head:N`` panel name, else ``state.head_index``;
    the variance and saturation plots state d_k instead of a head.
    """
    sentence = _shorten(state.sentence) or "(no sentence)"
    parts = []
    heads = state.effective_heads
    name = str(panel_name).strip().lower()
    m = _HEAD_RE.match(name)
    if name in ("variance", "saturation"):
        parts.append(f"d_k = {state.d_k}")
    elif name == "positions":
        parts.append(f"d_model = {state.d_model}")
    elif name == "outputs":
        layer = getattr(state, "layer_index", None)  # a trained model: the layer whose heads these are
        parts.append((f"{state.model.name} layer {layer + 1}: " if layer is not None else "")
                     + f"{heads} head{'s' if heads > 1 else ''}")
    elif name != "window":
        head = int(m.group(1)) if m else state.shown_head + 1
        layer = getattr(state, "layer_index", None)  # a trained model: which layer, of which model
        if layer is not None:
            parts.append(f"{state.model.name} layer {layer + 1}")
        parts.append(f"head {head}" + (f" of {heads}" if heads > 1 else ""))
    parts.append(f"scaled ÷√{state.d_k}" if state.scale else "unscaled")
    if state.causal:
        parts.append("causal")
    if state.positional:
        parts.append("positional")
    if not state.projections:
        parts.append("no projections (Q = K = V = X)")
    if state.temperature != 1.0:
        parts.append(f"T={format_setting(state.temperature)}")
    if state.softmax == "naive":
        parts.append("naive softmax")
    elif state.softmax == "sum":
        parts.append("x / Σx instead of softmax")
    if getattr(state, "score", "dot") == "additive":
        parts.append("additive scores")
    if state.cross:
        parts.append(f"cross-attention (queries: {_shorten(state.target_sentence, 30)})")
    return f"{sentence} — {' · '.join(parts)}"


# -- drawing -------------------------------------------------------------------------

"""What the window draws and when: the central views, drawn only when they can be seen, and a
large or trained model drawn in steps (a few heatmaps per event-loop turn, each painted within
its turn) so that the window answers between them."""

from __future__ import annotations

import time

from PySide6 import QtCore

from ..bridge import is_large
from ..views.compare import CompareView
from ..views.geometry import GeometryView
from ..views.heatmap_drawing import NEXT_TURN
from ..views.heatmap_view import HeatmapView
from ..views.pipeline import PipelineView
from ..views.positional import PositionalView
from ..views.summary import HeadsSummaryView

# Heatmaps drawn in steps: as many per event-loop turn as fit in this many seconds, each painted
# within the turn. One heatmap per turn spent more on the window's turns than on the heatmaps;
# all of them in one turn freezes the window while it paints them.
STEP_BUDGET = 0.018
LAYOUT_PASSES = 8  # a heatmap's axes, its plot, its canvas's scene, the scroll area: each layout done asks for the next
# (attribute, class, tab title, tab tip): the central views, in tab order.
VIEWS = (
    ("heatmap_view", HeatmapView, "Attention", "Scores, logits and weights of the chosen head, and every head"),
    ("pipeline_view", PipelineView, "Step by step", "Every step for the selected query token, with your numbers: "
     "q·k, scale, mask, exp, normalise, weighted sum"),
    ("heads_summary_view", HeadsSummaryView, "Heads → output", "Each head's output, their concatenation, W_O and the output"),
    ("compare_view", CompareView, "Compare", "Two settings side by side (scaling, mask, temperature, before/after) "
     "and their difference"),
    ("geometry_view", GeometryView, "Geometry", "The token vectors as arrows: exact in 2-D, a PCA picture otherwise; "
     "dot product and angle of a pair"),
    ("positional_view", PositionalView, "Positions", "The sinusoidal positional encoding added to the token vectors"),
)


def _early_drawing(view):
    """``view``'s drawing when it can draw a change before its install (the Attention tab's), else None."""
    drawing = getattr(view, "drawing", None)
    return drawing if hasattr(drawing, "met_by_install") else None


def _then(steps, done):
    """The drawing ``steps``, then ``done()`` (also when it is stopped before its end)."""
    try:
        yield from steps
    finally:
        done()


class SeenWhenGrabbed:
    """Mixed into the main window: a picture of it (``grab``) taken while its drawing is held under the
    stage releases it first, so the picture shows it painted and up to date (held, it is not painted)."""

    def grab(self, *args):
        drawer = getattr(self, "drawer", None)
        if drawer is not None:
            drawer.show_for_picture()
        return super().grab(*args)


class ViewDrawer(QtCore.QObject):
    """The views of ``window`` (its ``studio``): ``views`` everything that draws the model, ``stale``
    those drawn before the last change (each renders when shown), ``steps`` the views drawing a large
    model one heatmap after another (view -> its ``render_steps()`` generator). ``drawn`` is emitted
    when the last of the steps is drawn."""

    drawn = QtCore.Signal()

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.views: list = []
        self.stale: set = set()
        self.steps: dict = {}
        self.timer = QtCore.QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(0)
        self.timer.timeout.connect(lambda: self.window._draw_step())
        self.drawn_target = None  # the studio the views drew last: the first drawing of another is stepped
        self.held = False  # see hold()

    def add(self, view) -> None:
        """Draw ``view`` (a widget with ``render()``) with the others."""
        self.views.append(view)
        self.stale.add(view)

    def render_view(self, view) -> None:
        """Bring ``view`` up to date now, visible or not."""
        self.steps.pop(view, None)
        view.render()
        self.stale.discard(view)

    def finish(self) -> None:
        """Draw now whatever is still waiting to be drawn in steps."""
        if self.steps:
            for view in list(self.steps):
                self.render_view(view)
            self.drawn.emit()

    def draw_in_steps(self, view) -> None:
        """Draw ``view`` in steps from the next turn on, shown or not (the stage shows its heatmaps)."""
        if view in self.stale and view not in self.steps and hasattr(view, "render_steps"):
            self.steps[view] = view.render_steps()
            self.stale.discard(view)
            self.timer.start()

    def expect(self, state) -> None:
        """A trained model's change is being computed (``state``, as it will be): the views in sight that
        can lay themselves out for its tokens before its numbers come (``expect``) do so now, so that a new
        sentence's layout is done while the engine works. None: nothing more is coming, and a view laid out
        for tokens that never came (a failed or dropped change) shows its own again."""
        left = False
        for view in self.views:
            expect = getattr(view, "expect", None)
            if expect is None:
                continue
            if state is None:
                if view not in self.steps and view not in self.stale:
                    expect(None)  # else the drawing waiting for it takes over what it laid out
                drawing = _early_drawing(view)
                if drawing is not None and drawing.left_early():
                    # Drawn early for a change that failed or was dropped: the studio's own numbers again.
                    self.steps.pop(view, None)
                    self.stale.add(view)
                    left = True
            elif not self.held and view not in self.steps and view.isVisible():
                expect(state)
        if left:
            self.render_visible()

    def draw_early(self, state, result, drawn) -> bool:
        """A trained model's new sentence whose shown layer is computed before the rest of its pass (``state``,
        that layer's ``result``): the Attention tab, in sight in the window, draws it now, in steps, and calls
        ``drawn()`` when it is drawn (or stopped); False when it does not (``drawn`` is not called), and not while
        it still draws an earlier change: that drawing goes on, and the newer change is drawn at its install.
        The change's install otherwise finds it drawn (:meth:`render_visible`)."""
        view = self.window.heatmap_view
        present = getattr(self.window, "present", None)
        if self.held or not view.isVisible() or (present is not None and present.active) or view in self.steps:
            return False
        self.steps[view] = _then(view.render_steps(source=(state, result)), drawn)
        self.timer.start()
        return True

    def hold(self, held: bool) -> None:
        """Hold the window's own drawing while no one can see it (under the stage, on one screen): its
        views and tables are only marked stale, and drawn when released. What the stage shows it draws
        itself (:meth:`render_view`, :meth:`draw_in_steps`)."""
        if held != self.held:
            self.held = held
            self.window.setUpdatesEnabled(not held)  # not painted either; painted whole when released
            self.window.numbers.hold(held)
            if not held:
                self.render_visible()

    def show_for_picture(self) -> None:
        """A picture of the window is taken now: held, it is drawn and painted first, and held again a
        turn later (while the stage still hides it)."""
        if self.held:
            self.hold(False)
            QtCore.QTimer.singleShot(0, self.window, self.window.present.follow_cover)

    def render_visible(self) -> None:
        """Draw the stale views the window shows (the current tab and open docks, also before the window is
        first shown). A large toy model, and a trained one (a dozen heads), is drawn in steps, as many
        heatmaps per turn as fit in STEP_BUDGET: between turns, the window answers. So is the first drawing
        after a switch between the toy and a trained model: the whole window is laid out and painted anew
        in that turn, and the heads' grid is rebuilt for the other model's heads."""
        if self.held:
            return
        w = self.window
        target = getattr(w.studio, "target", w.studio)
        switched = self.drawn_target is not None and target is not self.drawn_target
        self.drawn_target = target
        stepped = switched or w.studio.is_trained or is_large(w.studio.state)
        for view in [v for v in self.views if v in self.stale and v.isVisibleTo(w)]:
            drawing = _early_drawing(view)
            if not switched and drawing is not None and drawing.met_by_install():
                self.stale.discard(view)  # drawn, or being drawn, from these very numbers before their install
                continue
            if stepped and hasattr(view, "render_steps"):
                self.steps[view] = view.render_steps()
                self.stale.discard(view)
                self.timer.start()
            else:
                self.render_view(view)

    def draw_step(self) -> None:
        """Advance the views drawing in steps for at most STEP_BUDGET, painting each step in its turn."""
        start = last = time.perf_counter()
        while self.steps:
            view = next(iter(self.steps))
            try:
                if next(self.steps[view]) == NEXT_TURN:
                    break  # the view waits for work of its own in the turns to come
            except StopIteration:
                self.steps.pop(view, None)
            except Exception:
                self.steps.pop(view, None)
                raise
            # Paint what this step changed now, inside the turn's budget: the scene's changes
            # and the window's update requests are posted events, so the painting of a batch
            # would otherwise all come after the turn, in one long stall. The layouts the step
            # asked for first (a new sentence's axes and sizes), so that it is painted once, laid
            # out: painted before them, it was painted again at the turn's end. Everything else
            # waits for the turn's end.
            for _ in range(LAYOUT_PASSES):  # a layout done can ask for its parent's: a few passes
                QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.LayoutRequest)
            # What a plot works out when it is painted (its view's new range and size, its axes), worked
            # out now: done while painting, it asked for the same heatmap to be painted once more.
            prepare = getattr(view, "prepare_paint", None)
            if prepare is not None:
                prepare()
            # The scenes' changes, laid out, become the views' update requests (a queued call each).
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.MetaCall)
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.UpdateRequest)
            now = time.perf_counter()
            step, last = now - last, now
            # A step like the last would overrun the budget: it waits for the next turn (building a
            # head's heatmap takes most of a budget, and two in one turn froze the window twice as long).
            if now - start + step >= STEP_BUDGET:
                break
        if self.steps:
            self.timer.start()
        else:
            self.drawn.emit()

"""Present (F5): the current view as a stage for the room, live, on one screen or two.

The stage is a window of its own, full screen on the projector. Its sizes come
from the height of that screen, after the AV standard for displays a room must
read (AVIXA DISCAS, basic decision making: an element at least 3 % of the image
height for a back row six image heights away): at 720 px, token labels of a
31 px font, cell values of 26 px, titles larger; at 1080 px or 4K the same
proportions.

What the stage shows is the page figure of the view (:mod:`..files.sheet`), laid
out at the screen's size and kept live: every edit draws it again from the
studio's numbers. Where the tiles of a view do not fit side by side, ← → go from
one to the next; where a sentence does not fit at that size, the stage shows a
window of its tokens around the query (↑ ↓ move the query and the window with
it), and says which tokens of how many. Views that are not heatmaps (geometry,
the training lab's panels, drift, meaning in context, the √d_k plot, the Head
Lab) are the window's own widget, lent to the stage at the stage's text size
and given back when the stage moves on.

A control strip at the bottom (H hides it) keeps the view's live controls on the
stage; with two screens the stage fills the screen the window is not on and the
window stays live on the laptop (View → Present on… chooses the screen).
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ...scenes import MAX_SELECTION
from .. import presentation
from .lent import LentViews
from .basics import (
    ATTENTION, COMPARE, DRIFT, GEOMETRY, HEADS, HEATMAP_VIEWS, MEANING, MODEL, OUTPUTS, POSITIONS, STEPS,
    TOY_VIEWS, TRAINED_VIEWS, TRAINING_PREFIX, VARIANCE,
)
from .stage import Stage, stage_zoom
from .stage import stage_sizes, token_window  # noqa: F401 (the stage's sizes and windows: importable from here)
from .stage_figures import StageFigures
from .stage_steps import StageSteps
from .stage_keys import StageKeys


class Present(QtCore.QObject):
    """Present mode of ``window``: ``action`` (``presentAction``, F5) opens and closes the stage.

    ``view`` is the name of the view on the stage (a tab's name as the window shows it, or
    "Why divide by √d_k"), ``page`` which of its tiles or steps is shown where they do not all
    fit, ``stage`` the stage window while presenting (else None). ``menu`` (View → Present on…)
    chooses the screen; ``focus_menu`` (View → Focus on…) presents one panel of the window.
    ``viewShown(view)`` is emitted whenever the stage shows another view (the window follows it).
    """

    viewShown = QtCore.Signal(str)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.stage: Stage | None = None
        self.view: str = ATTENTION
        self.page = 0
        self.pages = 1
        self.screen: QtGui.QScreen | None = None
        self.lent_views = LentViews(self)  # the window's own widgets lent to the stage
        self._rendering = False
        self.geometry: QtCore.QRect | None = None
        self.lecture_panel = None  # the Scenes panel, when the window has one: PageDown plays its scenes
        self.keys = StageKeys(self)  # what each key of the stage does
        self.number_on = True  # the scene's number shown in a corner of the stage (N)
        self.arrive_at_last = False  # the scene being shown is entered at its last page (PageUp)
        self.card = None  # (title, widget, caption) on the stage instead of a scene that cannot be shown
        self._strip_shown = True
        self.deferred = False  # a scene is being applied: the stage is drawn once, when it is shown
        self.centre = 0  # the middle of a training heatmap's window of tokens (↑ ↓ move it)
        self.figures = StageFigures(self)  # the heatmap views drawn on the stage, and its precision
        self.steps = StageSteps(self)  # the step view on the stage
        self.sheet = None  # the figure on the stage (tests and the room read its heatmaps)
        self.stage_precision_menu = self.figures.precision_menu()
        self.action = QtGui.QAction("&Present", window)
        self.action.setObjectName("presentAction")
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence(QtCore.Qt.Key_F5))
        self.action.setToolTip("The current view as a stage for the room, live (F5); on a second screen when there "
                               "is one. Esc leaves")
        self.action.triggered.connect(lambda: self.leave() if self.active else self.enter())
        # F: the panel under the pointer, as focus mode did.
        self.focus_action = QtGui.QAction("Present the panel &under the pointer", window)
        self.focus_action.setObjectName("focusAction")
        self.focus_action.setShortcut(QtGui.QKeySequence(QtCore.Qt.Key_F))
        self.focus_action.triggered.connect(lambda: self.leave() if self.active else self.enter(*self.target_here()))
        self.menu = QtWidgets.QMenu("Present o&n…", window)
        self.menu.setObjectName("presentOnMenu")
        self.menu.aboutToShow.connect(self._fill_screens)
        self.focus_menu = QtWidgets.QMenu("Present &view…", window)
        self.focus_menu.setObjectName("focusMenu")
        self.focus_menu.aboutToShow.connect(self._fill_views)
        self._fill_screens()
        self._fill_views()
        window.bridge.changed.connect(self._changed)
        # A change is drawn on the stage after the window has drawn it: a trained or large model's heatmaps,
        # which the stage's figures show, are drawn in steps (and a switch of model builds the other's
        # heads' maps); drawn at once for the stage they froze the window. Meanwhile the stage keeps its figure.
        self._due = None  # "render" or "show" (another view): what the stage does once the window has drawn
        self._soon = QtCore.QTimer(self, singleShot=True, interval=0)
        self._soon.timeout.connect(self._draw_due)
        drawer = getattr(window, "drawer", None)
        if drawer is not None:
            drawer.drawn.connect(self._draw_due)
        app = QtGui.QGuiApplication.instance()
        app.screenRemoved.connect(self._screen_removed)
        app.focusWindowChanged.connect(self.follow_cover)
        self._timer = QtCore.QTimer(self)  # a training run's curves: the stage's strip follows them
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._tick)

    @property
    def active(self) -> bool:
        return self.stage is not None

    def covers_window(self) -> bool:
        """True while the stage hides the window: on the window's own screen, the window not brought in
        front of it (the focus neither in the window nor in one of its dialogs)."""
        if self.stage is None or self.screen is not self.window.screen():
            return False
        focus, mine = QtGui.QGuiApplication.focusWindow(), self.window.windowHandle()
        return focus is None or (focus is not mine and focus.transientParent() is not mine)

    def follow_cover(self, *_) -> None:
        """Hold the window's drawing while the stage hides it, release it when it is seen (brought in
        front, or the stage left): the room sees the stage, and half a scene's time went to the window."""
        drawer = getattr(self.window, "drawer", None)
        if drawer is not None:
            drawer.hold(self.covers_window())

    def _tick(self) -> None:
        # A training run goes on by itself: the strip follows its buttons, a heatmap page its numbers.
        if self.stage is None:
            return
        self.stage.strip.sync()
        if self.view.startswith(TRAINING_PREFIX) and self.stage.content is not None \
                and getattr(self.stage.content, "fixed", False):
            self.render()

    # -- which views ------------------------------------------------------------------------
    def views(self) -> list[str]:
        """The views the stage can show, in the window's order (PageDown goes to the next)."""
        tabs = self.window.view_tabs
        names = []
        for i in range(tabs.count()):
            if not tabs.isTabVisible(i):
                continue
            text = tabs.tabText(i).replace("&", "")
            widget = tabs.widget(i)
            lab = getattr(self.window, "training", None)
            if lab is not None and widget is lab.page:
                names += [TRAINING_PREFIX + title for title in lab.titles().values()]
            elif text and self._has(text):
                names.append(text)
        names.append(VARIANCE)
        return names

    def _training_tab(self):
        lab = getattr(self.window, "training", None)
        if lab is None:
            return None
        return lab.tab  # built now if it was not yet

    def _has(self, name: str) -> bool:
        return name in (ATTENTION, STEPS, OUTPUTS, COMPARE, POSITIONS, GEOMETRY, HEADS, MODEL, DRIFT, MEANING)

    def training_panel(self, name: str):
        """The training lab's panel named ``"Training: " + its title``, else None."""
        if not name.startswith(TRAINING_PREFIX):
            return None
        tab = self._training_tab()
        if tab is None:
            return None
        # By title, building only the panel asked for (the others are built when they are shown).
        for key, title in self.window.training.titles().items():
            if TRAINING_PREFIX + title == name:
                return tab.panel(key)
        return None

    def current_view(self) -> str:
        """The view the window shows now: its current tab (the training lab's current panel)."""
        w = self.window
        widget = w.view_tabs.currentWidget()
        lab = getattr(w, "training", None)
        if lab is not None and widget is getattr(lab, "page", None):
            tab = self._training_tab()
            if tab is not None and tab.current is not None:
                return TRAINING_PREFIX + tab.current.title
        text = w.view_tabs.tabText(w.view_tabs.currentIndex()).replace("&", "")
        return text if self._has(text) else ATTENTION

    def target_here(self) -> tuple:
        """(view, head) of the panel under the mouse pointer, else the current view's."""
        w = self.window
        under = QtWidgets.QApplication.widgetAt(QtGui.QCursor.pos())
        while under is not None and under is not w:
            if under in w.heatmap_view.head_canvases and under.isVisible():
                return ATTENTION, w.heatmap_view.head_canvases.index(under)
            if under is w.pipeline_view:
                return STEPS, None
            if under is w.variance_plot:
                return VARIANCE, None
            under = under.parentWidget()
        return self.current_view(), None

    def _fill_screens(self) -> None:
        self.menu.clear()
        for screen in QtGui.QGuiApplication.screens():
            size = screen.geometry().size()
            self.menu.addAction(f"{screen.name()} ({size.width()} × {size.height()})",
                                lambda s=screen: self.enter(screen=s))

    def _fill_views(self) -> None:
        self.focus_menu.clear()
        for name in self.views():
            self.focus_menu.addAction(name, lambda n=name: self.enter(n))

    # -- entering and leaving -----------------------------------------------------------------
    def stage_screen(self) -> QtGui.QScreen:
        """The screen the stage goes to: the one the window is not on, when there are two."""
        screens = QtGui.QGuiApplication.screens()
        mine = self.window.screen()
        others = [s for s in screens if s is not mine]
        return others[0] if others else (mine or QtGui.QGuiApplication.primaryScreen())

    # -- the figures (StageFigures, StageSteps) ----------------------------------------------------
    @property
    def steps_table(self):
        """The step view's table on the stage (:class:`~.stage_steps.StageSteps`), or None."""
        return self.steps.table

    @property
    def steps_explanation(self):
        """The step view's explanation on the stage, or None."""
        return self.steps.explanation

    def stage_digits(self) -> int:
        """The decimals the stage writes now (:meth:`StageFigures.stage_digits <.stage_figures.StageFigures.stage_digits>`)."""
        return self.figures.stage_digits()

    def set_stage_digits(self, digits: int | None) -> None:
        """View → Precision on the stage (None: as the window)."""
        self.figures.set_stage_digits(digits)

    def pinned_cell(self) -> tuple[int, int] | None:
        """The cell pinned on the stage's figure (row, column), or None."""
        return self.figures.pinned_cell()

    # -- the keys (StageKeys) -------------------------------------------------------------------
    def key(self, event: QtGui.QKeyEvent) -> bool:
        """The stage's keys (:meth:`StageKeys.key <.stage_keys.StageKeys.key>`); False for a key left to Qt."""
        return self.keys.key(event)

    def scene_action(self) -> QtGui.QAction:
        """View → Present from current scene (Shift+F5)."""
        return self.keys.scene_action()

    def enter_scene(self, screen: QtGui.QScreen | None = None, geometry: QtCore.QRect | None = None):
        """Shift+F5: the stage on the Scenes panel's current scene; returns the stage."""
        return self.keys.enter_scene(screen=screen, geometry=geometry)

    def enter(self, view: str | None = None, head: int | None = None, screen: QtGui.QScreen | None = None,
              geometry: QtCore.QRect | None = None) -> Stage:
        """Open the stage on ``view`` (default: the window's current view) on ``screen`` (default: the
        other one). ``geometry``: the stage's place and size instead of the whole screen's (a projector
        of that size simulated on another screen: its sizes follow its own height)."""
        self.geometry = QtCore.QRect(geometry) if geometry is not None else None
        if self.active:
            self.leave()
        self.view = view if view in self.views() else self.current_view()
        if head is not None:
            self.select_head(head)
        self.page = 0
        self.stage = Stage(self)
        presentation.restyle(self.stage)
        self._place(screen or self.stage_screen())
        self.stage.strip.setVisible(True)
        self._show_view()
        self.stage.setFocus()
        self.stage.activateWindow()
        self.action.setChecked(True)
        self._esc = QtGui.QShortcut(QtGui.QKeySequence(QtCore.Qt.Key_Escape), self.window)
        self._esc.activated.connect(self.leave)  # Esc on either screen ends it
        self._timer.start()
        self.follow_cover()
        return self.stage

    def _place(self, screen: QtGui.QScreen) -> None:
        stage = self.stage
        self.screen = screen
        stage.setGeometry(screen.geometry())
        stage.create()
        handle = stage.windowHandle()
        if handle is not None:
            handle.setScreen(screen)
        # The stage is the screen's size whatever its content asks for: content that does not fit
        # is paged or windowed, never allowed to push the stage past the screen.
        rect = self.geometry if self.geometry is not None else screen.geometry()
        stage.setFixedSize(rect.size())
        stage.setGeometry(rect)
        if self.geometry is None:
            stage.showFullScreen()
        else:
            stage.show()

    def leave(self) -> None:
        """Esc: close the stage; a view lent to it goes back to the window as it was."""
        if not self.active:
            return
        self._timer.stop()
        self.card = None
        self.lent_views.give_back()  # while the stage is there to let go of it
        stage, self.stage = self.stage, None
        if getattr(self, "_esc", None) is not None:
            self._esc.setParent(None)
            self._esc.deleteLater()
            self._esc = None
        stage.set_content(None)
        QtWidgets.QApplication.instance().removeEventFilter(stage)
        stage.hide()
        stage.deleteLater()  # not now: Esc may come from the stage's own key event
        # Its Python side kept until Qt deletes it: freed by the cycle collector first, its plot items
        # would be cleared before the stage's deletion asks them for their sizes.
        self._closing = stage
        self.action.setChecked(False)
        self.window.activateWindow()
        self.follow_cover()

    def _screen_removed(self, screen: QtGui.QScreen) -> None:
        # The projector unplugged: the stage comes back to the remaining screen, nothing lost.
        if self.stage is not None and screen is self.screen:
            remaining = [s for s in QtGui.QGuiApplication.screens() if s is not screen]
            target = self.window.screen() if self.window.screen() is not screen else None
            target = target or (remaining[0] if remaining else QtGui.QGuiApplication.primaryScreen())
            if target is not None:
                self.geometry = None
                self._place(target)
                self.follow_cover()
                self.render()

    # -- moving on the stage -----------------------------------------------------------------
    def go_to(self, view: str) -> None:
        """Show ``view`` on the stage."""
        if view != self.view and view in self.views():
            self._drop_card()
            self.view, self.page, self.centre = view, 0, 0
            if self.stage is not None:
                self._show_view()

    def show_view(self, view: str, page: int = 0) -> None:
        """Show ``view`` (a scene's): on the stage while presenting, else as the window's current tab."""
        if self.active:
            self._drop_card()
            if view != self.view and view in self.views():
                self.view, self.centre = view, 0
                self.page = page
                self._show_view()
            else:
                self.page = page
                self.render()
            return
        w = self.window
        if view == VARIANCE:  # a dock beside the tabs: shown and brought to the front
            w.variance_dock.show()
            w.variance_dock.raise_()
            return
        panel = self.training_panel(view)
        if panel is not None:
            w.view_tabs.setCurrentWidget(w.training.page)
            tab = self._training_tab()
            tab.tabs.setCurrentWidget(panel)
            return
        for i in range(w.view_tabs.count()):
            if w.view_tabs.tabText(i).replace("&", "") == view and w.view_tabs.isTabVisible(i):
                w.view_tabs.setCurrentIndex(i)
                return

    def current_scene(self):
        """The lecture's scene shown last, when a lecture is open, else None."""
        return self.lecture_panel.scene() if self._playing() else None

    def _playing(self) -> bool:
        panel = self.lecture_panel
        return panel is not None and panel.lecture is not None and len(panel.lecture.scenes) > 0

    def next_scene(self, step: int = 1, *, at_last: bool = False) -> bool:
        """Shift+PageDown / Shift+PageUp with a lecture open: the next (previous) scene, at its start
        (``at_last``: at the last page or step it plays to, as PageUp arrives); False past either end."""
        panel = self.lecture_panel
        if not self._playing() or not 0 <= panel.current + step < len(panel.lecture.scenes):
            return False
        self.arrive_at_last = at_last  # read by the scene's showing (scene_show.show_scene), once
        try:
            return panel.go(panel.current + step)
        finally:
            self.arrive_at_last = False

    def position(self) -> int:
        """Where the stage is in its view: the step shown (Step by step), else the page."""
        if self.view == STEPS:
            pipe = self.window.pipeline_view
            return max(0, min(pipe.current_step, len(pipe.steps) - 1))
        return self.page

    def last_position(self) -> int:
        """The view's last step (Step by step) or page, as last drawn."""
        if self.view == STEPS:
            return max(len(self.window.pipeline_view.steps) - 1, 0)
        return max(self.pages - 1, 0)

    def scene_span(self) -> tuple[int, int] | None:
        """(start, last) of the scene on the stage, in its view's pages or steps: where PageUp stops and
        PageDown plays to. None without a lecture, on a card, or when the stage shows another view."""
        scene = self.current_scene()
        if scene is None or self.card is not None or scene.view != self.view:
            return None
        sel, end = scene.selection, self.last_position()
        start = min(sel.get("step" if self.view == STEPS else "page", 0), end)
        return start, min(max(sel.get("last", end), start), end)

    def page_down(self, step: int = 1) -> None:
        """PageDown / PageUp, what a clicker sends: the view's next (previous) page or step while the scene
        plays through them, then the next scene (the previous one, at its last page), as pdfpc steps
        through a slide's overlays. Without a lecture: the pages, then the next (previous) view."""
        if not self._playing():
            if not self._moved_page(step):
                self.next_view(step)
            return
        span = None if self.lecture_panel.showing() else self.scene_span()  # a scene not drawn yet: no pages
        if span is not None:
            start, last = span
            here = self.position()
            if (here < last if step > 0 else here > start) and self._moved_page(step):
                return
        self.next_scene(step, at_last=step < 0)

    def _moved_page(self, step: int) -> bool:
        # One page or step on, when there is one; False when the view did not move (its end, or a figure
        # that could not be paged): the clicker then goes on to the next scene, never stuck.
        if not self._can_move_page(step):
            return False
        before = self.position()
        self.move_page(step)
        return self.position() != before

    def _can_move_page(self, step: int) -> bool:
        if self.card is not None:
            return False
        if self.view == STEPS:
            pipe = self.window.pipeline_view
            return 0 <= pipe.current_step + step < len(pipe.steps)
        return 0 <= self.page + step < self.pages

    def next_view(self, step: int = 1) -> None:
        """PageDown / PageUp without a lecture, past the view's pages: the next view at its first page or
        step (the previous one at its last, so that PageUp walks back through what PageDown showed)."""
        views = self.views()
        i = views.index(self.view) if self.view in views else 0
        view = views[(i + step) % len(views)]
        if view == self.view:
            return
        self._drop_card()
        self.view, self.centre = view, 0
        self.page = 0 if step > 0 else MAX_SELECTION  # past the end: the last page, once drawn
        if view == STEPS:
            pipe, drawer = self.window.pipeline_view, getattr(self.window, "drawer", None)
            first_or_last = 0 if step > 0 else MAX_SELECTION
            if drawer is not None and (pipe in drawer.stale or pipe in drawer.steps):
                pipe.keep_step(first_or_last)  # not drawn for the current numbers: clamped when it is
            else:
                pipe.set_current_step(first_or_last)
        if self.stage is not None:
            self._show_view()

    def move_page(self, step: int) -> None:
        """← →: the next (previous) tile or step of the view."""
        if self.view == STEPS:
            pipe = self.window.pipeline_view
            pipe.set_current_step(min(max(pipe.current_step + step, 0), len(pipe.steps) - 1))
        else:
            self.page = min(max(self.page + step, 0), max(self.pages - 1, 0))
        self.render()

    # -- a scene that cannot be shown: a card in its place ---------------------------------------
    def show_card(self, title: str, card: QtWidgets.QWidget, caption: str) -> None:
        """``card`` on the stage instead of the view (a scene whose model is missing, or whose run is being
        trained): the stage says the scene's ``title`` and ``caption``; the next scene shown, or the stage
        left, takes it away."""
        stage = self.stage
        if stage is None:
            card.deleteLater()
            return
        self.lent_views.give_back()
        self.figures.last_sheet = None
        if self.card is None:
            self._strip_shown = stage.strip.isVisible()
        self.card = (title, card, caption)
        stage.strip.setVisible(False)  # the controls of the model before: not this scene's
        stage.apply_sizes()
        stage.set_title(title)
        stage.set_content(card)
        self._card_caption(caption)

    def _card_caption(self, caption: str) -> None:
        # A card's line under it: its own words, no keys' hints of the view before; the scene's number its own.
        stage = self.stage
        stage.caption.setText(caption)
        stage.hints.setText("")
        stage.hints.setVisible(False)
        stage.show_number()

    def _drop_card(self) -> None:
        if self.card is not None:
            self.card = None
            if self.stage is not None:
                self.stage.strip.setVisible(self._strip_shown)

    def select_head(self, head: int) -> None:
        """Show head ``head`` (from 0) of the model (of the selected layer, for a trained model)."""
        w = self.window
        heads = int(w.studio.result.weights.shape[0])
        if not 0 <= head < heads:
            return
        if w.studio.is_trained:
            w.trained.room.select(head=head)
        else:
            w.studio.select(head=head)

    # -- drawing -----------------------------------------------------------------------------
    def _changed(self, *_) -> None:
        if self.stage is None or self.deferred:
            return  # a scene being shown draws the stage whole when it is done
        other = TOY_VIEWS if self.window.studio.is_trained else TRAINED_VIEWS
        if self.view in other:
            # The model changed under the stage (an example, File → New or Open, the model chooser): a view
            # only the other model has (the trained model's layers, Compare of the toy) gives way to the
            # window's current one, instead of being drawn from numbers it cannot read.
            view = self.current_view()
            self.view, self.page, self.centre = view if view not in other else ATTENTION, 0, 0
            self._due = "show"
        elif self._due is None:
            self._due = "render"
        self._soon.start()  # after the window's own redraw of this change

    def _draw_due(self) -> None:
        """Draw the change waiting for the stage, once the window's heatmaps it shows are drawn."""
        due, w = self._due, self.window
        if due is None or self.stage is None or self.deferred:
            self._due = None
            return
        drawer = getattr(w, "drawer", None)
        if drawer is not None and self.view in (ATTENTION, HEADS, MODEL) and w.studio.is_trained:
            drawer.draw_in_steps(w.heatmap_view)  # hidden in the window: drawn in steps all the same
            if drawer.steps:
                return  # drawer.drawn calls again
        self._due = None
        if due == "show":
            self._show_view()
        else:
            self.render()

    def set_digits(self, digits: int) -> None:
        """The window's precision changed (``presentation.set_digits``): the stage is drawn again, its figures
        still at the stage's own precision (``stage_digits``), a view it lends at the window's."""
        self._changed()

    def _show_view(self) -> None:
        self.lent_views.give_back()
        stage = self.stage
        s = stage.apply_sizes()
        stage.strip.build(self.view, s["label"])
        self.render()
        self.viewShown.emit(self.view)

    def render(self) -> None:
        """Draw the view on the stage again from the studio's numbers."""
        stage = self.stage
        if stage is None or self._rendering:
            return
        self._rendering = True
        try:
            s = stage.apply_sizes()
            stage.strip.sync()
            zoom = stage_zoom(s["label"], stage.logicalDpiY() or 96)
            view = self.view
            if self.card is not None:  # a scene that could not be shown: its card stays until another is
                title, card, caption = self.card
                stage.set_title(title)
                self._card_caption(caption)
            elif view in HEATMAP_VIEWS or view == HEADS:
                self.figures.render_sheet(view, s, zoom)
            elif view == STEPS:
                self.steps.render(s)
            else:
                self.lent_views.render(view, s, zoom)
            if view != STEPS:  # a page asked past the end (a scene entered at its last) is the last
                self.page = min(self.page, max(self.pages - 1, 0))
        finally:
            self._rendering = False

    def _title(self, what: str) -> str:
        state = self.window.studio.state
        tokens = state.query_tokens
        query = f" · query “{tokens[state.query_index]}”" if tokens else ""
        return f"{what}{query}"

    # Heatmap views: the page figure's tiles, at the stage's size.

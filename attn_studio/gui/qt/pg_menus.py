"""Plot menus built on first use: a patch of pyqtgraph's PlotItem and ViewBox (see below).

Imported by ``qt.pg`` once pyqtgraph is configured; the project's other patches of pyqtgraph live
there. ``MENUS_ON_FIRST_USE`` says whether this pyqtgraph is the source the patch was made for.
"""

import hashlib
import importlib
import inspect
import weakref

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu
from PySide6 import QtWidgets

# The modules themselves (their packages export the classes under the same names).
_plot_item_module = importlib.import_module("pyqtgraph.graphicsItems.PlotItem.PlotItem")
_view_box_module = importlib.import_module("pyqtgraph.graphicsItems.ViewBox.ViewBox")

# --- Plot menus built on first use -------------------------------------------------------------
#
# Every PlotItem builds its "Plot Options" form (a Qt Designer form of about sixty widgets, put in
# a QMenu and a WidgetGroup) and its ViewBox builds the "View All / X axis / Y axis / Mouse Mode"
# menu (two more forms) as they are made: about 0.35 s of CPU for the window's plots, for menus
# nobody opens until they right-click a plot (and most of our plots disable them anyway).
# Here both are built on first use instead. What a person sees and can do is unchanged: the menu
# a right-click opens is the same, built at that moment.
#
# PlotItem also *reads* its form while curves are added (log mode, alpha, downsampling, ...): an
# unbuilt form answers such queries from one shared form that is never written to, so it answers
# with the form's defaults, which is what the plot's own form would still hold. Anything else done
# to the form (setLogMode, showGrid, setDownsampling, restoreState, ...) builds the plot's own form
# first and then does it there, with its signals connected as pyqtgraph connects them.
#
# The patch replaces PlotItem.__init__ by a copy without the menu block, so it is applied only to
# the pyqtgraph source it was copied from (checked by hash); any other version keeps its eager
# menus, still correct, and tests/gui/test_plot_menus.py says so.

_PATCHED_SOURCES = {
    "PlotItem.__init__": "5043d18613d5d6ce",
    "PlotItem.close": "9fab84dc8ad4e4b4",
    "ViewBox._applyMenuEnabled": "c544f335ce792c44",
    "ViewBox.updateViewLists": "47eb97676541d640",
}

# Queries that do not change a widget: answered by the shared form while a plot's own is unbuilt.
_FORM_QUERIES = frozenset({"isChecked", "value", "maximum", "minimum", "count", "text", "isEnabled",
                           "checkState", "currentIndex", "currentText", "singleStep"})
_default_form = None


def _default_plot_form():
    """The one form never written to: its widgets hold what a new plot's form holds."""
    global _default_form
    if _default_form is None:
        widget = QtWidgets.QWidget()
        form = _plot_item_module.ui_template.Ui_Form()
        form.setupUi(widget)
        _default_form = (widget, form)  # the widget owns the form's widgets: keep it alive
    return _default_form[1]


class _UnbuiltWidget:
    """One widget of a plot's unbuilt form: queries are answered from the defaults, anything else
    builds the plot's form and goes to the real widget."""

    __slots__ = ("_plot", "_name")

    def __init__(self, plot, name):
        self._plot, self._name = plot, name

    def __getattr__(self, method):
        plot = self._plot()
        if self._name in _KEPT_UNBUILT and plot is not None:
            setter, query, slot = _KEPT_UNBUILT[self._name]
            values = plot.__dict__.setdefault("_unbuilt_form_values", {})
            if method == query and self._name in values:
                return lambda: values[self._name]
            if method == setter:
                return lambda value: _set_unbuilt(plot, self._name, value)
        if self._name == "avgParamList":
            if method in _EMPTY_LIST_CALLS:
                # updateParamList refills the list on every added curve; it is refilled when the
                # form is built, so until then these change nothing (an empty list finds nothing).
                return _EMPTY_LIST_CALLS[method]
        elif method in _FORM_QUERIES or plot is None:
            return getattr(getattr(_default_plot_form(), self._name), method)
        return getattr(getattr(_build_plot_options(plot), self._name), method)


# showGrid and setLogMode, which most plots call once as they are made, set these widgets: on an
# unbuilt form their values are kept per plot and the slot pyqtgraph connects to the widget's
# signal is called when the value changes (as Qt emits toggled / valueChanged only on a change).
# The values are put in the form when it is built, before anything is connected to it.
_KEPT_UNBUILT = {
    "xGridCheck": ("setChecked", "isChecked", "updateGrid"),
    "yGridCheck": ("setChecked", "isChecked", "updateGrid"),
    "gridAlphaSlider": ("setValue", "value", "updateGrid"),
    "logXCheck": ("setChecked", "isChecked", "updateLogMode"),
    "logYCheck": ("setChecked", "isChecked", "updateLogMode"),
}


def _set_unbuilt(plot, name, value) -> None:
    default = getattr(_default_plot_form(), name)
    setter, query, slot = _KEPT_UNBUILT[name]
    if setter == "setChecked":
        value = bool(value)
    else:  # QSlider.setValue keeps the value in range
        value = min(max(int(value), default.minimum()), default.maximum())
    values = plot.__dict__.setdefault("_unbuilt_form_values", {})
    old = values.get(name, getattr(default, query)())
    values[name] = value
    if value != old:
        getattr(plot, slot)()


_EMPTY_LIST_CALLS = {"clear": lambda: None, "addItem": lambda item: None, "findItems": lambda *a: []}


class _UnbuiltForm:
    """Stands for ``PlotItem.ctrl`` until the form is needed (see above)."""

    __slots__ = ("_plot",)

    def __init__(self, plot):
        self._plot = weakref.ref(plot)

    def __getattr__(self, name):
        if not hasattr(_default_plot_form(), name):
            raise AttributeError(name)
        return _UnbuiltWidget(self._plot, name)


def _plot_options_built(plot) -> bool:
    return not isinstance(plot.__dict__.get("ctrl"), _UnbuiltForm)


def _build_plot_options(plot):
    """Build ``plot``'s Plot Options form and menu (the block PlotItem.__init__ runs), once."""
    if _plot_options_built(plot):
        return plot.ctrl
    translate = _plot_item_module.translate
    w = QtWidgets.QWidget()
    c = _plot_item_module.ui_template.Ui_Form()
    c.setupUi(w)
    for name, value in plot.__dict__.pop("_unbuilt_form_values", {}).items():
        getattr(getattr(c, name), _KEPT_UNBUILT[name][0])(value)  # nothing is connected yet
    plot.__dict__["ctrl"] = c

    menuItems = [
        (translate("PlotItem", 'Transforms'), c.transformGroup),
        (translate("PlotItem", 'Downsample'), c.decimateGroup),
        (translate("PlotItem", 'Average'), c.averageGroup),
        (translate("PlotItem", 'Alpha'), c.alphaGroup),
        (translate("PlotItem", 'Grid'), c.gridGroup),
        (translate("PlotItem", 'Points'), c.pointsGroup),
    ]

    menu = QtWidgets.QMenu(translate("PlotItem", 'Plot Options'))
    for name, grp in menuItems:
        sm = menu.addMenu(name)
        act = QtWidgets.QWidgetAction(plot)
        act.setDefaultWidget(grp)
        sm.addAction(act)
    if "_ctrl_menu" not in plot.__dict__:  # close() may have run already: it stays shut
        plot.__dict__["_ctrl_menu"] = menu

    group = _plot_item_module.WidgetGroup()
    for name, w in menuItems:
        group.autoAdd(w)
    plot.__dict__["_state_group"] = group

    c.alphaGroup.toggled.connect(plot.updateAlpha)
    c.alphaSlider.valueChanged.connect(plot.updateAlpha)
    c.autoAlphaCheck.toggled.connect(plot.updateAlpha)

    c.xGridCheck.toggled.connect(plot.updateGrid)
    c.yGridCheck.toggled.connect(plot.updateGrid)
    c.gridAlphaSlider.valueChanged.connect(plot.updateGrid)

    c.fftCheck.toggled.connect(plot.updateSpectrumMode)
    c.subtractMeanCheck.toggled.connect(plot.updateSubtractMeanMode)
    c.logXCheck.toggled.connect(plot.updateLogMode)
    c.logYCheck.toggled.connect(plot.updateLogMode)
    c.derivativeCheck.toggled.connect(plot.updateDerivativeMode)
    c.phasemapCheck.toggled.connect(plot.updatePhasemapMode)

    c.downsampleSpin.valueChanged.connect(plot.updateDownsampling)
    c.downsampleCheck.toggled.connect(plot.updateDownsampling)
    c.autoDownsampleCheck.toggled.connect(plot.updateDownsampling)
    c.subsampleRadio.toggled.connect(plot.updateDownsampling)
    c.meanRadio.toggled.connect(plot.updateDownsampling)
    c.clipToViewCheck.toggled.connect(plot.updateDownsampling)

    c.avgParamList.itemClicked.connect(plot.avgParamListClicked)
    c.averageGroup.toggled.connect(plot.avgToggled)

    c.maxTracesCheck.toggled.connect(plot._handle_max_traces_toggle)
    c.forgetTracesCheck.toggled.connect(plot.updateDecimation)
    c.maxTracesSpin.valueChanged.connect(plot.updateDecimation)

    plot.updateParamList()  # the curves' averaging parameters, listed while the form was unbuilt
    return c


def _plot_item_init(self, parent=None, name=None, labels=None, title=None, viewBox=None,
                    axisItems=None, enableMenu=True, **kwargs):
    # pyqtgraph 0.14.0's PlotItem.__init__, line for line, with its "Set up context menu" block
    # moved to _build_plot_options.
    pg.GraphicsWidget.__init__(self, parent)

    self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)

    self.autoBtn = _plot_item_module.ButtonItem(_plot_item_module.icons.getGraphPixmap('auto'), 14, self)
    self.autoBtn.mode = 'auto'
    self.autoBtn.clicked.connect(self.autoBtnClicked)
    self.buttonsHidden = False
    self.mouseHovering = False

    self.layout = QtWidgets.QGraphicsGridLayout()
    self.layout.setContentsMargins(1, 1, 1, 1)
    self.setLayout(self.layout)
    self.layout.setHorizontalSpacing(0)
    self.layout.setVerticalSpacing(0)

    if viewBox is None:
        viewBox = pg.ViewBox(parent=self, enableMenu=enableMenu)
    self.vb = viewBox
    self.vb.sigStateChanged.connect(self.viewStateChanged)

    self.setMenuEnabled(enableMenu, None)

    if name is not None:
        self.vb.register(name)
    self.vb.sigRangeChanged.connect(self.sigRangeChanged)
    self.vb.sigXRangeChanged.connect(self.sigXRangeChanged)
    self.vb.sigYRangeChanged.connect(self.sigYRangeChanged)
    self.vb.sigRangeChangedManually.connect(self.sigRangeChangedManually)

    self.layout.addItem(self.vb, 2, 1)
    self.alpha = 1.0
    self.autoAlpha = True
    self.spectrumMode = False

    self.legend = None

    self.axes = {}
    self.setAxisItems(axisItems)

    self.titleLabel = pg.LabelItem('', size='11pt', parent=self)
    self.layout.addItem(self.titleLabel, 0, 1)
    self.setTitle(None)

    for i in range(4):
        self.layout.setRowPreferredHeight(i, 0)
        self.layout.setRowMinimumHeight(i, 0)
        self.layout.setRowSpacing(i, 0)
        self.layout.setRowStretchFactor(i, 1)

    for i in range(3):
        self.layout.setColumnPreferredWidth(i, 0)
        self.layout.setColumnMinimumWidth(i, 0)
        self.layout.setColumnSpacing(i, 0)
        self.layout.setColumnStretchFactor(i, 1)
    self.layout.setRowStretchFactor(2, 100)
    self.layout.setColumnStretchFactor(1, 100)

    self.items = []
    self.curves = []
    self.itemMeta = weakref.WeakKeyDictionary()
    self.dataItems = []
    self.paramList = {}
    self.avgCurves = {}
    self.avgPen = pg.mkPen((0, 200, 0))
    self.avgShadowPen = pg.mkPen((0, 0, 0), width=4)

    self.__dict__["ctrl"] = _UnbuiltForm(self)  # the Plot Options form, built on first use
    self.fileDialog = None

    if labels is None:
        labels = {}
    for label in list(self.axes.keys()):
        if label in kwargs:
            labels[label] = kwargs[label]
            del kwargs[label]
    for k in labels:
        if isinstance(labels[k], str):
            labels[k] = (labels[k],)
        self.setLabel(k, *labels[k])

    if title is not None:
        self.setTitle(title)

    if kwargs:
        self.plot(**kwargs)


def _lazy(key):
    """A PlotItem attribute kept under ``key``, its Plot Options built when first read."""
    def get(self):
        if key not in self.__dict__:
            _build_plot_options(self)
        return self.__dict__[key]

    def set(self, value):
        self.__dict__[key] = value
    return property(get, set)


_plot_item_close = pg.PlotItem.close


def _close_plot_item(self):
    if "_ctrl_menu" not in self.__dict__:
        self.__dict__["_ctrl_menu"] = QtWidgets.QMenu()  # nothing to build just to shut it down
    _plot_item_close(self)


# The ViewBox menu: a placeholder until read.
_PENDING_MENU = object()


def _view_box_menu(self):
    menu = self.__dict__.get("_menu")
    if menu is _PENDING_MENU:
        menu = self.__dict__["_menu"] = ViewBoxMenu(self)
        try:
            self.window()
        except RuntimeError:  # deleted meanwhile
            return menu
        # The link combos list the named views, as updateViewLists would have told the menu.
        views = sorted(pg.ViewBox.NamedViews.values(), key=lambda v: (v.window() is self.window(), v.name))
        menu.setViewList([v for v in views if v is not self])
    return menu


def _set_view_box_menu(self, menu):
    self.__dict__["_menu"] = menu


def _apply_view_box_menu_enabled(self):
    # ViewBox._applyMenuEnabled, with the menu made on first read.
    enabled = self.state.get("enableMenu", True)
    menu = self.__dict__.get("_menu")
    if enabled and menu is None:
        self.__dict__["_menu"] = _PENDING_MENU
    elif not enabled and menu is not None:
        if menu is not _PENDING_MENU:
            menu.setParent(None)
        self.__dict__["_menu"] = None


_update_view_lists = pg.ViewBox.updateViewLists


def _update_view_lists_unbuilt_menu(self):
    # Every view registered updates every view's link list: an unbuilt menu is skipped (it lists
    # the views when built).
    if self.__dict__.get("_menu") is not _PENDING_MENU:
        return _update_view_lists(self)
    self.__dict__["_menu"] = None
    try:
        return _update_view_lists(self)
    finally:
        self.__dict__["_menu"] = _PENDING_MENU


def _source_hash(function) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


def _menus_on_first_use() -> bool:
    sources = {"PlotItem.__init__": pg.PlotItem.__init__, "PlotItem.close": pg.PlotItem.close,
               "ViewBox._applyMenuEnabled": pg.ViewBox._applyMenuEnabled,
               "ViewBox.updateViewLists": pg.ViewBox.updateViewLists}
    if any(_source_hash(f) != _PATCHED_SOURCES[k] for k, f in sources.items()):
        return False
    pg.PlotItem.__init__ = _plot_item_init
    pg.PlotItem.ctrlMenu = _lazy("_ctrl_menu")
    pg.PlotItem.stateGroup = _lazy("_state_group")
    pg.PlotItem.close = _close_plot_item
    # ViewBox.__init__ and _applyMenuEnabled make the menu through this name: a placeholder instead.
    _view_box_module.ViewBoxMenu = lambda view: _PENDING_MENU
    pg.ViewBox.menu = property(_view_box_menu, _set_view_box_menu)
    pg.ViewBox._applyMenuEnabled = _apply_view_box_menu_enabled
    pg.ViewBox.updateViewLists = _update_view_lists_unbuilt_menu
    return True


MENUS_ON_FIRST_USE = _menus_on_first_use()
"""Whether plots build their context menus on first use (pyqtgraph is the version patched)."""

"""The Heads tab's pages as widgets: the report card beside the role grid, find the head,
importance, flow beside rollout, and what silencing changed. What they do when clicked or
when the model changes is the tab's (``tab.py``); here they are only built and laid out."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ...formatting import IMPORTANCE_DIGITS
from ..views.drift_plot import DriftPlot
from .matrix import MatrixCanvas
from .report_card import ReportCardModel

NORM_NOTE = ("Norm ‖α·f(x)‖: how much of each value vector reaches the output. A large weight on a value "
             "vector of length ≈ 0 adds almost nothing; the weight α alone does not show that.")
WEIGHT_NOTE = "Weight α: the share of the query's attention each key gets (each row sums to 1)."

# The selected head's heatmap gets at least this many pixels of cells a side where the tab is wide
# enough (a 1280×720 projector beside the Model panel); the report card keeps at least CARD_LEAST.
HEAD_SIDE = 320
CARD_LEAST = 300


class HeadsPages:
    """Builds the Heads tab's widgets (a mixin of :class:`~attn_studio.gui.heads.tab.HeadsTab`)."""

    # -- building --------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QtWidgets.QHBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        split = QtWidgets.QSplitter(QtCore.Qt.Horizontal)
        split.setChildrenCollapsible(False)
        outer.addWidget(split)

        # left: the report card over the role grid
        left = QtWidgets.QSplitter(QtCore.Qt.Vertical)
        left.setChildrenCollapsible(False)
        card = QtWidgets.QWidget()
        cl = QtWidgets.QVBoxLayout(card)
        cl.setContentsMargins(0, 0, 0, 0)
        head = QtWidgets.QHBoxLayout()
        title = QtWidgets.QLabel("<b>Report card</b> · click: open · double-click: Attention view")
        title.setToolTip("One row per head (layer.head from 1). Click a row to select that head in the trained "
                         "model; double-click to show it in the Attention view. Click a header to sort.")
        title.setWordWrap(True)
        head.addWidget(title, 1)
        self.csv_button = QtWidgets.QPushButton("Save CSV…")
        self.csv_button.setObjectName("headsCsvButton")
        self.csv_button.clicked.connect(self._ask_csv)
        head.addWidget(self.csv_button)
        cl.addLayout(head)
        self.report_model = ReportCardModel(self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.report_model)
        self.proxy.setSortRole(QtCore.Qt.UserRole)
        self.table = QtWidgets.QTableView()
        self.table.setObjectName("headReportTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, QtCore.Qt.AscendingOrder)  # (layer, head) order until a header is clicked
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # Columns sized once per report (ResizeToContents would measure all 72 rows on every change).
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Interactive)
        self.table.clicked.connect(self._on_row_clicked)
        self.table.doubleClicked.connect(self._on_row_double_clicked)
        cl.addWidget(self.table, 1)
        left.addWidget(card)
        self.role_grid = MatrixCanvas("Roles of the heads", row_title="layer", col_title="head")
        self.role_grid.setObjectName("headRoleGrid")
        self.role_grid.cellClicked.connect(lambda r, c: self.open_head(r, c))
        left.addWidget(self.role_grid)
        left.setStretchFactor(0, 2)
        left.setStretchFactor(1, 1)
        split.addWidget(left)

        # right: the measures, one page each
        self.pages = QtWidgets.QTabWidget()
        self.pages.setObjectName("headsPages")
        self.pages.setDocumentMode(True)
        self.pages.setUsesScrollButtons(True)  # the pages' titles scroll rather than widen the window
        self.pages.tabBar().setExpanding(False)
        self.find_page = self._build_find()
        self.pages.addTab(self.find_page, "Find the head")
        self.detect_page = self._build_detect()
        self.pages.addTab(self.detect_page, "Detect heads")
        self.pages.addTab(self._build_importance(), "Importance")
        self.pages.addTab(self._build_flow(), "Flow vs rollout")
        self.pages.addTab(self._build_silencing(), "What silencing changed")
        split.addWidget(self.pages)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        self.splitter = split
        self._user_split = False  # the lecturer dragged a divider: apportion() leaves the shares be
        split.splitterMoved.connect(self._on_split_moved)
        self.find_body.splitterMoved.connect(self._on_split_moved)
        self.pages.currentChanged.connect(lambda i: self.apportion())

    def resizeEvent(self, event):  # noqa: N802 (Qt's name)
        super().resizeEvent(event)  # the layout has already resized the splitters inside
        self.apportion()

    def apportion(self) -> None:
        """Share the width between the report card and the pages: the card gets the larger share
        (it is what the tab is about), but the selected head's heatmap gets ``HEAD_SIDE`` pixels of
        cells where the tab is wide enough for both (a 1280-pixel projector beside the Model panel
        left it 50-80 px). Once the lecturer drags a divider, the shares are theirs."""
        if self._user_split or not self.isVisible() or self.pages.currentWidget() is not self.find_page:
            return
        split, body = self.splitter, self.find_body
        total = split.width() - split.handleWidth()
        found = self.found_table.minimumWidth()
        head = self.head_map.chrome().width() + HEAD_SIDE
        # The pages' frame and margins around the find page's body, the found heads at their least, the heatmap.
        wanted = (self.pages.width() - body.width()) + found + body.handleWidth() + head
        card = max(min(total * 11 // 20, total - wanted), min(CARD_LEAST, total // 2))
        if split.sizes() != [card, total - card]:
            split.setSizes([card, total - card])
        rest = body.width() - body.handleWidth()
        listed = max(found, min(rest // 4, self.found_table.maximumWidth(), rest - head))
        if body.sizes() != [listed, rest - listed]:
            body.setSizes([listed, rest - listed])

    def _on_split_moved(self, pos: int, index: int) -> None:
        self._user_split = True

    def _export_button(self, name: str) -> QtWidgets.QPushButton:
        button = QtWidgets.QPushButton("Export figure…")
        button.setObjectName(f"headsExport_{name}")
        button.clicked.connect(lambda: self._ask_figure(name))
        return button

    def _build_find(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Which heads send"))
        self.query_edit = QtWidgets.QLineEdit()
        self.query_edit.setObjectName("findQueryEdit")
        self.query_edit.setPlaceholderText("it")
        self.query_edit.setToolTip("A word of the sentence, or #N for token N (from 0; [CLS] is #0)")
        row.addWidget(self.query_edit, 1)
        row.addWidget(QtWidgets.QLabel("to"))
        self.key_edit = QtWidgets.QLineEdit()
        self.key_edit.setObjectName("findKeyEdit")
        self.key_edit.setPlaceholderText("animal")
        self.key_edit.setToolTip(self.query_edit.toolTip())
        row.addWidget(self.key_edit, 1)
        self.find_button = QtWidgets.QPushButton("Find")
        self.find_button.setObjectName("findHeadsButton")
        self.find_button.clicked.connect(lambda: self.find(self.query_edit.text(), self.key_edit.text()))
        self.query_edit.returnPressed.connect(self.find_button.click)
        self.key_edit.returnPressed.connect(self.find_button.click)
        row.addWidget(self.find_button)
        lay.addLayout(row)
        self.find_message = QtWidgets.QLabel("Type two words, or click a cell of the heatmap below "
                                             "(its row is the query, its column the key).")
        self.find_message.setObjectName("findMessage")
        self.find_message.setWordWrap(True)
        lay.addWidget(self.find_message)
        body = QtWidgets.QSplitter(QtCore.Qt.Horizontal)
        body.setChildrenCollapsible(False)
        self.find_body = body  # the found heads beside the selected head (shared out by the tab's apportion)
        self.found_table = QtWidgets.QTableWidget(0, 3)
        self.found_table.setObjectName("foundHeadsTable")
        self.found_table.setHorizontalHeaderLabels(["Head", "Weight", "Role"])
        self.found_table.verticalHeader().setVisible(False)
        self.found_table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.found_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.found_table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeToContents)
        self.found_table.horizontalHeader().setStretchLastSection(True)
        self.found_table.setMinimumWidth(160)
        self.found_table.setMaximumWidth(280)  # the rest goes to the head's heatmap
        self.found_table.cellClicked.connect(self._on_found_clicked)
        body.addWidget(self.found_table)
        right = QtWidgets.QWidget()
        rl = QtWidgets.QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        switch = QtWidgets.QHBoxLayout()
        self.weight_radio = QtWidgets.QRadioButton("weight α")
        self.norm_radio = QtWidgets.QRadioButton("norm ‖α·f(x)‖")
        self.weight_radio.setObjectName("weightRadio")
        self.norm_radio.setObjectName("normRadio")
        self.weight_radio.setChecked(True)
        self.norm_radio.toggled.connect(lambda on: self._draw_head())
        switch.addWidget(self.weight_radio)
        switch.addWidget(self.norm_radio)
        switch.addStretch(1)
        switch.addWidget(self._export_button("head"))
        rl.addLayout(switch)
        self.head_map = MatrixCanvas("", row_title="query", col_title="key")
        self.head_map.setObjectName("headHeatmap")
        self.head_map.cellClicked.connect(self._on_head_cell)
        rl.addWidget(self.head_map, 1)
        self.norm_note = QtWidgets.QLabel(WEIGHT_NOTE)
        self.norm_note.setObjectName("normNote")
        self.norm_note.setWordWrap(True)
        rl.addWidget(self.norm_note)
        body.addWidget(right)
        body.setStretchFactor(0, 1)
        body.setStretchFactor(1, 3)
        lay.addWidget(body, 1)
        return page

    def _build_importance(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        row = QtWidgets.QHBoxLayout()
        self.importance_button = QtWidgets.QPushButton("Run importance")
        self.importance_button.setObjectName("importanceButton")
        self.importance_button.setToolTip("Silence each head in turn and measure how far the sentence embedding "
                                          "moves (1 − cosine); runs in the background")
        self.importance_button.clicked.connect(self.run_importance)
        row.addWidget(self.importance_button)
        self.importance_bar = QtWidgets.QProgressBar()
        self.importance_bar.setObjectName("importanceProgress")
        self.importance_bar.setFormat("%v of %m heads")
        self.importance_bar.setValue(0)
        row.addWidget(self.importance_bar, 1)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setObjectName("importanceCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.job.cancel())
        row.addWidget(self.cancel_button)
        row.addWidget(self._export_button("importance"))
        lay.addLayout(row)
        self.importance_status = QtWidgets.QLabel("Not computed yet: it silences every head once "
                                                  "(a few seconds for MiniLM).")
        self.importance_status.setObjectName("importanceStatus")
        self.importance_status.setWordWrap(True)
        lay.addWidget(self.importance_status)
        self.importance_map = MatrixCanvas("Importance: 1 − cosine of the sentence embedding without the head",
                                           row_title="layer", col_title="head")
        self.importance_map.setObjectName("importanceMap")
        self.importance_map.fixed_digits = IMPORTANCE_DIGITS  # 0.0787, as attn-studio heads prints it
        self.importance_map.cellClicked.connect(lambda r, c: self.open_head(r, c))
        lay.addWidget(self.importance_map, 1)
        return page

    def _build_flow(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Raw attention of layer"))
        self.flow_layer = QtWidgets.QSpinBox()
        self.flow_layer.setObjectName("flowLayerSpin")
        self.flow_layer.setRange(1, 1)
        self.flow_layer.valueChanged.connect(lambda v: self._draw_flow())
        row.addWidget(self.flow_layer)
        self.flow_button = QtWidgets.QPushButton("Compute flow")
        self.flow_button.setObjectName("flowButton")
        self.flow_button.setToolTip("Attention flow as a maximum flow through the layers (about a second)")
        self.flow_button.clicked.connect(self.run_flow)
        row.addWidget(self.flow_button)
        row.addStretch(1)
        row.addWidget(self._export_button("flow"))
        lay.addLayout(row)
        self.flow_status = QtWidgets.QLabel("Raw: one layer's attention, mean over its heads. Rollout and flow: the "
                                            "whole model. Rollout multiplies the layers' attention; flow asks how much "
                                            "can pass the narrowest cut. All three on one colour scale.")
        self.flow_status.setObjectName("flowStatus")
        self.flow_status.setWordWrap(True)
        lay.addWidget(self.flow_status)
        maps = QtWidgets.QWidget()
        self.flow_panel = maps
        ml = QtWidgets.QHBoxLayout(maps)
        ml.setContentsMargins(0, 0, 0, 0)
        self.raw_map = MatrixCanvas("Raw", row_title="query", col_title="key")
        self.rollout_map = MatrixCanvas("Rollout", row_title="output", col_title="input")
        self.flow_map = MatrixCanvas("Flow", row_title="output", col_title="input")
        # The first carries the row labels and the last the colour bar: a little more room for each,
        # so the three grids come out about the same size.
        for name, canvas, stretch in (("rawMap", self.raw_map, 6), ("rolloutMap", self.rollout_map, 5),
                                      ("flowMap", self.flow_map, 6)):
            canvas.setObjectName(name)
            ml.addWidget(canvas, stretch)
        # One colour scale for the three: the bar once, at the right; the rows named once, at the left.
        self.raw_map.show_bar = self.rollout_map.show_bar = False
        self.rollout_map.show_row_labels = self.flow_map.show_row_labels = False
        lay.addWidget(maps, 1)
        return page

    def _build_silencing(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        row = QtWidgets.QHBoxLayout()
        self.readout = QtWidgets.QLabel()
        self.readout.setObjectName("silencingReadout")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        row.addWidget(self.readout, 1)
        row.addWidget(self._export_button("silencing"))
        lay.addLayout(row)
        self.drift = DriftPlot()
        lay.addWidget(self.drift, 1)
        return page

    # -- the studio ------------------------------------------------------------------------

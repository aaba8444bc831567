"""The main window: controls, editable tables, heatmaps and the variance plot."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from PySide6 import QtCore, QtGui, QtWidgets

from .. import __version__
from ..engine import SOFTMAX_KINDS, EngineError
from ..session import (
    DATA_DIR_ENV,
    SESSION_SUFFIX,
    RecoveryStore,
    SessionError,
    load_preset,
    preset_names,
    read_session,
    write_session,
)
from ..state import MAX_D_HEAD, MAX_D_MODEL, MAX_HEADS, MAX_SEED, SELECTION_FIELDS, StateError
from ..studio import Studio
from . import export, presentation
from .bridge import StudioBridge
from ..explain import table_cell_tooltip
from .views.compare import CompareView
from .views.geometry import GeometryView
from .views.pipeline import PipelineView
from .views.positional import PositionalView
from .views.heatmap_view import HeatmapView
from .views.summary import HeadsSummaryView
from .views.plots import VariancePlot
from .tables import MatrixModel, MatrixTable

DEFAULT_PRESET = "journey"
AUTOSAVE_MS = 3000  # unsaved work is written to the recovery file this long after a change
MAX_RECENT = 8
FILE_FILTER = f"Attention Studio sessions (*{SESSION_SUFFIX});;JSON files (*.json);;All files (*)"


def data_dir() -> Path:
    """Where settings and recovery files live (``ATTN_STUDIO_DATA_DIR`` overrides it)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    location = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.AppDataLocation)
    return Path(location or Path.home() / ".attn-studio")


def settings() -> QtCore.QSettings:
    """The app's settings, kept as an INI file in :func:`data_dir`."""
    return QtCore.QSettings(str(data_dir() / "settings.ini"), QtCore.QSettings.IniFormat)

SOFTMAX_LABELS = {"stable": "stable (subtract max)", "naive": "naive exp / Σexp", "sum": "plain x / Σx"}


def _keys(*sequences) -> list[QtGui.QKeySequence]:
    """Shortcuts without repeats: a platform's standard key may equal our own (F11 is
    FullScreen on Linux), and a repeated shortcut is ambiguous to Qt and does nothing."""
    seen, keys = set(), []
    for seq in sequences:
        for key in (QtGui.QKeySequence.keyBindings(seq) if isinstance(seq, QtGui.QKeySequence.StandardKey)
                    else [QtGui.QKeySequence(seq)]):
            if not key.isEmpty() and key.toString() not in seen:
                seen.add(key.toString())
                keys.append(key)
    return keys


def _checkbox(text: str, name: str, tip: str) -> QtWidgets.QCheckBox:
    box = QtWidgets.QCheckBox(text)
    box.setObjectName(name)
    box.setToolTip(tip)
    return box


def _spin(name: str, lo: int, hi: int, tip: str) -> QtWidgets.QSpinBox:
    spin = QtWidgets.QSpinBox()
    spin.setObjectName(name)
    spin.setRange(lo, hi)
    spin.setToolTip(tip)
    spin.setKeyboardTracking(False)  # typing "12" is one change, not "1" then "12"
    spin.setAccelerated(True)
    return spin


class MainWindow(QtWidgets.QMainWindow):
    """Attention Studio's window. ``studio`` is the Qt-free Studio behind it.

    Every widget edit goes through ``studio.update``; every view redraws from
    ``studio.state`` and ``studio.result`` when the bridge says something changed.
    """

    def __init__(self, studio: Studio | None = None, *, preset: str | None = None):
        super().__init__()
        self.setObjectName("mainWindow")
        # Without a studio, open on ``preset`` (the journey example by default);
        # with one, ``preset`` only names the example it came from.
        if studio is None:
            preset = preset or DEFAULT_PRESET
            try:
                state = load_preset(preset)
            except SessionError:
                state, preset = None, None
            studio = Studio(state)
        self.studio = studio
        self.bridge = StudioBridge(studio, self)
        self._preset_name = preset or ""
        self._preset_state = studio.state if preset else None  # the example as loaded

        self.heatmap_view = HeatmapView(studio)
        self.heads_summary_view = HeadsSummaryView(studio)
        self.pipeline_view = PipelineView(studio)
        self.geometry_view = GeometryView(studio)
        self.positional_view = PositionalView(studio)
        self.compare_view = CompareView(studio)
        self.view_tabs = QtWidgets.QTabWidget()
        self.view_tabs.setObjectName("viewTabs")
        self.view_tabs.setDocumentMode(True)
        # Views that draw the model; each renders when shown, and only then.
        self._views: list = []
        self._stale: set = set()
        self.add_view(self.heatmap_view, "Attention", "Scores, logits and weights of the chosen head, and every head")
        self.add_view(self.pipeline_view, "Step by step",
                      "Every step for the selected query token, with your numbers: q·k, scale, mask, exp, "
                      "normalise, weighted sum")
        self.add_view(self.heads_summary_view, "Heads → output",
                      "Each head's output, their concatenation, W_O and the output")
        self.add_view(self.compare_view, "Compare",
                      "Two settings side by side (scaling, mask, temperature, before/after) and their difference")
        self.add_view(self.geometry_view, "Geometry",
                      "The token vectors as arrows: exact in 2-D, a PCA picture otherwise; dot product and angle of a pair")
        self.add_view(self.positional_view, "Positions",
                      "The sinusoidal positional encoding added to the token vectors")
        self.view_tabs.currentChanged.connect(self._on_view_tab_changed)
        self.setCentralWidget(self.view_tabs)
        # Up / Down move the query token while a heatmap view has the focus.
        for view in (self.heatmap_view, self.heads_summary_view, self.compare_view):
            view.setFocusPolicy(QtCore.Qt.StrongFocus)
            for key, step in ((QtCore.Qt.Key_Down, +1), (QtCore.Qt.Key_Up, -1)):
                shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), view)
                shortcut.setContext(QtCore.Qt.WidgetWithChildrenShortcut)
                shortcut.activated.connect(lambda s=step: self.move_query(s))
        self._build_controls()
        self._build_tables()
        self.variance_plot = VariancePlot(studio)
        self._variance_dock = self._dock("Why divide by √d_k", "varianceDock", self.variance_plot,
                                         QtCore.Qt.BottomDockWidgetArea)
        self._build_menus()
        self.statusBar().setObjectName("statusBar")

        self.current_path: Path | None = None
        self.recovery = RecoveryStore(data_dir())
        self._autosave = QtCore.QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(AUTOSAVE_MS)
        self._autosave.timeout.connect(self._write_recovery)
        self.setAcceptDrops(True)

        self.bridge.changed.connect(self._on_studio_change)
        self._render_all()
        self._fit_to_screen()
        self._default_layout = self.saveState()
        self._restore_settings()
        self._offer_recovery()

    # -- construction ------------------------------------------------------------
    def add_view(self, view, title: str, tip: str = "") -> None:
        """Add a view (a widget with ``render()``) as a tab of the central area."""
        index = self.view_tabs.addTab(view, title)
        self.view_tabs.setTabToolTip(index, tip)
        self._views.append(view)
        self._stale.add(view)

    def render_view(self, view) -> None:
        """Bring ``view`` up to date now, visible or not (exports call this)."""
        view.render()
        self._stale.discard(view)

    def _on_view_tab_changed(self, index: int):
        view = self.view_tabs.widget(index)
        if view in self._stale:
            self.render_view(view)

    def _dock(self, title: str, name: str, widget, area) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetMovable | QtWidgets.QDockWidget.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _build_controls(self):
        panel = QtWidgets.QWidget()
        panel.setObjectName("controlsPanel")
        form = QtWidgets.QFormLayout(panel)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.AllNonFixedFieldsGrow)

        self.preset_combo = QtWidgets.QComboBox()
        self.preset_combo.setObjectName("presetCombo")
        self.preset_combo.setToolTip("Load an example from the lecture notes")
        for name in preset_names():
            self.preset_combo.addItem(name, name)
        self.preset_combo.activated.connect(self._on_preset_activated)
        form.addRow("Example", self.preset_combo)

        self.sentence_edit = QtWidgets.QLineEdit()
        self.sentence_edit.setObjectName("sentenceEdit")
        self.sentence_edit.setPlaceholderText("Type a sentence…")
        self.sentence_edit.setToolTip("The sentence: its tokens are the keys and values (and the queries in self-attention)")
        self.sentence_edit.textEdited.connect(lambda text: self._on_text_change("sentence", text))
        form.addRow("Sentence", self.sentence_edit)

        self.target_edit = QtWidgets.QLineEdit()
        self.target_edit.setObjectName("targetSentenceEdit")
        self.target_edit.setPlaceholderText("empty = self-attention")
        self.target_edit.setToolTip("A second sentence (the decoder side): its tokens ask the queries, "
                                    "the first sentence supplies keys and values. Empty means self-attention.")
        self.target_edit.textEdited.connect(lambda text: self._on_text_change("target_sentence", text))
        form.addRow("Queries from", self.target_edit)

        self.d_model_spin = _spin("dModelSpin", 1, MAX_D_MODEL, "d_model: the length of every token vector")
        self.d_model_spin.valueChanged.connect(lambda v: self._update(coalesce="d_model", d_model=v))
        form.addRow("d_model", self.d_model_spin)
        self.heads_spin = _spin("headsSpin", 1, MAX_HEADS, "How many attention heads, each with its own W_Q, W_K, W_V")
        self.heads_spin.valueChanged.connect(lambda v: self._update(coalesce="heads", heads=v))
        form.addRow("heads", self.heads_spin)
        self.d_head_spin = _spin("dHeadSpin", 1, MAX_D_HEAD, "d_head = d_k = d_v: the size of each head's q, k and v")
        self.d_head_spin.valueChanged.connect(lambda v: self._update(coalesce="d_head", d_head=v))
        form.addRow("d_head (d_k)", self.d_head_spin)

        seed_row = QtWidgets.QHBoxLayout()
        self.seed_spin = _spin("seedSpin", 0, MAX_SEED, "The random seed of the weights and of the words you have not edited")
        self.seed_spin.valueChanged.connect(lambda v: self._update(coalesce="seed", seed=v))
        seed_row.addWidget(self.seed_spin, 1)
        self.randomize_button = QtWidgets.QPushButton("Randomize")
        self.randomize_button.setObjectName("randomizeButton")
        self.randomize_button.setToolTip("Draw new weights (and new vectors for unedited words) from a fresh seed")
        self.randomize_button.clicked.connect(lambda: self._guard(self.studio.randomize))
        seed_row.addWidget(self.randomize_button)
        form.addRow("seed", seed_row)

        self.scale_check = _checkbox("scale by 1/√d_k", "scaleCheck",
                                     "Divide the scores by √d_k before softmax, so their variance stays near 1")
        self.scale_check.toggled.connect(lambda on: self._update(scale=on))
        self.causal_check = _checkbox("causal mask", "causalCheck",
                                      "Each token may attend only to itself and the tokens before it (a decoder)")
        self.causal_check.toggled.connect(lambda on: self._update(causal=on))
        self.positional_check = _checkbox("positional encoding", "positionalCheck",
                                          "Add the sinusoidal position vectors to the token vectors")
        self.positional_check.toggled.connect(lambda on: self._update(positional=on))
        self.projections_check = _checkbox("Q, K, V projections", "projectionsCheck",
                                           "On: Q = X·W_Q, K = X·W_K, V = X·W_V per head. "
                                           "Off: simplified attention with Q = K = V = X")
        self.projections_check.toggled.connect(lambda on: self._update(projections=on))
        toggles = QtWidgets.QVBoxLayout()
        for box in (self.scale_check, self.causal_check, self.positional_check, self.projections_check):
            toggles.addWidget(box)
        form.addRow("", toggles)

        self.temperature_spin = QtWidgets.QDoubleSpinBox()
        self.temperature_spin.setObjectName("temperatureSpin")
        self.temperature_spin.setRange(0.05, 100.0)
        self.temperature_spin.setDecimals(2)
        self.temperature_spin.setSingleStep(0.1)
        self.temperature_spin.setKeyboardTracking(False)
        self.temperature_spin.setToolTip("Divide the logits by T: high T flattens the weights, low T sharpens them")
        self.temperature_spin.valueChanged.connect(lambda v: self._update(coalesce="temperature", temperature=v))
        form.addRow("temperature", self.temperature_spin)

        self.softmax_combo = QtWidgets.QComboBox()
        self.softmax_combo.setObjectName("softmaxCombo")
        for kind in SOFTMAX_KINDS:
            self.softmax_combo.addItem(SOFTMAX_LABELS[kind], kind)
        self.softmax_combo.setToolTip("How scores become weights: the stable softmax, the naive one that can "
                                      "overflow, or plain division by the sum")
        self.softmax_combo.activated.connect(
            lambda i: self._update(softmax=self.softmax_combo.itemData(i)))
        form.addRow("softmax", self.softmax_combo)

        self.score_combo = QtWidgets.QComboBox()
        self.score_combo.setObjectName("scoreCombo")
        self.score_combo.addItem("dot product", "dot")
        self.score_combo.addItem("additive", "additive")
        self.score_combo.setToolTip("How a query and a key are compared: the dot product q·k, or the additive "
                                    "(Bahdanau) score v_aᵀ·tanh(q·W₁ + k·W₂), a small neural network")
        self.score_combo.activated.connect(lambda i: self._update(score=self.score_combo.itemData(i)))
        form.addRow("scores", self.score_combo)

        self.head_combo = QtWidgets.QComboBox()
        self.head_combo.setObjectName("headCombo")
        self.head_combo.setToolTip("The head shown in the stage heatmaps and the W_Q, W_K, W_V tables")
        self.head_combo.activated.connect(lambda i: self._guard(self.studio.select, head=i))
        form.addRow("show head", self.head_combo)

        self.query_combo = QtWidgets.QComboBox()
        self.query_combo.setObjectName("queryCombo")
        self.query_combo.setToolTip("The query token followed in every view (or click a heatmap row)")
        self.query_combo.activated.connect(lambda i: self._guard(self.studio.select, query=i))
        form.addRow("query token", self.query_combo)

        play_row = QtWidgets.QHBoxLayout()
        self.play_button = QtWidgets.QPushButton("▶ Play")
        self.play_button.setObjectName("playButton")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Walk the selected query through the sentence, one token at a time")
        self.play_button.toggled.connect(self._on_play_toggled)
        play_row.addWidget(self.play_button)
        self.play_interval_spin = QtWidgets.QDoubleSpinBox()
        self.play_interval_spin.setObjectName("playIntervalSpin")
        self.play_interval_spin.setRange(0.2, 10.0)
        self.play_interval_spin.setSingleStep(0.2)
        self.play_interval_spin.setValue(1.5)
        self.play_interval_spin.setSuffix(" s")
        self.play_interval_spin.setToolTip("Seconds per token while playing")
        self.play_interval_spin.valueChanged.connect(lambda v: self._play_timer.setInterval(int(v * 1000)))
        play_row.addWidget(self.play_interval_spin)
        form.addRow("walk", play_row)
        self._play_timer = QtCore.QTimer(self)
        self._play_timer.setInterval(1500)
        self._play_timer.timeout.connect(lambda: self.move_query(+1, wrap=True))

        scroll = QtWidgets.QScrollArea()
        scroll.setWidget(panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self._controls_panel, self._controls_scroll = panel, scroll
        self._fit_controls()
        self._controls_dock = self._dock("Model", "controlsDock", scroll, QtCore.Qt.LeftDockWidgetArea)

    def _build_tables(self):
        s = lambda: self.studio.state  # noqa: E731
        head = lambda: s().head_index  # noqa: E731  (W_Q, W_K, W_V exist for every head)

        def embedding_rows():
            st = s()
            return st.key_tokens + ([f"→ {t}" for t in st.target_tokens] if st.cross else [])

        def embedding_words():
            st = s()
            return st.key_tokens + (st.target_tokens if st.cross else [])

        def read_embeddings():
            return self.studio.embeddings(embedding_words())

        def write_embedding(row, col, text):
            self.studio.set_embedding(embedding_words()[row], col, text)

        def write_embedding_block(row, col, rows):
            self.studio.set_embedding_block(embedding_words()[row:], col, rows)

        dims = lambda prefix, n: [f"{prefix}{i + 1}" for i in range(n)]  # noqa: E731
        self.models: dict[str, MatrixModel] = {}
        self.tables: dict[str, MatrixTable] = {}
        specs = [
            ("embeddings", "embeddingTable", "Embeddings X", read_embeddings, embedding_rows,
             lambda: dims("d", s().d_model), write_embedding),
        ]
        for name, letter in (("w_q", "q"), ("w_k", "k"), ("w_v", "v")):
            specs.append((
                name, f"w{letter.upper()}Table", f"W{letter.upper()}",
                (lambda name=name: getattr(s(), name)[head()]),
                lambda: dims("x", s().d_model),
                (lambda letter=letter: dims(letter, s().d_head)),
                (lambda r, c, t, name=name: self.studio.set_weight(name, head(), r, c, t)),
            ))
        for name, title, rows_prefix, tip in (("w_1", "W1", "q", "W_1 acts on the query"),
                                              ("w_2", "W2", "k", "W_2 acts on the key")):
            specs.append((
                name, f"w{title[1]}Table", title,
                (lambda name=name: getattr(s(), name)[s().shown_head]),
                (lambda p=rows_prefix: dims(p, s().d_k)),
                lambda: dims("a", s().d_k),
                (lambda r, c, t, name=name: self.studio.set_weight(name, s().shown_head, r, c, t)),
            ))
        specs.append(("v_a", "vATable", "va", lambda: s().v_a,
                      lambda: [f"head {h + 1}" for h in range(s().v_a.shape[0])],
                      lambda: dims("a", s().d_k),
                      lambda r, c, t: self.studio.set_weight("v_a", r, 0, c, t)))
        specs.append(("w_o", "wOTable", "WO", lambda: s().w_o,
                      lambda: [f"h{h + 1}·v{j + 1}" for h in range(s().heads) for j in range(s().d_head)],
                      lambda: dims("out", s().d_model),
                      lambda r, c, t: self.studio.set_weight("w_o", 0, r, c, t)))
        specs.append(("output", "outputTable", "Output", lambda: self.studio.result.output,
                      lambda: s().query_tokens, lambda: dims("o", self.studio.result.output.shape[1]), None))

        self.table_tabs = QtWidgets.QTabWidget()
        self.table_tabs.setObjectName("tableTabs")
        for key, object_name, title, read, rows, cols, write in specs:
            tooltip = None if key == "output" else (lambda r, c, key=key: table_cell_tooltip(self.studio, key, r, c))
            if key == "embeddings":
                block = write_embedding_block
            elif key == "output":
                block = None
            else:
                # W_1, W_2 exist for the computed heads only; the others for every head.
                block = (lambda r, c, rows, key=key: self.studio.set_block(
                    key, s().shown_head if key in ("w_1", "w_2") else s().head_index, r, c, rows))
            model = MatrixModel(title, read, rows, cols, write, tooltip=tooltip, write_block=block, parent=self)
            model.refused.connect(self.show_message)
            model.accepted.connect(self.clear_message)
            table = MatrixTable(model, object_name)
            table.setContextMenuPolicy(QtCore.Qt.CustomContextMenu)
            table.customContextMenuRequested.connect(lambda pos, key=key: self._on_table_menu(key, pos))
            self.models[key] = model
            self.tables[key] = table
            self.table_tabs.addTab(table, title)
        tips = {
            "embeddings": "Each token's vector; edit a cell to change that word everywhere it appears",
            "w_q": "W_Q of the chosen head: q = x·W_Q", "w_k": "W_K of the chosen head: k = x·W_K",
            "w_v": "W_V of the chosen head: v = x·W_V",
            "w_1": "Additive score: W_1 acts on the query", "w_2": "Additive score: W_2 acts on the key",
            "v_a": "Additive score: v_a weighs the tanh features, one row per head",
            "w_o": "W_O mixes the concatenated heads into the output",
            "output": "The output: one context vector per query token (read only)",
        }
        for i, key in enumerate(self.models):
            self.table_tabs.setTabToolTip(i, tips[key])

        box = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(box)
        layout.setContentsMargins(2, 2, 2, 2)
        self.table_note = QtWidgets.QLabel()
        self.table_note.setObjectName("tableNote")
        self.table_note.setWordWrap(True)
        layout.addWidget(self.table_note)
        layout.addWidget(self.table_tabs, 1)
        self.message_label = QtWidgets.QLabel()
        self.message_label.setObjectName("messageLabel")
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: #b00020; font-weight: bold;")
        self.message_label.hide()
        layout.addWidget(self.message_label)
        self._tables_dock = self._dock("Numbers", "tablesDock", box, QtCore.Qt.RightDockWidgetArea)

    def _build_menus(self):
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_action = file_menu.addAction("&New", self.new_session)
        self.new_action.setShortcut(QtGui.QKeySequence.New)
        self.open_action = file_menu.addAction("&Open…", self.open_dialog)
        self.open_action.setShortcut(QtGui.QKeySequence.Open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        self.save_action = file_menu.addAction("&Save", self.save)
        self.save_action.setShortcut(QtGui.QKeySequence.Save)
        self.save_as_action = file_menu.addAction("Save &As…", self.save_as_dialog)
        self.save_as_action.setShortcut(QtGui.QKeySequence.SaveAs)
        file_menu.addSeparator()
        self.export_menu = file_menu.addMenu("&Export")
        self.export_menu.setObjectName("exportMenu")
        self.export_menu.aboutToShow.connect(self._fill_export_menu)
        self.copy_figure_action = QtGui.QAction("Copy &figure of this view", self)
        self.copy_figure_action.setShortcut(QtGui.QKeySequence("Ctrl+Shift+C"))
        self.copy_figure_action.triggered.connect(self.copy_current_figure)
        self.addAction(self.copy_figure_action)
        self.png_scale = 2.0
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit", self.close)
        quit_action.setShortcut(QtGui.QKeySequence.Quit)
        edit = bar.addMenu("&Edit")
        self.undo_action = edit.addAction("&Undo", lambda: self.studio.undo())
        self.undo_action.setObjectName("undoAction")
        self.undo_action.setShortcut(QtGui.QKeySequence.Undo)
        self.redo_action = edit.addAction("&Redo", lambda: self.studio.redo())
        self.redo_action.setObjectName("redoAction")
        self.redo_action.setShortcut(QtGui.QKeySequence.Redo)
        edit.addSeparator()
        self.copy_action = edit.addAction("&Copy", self.copy)
        self.copy_action.setShortcut(QtGui.QKeySequence.Copy)
        self.copy_action.setToolTip("Copy the selected table cells, or the figure of the current view")
        self.paste_action = edit.addAction("&Paste into the table", self.paste)
        self.paste_action.setShortcut(QtGui.QKeySequence.Paste)
        view = bar.addMenu("&View")
        self.full_screen_action = view.addAction("&Full screen", self.toggle_full_screen)
        self.full_screen_action.setObjectName("fullScreenAction")
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcuts(_keys(QtCore.Qt.Key_F11, QtGui.QKeySequence.FullScreen))
        view.addSeparator()
        self.zoom_in_action = view.addAction("Zoom &in", lambda: self.zoom_by(+1))
        self.zoom_in_action.setShortcuts(_keys("Ctrl+=", QtGui.QKeySequence.ZoomIn))
        self.zoom_out_action = view.addAction("Zoom &out", lambda: self.zoom_by(-1))
        self.zoom_out_action.setShortcuts(_keys("Ctrl+-", QtGui.QKeySequence.ZoomOut))
        self.zoom_reset_action = view.addAction("&Actual size", lambda: self.set_zoom(1.0))
        self.zoom_reset_action.setShortcut(QtGui.QKeySequence("Ctrl+0"))
        view.addSeparator()
        theme_menu = view.addMenu("&Theme")
        self.theme_actions = QtGui.QActionGroup(self)
        for name in presentation.THEMES:
            action = theme_menu.addAction(name.capitalize(), lambda n=name: self.set_theme(n))
            action.setCheckable(True)
            action.setData(name)
            self.theme_actions.addAction(action)
        cmap_menu = view.addMenu("&Colour map")
        self.colormap_actions = QtGui.QActionGroup(self)
        for name in presentation.WEIGHT_COLORMAPS:
            action = cmap_menu.addAction(name, lambda n=name: self.set_colormap(n))
            action.setCheckable(True)
            action.setData(name)
            self.colormap_actions.addAction(action)
        view.addSeparator()
        for dock in (self._controls_dock, self._tables_dock, self._variance_dock):
            view.addAction(dock.toggleViewAction())
        view.addAction("&Reset layout", self.reset_layout).setObjectName("resetLayoutAction")
        for shortcut, step in (("Alt+Down", +1), ("Alt+Up", -1)):
            action = QtGui.QAction(self)
            action.setShortcut(QtGui.QKeySequence(shortcut))
            action.triggered.connect(lambda checked=False, s=step: self.move_query(s))
            self.addAction(action)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction("&Keyboard shortcuts", self.show_shortcuts).setShortcut(QtGui.QKeySequence.HelpContents)
        help_menu.addAction("&About Attention Studio", self._about)

    def _fit_to_screen(self):
        screen = QtGui.QGuiApplication.primaryScreen()
        available = screen.availableGeometry() if screen else QtCore.QRect(0, 0, 1366, 768)
        width = min(1500, available.width())
        height = min(900, available.height())
        self.resize(width, height)
        self.resizeDocks([self._controls_dock, self._tables_dock], [260, 330], QtCore.Qt.Horizontal)
        self.resizeDocks([self._variance_dock], [int(height * 0.27)], QtCore.Qt.Vertical)

    # -- edits -------------------------------------------------------------------
    def _guard(self, func, *args, **kwargs) -> bool:
        """Run an edit; a refused value shows its reason and leaves everything as it was."""
        try:
            func(*args, **kwargs)
        except (StateError, EngineError, SessionError) as exc:
            self.show_message(str(exc))
            self._sync_controls()  # put the widget back to the value the state still has
            return False
        self.clear_message()
        return True

    def _update(self, coalesce: str | None = None, **changes) -> bool:
        return self._guard(self.studio.update, coalesce=coalesce, **changes)

    def _on_text_change(self, field: str, text: str):
        """A sentence box changed: typing is live, and a burst of keys is one undo step."""
        try:
            self.studio.update(coalesce=field, **{field: text})
        except (StateError, EngineError) as exc:
            # Keep what the person typed so that nothing is lost; say why it is not applied.
            self.show_message(f"{exc}. The heatmaps still show the previous sentences.")
            return
        self.clear_message()

    def _on_preset_activated(self, index: int):
        name = self.preset_combo.itemData(index)
        self.load_preset(name)

    def load_preset(self, name: str) -> bool:
        """Load preset ``name`` (undoable); False with a message if it cannot be loaded."""
        try:
            state = load_preset(name)
        except SessionError as exc:
            self.show_message(str(exc))
            return False
        self._preset_name = name
        self._preset_state = state
        return self._guard(self.studio.set_state, state)

    def show_message(self, text: str):
        """Show why an edit was refused, in the window and the status bar."""
        self.message_label.setText(text)
        self.message_label.show()
        self.statusBar().showMessage(text, 10000)

    def clear_message(self):
        if self.message_label.isVisible():
            self.message_label.hide()
            self.message_label.setText("")

    def _about(self):
        QtWidgets.QMessageBox.about(
            self, "About Attention Studio",
            f"<h3>Attention Studio {__version__}</h3><p>A live playground for the attention mechanism: "
            "edit token vectors and Q/K/V weights, and watch scores, weights and outputs follow.</p>")

    # -- presentation -------------------------------------------------------------------
    def toggle_full_screen(self, on: bool | None = None):
        """F11: full screen for the projector, and back."""
        on = not self.isFullScreen() if on is None else on
        self.showFullScreen() if on else self.showNormal()
        self.full_screen_action.setChecked(on)

    def set_zoom(self, zoom: float):
        """Scale every text in the app (tables, axes, cell values, captions) by ``zoom``."""
        presentation.apply(QtWidgets.QApplication.instance(), self, zoom=zoom)
        self._fit_controls()
        self.statusBar().showMessage(f"Text size {presentation.STYLE.zoom:.0%}", 2000)

    def _fit_controls(self):
        # The controls never scroll sideways: the panel is as wide as its content at this text size.
        bar = self._controls_scroll.verticalScrollBar().sizeHint().width()
        self._controls_panel.layout().activate()
        wanted = self._controls_panel.sizeHint().width() + bar + 4
        # ... but never more than 30% of the screen: at a large zoom on a small
        # screen the panel scrolls sideways rather than push the window off it.
        screen = self.screen() or QtGui.QGuiApplication.primaryScreen()
        limit = int(0.3 * max(screen.availableGeometry().width(), 1024)) if screen else wanted
        self._controls_scroll.setMinimumWidth(min(wanted, limit))
        self._controls_scroll.setHorizontalScrollBarPolicy(
            QtCore.Qt.ScrollBarAsNeeded if wanted > limit else QtCore.Qt.ScrollBarAlwaysOff)

    def zoom_by(self, steps: int):
        levels = presentation.ZOOM_STEPS
        current = presentation.STYLE.zoom
        index = min(range(len(levels)), key=lambda i: abs(levels[i] - current))
        self.set_zoom(levels[min(max(index + steps, 0), len(levels) - 1)])

    def set_theme(self, name: str):
        """Light, dark or high contrast, for the room's light and the projector."""
        presentation.apply(QtWidgets.QApplication.instance(), self, theme=name)
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == name)
        background = QtGui.QColor(presentation.STYLE.theme.canvas)
        for view in self._views:
            pal = view.palette()
            pal.setColor(view.backgroundRole(), background)
            view.setPalette(pal)

    def set_colormap(self, name: str):
        """The colour map of every weights heatmap (colour-blind-safe choices)."""
        presentation.set_weights_colormap(name)
        for action in self.colormap_actions.actions():
            action.setChecked(action.data() == name)

    def reset_layout(self):
        """Put every panel back where it was at the first start."""
        self.restoreState(self._default_layout)
        for dock in (self._controls_dock, self._tables_dock, self._variance_dock):
            dock.show()
            dock.setFloating(False)
        self._fit_to_screen()

    def move_query(self, step: int, wrap: bool = False):
        """Select the next (+1) or previous (-1) query token."""
        n = len(self.studio.state.query_tokens)
        if not n:
            return
        index = self.studio.state.query_index + step
        index = index % n if wrap else min(max(index, 0), n - 1)
        self.studio.select(query=index)

    def _on_play_toggled(self, on: bool):
        self.play_button.setText("■ Stop" if on else "▶ Play")
        if on:
            self._play_timer.start()
        else:
            self._play_timer.stop()

    def shortcut_list(self) -> list[tuple[str, str]]:
        """(keys, what they do) for Help → Keyboard shortcuts."""
        rows = []
        for menu in self.menuBar().findChildren(QtWidgets.QMenu):
            for action in menu.actions():
                keys = [k.toString(QtGui.QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty()]
                if keys:
                    rows.append((" or ".join(dict.fromkeys(keys)), action.text().replace("&", "")))
        rows += [("Up / Down (on a heatmap)", "Previous / next query token"),
                 ("Alt+Up / Alt+Down", "Previous / next query token, anywhere"),
                 ("Click a heatmap row", "Follow that query token"),
                 ("Type in a table cell, Enter", "Edit that number (Esc cancels)")]
        return rows

    def show_shortcuts(self):
        dialog = QtWidgets.QDialog(self)
        dialog.setObjectName("shortcutsDialog")
        dialog.setWindowTitle("Keyboard shortcuts")
        layout = QtWidgets.QVBoxLayout(dialog)
        rows = self.shortcut_list()
        table = QtWidgets.QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Keys", "Does"])
        for i, (keys, text) in enumerate(rows):
            table.setItem(i, 0, QtWidgets.QTableWidgetItem(keys))
            table.setItem(i, 1, QtWidgets.QTableWidgetItem(text))
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        table.verticalHeader().hide()
        table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        layout.addWidget(table)
        close = QtWidgets.QPushButton("Close")
        close.clicked.connect(dialog.close)
        layout.addWidget(close)
        dialog.resize(560, 480)
        dialog.show()
        self.shortcuts_dialog = dialog
        return dialog

    def _restore_settings(self):
        store = settings()
        # Text size first: it sets the panels' minimum widths, which the
        # restored geometry must already respect.
        theme = str(store.value("theme", "light"))
        self.set_theme(theme if theme in presentation.THEMES else "light")
        try:
            zoom = float(store.value("zoom", 1.0))
        except (TypeError, ValueError):
            zoom = 1.0
        presentation.apply(QtWidgets.QApplication.instance(), self, zoom=zoom)
        self._fit_controls()
        cmap = str(store.value("colormap", "viridis"))
        self.set_colormap(cmap if cmap in presentation.WEIGHT_COLORMAPS else "viridis")
        geometry = store.value("geometry")
        if isinstance(geometry, QtCore.QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        layout = store.value("windowState")
        if isinstance(layout, QtCore.QByteArray) and not layout.isEmpty():
            self.restoreState(layout)

    def save_settings(self):
        """Keep window geometry, panel layout, theme, zoom and colour map for the next run."""
        store = settings()
        store.setValue("geometry", self.saveGeometry())
        store.setValue("windowState", self.saveState())
        store.setValue("theme", presentation.STYLE.theme.name)
        store.setValue("zoom", presentation.STYLE.zoom)
        store.setValue("colormap", presentation.STYLE.weights_cmap)
        store.sync()

    def _focused_table(self):
        widget = QtWidgets.QApplication.focusWidget()
        while widget is not None and not isinstance(widget, MatrixTable):
            widget = widget.parentWidget()
        return widget

    def copy(self):
        """Ctrl+C: the selected cells of the focused table, else the current view's figure."""
        table = self._focused_table()
        if table is not None and table.copy_selection():
            self.statusBar().showMessage("Cells copied (tab-separated)", 3000)
        elif QtWidgets.QApplication.focusWidget() is None or not isinstance(
                QtWidgets.QApplication.focusWidget(), (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox)):
            self.copy_current_figure()

    def paste(self):
        """Ctrl+V: paste a block of numbers into the focused table at its current cell."""
        table = self._focused_table() or self.tables[list(self.models)[self.table_tabs.currentIndex()]]
        if table.paste():
            self.statusBar().showMessage("Pasted", 3000)

    # -- figures and matrices out ----------------------------------------------------------
    def current_panel_name(self) -> str:
        """The export panel name of the view on screen."""
        view = self.view_tabs.currentWidget()
        names = {self.heatmap_view: "heatmaps", self.pipeline_view: "steps", self.geometry_view: "geometry"}
        return names.get(view, "window")

    def _fill_export_menu(self):
        menu = self.export_menu
        menu.clear()
        head = self.studio.state.shown_head + 1
        for name, text in (("heatmaps", "Attention heatmaps…"), (f"head:{head}", f"Head {head} weights…"),
                           ("variance", "Variance plot…"), ("saturation", "Saturation plot…"),
                           ("steps", "Step-by-step table…"), ("geometry", "Geometry…"), ("window", "Whole window…")):
            menu.addAction(text, lambda n=name: self.export_panel_dialog(n))
        scale_menu = menu.addMenu("PNG &scale")
        group = QtGui.QActionGroup(scale_menu)
        for scale in (1, 2, 3, 4, 6, 8):
            action = scale_menu.addAction(f"{scale}× ({96 * scale} dpi)", lambda s=scale: setattr(self, "png_scale", float(s)))
            action.setCheckable(True)
            action.setChecked(scale == self.png_scale)
            group.addAction(action)
        custom = scale_menu.addAction("Resolution in dpi…", self.ask_png_dpi)
        custom.setToolTip("PNG resolution for slides or print, 96 to 768 dpi")
        menu.addSeparator()
        menu.addAction(self.copy_figure_action)
        menu.addAction("Whole model as NumPy arrays (.npz)…", self.export_arrays_dialog)

    def ask_png_dpi(self) -> bool:
        """Ask for the PNG resolution in dpi (96 dpi = 1×); kept for the next exports."""
        dpi, ok = QtWidgets.QInputDialog.getInt(self, "PNG resolution", "Dots per inch (96 = screen size):",
                                                int(round(self.png_scale * 96)), 96, 768, 24)
        if ok:
            self.png_scale = dpi / 96.0
            self.statusBar().showMessage(f"PNG exports at {dpi} dpi ({self.png_scale:g}×)", 4000)
        return ok

    def export_panel_dialog(self, name: str) -> bool:
        """Ask for a file and export panel ``name`` (PNG at the chosen scale, SVG or PDF)."""
        try:
            export.find_panel(self, name)  # refuse an unknown panel before asking for a file
        except export.ExportError as exc:
            self.show_message(str(exc))
            return False
        stem = name.replace(":", "-")
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export figure", f"{stem}.png", "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)")
        if not path:
            return False
        return self.export_panel(name, path)

    def export_panel(self, name: str, path, scale: float | None = None) -> bool:
        """Export panel ``name`` to ``path``; the format follows the file name."""
        try:
            panel = export.find_panel(self, name)
            export.show_panel(panel)
            QtWidgets.QApplication.processEvents()
            fmt = export.export_figure(panel, path, scale=scale or self.png_scale)
        except export.ExportError as exc:
            self.show_message(str(exc))
            return False
        self.statusBar().showMessage(f"Exported {name} as {fmt.upper()} to {path}", 5000)
        return True

    def copy_current_figure(self):
        """Copy the view on screen to the clipboard, as an image (and SVG)."""
        try:
            export.copy_figure(export.find_panel(self, self.current_panel_name()), scale=self.png_scale)
        except export.ExportError as exc:
            self.show_message(str(exc))
            return
        self.statusBar().showMessage("Figure copied", 3000)

    def export_arrays_dialog(self) -> bool:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save model arrays", "attention.npz", "NumPy arrays (*.npz)")
        if not path:
            return False
        try:
            export.save_arrays(path, export.studio_arrays(self.studio))
        except (export.ExportError, OSError) as exc:
            self.show_message(str(exc))
            return False
        self.statusBar().showMessage(f"Saved every array of the model to {path}", 5000)
        return True

    def _matrix_menu(self, parent, title: str, matrix, global_pos):
        """Right-click menu of a matrix: save as CSV / NumPy, copy as LaTeX."""
        array, rows, cols = matrix
        menu = QtWidgets.QMenu(parent)
        menu.setObjectName("matrixMenu")

        def save():
            path, _ = QtWidgets.QFileDialog.getSaveFileName(
                self, f"Save {title}", f"{title.replace(' ', '_')}.csv",
                "CSV table (*.csv);;NumPy array (*.npy);;NumPy arrays with labels (*.npz)")
            if path:
                try:
                    export.save_matrix(path, array, rows, cols)
                except (export.ExportError, OSError) as exc:
                    self.show_message(str(exc))
                else:
                    self.statusBar().showMessage(f"Saved {title} to {path}", 5000)

        menu.addAction(f"Save {title} as CSV / NumPy…", save)
        menu.addAction("Copy as LaTeX (bmatrix)", lambda: (export.copy_latex(array),
                                                            self.statusBar().showMessage("LaTeX copied", 3000)))
        menu.popup(global_pos)
        return menu

    def _on_table_menu(self, key: str, pos):
        table = self.tables[key]
        model = self.models[key]
        self._matrix_menu(table, model.name, export.table_matrix(model), table.viewport().mapToGlobal(pos))

    def show_heatmap_menu(self, canvas, pos):
        """Right-click menu of a heatmap: save or copy its matrix, or copy the figure."""
        heatmap = canvas.heatmap
        if heatmap._last is None:
            return
        values = np.asarray(heatmap._last[0][0])
        kwargs = heatmap._last[1]
        menu = self._matrix_menu(canvas, heatmap.title or "matrix",
                                 (values, list(kwargs["row_labels"]), list(kwargs["col_labels"])),
                                 canvas.mapToGlobal(pos))
        menu.addSeparator()
        menu.addAction("Copy figure", lambda: export.copy_figure(export.Panel(canvas, title=heatmap.title),
                                                                 scale=self.png_scale))
        return menu

    # -- sessions ------------------------------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask what to do with unsaved changes; True when it is fine to go on.

        Save, Discard or Cancel; without unsaved changes there is nothing to ask.
        """
        if not self.studio.is_modified:
            return True
        answer = self.ask_unsaved()
        if answer == QtWidgets.QMessageBox.Save:
            return self.save()
        return answer == QtWidgets.QMessageBox.Discard

    def ask_unsaved(self):
        """The Save / Discard / Cancel question; returns the QMessageBox button chosen.

        On the offscreen platform (headless export, tests) nobody can answer,
        so nothing is asked and the answer is Discard.
        """
        if QtGui.QGuiApplication.platformName() == "offscreen":
            return QtWidgets.QMessageBox.Discard
        return QtWidgets.QMessageBox.question(
            self, "Unsaved changes",
            "This session has changes that are not saved. Save them first?",
            QtWidgets.QMessageBox.Save | QtWidgets.QMessageBox.Discard | QtWidgets.QMessageBox.Cancel,
            QtWidgets.QMessageBox.Save)

    def new_session(self) -> bool:
        """Start again from the default model (asks about unsaved changes first)."""
        if not self.confirm_discard():
            return False
        from ..state import StudioState

        self.studio.set_state(StudioState())
        self.studio.mark_saved()
        self.current_path = None
        self._preset_name = ""
        self._update_title()
        return True

    def open_file(self, path) -> bool:
        """Open a session file; a bad file is refused with a message and nothing changes."""
        path = Path(path)
        try:
            state = read_session(path)
        except SessionError as exc:
            self.show_message(f"Could not open {path.name}: {exc}")
            return False
        self.studio.set_state(state)
        self.studio.mark_saved()
        self.current_path = path
        self._preset_name = ""
        self._add_recent(path)
        self.clear_message()
        self.statusBar().showMessage(f"Opened {path}", 5000)
        self._update_title()
        return True

    def open_dialog(self) -> bool:
        if not self.confirm_discard():
            return False
        start = str(self.current_path.parent) if self.current_path else ""
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open session", start, FILE_FILTER)
        return self.open_file(path) if path else False

    def save(self) -> bool:
        """Save to the current file, or ask for one; True when saved."""
        if self.current_path is None:
            return self.save_as_dialog()
        return self.save_to(self.current_path)

    def save_to(self, path) -> bool:
        """Save atomically to ``path``; on failure the previous file is intact and a message says why."""
        path = Path(path)
        if not path.name.endswith(".json"):
            path = path.with_name(path.name + SESSION_SUFFIX)
        try:
            write_session(path, self.studio.state)
        except SessionError as exc:
            self.show_message(str(exc))
            return False
        self.studio.mark_saved()
        self.current_path = path
        self._add_recent(path)
        self.recovery.clear()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        self._update_title()
        return True

    def save_as_dialog(self) -> bool:
        start = str(self.current_path) if self.current_path else f"untitled{SESSION_SUFFIX}"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", start, FILE_FILTER)
        return self.save_to(path) if path else False

    def recent_files(self) -> list[str]:
        """Recently opened or saved sessions, newest first (kept between runs)."""
        value = settings().value("recentFiles", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: Path):
        files = [str(path.resolve())] + [f for f in self.recent_files() if f != str(path.resolve())]
        store = settings()
        store.setValue("recentFiles", files[:MAX_RECENT])
        store.sync()

    def _fill_recent_menu(self):
        self.recent_menu.clear()
        files = self.recent_files()
        for f in files:
            action = self.recent_menu.addAction(Path(f).name, lambda f=f: self.confirm_discard() and self.open_file(f))
            action.setToolTip(f)
        if not files:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def dragEnterEvent(self, event):
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event):
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files and self.confirm_discard():
            self.open_file(files[0])
            event.acceptProposedAction()

    # -- autosave and recovery ---------------------------------------------------------
    def _write_recovery(self):
        if self.studio.is_modified:
            try:
                self.recovery.save(self.studio.state)
            except (SessionError, OSError) as exc:
                self.statusBar().showMessage(f"Autosave failed: {exc}", 5000)
        else:
            self.recovery.clear()

    def _offer_recovery(self):
        """After a crash, offer the work that was autosaved (a banner, never a blocking dialog)."""
        notes = self.recovery.sweep()  # stale temporary files, folders or links in the recovery folder
        if notes:
            self.show_message(" ".join(notes))
        orphans = self.recovery.orphans()
        if not orphans:
            return
        path = orphans[0]
        when = time.strftime("%H:%M on %d %b", time.localtime(path.stat().st_mtime))
        bar = QtWidgets.QFrame()
        bar.setObjectName("recoveryBanner")
        bar.setStyleSheet("#recoveryBanner { background: #fff4ce; border-bottom: 1px solid #e0c060; }")
        row = QtWidgets.QHBoxLayout(bar)
        row.setContentsMargins(8, 4, 8, 4)
        label = QtWidgets.QLabel(f"Attention Studio closed unexpectedly; unsaved work from {when} was kept.")
        row.addWidget(label, 1)
        restore = QtWidgets.QPushButton("Restore")
        restore.setObjectName("restoreButton")
        discard = QtWidgets.QPushButton("Discard")
        discard.setObjectName("discardRecoveryButton")
        row.addWidget(restore)
        row.addWidget(discard)
        self.setMenuWidget(self._menu_with_banner(bar))
        self.recovery_banner = bar
        self._recovery_candidate = path

        def do_restore():
            try:
                state = read_session(path)
            except SessionError as exc:
                # never deleted: discard moves what cannot be read aside and says where
                self.show_message(f"The recovered work cannot be read: {exc}. {self.recovery.discard(path) or ''}")
            else:
                self.studio.set_state(state)  # unsaved: the title shows it
                self.current_path = None
                self.recovery.discard(path)
            bar.hide()

        def do_discard():
            note = self.recovery.discard(path)
            if note:
                self.show_message(note)
            bar.hide()

        restore.clicked.connect(do_restore)
        discard.clicked.connect(do_discard)

    def _menu_with_banner(self, banner) -> QtWidgets.QWidget:
        holder = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.menuBar())
        layout.addWidget(banner)
        return holder

    # -- following the studio ---------------------------------------------------------
    def _on_studio_change(self, fields: frozenset):
        selection_only = fields <= {"query_index", "head_index"}
        self._render_all(selection_only=selection_only)
        if not selection_only and not self._autosave.isActive():
            self._autosave.start()

    def _render_all(self, selection_only: bool = False):
        self._sync_controls()
        for model in self.models.values():
            model.refresh()
        # Only the view on screen is drawn now; the others when they are shown.
        current = self.view_tabs.currentWidget()
        self._stale.update(self._views)
        self.render_view(current)
        if not selection_only:
            self.variance_plot.render()
        self._update_title()

    def _sync_controls(self):
        st = self.studio.state
        blockers = [QtCore.QSignalBlocker(w) for w in (
            self.sentence_edit, self.target_edit, self.d_model_spin, self.heads_spin, self.d_head_spin,
            self.seed_spin, self.scale_check, self.causal_check, self.positional_check, self.projections_check,
            self.temperature_spin, self.softmax_combo, self.score_combo, self.head_combo, self.query_combo,
            self.preset_combo)]
        if self.sentence_edit.text() != st.sentence:
            self.sentence_edit.setText(st.sentence)
        if self.target_edit.text() != st.target_sentence:
            self.target_edit.setText(st.target_sentence)
        # Set only what differs: re-setting an equal value still repaints a widget.
        for spin, value in ((self.d_model_spin, st.d_model), (self.heads_spin, st.heads),
                            (self.d_head_spin, st.d_head), (self.seed_spin, st.seed),
                            (self.temperature_spin, st.temperature)):
            if spin.value() != value:
                spin.setValue(value)
        for box, value in ((self.scale_check, st.scale), (self.causal_check, st.causal),
                           (self.positional_check, st.positional), (self.projections_check, st.projections)):
            if box.isChecked() != value:
                box.setChecked(value)
        self.softmax_combo.setCurrentIndex(max(0, self.softmax_combo.findData(st.softmax)))
        self.score_combo.setCurrentIndex(max(0, self.score_combo.findData(st.score)))
        additive = st.score == "additive"
        if self.scale_check.isEnabled() == additive:
            self.scale_check.setEnabled(not additive)
            self.scale_check.setToolTip(
                "Additive scores are bounded by tanh and are not scaled by 1/√d_k" if additive else
                "Divide the scores by √d_k before softmax, so their variance stays near 1")
        keys = list(self.models)
        for key in ("w_1", "w_2", "v_a"):
            index = keys.index(key)
            if self.table_tabs.isTabVisible(index) != additive:
                self.table_tabs.setTabVisible(index, additive)
        heads = [f"head {i + 1}" for i in range(st.heads)]
        if [self.head_combo.itemText(i) for i in range(self.head_combo.count())] != heads:
            self.head_combo.clear()
            self.head_combo.addItems(heads)
        self.head_combo.setCurrentIndex(st.head_index)
        queries = [f"{i + 1}: {t}" for i, t in enumerate(st.query_tokens)]
        if [self.query_combo.itemText(i) for i in range(self.query_combo.count())] != queries:
            self.query_combo.clear()
            self.query_combo.addItems(queries)
        self.query_combo.setCurrentIndex(st.query_index if queries else -1)
        # The example box names the example only while the model still is it.
        index = self.preset_combo.findData(self._preset_name)
        edited = index >= 0 and self._preset_state is not None and \
            not (st.changed_fields(self._preset_state) <= SELECTION_FIELDS)
        self.preset_combo.setPlaceholderText(f"{self._preset_name} (edited)" if edited else "choose an example")
        self.preset_combo.setCurrentIndex(-1 if edited or index < 0 else index)
        # Without projections there are no weights to edit and heads do not matter.
        for w in (self.heads_spin, self.d_head_spin, self.head_combo, *(self.tables[k] for k in ("w_q", "w_k", "w_v", "w_o"))):
            if w.isEnabled() != st.projections:
                w.setEnabled(st.projections)
        self.table_note.setText(
            "Projections are off: Q = K = V = X (simplified attention), so the weight tables are not used."
            if not st.projections else
            f"W_Q, W_K, W_V of head {st.head_index + 1}. Double-click or type in a cell to edit it.")
        del blockers
        self.undo_action.setEnabled(self.studio.can_undo)
        self.redo_action.setEnabled(self.studio.can_redo)

    def _update_title(self):
        if self.current_path is not None:
            name = self.current_path.name
        else:
            name = self._preset_name or self.studio.state.name or "untitled"
        self.setWindowModified(self.studio.is_modified)
        # "[*]" is where Qt puts its modified mark; the bullet is for titles Qt leaves alone.
        mark = " •" if self.studio.is_modified else ""
        self.setWindowTitle(f"{name}{mark}[*] — Attention Studio")

    def closeEvent(self, event):
        if not self.confirm_discard():
            event.ignore()
            return
        self._autosave.stop()
        self._play_timer.stop()
        self.recovery.clear()
        self.save_settings()
        self.bridge.close()
        super().closeEvent(event)

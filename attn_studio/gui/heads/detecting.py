"""The Heads tab's head detector: previous-token, duplicate-token and induction scores of every head
(`pretrained.detect`, TransformerLens's detect_head), on the sentence shown or on a seeded stretch of
random tokens repeated twice.

The scores fill three columns of the report card; the kind the detector names a head marks its cell in
the grid of roles (P, D, I); the "Detect heads" page shows the sequence, the heads named and the
selected head's attention on it, where an induction head's stripe can be seen. "Detect" runs the model
on the repeated tokens off the GUI thread (on the model's worker when the window gives the tab one),
with the studio's edits, and runs again by itself when the edits change.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from ...formatting import format_number
from ...pretrained.detect import DETECTOR_NAMES, DETECTORS, detect, top_heads
from ...pretrained.head_table import detect_run, repeated_source
from .. import presentation
from .matrix import MatrixCanvas
from .readout import head_name
from .report_card import DETECTED_MARKS, ROLE_COLOURS

SENTENCE = "sentence"
REPEATED = "repeated"
SENTENCE_SOURCE = "the sentence shown"
MAX_DETECT_LENGTH = 256  # a stretch this long twice is 512 tokens: BERT's positions, a second's pass
DETECT_NOTE = ("Score: the share of a head's attention on its kind's cells: the token just before (previous), "
               "earlier copies of the query's token (duplicate), the token after an earlier copy (induction). "
               "A head is named when it puts at least 30 % of what it could there and scores at least half the "
               "model's best of that kind.")


def detected_summary(detection) -> str:
    """The heads the detector names, kind by kind, each with its score; or the best of a kind named none."""
    digits = presentation.digits()
    parts = []
    for name in DETECTORS:
        kind = DETECTOR_NAMES[name]
        scores = detection.scores[name]
        named = [(int(l), int(h)) for l, h in np.argwhere(detection.roles == kind)]
        named.sort(key=lambda lh: -scores[lh])
        if named:
            heads = ", ".join(f"{head_name(l, h)} ({format_number(scores[l, h], digits)})" for l, h in named)
            parts.append(f"<b>{kind}</b>: {heads}")
        else:
            (l, h, best), = top_heads(scores, 1)
            parts.append(f"<b>{kind}</b>: none (best {head_name(l, h)}, {format_number(best, digits)})")
    return "; ".join(parts)


def sequence_text(tokens, limit: int = 64) -> str:
    """The detector's tokens as a line: a stretch twice as the stretch once and "then the same N again"
    (framed by [CLS] and [SEP] where the model has them); other sequences whole, or their first
    ``limit`` tokens."""
    tokens = [str(t) for t in tokens]
    for start, end in ((0, len(tokens)), (1, len(tokens) - 1)):
        body = tokens[start:end]
        n = len(body) // 2
        if n and len(body) == 2 * n and body[:n] == body[n:]:
            before = " ".join(tokens[:start])
            after = " ".join(tokens[end:])
            words = " ".join(body[:n]) + f" — then the same {n} again"
            return " ".join(part for part in (before, words + (", " + after if after else "")) if part)
    if len(tokens) <= limit:
        return " ".join(tokens)
    return " ".join(tokens[:limit]) + f" … ({len(tokens)} tokens)"


class DetectPart:
    """The detector's widgets and behaviour (a mixin of :class:`~attn_studio.gui.heads.tab.HeadsTab`)."""

    detection = None          # the Detection shown (pretrained.detect), or None
    _detect_run = None        # the run it was measured on
    _detect_key = None        # what it was measured for: (source, model, edits, length, seed) or the run
    _detect_wanted = None     # the key of the detection asked for last (a result for another is dropped)
    _detect_source = SENTENCE

    def _build_detect(self) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Scores on"))
        self.detect_source = QtWidgets.QComboBox()
        self.detect_source.setObjectName("detectSource")
        self.detect_source.addItem(SENTENCE_SOURCE, SENTENCE)
        self.detect_source.addItem("random tokens twice", REPEATED)
        self.detect_source.setToolTip("Where the detector looks: the sentence in the box, or a random stretch of "
                                      "the model's tokens followed by the same stretch again")
        self.detect_source.activated.connect(lambda i: self.set_detect_source(self.detect_source.itemData(i)))
        row.addWidget(self.detect_source)
        row.addStretch(1)
        row.addWidget(self._export_button("detect"))
        lay.addLayout(row)
        # The random stretch's settings on a row of their own: one row of everything made the Heads tab
        # (and so the window) wider than a 1280-pixel projector.
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("length"))
        self.detect_length = QtWidgets.QSpinBox()
        self.detect_length.setObjectName("detectLength")
        self.detect_length.setRange(1, MAX_DETECT_LENGTH)
        self.detect_length.setValue(20)
        self.detect_length.setToolTip("Tokens in the random stretch; the model reads it twice")
        row.addWidget(self.detect_length)
        row.addWidget(QtWidgets.QLabel("seed"))
        self.detect_seed = QtWidgets.QSpinBox()
        self.detect_seed.setObjectName("detectSeed")
        self.detect_seed.setRange(0, 999_999)
        self.detect_seed.setToolTip("The seed of the random stretch: the same seed, the same tokens")
        row.addWidget(self.detect_seed)
        self.detect_button = QtWidgets.QPushButton("Detect")
        self.detect_button.setObjectName("detectButton")
        self.detect_button.setToolTip("Run the model on the random stretch twice and score every head as "
                                      "previous-token, duplicate-token and induction head")
        self.detect_button.clicked.connect(self.run_detect)
        row.addWidget(self.detect_button)
        row.addStretch(1)
        lay.addLayout(row)
        self.detect_sequence = QtWidgets.QLabel()
        self.detect_sequence.setObjectName("detectSequence")
        self.detect_sequence.setWordWrap(True)
        self.detect_sequence.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        lay.addWidget(self.detect_sequence)
        self.detect_status = QtWidgets.QLabel()
        self.detect_status.setObjectName("detectStatus")
        self.detect_status.setWordWrap(True)
        self.detect_status.setTextFormat(QtCore.Qt.RichText)
        self.detect_status.setToolTip(DETECT_NOTE)
        lay.addWidget(self.detect_status)
        self.detect_head_line = QtWidgets.QLabel()
        self.detect_head_line.setObjectName("detectHeadLine")
        self.detect_head_line.setWordWrap(True)
        lay.addWidget(self.detect_head_line)
        self.detect_map = MatrixCanvas("", row_title="query", col_title="key")
        self.detect_map.setObjectName("detectHeatmap")
        lay.addWidget(self.detect_map, 1)
        return page

    # -- the source ---------------------------------------------------------------------------
    def set_detect_source(self, source: str) -> None:
        """Score the heads on ``"sentence"`` (the sentence shown) or ``"repeated"`` (random tokens twice)."""
        if source not in (SENTENCE, REPEATED):
            raise ValueError(f"the detector's source is 'sentence' or 'repeated', got {source!r}")
        self._detect_source = source
        self.detect_source.setCurrentIndex(self.detect_source.findData(source))
        if self.studio is None:
            return
        if source == SENTENCE:
            self._detect_wanted = None
            run = self.studio.computed.run
            self._show_detection(run, detect(run, SENTENCE_SOURCE), run)
        else:
            self.run_detect()

    def _limit_length(self) -> None:
        model = self.studio.model if self.studio is not None else None
        if model is None:
            return
        framed = 2 if getattr(model, "kind", "") == "bert" else 0
        most = max(1, min(MAX_DETECT_LENGTH, (int(model.max_positions) - framed) // 2))
        self.detect_length.setMaximum(most)

    def _repeated_key(self):
        state = self.studio.computed.state
        return (REPEATED, self.studio.model, state.edits, self.detect_length.value(), self.detect_seed.value())

    def run_detect(self) -> None:
        """Score every head on the seeded random stretch twice (length and seed from the page), off the GUI
        thread; the columns, the grid's marks and the page follow when it is done."""
        if self.studio is None:
            self.detect_status.setText("Choose a trained model first.")
            return
        self._limit_length()
        self._detect_source = REPEATED
        self.detect_source.setCurrentIndex(self.detect_source.findData(REPEATED))
        key = self._repeated_key()
        if key == self._detect_key or key == self._detect_wanted:
            return  # shown already, or on its way
        _, model, edits, length, seed = key
        self._detect_wanted = key
        source = repeated_source(length, seed)
        self.detect_button.setEnabled(False)
        self.detect_status.setText(f"Running {model.name} on {source}…")

        def work():
            run = detect_run(model, length, seed, edits)
            return run, detect(run, source)

        self._submit_detect(work, lambda result: self._on_detected(key, result),
                            lambda message: self._detect_failed(key, message))

    def _on_detected(self, key, result) -> None:
        if key != self._detect_wanted or self.studio is None or self._detect_source != REPEATED:
            return  # asked for another meanwhile (a new edit, a new model, the sentence)
        self._detect_wanted = None
        self.detect_button.setEnabled(True)
        run, detection = result
        self._show_detection(run, detection, key)

    def _detect_failed(self, key, message: str) -> None:
        if key == self._detect_wanted:
            self._detect_wanted = None
            self.detect_button.setEnabled(True)
            self.detect_status.setText(f"<span style='color:#c0392b'>Detect failed: {message}</span>")

    # -- following the studio -------------------------------------------------------------------
    def _detect_follow(self, run) -> None:
        """A new run of the studio (sentence or edits): the sentence's scores at once, or the repeated
        tokens' again when the edits changed since they were measured."""
        self._limit_length()
        if self._detect_source == SENTENCE:
            self._show_detection(run, detect(run, SENTENCE_SOURCE), run)
        elif self._repeated_key() != self._detect_key:
            self.run_detect()
            self._draw_roles()  # the new report's roles now, the detector's marks when its pass is done
        elif self.detection is not None:  # the same scores, written again (the precision may have changed)
            self._show_detection(self._detect_run, self.detection, self._detect_key)

    def _detect_reset(self) -> None:
        """A new studio (or none): back to the sentence, nothing measured yet."""
        self.detection = self._detect_run = self._detect_key = self._detect_wanted = None
        self._detect_source = SENTENCE
        self.detect_source.setCurrentIndex(0)
        self.detect_button.setEnabled(True)
        self.report_model.set_detection(None)
        self.detect_sequence.setText("")
        self.detect_status.setText("")
        self.detect_head_line.setText("")
        self.detect_map.set_matrix(None, [], [], note="No trained model." if self.studio is None else "")

    def _show_detection(self, run, detection, key) -> None:
        self.detection, self._detect_run, self._detect_key = detection, run, key
        self.report_model.set_detection(detection)
        if self._detect_source == SENTENCE:
            self.detect_sequence.setText(f"On the sentence shown: {sequence_text(detection.tokens)}")
        else:
            self.detect_sequence.setText(f"On {detection.source}: {sequence_text(detection.tokens)}")
        self.detect_status.setText("Detected: " + detected_summary(detection))
        self._draw_roles()
        self._draw_detect_head()

    def _draw_roles(self) -> None:
        """The grid of roles: each head's colour its report card's role, a letter where the detector
        names it (P previous token, D duplicate token, I induction)."""
        report = self.report_model.report
        if report is None:
            return
        layers, heads = report.role.shape
        colours = [[ROLE_COLOURS[str(report.role[l, h])] for h in range(heads)] for l in range(layers)]
        present = [name for name in ROLE_COLOURS if (report.role == name).any()]
        marks = self.detect_marks()
        note = ""
        if marks is not None:
            named = [f"{letter} {kind.split()[0]}" for kind, letter in DETECTED_MARKS.items() if (marks == letter).any()]
            note = f"detected: {', '.join(named)}" if named else "detected: no head"
        self.role_grid.set_matrix(np.zeros((layers, heads)), [str(i + 1) for i in range(layers)],
                                  [str(i + 1) for i in range(heads)], colours=colours,
                                  legend=[(name, ROLE_COLOURS[name]) for name in present], marks=marks, note=note)

    def detect_marks(self) -> np.ndarray | None:
        """The letters the role grid writes in the heads the detector names (P, D, I), or None."""
        if self.detection is None:
            return None
        return np.vectorize(lambda role: DETECTED_MARKS.get(str(role), ""), otypes=[object])(self.detection.roles)

    def _draw_detect_head(self) -> None:
        run = self._detect_run
        if self.studio is None or run is None:
            return
        state = self.studio.computed.state
        layer, head = state.layer_index, state.head_index
        tokens = list(run.tokens)
        where = "the sentence" if self._detect_source == SENTENCE else "the repeated tokens"
        digits = presentation.digits()
        scores = ", ".join(f"{name} {format_number(self.detection.scores[name][layer, head], digits)}"
                           for name in DETECTORS)
        role = str(self.detection.roles[layer, head]) or "no kind"
        self.detect_head_line.setText(f"Head {head_name(layer, head)}: {scores}; detected: {role}.")
        self.detect_map.set_matrix(run.attentions[layer, head], tokens, tokens, 0.0, 1.0,
                                   title=f"Head {head_name(layer, head)} on {where}: weights α")
        self.detect_map.set_highlight(None)

    # -- running off the GUI thread ---------------------------------------------------------------
    def _submit_detect(self, work, on_result, on_error) -> None:
        if self._submit is not None:  # the model's worker: one pass of the model at a time
            self._submit(work, on_result, on_error)
            return
        self.detect_job.start(lambda progress, cancel: work(), tag=None)
        self._detect_callbacks = (on_result, on_error)

    def _on_detect_job(self, tag, result) -> None:
        on_result, _ = getattr(self, "_detect_callbacks", (None, None))
        if on_result is not None:
            on_result(result)

    def _on_detect_job_failed(self, tag, message) -> None:
        _, on_error = getattr(self, "_detect_callbacks", (None, None))
        if on_error is not None:
            on_error(message)


__all__ = ["DetectPart", "DETECT_NOTE", "detected_summary", "sequence_text"]

"""The stage's card for a training scene whose run is being trained: the scene's title, the run (its seed,
the step it is trained to), how far it is, and what a clicker does meanwhile. The stage is never silent
while a scene waits for its run: the card is shown at once and the scene replaces it by itself."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .basics import TRAINING_PREFIX, _font, card_line

REFRESH_MS = 250  # the steps done, read four times a second from what the panel's worker reports
HINT = "PageDown: the next scene · it appears by itself when trained"
LAST_HINT = "It appears by itself when trained · PageUp: the scene before"  # the lecture's last scene


def progress_words(lab, seed: int, steps: int) -> tuple[int, str]:
    """(steps done, what the card says of them) for ``lab``'s run ``seed`` trained to ``steps``."""
    progress = lab.training_progress()
    mine = progress is not None and (progress.seed, progress.steps) == (seed, steps)
    done = min(progress.done, steps) if mine else 0
    words = f"step {done:,} of {steps:,}"
    if mine and progress.waiting:
        words += " · waiting for the run before it"
    return done, words


class RunCard(QtWidgets.QWidget):
    """A card in place of ``scene`` (scene ``number`` of its lecture, ``last`` when it ends it) while ``lab``
    trains its run, ``seed`` to ``steps``: at the room's text sizes (``sizes``: :func:`~.stage.stage_sizes`,
    on a stage ``width`` pixels wide), its steps done read again every ``REFRESH_MS``."""

    def __init__(self, scene, lab, seed: int, steps: int, sizes: dict, number: int | None = None,
                 width: int = 1280, last: bool = False):
        super().__init__()
        self.setObjectName("presentRunCard")
        self.lab, self.seed, self.steps, self.last = lab, int(seed), int(steps), last
        self.panel_title = scene.view[len(TRAINING_PREFIX):] if scene.view.startswith(TRAINING_PREFIX) else scene.view
        column = QtWidgets.QVBoxLayout(self)
        column.setSpacing(sizes["margin"])
        column.addStretch(1)
        self.labels = {}
        for name, text, font in (
                ("runCardWhat", f"Its run is being trained: {self.panel_title}", _font(sizes["label"])),
                ("runCardRun", f"seed {self.seed}, to step {self.steps:,}", _font(sizes["title"], bold=True)),
                ("runCardSteps", "", _font(sizes["title"], bold=True)),
                ("runCardAfter", "The scene appears by itself when it is trained. "
                                 + ("PageUp goes back to the scene before" if last else
                                    "PageDown goes on to the next scene")
                                 + ": the training goes on, and coming back finds it further on or done.",
                 _font(sizes["caption"]))):
            label = self.labels[name] = card_line(name, text, font)
            column.addWidget(label)
            if name == "runCardSteps":
                # A bar of the steps done under their count: seen from the back even when the count is not read.
                self.bar = QtWidgets.QProgressBar()
                self.bar.setObjectName("runCardBar")
                self.bar.setRange(0, max(self.steps, 1))
                self.bar.setTextVisible(False)
                self.bar.setFixedHeight(max(8, sizes["margin"] * 2))
                self.bar.setFixedWidth(int(width * 0.6))
                column.addWidget(self.bar, 0, QtCore.Qt.AlignHCenter)
        column.addStretch(1)
        self.timer = QtCore.QTimer(self, interval=REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        self.refresh()

    def refresh(self) -> None:
        """The steps done, as the panel's worker last reported them."""
        done, words = progress_words(self.lab, self.seed, self.steps)
        if self.labels["runCardSteps"].text() != words:
            self.labels["runCardSteps"].setText(words)
        self.bar.setValue(done)

    def status(self) -> str:
        """The card in one line (the presenter console says it)."""
        return (f"Its run is being trained ({self.panel_title}, seed {self.seed}): "
                f"{progress_words(self.lab, self.seed, self.steps)[1]}. It appears on the stage by itself; "
                + ("PageUp goes back to the scene before." if self.last else "PageDown goes on to the next scene."))

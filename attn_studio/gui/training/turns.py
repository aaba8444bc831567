"""One headless training at a time: a scene's run trained to its saved steps (:meth:`.panel.LabPanel.play_to`)
waits its turn among every window's lab panels, the run the stage waits for first, then the runs trained ahead
in the scenes' order (:class:`HeadlessTurns`, one for the machine: ``TURNS``), and holds back while the stage
draws what a key brought (``qt.worker.quiet_left``)."""

from __future__ import annotations

import itertools
import threading  # a condition: the panels' workers wait for their turn on it; the threads are gui.worker's
import weakref
from typing import NamedTuple

from ..qt.worker import quiet_left

TURN_LOOK_S = 0.1  # how often a headless training waiting for its turn looks whether the window closes


class Headless(NamedTuple):
    """A scene's run being trained headless (:meth:`LabPanel.play_to`): ``seed`` to ``steps``, ``done`` steps
    so far; ``waiting`` while another panel's run has the turn; ``finished`` once it reached ``steps``."""

    seed: int
    steps: int
    done: int = 0
    waiting: bool = False
    finished: bool = False


class HeadlessTurns:
    """One scene's run trained headless at a time among the lab's panels (the machine's cores are the
    window's too): the run a caller waits for (the stage) first, the latest asked first; then the runs
    trained ahead (:meth:`LabPanel.play_to` with ``ahead``), the earliest scene's first.

    A rank per panel, set on the GUI thread; the panels' workers register while they train, and one at a
    time holds the turn for a piece: the highest rank registered (ties: the first registered) once the piece
    under way is done."""

    def __init__(self):
        self._cond = threading.Condition()
        # panel -> rank (higher trains first); a window closed takes its panels' ranks with it
        self._ranks = weakref.WeakKeyDictionary()
        self._training: dict = {}  # panel -> order of registration, while its worker trains headless
        self._order = itertools.count()
        self._asked = itertools.count(1)
        self._holder = None  # the panel training a piece now

    def first(self, panel) -> None:
        """``panel``'s run is the one waited for now: it trains before every other (GUI thread)."""
        with self._cond:
            self._ranks[panel] = float(next(self._asked))
            self._cond.notify_all()

    def ahead(self, panel, scene: int, keep_higher: bool) -> None:
        """``panel``'s run is trained ahead for scene ``scene`` (from 0): after the runs waited for and the
        earlier scenes' (GUI thread); ``keep_higher``: a rank it has already (a run waited for) stays."""
        with self._cond:
            rank = -1.0 - scene
            if not (keep_higher and self._ranks.get(panel, rank) > rank):
                self._ranks[panel] = rank
            self._cond.notify_all()

    def waited_for(self, panel) -> bool:
        """True when ``panel``'s run is one the stage waits for, not one trained ahead."""
        with self._cond:
            return self._ranks.get(panel, 0.0) > 0

    def wait_turn(self, panel, give_up, waiting) -> bool:
        """Block ``panel``'s worker until its run has the turn for a piece (True; :meth:`done` gives it
        back), or ``give_up()`` (False); ``waiting(True)`` once it waits, ``waiting(False)`` once it has it."""
        with self._cond:
            if panel not in self._training:
                self._training[panel] = next(self._order)
            said = False
            while not give_up():
                quiet = quiet_left()  # the stage draws what a key brought: a run trained ahead waits (keep_quiet)
                if self._holder is None and self._front() is panel and (quiet <= 0 or self._ranks.get(panel, 0.0) > 0):
                    self._holder = panel
                    if said:
                        waiting(False)
                    return True
                # Said only when another run is before it: a run held back by a quiet stage alone is not
                # "waiting for the run before it" (its card, promoted a moment later, read so).
                if not said and (self._holder not in (None, panel) or self._front() is not panel):
                    waiting(True)
                    said = True
                # The window closing is looked at between waits; a quiet stage's end too.
                self._cond.wait(min(TURN_LOOK_S, quiet) if quiet > 0 else TURN_LOOK_S)
            return False

    def done(self, panel) -> None:
        """``panel``'s piece is trained: the turn goes to the highest rank waiting (maybe ``panel`` again)."""
        with self._cond:
            if self._holder is panel:
                self._holder = None
            self._cond.notify_all()

    def leave(self, panel) -> None:
        """``panel``'s worker trains headless no more: the next run has the turn."""
        with self._cond:
            self._training.pop(panel, None)
            if self._holder is panel:
                self._holder = None
            self._cond.notify_all()

    def _front(self):
        return max(self._training, key=lambda p: (self._ranks.get(p, 0.0), -self._training[p]), default=None)


TURNS = HeadlessTurns()  # every panel's, of every window: one machine

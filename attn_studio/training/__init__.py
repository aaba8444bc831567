"""The training lab: tiny models trained in NumPy with backpropagation written by hand.

Each experiment trains a few arms side by side on the same batches, so their curves differ by the
one idea the lecture is about:

- `ScalingExperiment`: why attention divides by sqrt(d_k) (scaled vs unscaled scores);
- `Seq2SeqExperiment`: why attention at all (an RNN encoder-decoder's fixed-size bottleneck vs
  Bahdanau attention over every encoder state).

No Qt: the window plays an experiment from a worker thread, a notebook or ``attn-studio train``
calls it directly. The layers (`layers`) and the loop (`experiment`) are shared by every
experiment; `gradcheck` checks a backward pass against central differences; `report` writes a
run's tables.
"""

from .experiment import Experiment, TrainingError
from .induction import InductionExperiment
from .layers import (Adam, clip_by_global_norm, cross_entropy, cross_entropy_backward, log_softmax, softmax,
                     softmax_backward, token_losses)
from .scaling import ScalingExperiment
from .seq2seq import Seq2SeqExperiment, accuracy_by_length

__all__ = [
    "EXPERIMENTS", "Experiment", "TrainingError",
    "ScalingExperiment", "Seq2SeqExperiment", "accuracy_by_length", "InductionExperiment",
    "Adam", "clip_by_global_norm", "cross_entropy", "cross_entropy_backward", "log_softmax", "softmax",
    "softmax_backward", "token_losses",
]

# Experiments by name, in the order a menu lists them: `attn-studio train NAME` and the window
# find them here. A new experiment registers itself with one line: EXPERIMENTS["name"] = Class.
EXPERIMENTS = {"scaling": ScalingExperiment, "seq2seq": Seq2SeqExperiment}
EXPERIMENTS["induction"] = InductionExperiment

# A session or scene that names a lab model by its recipe (seed, steps...) is trained here when its
# folder is not on this machine: the trained-model side, below the lab, asks through this hook.
from ..trained.models import set_lab_trainer  # noqa: E402
from .lab_models import train_recipe  # noqa: E402

set_lab_trainer(train_recipe)

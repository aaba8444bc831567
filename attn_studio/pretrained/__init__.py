"""Trained checkpoints (BERT, GPT-2) run on the project's own engine, offline, without Qt.

```python
from attn_studio.pretrained import load_pretrained, available_models, ModelError
model = load_pretrained()                 # all-MiniLM-L6-v2 from its package, or load_pretrained(folder)
run = model.run("The animal didn't cross the street because it was too tired.")
run.tokens, run.attentions, run.hidden_states, run.layer_results[l].q
edited = run.rerun(Edits().with_head_scale(3, 5, 0.0))    # recomputes layers 3.. only
edited.drift(run)                                          # how far each layer moved
head_report(run).role; find_heads(run, "it", "animal")[:3]  # Head Lab (heads.py)
lab = load_pretrained(folder_saved_by_exp_save_model)   # a lab model (lab.py): run_ids, logits
detect_heads(model.run_ids(repeated_tokens(model)), "induction")  # head detector (detect.py)
```
Layers and heads are counted from 0. See ``model.py`` for the run and edits API.
"""

from .config import ModelConfig
from .detect import DETECTORS, detect_heads, repeated_tokens
from .errors import ModelError
from .heads import (
    Cancelled,
    HeadReport,
    attention_flow,
    find_heads,
    head_importance,
    head_report,
    norm_attention,
)
from .loading import (
    DEFAULT_MODEL,
    ModelInfo,
    available_models,
    cache_root,
    default_model_zip,
    hub_cache_dirs,
    load_pretrained,
)
from .model import Edits, Encoding, ModelRun, TrainedModel, WordComparison
from .lab import LAB_KIND, LabModel
from .lab_files import write_lab_folder

__all__ = [
    "Cancelled",
    "DETECTORS",
    "DEFAULT_MODEL",
    "Edits",
    "Encoding",
    "HeadReport",
    "LAB_KIND",
    "LabModel",
    "ModelConfig",
    "ModelError",
    "ModelInfo",
    "ModelRun",
    "TrainedModel",
    "WordComparison",
    "attention_flow",
    "available_models",
    "cache_root",
    "default_model_zip",
    "detect_heads",
    "find_heads",
    "head_importance",
    "head_report",
    "hub_cache_dirs",
    "load_pretrained",
    "norm_attention",
    "write_lab_folder",
    "repeated_tokens",
]

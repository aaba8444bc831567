"""The views: widgets that draw what the Studio computed and compute nothing themselves.

Each view has a ``render()`` that reads ``studio.state`` and ``studio.result`` and draws;
the window calls it when the view is on screen (a hidden view renders when it is shown).
"""

from .compare import CompareView
from .geometry import GeometryView
from .heatmap_view import HeatmapView
from .pipeline import PipelineView
from .plots import VariancePlot
from .positional import PositionalView
from .summary import HeadsSummaryView

__all__ = ["CompareView", "GeometryView", "HeatmapView", "HeadsSummaryView", "PipelineView",
           "PositionalView", "VariancePlot"]

"""pyqtgraph, configured once before any item is created."""

import pyqtgraph as pg

# Arrays are (rows = queries, columns = keys), as the seeds print them.
pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")

__all__ = ["pg"]

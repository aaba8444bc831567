"""The training lab in the window: a "Training" tab whose panels play the experiments of
`attn_studio.training` ("Why √d_k", "Why attention", "Why two layers").

- `runner`: the worker thread that owns one experiment and steps it (play, pause, step, reset);
  the GUI thread only reads what it publishes.
- `panel`: what every panel shares: the TensorFlow-Playground controls, curves redrawn at most
  ~12 times a second (a plot or picture per turn of the event loop), the figure and CSV exports.
- `scaling_panel`, `seq2seq_panel`, `induction_panel`: one panel per experiment.
- `tab`: the three panels as inner tabs, and their settings as a plain dict (sessions).
- `figures`: the PNG figures of ``attn-studio train --png`` (QPainter, no window).

This package's ``__init__`` imports nothing, so ``attn-studio train --png`` loads only `figures`.
"""

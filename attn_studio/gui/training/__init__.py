"""The training lab in the window: a "Training" tab whose panels play the experiments of
`attn_studio.training` ("Why √d_k", "Why attention", "Why two layers").

- `runner`: the worker thread that owns one experiment and steps it (play, pause, step, reset);
  the GUI thread only reads what it publishes.
- `panel`: what every panel shares: the TensorFlow-Playground controls, curves redrawn at most
  ~12 times a second (a plot or picture per turn of the event loop), the figure and CSV exports.
- `figure`: what every panel's figure shares (plots in a graphics layout, the sentence that reads
  the run); `scaling_figure`, `seq2seq_figure`, `induction_figure`: each panel's plots and
  pictures, drawn from a snapshot, and what it measures beyond the history.
- `scaling_panel`, `seq2seq_panel`, `induction_panel`: one panel per experiment: its controls
  around its figure.
- `tab`: the three panels as inner tabs, and their settings as a plain dict (sessions).
- `figures`: a panel's figure for the page, the one every export and ``attn-studio train --png``
  write.

This package's ``__init__`` imports nothing, so ``attn-studio train --png`` loads only `figures`
and what it draws.
"""

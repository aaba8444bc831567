"""The training lab: tiny models trained in NumPy with hand-written backpropagation, so a
lecture can show what training does to attention (scaled vs unscaled attention, an RNN
encoder-decoder vs attention, one- vs two-layer attention-only transformers and the
induction head). No Qt: the window plays an experiment from a worker thread, a notebook
calls it directly."""

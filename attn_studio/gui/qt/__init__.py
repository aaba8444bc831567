"""The plumbing below every room of the window: pyqtgraph configured once (``pg``, with its plot
menus built on first use, ``pg_menus``) and the one way to work in the background (``worker``)."""

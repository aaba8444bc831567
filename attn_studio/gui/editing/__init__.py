"""Editing the model: the Model panel (``controls``), the matrix tables (``tables``) and the
panel that holds them (``numbers``), and the Edit menu (``edit_actions``: undo, redo, copy,
paste). Every edit goes through the Studio; nothing here keeps numbers of its own.
"""

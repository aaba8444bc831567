"""Export and files: figures drawn from panels (``figures``), the names the window and the
command line export through (``export``), the export menus (``export_actions``), the File
menu with autosave and recovery (``file_actions``) and saving on a background thread
(``save_worker``).
"""

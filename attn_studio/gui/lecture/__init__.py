"""In the lecture hall: lecture mode (``mode``: full screen, text zoom, themes, colour maps,
the play walk) and focus mode (``focus``: one panel fills the screen, with a soft pointer).
The look they change is ``gui.presentation``'s, which every view follows.
"""

"""In the lecture hall: lecture mode (``mode``: full screen, text zoom, themes, colour maps,
the play walk) and Present (``present``: the current view as a stage for the room, F5).
The look they change is ``gui.presentation``'s, which every view follows.
"""

"""The desktop app: tray, review window, settings and first run (Qt, via ``ui.qt``).

``ui.entry`` is the ``mama`` console script; it loads Qt only when the desktop
app starts, so the command line keeps working where Qt cannot.
"""

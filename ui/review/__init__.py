"""The review window and its parts: the tabs and their lists, the detail pane, the
messages and audit panels, search, batch actions, undo, dialogs and table state.

App-wide pieces (tray, desktop, first run, settings, the engine bridge) stay in ``ui``.
"""

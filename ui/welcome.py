"""The short "what now" the review window shows once, right after the first run.

The wizard ends with a tray icon and nothing else on screen, so a new owner is
left to guess. After Finish the review window opens once with three lines on
top: how to talk to MAMA, where proposals appear, and how to forget, with a
button that puts the note away. Later starts do not show it.
"""

from __future__ import annotations

from ui.qt import QtWidgets

WHAT_NOW: tuple[str, ...] = (
    "<b>Talk to MAMA</b> in Telegram: choose <i>Pair Telegram…</i> in the tray menu and "
    "send your bot the code; or in a terminal: <tt>mama remember</tt>, "
    "<tt>mama search</tt>.",
    "<b>Proposals</b>: what the agent wants to remember waits in <i>Proposed</i> (here, "
    "with a tray notification) until you approve or reject it.",
    "<b>To forget</b>: <i>Retire</i> a memory that no longer holds; <i>Purge</i> erases "
    "its text for good (also <tt>/forget</tt> in Telegram, <tt>mama purge</tt>).",
)


class WelcomeNote(QtWidgets.QFrame):
    """Three lines of "what now" and a button that puts them away."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(self.palette().ColorRole.AlternateBase)
        layout = QtWidgets.QHBoxLayout(self)
        self.text = QtWidgets.QLabel("<br>".join(WHAT_NOW))
        self.text.setObjectName("welcome_text")
        self.text.setWordWrap(True)
        layout.addWidget(self.text, 1)
        self.close_button = QtWidgets.QPushButton("&Got it")
        self.close_button.setObjectName("welcome_close")
        self.close_button.setToolTip("Put this note away (it is shown only after the first run)")
        self.close_button.clicked.connect(self.hide)
        layout.addWidget(self.close_button)


def show_welcome(window: QtWidgets.QMainWindow) -> WelcomeNote:
    """Put the note above ``window``'s content (the content itself is kept as it is)."""
    content = window.takeCentralWidget()
    holder = QtWidgets.QWidget()
    layout = QtWidgets.QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    note = WelcomeNote(holder)
    layout.addWidget(note)
    if content is not None:
        layout.addWidget(content, 1)
    window.setCentralWidget(holder)
    return note

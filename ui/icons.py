"""The tray and window icons, drawn in code so the state and the count are always exact.

One round mark with an "M"; its colour says the state (idle, agent working,
paused, starting, trouble) and a red badge carries the number of proposals
waiting. Drawn at several sizes so the tray's 22-pixel icon is crisp.
"""

from __future__ import annotations

from enum import StrEnum

from ui.qt import Qt, QtCore, QtGui


class TrayState(StrEnum):
    """What the tray icon shows."""

    STARTING = "starting"
    IDLE = "idle"
    WORKING = "working"
    PAUSED = "paused"
    ATTENTION = "attention"
    TROUBLE = "trouble"


COLOURS: dict[TrayState, str] = {
    TrayState.STARTING: "#8c959f",
    TrayState.IDLE: "#0f766e",
    TrayState.WORKING: "#0969da",
    TrayState.PAUSED: "#8c959f",
    TrayState.ATTENTION: "#0f766e",
    TrayState.TROUBLE: "#cf222e",
}

SIZES = (16, 22, 24, 32, 48, 64)


def draw_mark(size: int, state: TrayState, count: int = 0) -> QtGui.QPixmap:
    """The icon at ``size`` pixels for ``state`` (with a badge for ``count`` > 0)."""
    pixmap = QtGui.QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(pixmap)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
    margin = max(1.0, size * 0.04)
    disc = QtCore.QRectF(margin, margin, size - 2 * margin, size - 2 * margin)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QtGui.QColor(COLOURS[state]))
    painter.drawEllipse(disc)

    font = QtGui.QFont("DejaVu Sans")
    font.setBold(True)
    font.setPixelSize(max(6, int(size * 0.56)))
    painter.setFont(font)
    painter.setPen(QtGui.QColor("white"))
    painter.drawText(disc, int(Qt.AlignmentFlag.AlignCenter), "M")

    if state is TrayState.WORKING:
        # Three dots under the letter: the agent is busy.
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QtGui.QColor("white"))
        r = max(1.0, size * 0.05)
        y = size * 0.80
        for dx in (-0.16, 0.0, 0.16):
            painter.drawEllipse(QtCore.QPointF(size * (0.5 + dx), y), r, r)
    if state is TrayState.PAUSED:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QtGui.QColor("#24292f"))
        w, h = size * 0.09, size * 0.26
        for x in (size * 0.70, size * 0.84):
            painter.drawRect(QtCore.QRectF(x, size * 0.70, w, h))
    if count > 0:
        _badge(painter, size, count)
    painter.end()
    return pixmap


def _badge(painter: QtGui.QPainter, size: int, count: int) -> None:
    text = str(count) if count < 100 else "99+"
    diameter = size * (0.56 if len(text) < 3 else 0.62)
    rect = QtCore.QRectF(size - diameter, 0, diameter, diameter)
    painter.setPen(QtGui.QPen(QtGui.QColor("white"), max(1.0, size * 0.03)))
    painter.setBrush(QtGui.QColor("#cf222e"))
    painter.drawEllipse(rect)
    font = QtGui.QFont("DejaVu Sans")
    font.setBold(True)
    font.setPixelSize(max(5, int(diameter * (0.62 if len(text) == 1 else 0.46))))
    painter.setFont(font)
    painter.setPen(QtGui.QColor("white"))
    painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), text)


def state_icon(state: TrayState, count: int = 0) -> QtGui.QIcon:
    """A ``QIcon`` holding the mark at every size the tray or a window may ask for."""
    icon = QtGui.QIcon()
    for size in SIZES:
        icon.addPixmap(draw_mark(size, state, count))
    return icon


def app_icon() -> QtGui.QIcon:
    """The application's own icon (windows, dialogs)."""
    return state_icon(TrayState.IDLE)

"""Colours for statuses and notes that stay readable in light and dark palettes.

Each colour has a light-palette and a dark-palette variant; which one is drawn
follows the palette in use (the owner's desktop theme), so a status is never
dark red on a dark background. Every variant meets WCAG AA (a contrast ratio of
at least 4.5:1, ``contrast_ratio``) against the backgrounds it is drawn on
(Base, AlternateBase and Window) in a light and a dark palette; a test checks
each one (``tests/ui/test_contrast.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ui.qt import QtGui

WCAG_AA = 4.5
"""The smallest contrast ratio WCAG 2 level AA allows for normal text."""

Role = QtGui.QPalette.ColorRole


@dataclass(frozen=True)
class Tone:
    """One colour as two hex strings: for light palettes and for dark ones."""

    light: str
    dark: str

    def on(self, palette: QtGui.QPalette | None = None) -> str:
        """The variant that reads on ``palette`` (default: the application's)."""
        return self.dark if is_dark(palette) else self.light


# Light variants from GitHub's Primer light theme, dark ones from its dark theme;
# the greys are a step darker (lighter) than Primer's muted text, which falls just
# short of 4.5:1 on an alternate row.
ATTENTION = Tone("#8a5c00", "#e3b341")
SUCCESS = Tone("#116329", "#56d364")
MUTED = Tone("#57606a", "#a5adb6")
DANGER = Tone("#c4161f", "#ff7b72")
DONE = Tone("#7a3fd6", "#bc8cff")

STATUS_TONES: dict[str, Tone] = {
    "proposed": ATTENTION,
    "active": SUCCESS,
    "superseded": MUTED,
    "stale": MUTED,
    "contradicted": DANGER,
    "rejected": DANGER,
    "purged": DONE,
}
"""The colour of each status, in the lists and the detail pane."""

WAITING_BACKGROUND = Tone("#fff8c5", "#3d2f00")
"""Behind the detail pane's "Waiting for you" note (drawn with the palette's text colour)."""

NOTE_TONES: dict[str, Tone] = {"error": DANGER, "warning": ATTENTION, "muted": MUTED}
"""Colours of one-line notes: an error, a warning (a hint while typing), a placeholder."""


def _palette(palette: QtGui.QPalette | None) -> QtGui.QPalette:
    return palette if palette is not None else QtGui.QGuiApplication.palette()


_DARK: dict[int, bool] = {}
"""``is_dark`` by ``QPalette.cacheKey()``: it is asked for every status cell painted."""


def is_dark(palette: QtGui.QPalette | None = None) -> bool:
    """Whether ``palette`` draws light text on a dark background."""
    pal = _palette(palette)
    key = pal.cacheKey()
    dark = _DARK.get(key)
    if dark is None:
        base, text = pal.color(Role.Base), pal.color(Role.Text)
        dark = _DARK[key] = relative_luminance(base) < relative_luminance(text)
    return dark


def status_colour(status: object, palette: QtGui.QPalette | None = None) -> str:
    """The colour of ``status`` on ``palette`` as ``#rrggbb``; "" for an unknown status."""
    tone = STATUS_TONES.get(str(status))
    return "" if tone is None else tone.on(palette)


def note_style(kind: str, palette: QtGui.QPalette | None = None) -> str:
    """A style sheet colouring a label's text for ``kind`` (error, warning, muted)."""
    return f"color: {NOTE_TONES[kind].on(palette)};"


def relative_luminance(colour: QtGui.QColor) -> float:
    """WCAG 2's relative luminance of an opaque sRGB colour (0 black … 1 white)."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    rgb = colour.toRgb()
    red, green, blue = (linear(c) for c in (rgb.redF(), rgb.greenF(), rgb.blueF()))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(first: QtGui.QColor, second: QtGui.QColor) -> float:
    """WCAG 2's contrast ratio of two colours, from 1 (same) to 21 (black on white)."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def dark_palette() -> QtGui.QPalette:
    """A dark palette like the dark themes of Qt's Fusion style and common desktops
    (window #353535, text fields #232323): for screenshots and the contrast test."""
    window, base = QtGui.QColor("#353535"), QtGui.QColor("#232323")
    alternate = QtGui.QColor("#2d2d2d")
    text, disabled = QtGui.QColor("#f0f0f0"), QtGui.QColor("#8c8c8c")
    palette = QtGui.QPalette()
    for role, colour in (
        (Role.Window, window),
        (Role.WindowText, text),
        (Role.Base, base),
        (Role.AlternateBase, alternate),
        (Role.ToolTipBase, window),
        (Role.ToolTipText, text),
        (Role.PlaceholderText, disabled),
        (Role.Text, text),
        (Role.Button, window),
        (Role.ButtonText, text),
        (Role.BrightText, QtGui.QColor("#ff7b72")),
        (Role.Light, window.lighter(150)),
        (Role.Midlight, window.lighter(125)),
        (Role.Mid, window.darker(130)),
        (Role.Dark, window.darker(150)),
        (Role.Shadow, QtGui.QColor("#000000")),
        (Role.Highlight, QtGui.QColor("#2f6fb3")),
        (Role.HighlightedText, QtGui.QColor("#ffffff")),
        (Role.Link, QtGui.QColor("#79b8ff")),
        (Role.LinkVisited, QtGui.QColor("#bc8cff")),
    ):
        palette.setColor(role, colour)
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        palette.setColor(QtGui.QPalette.ColorGroup.Disabled, role, disabled)
    return palette

"""Status and note colours meet WCAG AA (4.5:1) on the backgrounds they are drawn on,
in a light and a dark palette, as the lists and the detail pane actually draw them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ui.palette import (
    NOTE_TONES,
    STATUS_TONES,
    WAITING_BACKGROUND,
    WCAG_AA,
    contrast_ratio,
    dark_palette,
    is_dark,
    status_colour,
)
from ui.qt import Qt, QtGui, QtWidgets
from ui.review.models import JudgmentTableModel

Role = QtGui.QPalette.ColorRole


def light_palette() -> QtGui.QPalette:
    """The palette Qt's Fusion style draws with on a light desktop."""
    style = QtWidgets.QStyleFactory.create("Fusion")
    assert style is not None
    return style.standardPalette()


def other_dark_palette() -> QtGui.QPalette:
    """The dark palette many Qt apps hand-roll (window 53, text fields 25)."""
    palette = QtGui.QPalette()
    for role, grey in ((Role.Window, 53), (Role.Base, 25), (Role.AlternateBase, 53)):
        palette.setColor(role, QtGui.QColor(grey, grey, grey))
    for role in (Role.Text, Role.WindowText):
        palette.setColor(role, QtGui.QColor("white"))
    return palette


PALETTES = {"light": light_palette, "dark": dark_palette, "other dark": other_dark_palette}


def test_the_formula_is_wcag_relative_luminance() -> None:
    black, white = QtGui.QColor("#000000"), QtGui.QColor("#ffffff")
    assert contrast_ratio(black, white) == pytest.approx(21.0)
    assert contrast_ratio(white, white) == pytest.approx(1.0)
    # Known values: #777777 on white is just under AA, #767676 just over.
    assert contrast_ratio(QtGui.QColor("#777777"), white) == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio(QtGui.QColor("#767676"), white) == pytest.approx(4.54, abs=0.01)
    # Positive control for the checks below: yesterday's red fails on a dark palette.
    old_red = QtGui.QColor("#cf222e")
    assert contrast_ratio(old_red, dark_palette().color(Role.Base)) < WCAG_AA


@pytest.mark.parametrize("name", list(PALETTES))
def test_every_status_colour_reads_on_list_and_detail_backgrounds(
    qapp: QtWidgets.QApplication, name: str
) -> None:
    palette = PALETTES[name]()
    assert is_dark(palette) is (name != "light")
    for status in STATUS_TONES:
        colour = QtGui.QColor(status_colour(status, palette))
        # The lists draw rows on Base and AlternateBase, the detail pane on Base.
        for role in (Role.Base, Role.AlternateBase):
            ratio = contrast_ratio(colour, palette.color(role))
            assert ratio >= WCAG_AA, f"{status} {colour.name()} on {name} {role.name}: {ratio:.2f}"


@pytest.mark.parametrize("name", list(PALETTES))
def test_note_colours_read_on_windows_and_fields(qapp: QtWidgets.QApplication, name: str) -> None:
    palette = PALETTES[name]()
    for kind, tone in NOTE_TONES.items():
        colour = QtGui.QColor(tone.on(palette))
        for role in (Role.Window, Role.Base, Role.AlternateBase):
            ratio = contrast_ratio(colour, palette.color(role))
            assert ratio >= WCAG_AA, f"{kind} {colour.name()} on {name} {role.name}: {ratio:.2f}"
    # The "Waiting for you" note is the palette's text on its own background.
    behind = QtGui.QColor(WAITING_BACKGROUND.on(palette))
    assert contrast_ratio(palette.color(Role.Text), behind) >= WCAG_AA


@pytest.fixture
def dark_app(qapp: QtWidgets.QApplication) -> Iterator[QtWidgets.QApplication]:
    before = QtWidgets.QApplication.palette()
    QtWidgets.QApplication.setPalette(dark_palette())
    try:
        yield qapp
    finally:
        QtWidgets.QApplication.setPalette(before)


def _drawn(model: JudgmentTableModel, row: int) -> QtGui.QColor:
    brush = model.index(row, 4).data(Qt.ItemDataRole.ForegroundRole)
    assert isinstance(brush, QtGui.QBrush)
    return brush.color()


def test_the_list_follows_the_palette_it_is_drawn_in(dark_app: QtWidgets.QApplication) -> None:
    model = JudgmentTableModel()
    model.set_rows(
        {"id": i, "kind": "fact", "summary": s, "status": s} for i, s in enumerate(STATUS_TONES)
    )
    view = QtWidgets.QTableView()
    view.setModel(model)
    base = view.palette().color(Role.Base)
    assert base == dark_palette().color(Role.Base)
    for row, status in enumerate(STATUS_TONES):
        ratio = contrast_ratio(_drawn(model, row), base)
        assert ratio >= WCAG_AA, f"{status} in a dark list: {ratio:.2f}"
    # Back in a light palette the same rows get the light variants.
    QtWidgets.QApplication.setPalette(light_palette())
    QtWidgets.QApplication.processEvents()  # the view hears of the new palette
    light_base = view.palette().color(Role.Base)
    for row, status in enumerate(STATUS_TONES):
        assert _drawn(model, row).name() == STATUS_TONES[status].light
        assert contrast_ratio(_drawn(model, row), light_base) >= WCAG_AA
    view.deleteLater()

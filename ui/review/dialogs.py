"""The small dialogs behind the review actions: a reason, an edit, a purge confirmation.

Each one only gathers input; the review window sends the owner's action
through the catalog. Widgets carry object names so tests (and screen
readers) can find them.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mama_core.memory.edit_approval import carried
from mama_core.model import GUIDANCE_KINDS, KINDS
from ui.qt import Qt, QtWidgets


def fit_placeholder(field: QtWidgets.QLineEdit) -> None:
    """Wide enough to show its whole placeholder: a cut one reads as a different hint."""
    metrics = field.fontMetrics()
    field.setMinimumWidth(metrics.horizontalAdvance(field.placeholderText()) + 4 * metrics.height())


class ReasonDialog(QtWidgets.QDialog):
    """Asks why (required), and optionally "don't let it come back"."""

    def __init__(
        self,
        parent: QtWidgets.QWidget | None,
        *,
        title: str,
        prompt: str,
        ok_text: str,
        forbid_text: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("reason_dialog")
        layout = QtWidgets.QVBoxLayout(self)
        label = QtWidgets.QLabel(prompt)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.reason = QtWidgets.QLineEdit()
        self.reason.setObjectName("reason")
        self.reason.setPlaceholderText("Reason (kept in the audit log)")
        fit_placeholder(self.reason)
        layout.addWidget(self.reason)
        self.forbid = QtWidgets.QCheckBox(forbid_text or "")
        self.forbid.setObjectName("forbid_resave")
        self.forbid.setVisible(forbid_text is not None)
        layout.addWidget(self.forbid)
        self.ok_button = ok_cancel_buttons(self, layout, ok_text)
        self.reason.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        ok = bool(self.reason.text().strip())
        self.ok_button.setEnabled(ok)
        self.ok_button.setToolTip("" if ok else "Write a reason first")

    def values(self) -> tuple[str, bool]:
        return self.reason.text().strip(), self.forbid.isChecked()


class PurgeDialog(QtWidgets.QDialog):
    """Names exactly what a purge erases, and what stays, before anything happens."""

    def __init__(
        self,
        parent: QtWidgets.QWidget | None,
        record: dict[str, Any],
        older: int,
        quotes: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Erase a memory for good")
        self.setObjectName("purge_dialog")
        layout = QtWidgets.QVBoxLayout(self)
        summary = str(record.get("summary") or "")
        what = QtWidgets.QLabel(
            f"<p>Erase the text of <b>#{record.get('id')}</b> [{escape(str(record.get('kind')))}]:"
            f"</p><blockquote>{escape(summary)}</blockquote>"
            "<p>Its summary, topic, details, applies-when and steps are removed from the "
            "record, the search indexes and the vectors, and overwritten in the database "
            "file. This cannot be undone.</p>"
            "<p>The audit log keeps only that it was erased, when, by you, and why.</p>"
        )
        what.setObjectName("purge_what")
        what.setWordWrap(True)
        layout.addWidget(what)
        self.include_chain = QtWidgets.QCheckBox(
            f"Also erase the {older} older version{'s' if older != 1 else ''} it replaced"
        )
        self.include_chain.setObjectName("include_chain")
        self.include_chain.setVisible(older > 0)
        layout.addWidget(self.include_chain)
        self.quotes = QuotesList(quotes or [])
        layout.addWidget(self.quotes)
        self.reason, self.erase_button = add_erase_controls(self, layout)

    def values(self) -> tuple[str, bool]:
        return self.reason.text().strip(), self.include_chain.isChecked()

    def observation_ids(self) -> list[int]:
        """The messages quoting it that the owner chose to erase too."""
        return self.quotes.checked_ids()


class QuotesList(QtWidgets.QWidget):
    """The messages that quote a memory, each checked to be erased with it."""

    def __init__(self, quotes: list[dict[str, Any]]) -> None:
        super().__init__()
        self.setObjectName("quotes")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.all = QtWidgets.QCheckBox(
            f"Also erase the {len(quotes)} message{'s' if len(quotes) != 1 else ''} "
            "that quote it (checked below)"
        )
        self.all.setObjectName("with_quotes")
        self.all.setChecked(True)
        layout.addWidget(self.all)
        self.items = QtWidgets.QListWidget()
        self.items.setObjectName("quote_items")
        for quote in quotes:
            flat = " ".join(str(quote.get("text", "")).split())
            item = QtWidgets.QListWidgetItem(
                f"#{quote['id']} {quote.get('source', '')}: {flat[:160]}"
            )
            item.setData(Qt.ItemDataRole.UserRole, int(quote["id"]))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.items.addItem(item)
        self.items.setMaximumHeight(120)
        layout.addWidget(self.items)
        self.all.toggled.connect(self.items.setEnabled)
        self.setVisible(bool(quotes))

    def checked_ids(self) -> list[int]:
        if not self.all.isChecked():
            return []
        return [
            int(self.items.item(row).data(Qt.ItemDataRole.UserRole))
            for row in range(self.items.count())
            if self.items.item(row).checkState() == Qt.CheckState.Checked
        ]


class EditDialog(QtWidgets.QDialog):
    """Edit a proposal before approving it: the result is an owner save that replaces it
    (``edit_approval``: the items it rests on and a commitment's terms are kept)."""

    def __init__(self, parent: QtWidgets.QWidget | None, record: dict[str, Any]) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit and approve #{record.get('id')}")
        self.setObjectName("edit_dialog")
        self.setMinimumWidth(520)
        self._record_id = int(record["id"])
        self._record = dict(record)
        form = QtWidgets.QFormLayout(self)
        self.kind = QtWidgets.QComboBox()
        self.kind.setObjectName("kind")
        self.kind.addItems(list(KINDS))
        self.kind.setCurrentText(str(record.get("kind", "fact")))
        form.addRow("Kind", self.kind)
        self.topic = QtWidgets.QLineEdit(str(record.get("topic") or ""))
        self.topic.setObjectName("topic")
        form.addRow("Topic", self.topic)
        self.summary = QtWidgets.QPlainTextEdit(str(record.get("summary") or ""))
        self.summary.setObjectName("summary")
        self.summary.setFixedHeight(70)
        form.addRow("Summary", self.summary)
        self.applies_when = QtWidgets.QLineEdit(str(record.get("applies_when") or ""))
        self.applies_when.setObjectName("applies_when")
        form.addRow("Applies when", self.applies_when)
        self.steps = QtWidgets.QPlainTextEdit("\n".join(record.get("steps") or []))
        self.steps.setObjectName("steps")
        self.steps.setPlaceholderText("One step per line (workflows)")
        self.steps.setFixedHeight(70)
        form.addRow("Steps", self.steps)
        self.details = QtWidgets.QPlainTextEdit(str(record.get("details") or ""))
        self.details.setObjectName("details")
        self.details.setFixedHeight(70)
        form.addRow("Details", self.details)
        for text in (self.summary, self.steps, self.details):
            text.setTabChangesFocus(True)  # Tab moves to the next field, as in a form
        self.scopes = QtWidgets.QLineEdit(", ".join(record.get("scopes") or ["global"]))
        self.scopes.setObjectName("scopes")
        form.addRow("Scopes", self.scopes)
        self.ok_button = ok_cancel_buttons(self, form, "Save and approve")
        self.summary.textChanged.connect(self._check)
        self.kind.currentTextChanged.connect(self._check)
        self.applies_when.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        ok = bool(self.summary.toPlainText().strip())
        if self.kind.currentText() in GUIDANCE_KINDS:
            ok = ok and bool(self.applies_when.text().strip())
        self.ok_button.setEnabled(ok)
        if ok:
            self.ok_button.setToolTip("Save this text and approve it")
        elif self.kind.currentText() in GUIDANCE_KINDS:
            self.ok_button.setToolTip("Write a summary and when it applies first")
        else:
            self.ok_button.setToolTip("Write a summary first")

    def payload(self) -> dict[str, Any]:
        """The ``memory.save`` input: the edited record, replacing the proposal."""
        steps = [s.strip() for s in self.steps.toPlainText().splitlines() if s.strip()]
        scopes = [s.strip() for s in self.scopes.text().split(",") if s.strip()]
        payload: dict[str, Any] = {
            "kind": self.kind.currentText(),
            "topic": self.topic.text().strip(),
            "summary": self.summary.toPlainText().strip(),
            "details": self.details.toPlainText().strip(),
            "replaces": [self._record_id],
        }
        if self.applies_when.text().strip():
            payload["applies_when"] = self.applies_when.text().strip()
        if steps:
            payload["steps"] = steps
        if scopes:
            payload["scopes"] = scopes
        # What the proposal rests on, and a commitment's terms, stay with the edit.
        payload.update(carried(self._record, self.kind.currentText()))
        return payload


def ok_cancel_buttons(
    dialog: QtWidgets.QDialog,
    layout: QtWidgets.QBoxLayout | QtWidgets.QFormLayout,
    ok_text: str,
) -> QtWidgets.QPushButton:
    """The end of a dialog that asks for something: Cancel and an OK named for what it
    does (``ok_text``), added to ``layout``; returns the OK button to enable or not."""
    buttons = QtWidgets.QDialogButtonBox(
        QtWidgets.QDialogButtonBox.StandardButton.Ok
        | QtWidgets.QDialogButtonBox.StandardButton.Cancel
    )
    ok = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
    ok.setText(ok_text)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    if isinstance(layout, QtWidgets.QFormLayout):
        layout.addRow(buttons)
    else:
        layout.addWidget(buttons)
    return ok


def add_erase_controls(
    dialog: QtWidgets.QDialog, layout: QtWidgets.QBoxLayout
) -> tuple[QtWidgets.QLineEdit, QtWidgets.QPushButton]:
    """The end of a purge dialog: the reason (prefilled) and Cancel / Erase for good,
    the latter enabled only while a reason is given."""
    reason = QtWidgets.QLineEdit("erased by the owner")
    reason.setObjectName("reason")
    layout.addWidget(reason)
    buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
    erase = buttons.addButton(
        "Erase for good", QtWidgets.QDialogButtonBox.ButtonRole.DestructiveRole
    )
    erase.setObjectName("erase")
    erase.clicked.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    reason.textChanged.connect(lambda text: erase.setEnabled(bool(text.strip())))
    return reason, erase

"""The Settings dialog: data folder, embedding model, agent backend, Telegram token,
guidance budget and start at login (General), and the connectors (Connectors).

The dialog only gathers a ``SettingsChoice``; the desktop controller applies
it (settings file, keyring, autostart entry, re-embedding). The Telegram token
goes to the OS keyring and nowhere else: without a keyring the field is
disabled and the dialog says why. The Connectors page (``ui.settings.connectors_page``)
acts at once; Save keeps the connectors as that page left them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from app.local.settings import Settings
from app.telegram.config import ENV_TOKEN
from ui.palette import note_style
from ui.qt import Qt, QtCore, QtWidgets
from ui.settings.telegram_help import (
    environment_token_note,
    no_keyring_token_note,
    token_from_environment,
)

if TYPE_CHECKING:
    from ui.settings.connectors_page import ConnectorsPage

AGENT_BACKENDS: tuple[tuple[str, str], ...] = (
    ("command", "Commands only (no model)"),
    ("claude-code", "Claude Code CLI"),
    ("codex", "Codex CLI"),
    ("local-gguf", "Local GGUF chat model"),
)
"""(setting value, label) for each agent backend the owner can pick."""

BUILTIN_MODEL_LABELS: tuple[tuple[str, str], ...] = (
    ("multilingual-e5-small", "Multilingual (multilingual-e5-small)"),
    ("all-MiniLM-L6-v2", "English only (all-MiniLM-L6-v2)"),
)
"""(setting value, label) for each built-in embedding model."""


AGENT_SCOPES_LABEL = "Agent reads and saves in"
"""The agent's scopes, said as what they allow (a "scope" is a named part of the memory)."""


@dataclass(frozen=True)
class SettingsChoice:
    """What the owner chose; ``None`` fields mean "leave as it is"."""

    settings: Settings
    data_folder: Path | None
    """A new data folder (takes effect on the next start), or None to keep it."""
    telegram_token: str | None
    """A new token, ``""`` to forget the stored one, or None to keep it."""
    start_at_login: bool

    def model_changed(self, before: Settings) -> bool:
        return (
            self.settings.embedding_model_path != before.embedding_model_path
            or self.settings.embedding_model != before.embedding_model
        )


class SettingsDialog(QtWidgets.QDialog):
    """Edit the owner's settings."""

    def __init__(
        self,
        parent: QtWidgets.QWidget | None,
        *,
        settings: Settings,
        data_folder: Path,
        keyring_ok: bool,
        token_stored: bool,
        start_at_login: bool,
        connectors: ConnectorsPage | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settings_dialog")
        self.setMinimumWidth(560)
        self._settings = settings
        self._data_folder = data_folder
        self._keyring_ok = keyring_ok
        self._forget_token = False
        self.connectors_page = connectors

        outer = QtWidgets.QVBoxLayout(self)
        self.pages = QtWidgets.QTabWidget()
        self.pages.setObjectName("settings_pages")
        general = QtWidgets.QWidget()
        self.pages.addTab(general, "General")
        if connectors is not None:
            self.pages.addTab(connectors, "Connectors")
        outer.addWidget(self.pages)
        form = QtWidgets.QFormLayout(general)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)

        self.data_folder = QtWidgets.QLineEdit(str(data_folder))
        self.data_folder.setObjectName("data_folder")
        self.data_folder.setReadOnly(True)
        choose_folder = QtWidgets.QPushButton("Change…")
        choose_folder.clicked.connect(self._choose_folder)
        form.addRow("Data folder", self._row(self.data_folder, choose_folder))
        self.folder_note = QtWidgets.QLabel(
            "A new folder is used the next time MAMA starts; move your files there yourself."
        )
        self.folder_note.setWordWrap(True)
        self.folder_note.setVisible(False)
        form.addRow("", self.folder_note)

        self.builtin_model = QtWidgets.QComboBox()
        self.builtin_model.setObjectName("embedding_model")
        for value, label in BUILTIN_MODEL_LABELS:
            self.builtin_model.addItem(label, value)
        self.builtin_model.setCurrentIndex(
            max(self.builtin_model.findData(settings.embedding_model), 0)
        )
        form.addRow("Embedding model", self.builtin_model)
        model = settings.embedding_model_path
        self.model_path = QtWidgets.QLineEdit("" if model is None else str(model))
        self.model_path.setObjectName("model_path")
        self.model_path.setPlaceholderText("Optional: a GGUF file used instead")
        choose_model = QtWidgets.QPushButton("Browse…")
        choose_model.clicked.connect(self._choose_model)
        form.addRow("Model file", self._row(self.model_path, choose_model))
        model_note = QtWidgets.QLabel(
            "Multilingual finds a note written in one language from a question in another; "
            "English only is smaller. Changing the model re-embeds every memory (with a "
            "progress bar)."
        )
        model_note.setWordWrap(True)
        form.addRow("", model_note)

        self.backend = QtWidgets.QComboBox()
        self.backend.setObjectName("agent_backend")
        for value, label in AGENT_BACKENDS:
            self.backend.addItem(label, value)
        at = self.backend.findData(settings.agent_backend)
        if at < 0:
            self.backend.addItem(settings.agent_backend, settings.agent_backend)
            at = self.backend.count() - 1
        self.backend.setCurrentIndex(at)
        form.addRow("Agent backend", self.backend)

        chat = settings.local_model_path
        self.chat_model = QtWidgets.QLineEdit("" if chat is None else str(chat))
        self.chat_model.setObjectName("local_model_path")
        self.chat_model.setPlaceholderText("A GGUF chat model file, for the local backend")
        self.choose_chat_model = QtWidgets.QPushButton("Browse…")
        self.choose_chat_model.clicked.connect(self._choose_chat_model)
        form.addRow("Local chat model", self._row(self.chat_model, self.choose_chat_model))

        self.agent_scopes = QtWidgets.QLineEdit(", ".join(settings.agent_scopes))
        self.agent_scopes.setObjectName("agent_scopes")
        self.agent_scopes.setToolTip(
            "Where the agent may read and save, e.g. 'global, project:phoenix'; "
            "its saves go to the first."
        )
        form.addRow(AGENT_SCOPES_LABEL, self.agent_scopes)
        self.backend.currentIndexChanged.connect(self._backend_changed)
        self._backend_changed()

        self.token = QtWidgets.QLineEdit()
        self.token.setObjectName("telegram_token")
        self.token.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.forget_token = QtWidgets.QPushButton("Forget")
        self.forget_token.setObjectName("forget_token")
        self.forget_token.clicked.connect(self._forget)
        self.token_note = QtWidgets.QLabel()
        self.token_note.setObjectName("token_note")
        self.token_note.setWordWrap(True)
        self.token_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if token_from_environment():  # it wins over the keyring: a typed one would be ignored
            self.token.setEnabled(False)
            self.token.setPlaceholderText(f"From {ENV_TOKEN}")
            self.forget_token.setEnabled(keyring_ok and token_stored)
            self.token_note.setText(environment_token_note())
        elif keyring_ok:
            self.token.setPlaceholderText(
                "A token is stored; type a new one to replace it"
                if token_stored
                else "From @BotFather; kept in the OS keyring"
            )
            self.forget_token.setEnabled(token_stored)
            self.token_note.setText("The token is kept in the OS keyring, never in a file.")
        else:
            self.token.setEnabled(False)
            self.forget_token.setEnabled(False)
            self.token.setPlaceholderText("No OS keyring available")
            self.token_note.setText(no_keyring_token_note())
        form.addRow("Telegram bot token", self._row(self.token, self.forget_token))
        form.addRow("", self.token_note)

        self.budget = QtWidgets.QSpinBox()
        self.budget.setObjectName("guidance_budget")
        self.budget.setRange(100, 100_000)
        self.budget.setSingleStep(100)
        self.budget.setToolTip(
            "How much of your guidance (rules, preferences, workflows) goes to the agent "
            "with each message; the most relevant first. A token is about ¾ of a word."
        )
        self.budget.valueChanged.connect(self._budget_words)
        self.budget.setValue(settings.guidance_budget_tokens)
        self._budget_words(self.budget.value())
        form.addRow("Guidance per message", self.budget)

        self.autostart = QtWidgets.QCheckBox("Start MAMA when I log in")
        self.autostart.setObjectName("start_at_login")
        self.autostart.setChecked(start_at_login)
        form.addRow("", self.autostart)

        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Save
            | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.problem = QtWidgets.QLabel()
        self.problem.setObjectName("settings_problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(note_style("error"))
        self.problem.setVisible(False)
        outer.addWidget(self.problem)
        outer.addWidget(buttons)

    @staticmethod
    def _row(*widgets: QtWidgets.QWidget) -> QtWidgets.QWidget:
        holder = QtWidgets.QWidget()
        layout = QtWidgets.QHBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget, 1 if isinstance(widget, QtWidgets.QLineEdit) else 0)
        return holder

    def _choose_folder(self) -> None:
        dialog = QtWidgets.QFileDialog(self, "Choose the data folder", self.data_folder.text())
        dialog.setFileMode(QtWidgets.QFileDialog.FileMode.Directory)
        dialog.setOption(QtWidgets.QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.set_data_folder)
        dialog.open()

    def set_data_folder(self, folder: str) -> None:
        self.data_folder.setText(folder)
        self.folder_note.setVisible(Path(folder) != self._data_folder)

    def _choose_model(self) -> None:
        self._choose_gguf("Choose a GGUF embedding model", self.model_path)

    def _choose_chat_model(self) -> None:
        self._choose_gguf("Choose a GGUF chat model", self.chat_model)

    def _choose_gguf(self, title: str, field: QtWidgets.QLineEdit) -> None:
        start = field.text() or str(QtCore.QDir.homePath())
        dialog = QtWidgets.QFileDialog(self, title, start)
        dialog.setNameFilter("GGUF models (*.gguf)")
        dialog.setFileMode(QtWidgets.QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(field.setText)
        dialog.open()

    def _backend_changed(self) -> None:
        local = self.backend.currentData() in ("local", "local-gguf", "gguf")
        self.chat_model.setEnabled(local)
        self.choose_chat_model.setEnabled(local)

    def _forget(self) -> None:
        self._forget_token = True
        self.token.clear()
        self.token.setPlaceholderText("The stored token will be forgotten")
        self.forget_token.setEnabled(False)

    def _budget_words(self, tokens: int) -> None:
        """Say the budget in words too: "1500 tokens (about 1,100 words)"."""
        self.budget.setSuffix(f" tokens (about {round(tokens * 0.75, -2):,.0f} words)")

    def accept(self) -> None:
        """Close only with settings that are valid; otherwise say what is wrong."""
        try:
            self.choice()
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else "settings"
            label = {"agent_scopes": AGENT_SCOPES_LABEL}.get(field, field)
            self.problem.setText(f"{label}: {first['msg'].removeprefix('Value error, ')}.")
            self.problem.setVisible(True)
            return
        super().accept()

    def _connectors(self) -> dict[str, object]:
        """The connectors as the Connectors page left them (it saves its changes at once)."""
        page = self.connectors_page
        current = None if page is None else page.connectors()
        return {} if current is None else {"connectors": current}

    def choice(self) -> SettingsChoice:
        """The owner's choices as values (call after the dialog was accepted)."""
        model_text = self.model_path.text().strip()
        chat_text = self.chat_model.text().strip()
        settings = self._settings.model_copy(
            update={
                "embedding_model": str(self.builtin_model.currentData()),
                "embedding_model_path": Path(model_text).expanduser() if model_text else None,
                "agent_backend": str(self.backend.currentData()),
                "local_model_path": Path(chat_text).expanduser() if chat_text else None,
                "agent_scopes": tuple(
                    part.strip() for part in self.agent_scopes.text().split(",") if part.strip()
                ),
                "guidance_budget_tokens": int(self.budget.value()),
            }
            | self._connectors()
        )
        folder = Path(self.data_folder.text()).expanduser()
        token: str | None = None
        if self._keyring_ok:
            typed = self.token.text().strip()
            token = typed if typed else ("" if self._forget_token else None)
        return SettingsChoice(
            settings=Settings.model_validate(settings.model_dump()),
            data_folder=None if folder == self._data_folder else folder,
            telegram_token=token,
            start_at_login=self.autostart.isChecked(),
        )

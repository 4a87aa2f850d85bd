"""Settings' Connectors page: the sources MAMA reads, their health, and the owner's
controls (add, test, pause or resume, remove).

Everything a button does is ``app.admin.connectors`` — the functions behind
``mama connectors`` — so a connector added here is the one the CLI would add:
the same checks, its secrets in the OS keyring (never a file), the same test.
A change is saved at once (a running MAMA picks it up within seconds), not on
the dialog's Save. Store and keyring work runs on a worker thread and a Test's
network call on the qasync loop, so the window never freezes while a server
is slow.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.admin import connectors as admin
from app.connectors.base import listed
from app.durable.connector_store import ConnectorStore, Health
from app.local.settings import ConnectorConfig, Settings
from mama_core.errors import MamaError
from ui.palette import note_style
from ui.qt import Qt, QtWidgets, Signal
from ui.tasks import TaskGroup, await_dialog
from ui.words import counted, listing

log = logging.getLogger(__name__)

OpenStore = Callable[[], AbstractContextManager[ConnectorStore]]
"""Opens the connectors' store on the calling (worker) thread."""

KINDS: tuple[tuple[str, str], ...] = (
    ("trello", "Trello"),
    ("slack", "Slack"),
    ("mail", "Mail (IMAP)"),
    ("calendar", "Calendar (read only)"),
)
"""(kind, label) in the order the kind menu offers them."""


@dataclass(frozen=True)
class Field:
    """One option of a kind as a text field."""

    key: str
    label: str
    placeholder: str
    as_list: bool = False
    as_int: bool = False


FIELDS: dict[str, tuple[Field, ...]] = {
    "trello": (
        Field("boards", "Boards", "Board names or ids, comma-separated", as_list=True),
        Field("base_url", "API address", "Default: https://api.trello.com/1"),
    ),
    "slack": (
        Field("channels", "Channels", "#general, #launch (names or ids)", as_list=True),
        Field("base_url", "API address", "Default: Slack's; for a self-hosted proxy"),
    ),
    "mail": (
        Field("host", "IMAP server", "imap.gmail.com (TLS)"),
        Field("port", "Port", "Default: 993", as_int=True),
        Field("username", "User", "you@example.com"),
        Field("folders", "Folders", "Default: INBOX; e.g. INBOX, Projects", as_list=True),
    ),
    "calendar": (
        Field("url", "CalDAV server", "https://cloud.example.com/remote.php/dav"),
        Field("username", "User", "you@example.com"),
        Field("calendars", "Calendars", "Default: all; e.g. Work, Team", as_list=True),
    ),
}
"""The options the page asks for; the rest keep their defaults (``mama connectors add``
sets any of them)."""

CALENDAR_ADDRESS_FIELDS: tuple[Field, ...] = (
    Field("name", "Calendar name", "Default: the name the address gives"),
)
"""A calendar read from an iCalendar address (Google's secret address): the address
itself is its secret."""

SECRET_LABELS: dict[str, str] = {
    "token": "Token",
    "api_key": "API key",
    "password": "Password",
    "oauth_token": "OAuth2 token",
    "ics_url": "Secret iCal address",
}

COLUMNS = ("Name", "Kind", "State", "Items", "Last poll", "Problem")


def missing_secrets_line(name: str, missing: list[str], keyring_ok: bool) -> str:
    """Why ``name`` cannot be added yet, and the one way to give what it lacks here: type
    it (a keyring keeps it) or, with no keyring, the environment and a restart."""
    labels = listing([SECRET_LABELS.get(k, k) for k in missing]).lower().replace("api", "API")
    if keyring_ok:
        return f"{name} needs its {labels}: type {'them' if len(missing) > 1 else 'it'} above."
    variables = listing([admin.secret_variable(name, k) for k in missing])
    return (
        f"{name} needs its {labels}: set {variables} in MAMA's environment, then restart "
        "MAMA so it reads them."
    )


def _when(health: Health | None) -> str:
    if health is None or health.last_poll_at is None:
        return "never"
    return health.last_poll_at.astimezone().strftime("%Y-%m-%d %H:%M %Z")


def _problem(health: Health | None) -> str:
    """The source's problem and each broken part's (a channel, folder or board)."""
    return "" if health is None else health.problem_text()


class PickDialog(QtWidgets.QDialog):
    """Names read from the source, each with a tick box (the ones already typed ticked)."""

    def __init__(
        self, parent: QtWidgets.QWidget | None, title: str, choices: list[str], chosen: set[str]
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("connector_pick_dialog")
        layout = QtWidgets.QVBoxLayout(self)
        self.list = QtWidgets.QListWidget()
        self.list.setObjectName("connector_choices")
        for choice in choices:
            item = QtWidgets.QListWidgetItem(choice)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = choice in chosen
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        layout.addWidget(self.list)
        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Ok
            | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def set_checked(self, name: str, checked: bool = True) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item is not None and item.text() == name:
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def checked(self) -> list[str]:
        rows = (self.list.item(row) for row in range(self.list.count()))
        return [i.text() for i in rows if i is not None and i.checkState() == Qt.CheckState.Checked]


class ConnectorsPage(QtWidgets.QWidget):
    """The list of connectors with their health, and the form that adds one."""

    changed = Signal()
    """An action finished (the list and the status line are up to date)."""
    confirm_opened = Signal(object)
    """A confirmation (remove) is showing; the ``QMessageBox``."""
    picker_opened = Signal(object)
    """The list of boards or channels to tick is showing; the ``PickDialog``."""

    def __init__(
        self,
        settings_path: Path,
        open_store: OpenStore | None,
        *,
        keyring_ok: bool,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("connectors_page")
        self._path = settings_path
        self._open_store = open_store
        self._keyring_ok = keyring_ok
        self.settings = Settings()
        """The settings as last read or saved here (their ``connectors`` are current)."""
        self.health: dict[str, Health] = {}
        self.ready = False
        """The list was read (the settings file and the store): its connectors are current."""
        self._tasks = TaskGroup(self._failed)
        self._option_fields: dict[str, QtWidgets.QLineEdit] = {}
        self._secret_fields: dict[str, QtWidgets.QLineEdit] = {}

        layout = QtWidgets.QVBoxLayout(self)
        note = QtWidgets.QLabel(
            "MAMA reads what is new in these sources and keeps it as messages (the Messages "
            "tab). What a message says is never taken as your instruction: the agent may "
            "only propose memories from it, for you to review. Changes here take effect "
            "at once; a removed connector's messages stay until you erase them."
        )
        note.setWordWrap(True)
        layout.addWidget(note)

        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("connectors_table")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        layout.addWidget(self.table, 1)
        self.empty = QtWidgets.QLabel("No connectors yet: add Slack, mail or Trello below.")
        self.empty.setObjectName("connectors_empty")
        self.empty.setStyleSheet(note_style("muted"))
        layout.addWidget(self.empty)

        actions = QtWidgets.QHBoxLayout()
        self.test_button = QtWidgets.QPushButton("Test")
        self.test_button.setObjectName("connector_test")
        self.test_button.setToolTip("Check the credentials and picks; reads nothing")
        self.test_button.clicked.connect(self._test_clicked)
        self.pause_button = QtWidgets.QPushButton("Pause")
        self.pause_button.setObjectName("connector_pause")
        self.pause_button.clicked.connect(lambda: self._spawn(self.toggle_pause()))
        self.remove_button = QtWidgets.QPushButton("Remove…")
        self.remove_button.setObjectName("connector_remove")
        self.remove_button.clicked.connect(lambda: self._spawn(self.remove_selected()))
        refresh = QtWidgets.QPushButton("Refresh")
        refresh.clicked.connect(lambda: self._spawn(self.reload()))
        for button in (self.test_button, self.pause_button, self.remove_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(refresh)
        layout.addLayout(actions)

        self.status = QtWidgets.QLabel()
        self.status.setObjectName("connectors_status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)

        box = QtWidgets.QGroupBox("Add a connector")
        self.form = QtWidgets.QFormLayout(box)
        self.kind = QtWidgets.QComboBox()
        self.kind.setObjectName("connector_kind")
        for value, label in KINDS:
            self.kind.addItem(label, value)
        self.form.addRow("Kind", self.kind)
        self.name = QtWidgets.QLineEdit()
        self.name.setObjectName("connector_name")
        self.name.setPlaceholderText("e.g. work-trello (lower-case letters, digits, - and _)")
        self.form.addRow("Name", self.name)
        self.auth = QtWidgets.QComboBox()
        self.auth.setObjectName("connector_auth")
        self.auth.addItem("App password", "password")
        self.auth.addItem("OAuth2 token (XOAUTH2)", "xoauth2")
        self.calendar_source = QtWidgets.QComboBox()
        self.calendar_source.setObjectName("connector_calendar_source")
        self.calendar_source.addItem("CalDAV server", "caldav")
        self.calendar_source.addItem("iCalendar address (e.g. Google's secret address)", "ics")
        self.interval = QtWidgets.QSpinBox()
        self.interval.setObjectName("connector_interval")
        self.interval.setRange(1, 86_400)
        self.interval.setValue(60)
        self.interval.setSuffix(" s")
        self.add_button = QtWidgets.QPushButton("Add")
        self.add_button.setObjectName("connector_add")
        self.add_button.clicked.connect(lambda: self._spawn(self.add_from_form()))
        self.keyring_note = QtWidgets.QLabel()
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setStyleSheet(note_style("warning"))
        layout.addWidget(box)
        self.name.textChanged.connect(self._name_changed)
        self.kind.currentIndexChanged.connect(self._rebuild_form)
        self.auth.currentIndexChanged.connect(self._rebuild_form)
        self.calendar_source.currentIndexChanged.connect(self._rebuild_form)
        self._rebuild_form()
        self._show()
        if open_store is None:
            self.setEnabled(False)
            self._say("Connectors can be set up once the memory is open.", error=False)

    # --- the add form ---------------------------------------------------------------

    def _rebuild_form(self) -> None:
        """The rows of the chosen kind: its options, then its secrets."""
        while self.form.rowCount() > 2:
            row = self.form.takeRow(2)
            for item in (row.labelItem, row.fieldItem):
                widget = item.widget() if item is not None else None
                if widget is not None and widget not in (
                    self.auth,
                    self.calendar_source,
                    self.interval,
                    self.add_button,
                    self.keyring_note,
                ):
                    widget.deleteLater()
                elif widget is not None:
                    widget.setParent(None)
        kind = self.kind_value()
        self._option_fields = {}
        if kind == "calendar":
            self.form.addRow("Read from", self.calendar_source)
        for field in self._fields():
            edit = QtWidgets.QLineEdit()
            edit.setObjectName(f"connector_option_{field.key}")
            edit.setPlaceholderText(field.placeholder)
            self._option_fields[field.key] = edit
            if admin.PICKS.get(kind) != field.key:
                self.form.addRow(field.label, edit)
                continue
            holder = QtWidgets.QWidget()
            row = QtWidgets.QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(edit, 1)
            self.pick_button = QtWidgets.QPushButton("Choose…")
            self.pick_button.setObjectName("connector_pick")
            self.pick_button.setToolTip(
                f"List the {field.label.lower()} these credentials can read, and tick yours"
            )
            self.pick_button.clicked.connect(lambda: self._spawn(self.pick_from_source()))
            row.addWidget(self.pick_button)
            self.form.addRow(field.label, holder)
        if kind == "mail":
            self.form.addRow("Sign-in", self.auth)
        self._secret_fields = {}
        help_lines = admin.kind_options(kind)
        for key in self._secret_keys():
            edit = QtWidgets.QLineEdit()
            edit.setObjectName(f"connector_secret_{key}")
            edit.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
            edit.setToolTip(help_lines.get(f"secret:{key}", key))
            # Greyed out without a keyring: no hint to type into it, the note says why.
            edit.setPlaceholderText(
                "Kept in the OS keyring, never in a file" if self._keyring_ok else ""
            )
            edit.setEnabled(self._keyring_ok)
            self._secret_fields[key] = edit
            self.form.addRow(SECRET_LABELS.get(key, key), edit)
        if not self._keyring_ok:
            self._name_changed()
            self.form.addRow(self.keyring_note)
        self.form.addRow("Poll every", self.interval)
        self.form.addRow("", self.add_button)

    def _name_changed(self) -> None:
        """Without a keyring, name the variables that give this connector's secrets."""
        if self._keyring_ok:
            return
        variables = ", ".join(
            admin.secret_variable(self.name.text().strip() or "NAME", k)
            for k in self._secret_fields
        )
        self.keyring_note.setText(
            f"No OS keyring here, so these cannot be typed: set {variables} in MAMA's "
            "environment, then restart MAMA (Quit from the tray, start it again) so it "
            "reads them."
        )

    def kind_value(self) -> str:
        return str(self.kind.currentData())

    def option_field(self, key: str) -> QtWidgets.QLineEdit:
        return self._option_fields[key]

    def secret_field(self, key: str) -> QtWidgets.QLineEdit:
        return self._secret_fields[key]

    def shown_fields(self) -> tuple[list[str], list[str]]:
        """The option and secret keys the form asks for now, in order."""
        return list(self._option_fields), list(self._secret_fields)

    def _form_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        for field in self._fields():
            text = self._option_fields[field.key].text().strip()
            if not text:
                continue
            if field.as_list:
                options[field.key] = listed(text)
            elif field.as_int:
                if not text.isdigit():
                    raise admin.ConnectorOptionError(f"{field.label} is a number, not {text!r}.")
                options[field.key] = int(text)
            else:
                options[field.key] = text
        if self.kind_value() == "mail" and self.auth.currentData() == "xoauth2":
            options["auth"] = "xoauth2"
        return options

    def _fields(self) -> tuple[Field, ...]:
        """The option fields of the chosen kind (a calendar's depend on where it is read)."""
        kind = self.kind_value()
        if kind == "calendar" and self.calendar_source.currentData() == "ics":
            return CALENDAR_ADDRESS_FIELDS
        return FIELDS[kind]

    def _secret_keys(self) -> list[str]:
        kind = self.kind_value()
        options: dict[str, Any] = {"auth": self.auth.currentData()} if kind == "mail" else {}
        if kind == "calendar" and self.calendar_source.currentData() == "caldav":
            options = {"url": "caldav"}  # only whether a url is given decides the secret
        from app.connectors.kinds import secret_keys

        return secret_keys(kind, options)

    # --- actions ----------------------------------------------------------------------

    async def pick_from_source(self) -> None:
        """Ask the source what can be picked (Trello boards, Slack channels) with the
        typed credentials, and let the owner tick them into the field."""
        kind, name = self.kind_value(), self.name.text().strip()
        option = admin.PICKS.get(kind)
        if option is None:
            return
        try:
            options = {k: v for k, v in self._form_options().items() if k != option}
        except MamaError as exc:
            self._say(exc.message, error=True)
            self.changed.emit()
            return
        typed = {k: f.text() for k, f in self._secret_fields.items() if f.text()}

        def secret(key: str) -> str | None:
            from app.connectors.secrets import connector_secret

            return typed.get(key) or (connector_secret(name, key) if name else None)

        label = next((f.label.lower() for f in FIELDS[kind] if f.key == option), option)
        self.pick_button.setEnabled(False)
        self._say(f"Asking {dict(KINDS)[kind]} for your {label}…")
        try:
            choices = await admin.list_choices(kind, options, secret, name or "new")
        except MamaError as exc:
            self._say(exc.message, error=True)
            self.changed.emit()
            return
        finally:
            self.pick_button.setEnabled(True)
        field = self._option_fields[option]
        chosen = set(listed(field.text()))
        dialog = PickDialog(self, f"Choose {label}", choices, chosen)
        self._say(f"{counted(len(choices), label)} to choose from.")
        self.picker_opened.emit(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        picked = dialog.checked()
        dialog.deleteLater()
        if accepted:
            kept = [c for c in listed(field.text()) if c not in choices]  # typed by hand
            field.setText(", ".join([*picked, *kept]))
        self.changed.emit()

    def _spawn(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    def _failed(self, exc: BaseException) -> None:
        log.warning("connector action failed: %s", type(exc).__name__, exc_info=exc)
        self._say(f"That did not work: {type(exc).__name__}: {exc}", error=True)
        self.changed.emit()

    async def _in_store(self, work: Callable[[ConnectorStore], Any]) -> Any:
        """Run ``work`` with the connectors' store on a worker thread."""
        assert self._open_store is not None
        opener = self._open_store

        def run() -> Any:
            with opener() as store:
                return work(store)

        return await asyncio.to_thread(run)

    async def reload(self) -> None:
        """Read the settings file and every connector's health again."""
        if self._open_store is None:
            return
        path = self._path

        def read(store: ConnectorStore) -> tuple[Settings, list[Health]]:
            return Settings.load(path), store.all_health()

        settings, health = await self._in_store(read)
        self.ready = True
        self.settings = settings
        self.health = {h.name: h for h in health}
        self._show()
        self.changed.emit()

    async def add_from_form(self) -> None:
        """Add the connector the form describes; its secrets go to the keyring."""
        kind, name = self.kind_value(), self.name.text().strip()
        try:
            options = self._form_options()
        except MamaError as exc:
            self._say(exc.message, error=True)
            self.changed.emit()
            return
        typed = {k: f.text() for k, f in self._secret_fields.items() if f.text()}
        path, interval = self._path, float(self.interval.value())
        keyring_ok = self._keyring_ok

        def add(store: ConnectorStore) -> tuple[Settings, list[Health], list[str]]:
            current = Settings.load(path)
            config = admin.new_connector(current, kind, name, options, interval_s=interval)
            missing = [k for k in admin.missing_secrets(config) if k not in typed]
            if missing:
                raise admin.ConnectorOptionError(missing_secrets_line(name, missing, keyring_ok))
            for key, value in typed.items():
                admin.keep_secret(name, key, value)
            saved = admin.add_connector(current, config, path)
            return saved, store.all_health(), missing

        try:
            settings, health, _ = await self._in_store(add)
        except MamaError as exc:
            self._say(exc.message, error=True)
            self.changed.emit()
            return
        self.settings = settings
        self.health = {h.name: h for h in health}
        for field in (*self._option_fields.values(), *self._secret_fields.values(), self.name):
            field.clear()
        self._show(select=name)
        self._say(f"Added {name}; MAMA starts reading it. Test it to check its sign-in.")
        self.changed.emit()

    def selected_name(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        return None if item is None else item.text()

    def select(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == name:
                self.table.selectRow(row)
                return

    def _test_clicked(self) -> None:
        name = self.selected_name()
        if name is not None and self.settings.connector(name) is not None:
            self.test_button.setEnabled(False)
            self._say(f"Testing {name}…")  # at once: the answer may take a while
            self._spawn(self.test_selected())

    async def test_selected(self) -> None:
        """``mama connectors test`` for the selected connector: one line, ok or why not."""
        name = self.selected_name()
        config = self.settings.connector(name) if name else None
        if config is None:
            return
        self.test_button.setEnabled(False)
        self._say(f"Testing {name}…")
        try:
            summary = await admin.check_connector(config)
        except MamaError as exc:
            self._say(f"Test failed: {exc.message}", error=True)
        else:
            self._say(f"Test passed: {name}: {summary}")
        finally:
            self.test_button.setEnabled(True)
            self.changed.emit()

    async def toggle_pause(self) -> None:
        """Pause the selected connector, or resume it (also after fixing a problem)."""
        name = self.selected_name()
        config = self.settings.connector(name) if name else None
        if config is None:
            return
        health = self.health.get(config.name)
        pause = not (health is not None and health.owner_paused)

        def change(store: ConnectorStore) -> list[Health]:
            admin.set_paused(store, config, pause)
            return store.all_health()

        self.health = {h.name: h for h in await self._in_store(change)}
        self._show(select=config.name)
        self._say(f"{config.name}: {'paused' if pause else 'resumed'}.")
        self.changed.emit()

    async def remove_selected(self) -> None:
        """Remove the selected connector after the owner confirms; its items stay."""
        name = self.selected_name()
        if name is None or self.settings.connector(name) is None:
            return
        box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Question,
            "Remove connector",
            f"Remove {name}? MAMA stops reading it and forgets its secrets.\n\n"
            "What it already stored stays in the memory until you purge it "
            "(mama purge --observation ID).",
            QtWidgets.QMessageBox.StandardButton.Yes | QtWidgets.QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("connector_remove_confirm")
        box.setDefaultButton(QtWidgets.QMessageBox.StandardButton.Cancel)
        self.confirm_opened.emit(box)
        answer = await await_dialog(box)
        box.deleteLater()
        if answer != QtWidgets.QMessageBox.StandardButton.Yes:
            self.changed.emit()
            return
        path = self._path

        def remove(store: ConnectorStore) -> tuple[admin.Removed, list[Health]]:
            removed = admin.remove_connector(Settings.load(path), name, path, store)
            return removed, store.all_health()

        try:
            removed, health = await self._in_store(remove)
        except MamaError as exc:
            self._say(exc.message, error=True)
            self.changed.emit()
            return
        self.settings = removed.settings
        self.health = {h.name: h for h in health}
        self._show()
        self._say(
            f"Removed {name}. The {removed.observations_kept} item(s) it stored stay "
            "until you purge them."
        )
        self.changed.emit()

    async def aclose(self) -> None:
        await self._tasks.aclose()

    # --- showing ----------------------------------------------------------------------

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(note_style("error") if error else "")
        self.status.setProperty("error", error)

    def _show(self, select: str | None = None) -> None:
        keep = select or self.selected_name()
        configs = self.settings.connectors
        self.table.setRowCount(len(configs))
        for row, config in enumerate(configs):
            health = self.health.get(config.name)
            state = health.state if health else "not polled yet"
            if not config.enabled:
                state += " (disabled)"
            cells = (
                config.name,
                config.kind,
                state,
                str(health.items_stored if health else 0),
                _when(health),
                _problem(health),
            )
            for column, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                item.setToolTip(admin.health_line(config, health))
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self.empty.setVisible(not configs)
        self.table.setVisible(bool(configs))
        if keep:
            self.select(keep)
        self._selection_changed()

    def _selection_changed(self) -> None:
        name = self.selected_name()
        chosen = name is not None and self.settings.connector(name) is not None
        for button in (self.test_button, self.pause_button, self.remove_button):
            button.setEnabled(chosen)
        health = self.health.get(name) if name else None
        self.pause_button.setText(
            "Resume" if health is not None and health.owner_paused else "Pause"
        )

    def connectors(self) -> tuple[ConnectorConfig, ...] | None:
        """The connectors as saved now (the dialog's Save keeps them), or None before the
        page could read them (then Save keeps the ones it was given)."""
        return self.settings.connectors if self.ready else None

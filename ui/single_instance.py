"""One desktop app per data folder: a second launch shows the first one's window and exits.

The first instance listens on a local socket named after the user and the
data folder; a later ``mama`` connects, says ``show`` (``mama open chat``:
``chat``), waits for ``ok`` and exits 0. A socket left behind by a crashed
instance is removed before listening again.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
from pathlib import Path

from ui.qt import QtCore, QtNetwork, Signal

log = logging.getLogger(__name__)

SHOW = b"show\n"
CHAT = b"chat\n"
"""``mama open chat``: show the chat window instead of the review window."""
OK = b"ok\n"


def server_name(home: Path) -> str:
    """The socket name for the app over ``home`` (per user, per data folder)."""
    digest = hashlib.sha256(str(Path(home).absolute()).encode("utf-8")).hexdigest()[:16]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    return f"mama-{user}-{digest}"


class SingleInstance(QtCore.QObject):
    """The local socket that makes later launches hand over to this one."""

    show_requested = Signal()
    chat_requested = Signal()

    def __init__(self, name: str, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server: QtNetwork.QLocalServer | None = None

    def ask_running_instance(self, timeout_ms: int = 1500, request: bytes = SHOW) -> bool:
        """True if another instance answered and will show its window (``request``:
        ``SHOW`` the review window, or ``CHAT`` the chat window)."""
        socket = QtNetwork.QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(request)
        socket.waitForBytesWritten(timeout_ms)
        answered = socket.waitForReadyRead(timeout_ms) and bytes(socket.readAll().data()) == OK
        socket.disconnectFromServer()
        return answered

    def listen(self) -> bool:
        """Start answering later launches; False if the socket cannot be made."""
        server = QtNetwork.QLocalServer(self)
        server.setSocketOptions(QtNetwork.QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # Left behind by an instance that crashed: nobody answered on it.
            QtNetwork.QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                log.warning("single-instance socket unavailable: %s", server.errorString())
                return False
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def _accept(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QtNetwork.QLocalSocket) -> None:
        data = bytes(socket.readAll().data())
        if CHAT.strip() in data:
            socket.write(OK)
            socket.flush()
            self.chat_requested.emit()
        elif SHOW.strip() in data:
            socket.write(OK)
            socket.flush()
            self.show_requested.emit()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

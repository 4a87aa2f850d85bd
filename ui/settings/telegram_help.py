"""Where the Telegram bot token can come from, in the words the wizard, Settings and
the Pair dialog show.

With an OS keyring the token is typed once and kept there. Without one (no
Secret Service on D-Bus: a server, a minimal desktop, a container) MAMA will not
write the token to a file, so the one way left is ``MAMA_TELEGRAM_TOKEN`` in the
environment the app or ``mama daemon`` starts in. Saying only "no keyring" sent
the owner from the Pair dialog to Settings and back; these texts say what to set
and where. No Qt here.
"""

from __future__ import annotations

import os

from app.telegram.config import ENV_TOKEN


def token_from_environment() -> bool:
    """Whether ``MAMA_TELEGRAM_TOKEN`` gives the token (it wins over the keyring)."""
    return bool(os.environ.get(ENV_TOKEN, "").strip())


def environment_token_note() -> str:
    """The token already comes from the environment: typing one here would be ignored."""
    return (
        f"The bot token comes from <tt>{ENV_TOKEN}</tt> in MAMA's environment; MAMA does "
        "not store it. To change it, change that variable and start MAMA again."
    )


def no_keyring_token_note() -> str:
    """No keyring: what to set instead, and where."""
    return (
        "No OS keyring is available here (no Secret Service such as gnome-keyring or "
        "KWallet is running), so MAMA cannot keep a bot token and will not write it to a "
        f"file.<br>Instead, set <tt>{ENV_TOKEN}</tt> to the token @BotFather gave you, in "
        "the environment MAMA starts in, for example:"
        f"<br>• <tt>export {ENV_TOKEN}=…</tt> in <tt>~/.profile</tt> (then log in again)"
        f"<br>• <tt>{ENV_TOKEN}=… mama</tt> in a terminal"
        f"<br>• <tt>Environment={ENV_TOKEN}=…</tt> in the service that runs "
        "<tt>mama daemon</tt>"
        "<br>Then start MAMA again. MAMA reads the token from there and does not store it."
    )


def missing_token_note(keyring_ok: bool) -> str:
    """The Pair dialog with no token at all: where to put one."""
    if keyring_ok:
        return (
            "No Telegram bot token is set. Create a bot with @BotFather, put its token "
            "in Settings…, then come back here to pair."
        )
    return "No Telegram bot token is set.<br>" + no_keyring_token_note()

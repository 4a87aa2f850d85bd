"""The Telegram gateway: python-telegram-bot on the app's loop, one paired owner."""

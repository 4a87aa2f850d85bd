"""Running MAMA: one owner runtime per data folder with its Telegram gateway (host),
without a window (daemon), and one owner turn at the desk (desk). The top of ``app``."""

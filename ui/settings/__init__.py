"""Settings: the dialog and its pages, and applying what the owner chose there."""

"""What MAMA keeps and reads on this machine: the data folder and cache (paths), the
key, the settings file, logs and their redaction, the chain anchor's copies, and which
build this is. Below everything else in ``app`` (it imports none of it)."""

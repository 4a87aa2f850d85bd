"""The owner's administration, shared by the CLI and the desktop app: the connectors'
control (add, test, pause, remove) and the registry of every file that can hold the
owner's text (for purge and doctor). Above the durable tables and the backends."""

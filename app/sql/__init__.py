"""The app's own migration series (``app.durable.schema``): numbered SQL files for the
tables the app owns, applied after the core's, versioned in ``meta`` (``schema:app``)."""

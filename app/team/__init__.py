"""The team store (issue 29, preview): a team's shared memory on PostgreSQL + pgvector.

The owner's personal store stays the local encrypted SQLite file; only what is saved
into a ``team:`` scope goes here. Each member connects as their own PostgreSQL role,
and row-level security lets a role read and write only rows bound to the scopes it was
granted. psycopg is a network driver, so this lives in ``app``, not ``mama_core``; it
reuses the core's pure parts (canonical hashing, fusion, the embedder).
"""

"""The runtime's durable tables: the mailbox of inputs, the delivery journal, small
runtime values (cursors, session ids, the pause flag), the purge watch and the
proposal feed — all SQL, no transport and no agent — and the app's own migration
series that shapes them (``schema``). Everything else in ``app/`` builds on them;
they import nothing of ``app/`` but each other."""

"""The run history: rows, the stores that keep them, and the ledger that changes their status.

``records`` (``RunRecord``, ``RowChanges``, the ``RunStore`` protocol), ``capabilities`` (the
optional store abilities, probed once), the stores (``sqlite``: ``SqliteStore`` and
``open_store``; ``postgres``; ``memory``) and their column ``codec``; ``ledger`` (the only code
that changes a run's status), ``writer`` (history writes off the event loop, batched),
``ownership`` and ``heartbeat`` (owners, leases), ``binding`` (the MAC of a pending run),
``runs`` (show, wait, cancel), ``expiry`` (pending runs nobody answers), ``checkpoint``
(SQLite WAL checkpoints) and ``queue`` (the PostgreSQL task queue of background runs and the
periodic sweep).

It never imports the pipeline, execution, the server, the CLI or the worker front end.
"""

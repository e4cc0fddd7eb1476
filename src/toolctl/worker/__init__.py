"""The background worker: a front end, next to the CLI and the server.

``local`` is the process a background run starts on this machine
(``python -m toolctl.worker.local``); ``queued`` is ``toolctl worker``, which takes runs from a
PostgreSQL history's task queue on any machine. Both continue runs through
:mod:`toolctl.runtime.pipeline.handoff`; nothing in :mod:`toolctl.runtime` imports them.
"""

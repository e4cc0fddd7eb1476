"""Execution: load a tool's handler and run it, in process, isolated, or in a background worker.

``executor`` (:class:`~toolctl.runtime.pipeline.executor.Executor`: what the pipeline calls),
``loading`` (importing user code), ``invoke`` (handler threads, timeouts, ``off_loop``),
``sync`` (the one sync→async bridge, ``run_sync``), ``httpcall`` (the built-in HTTP handler),
``background`` (handing a run to a worker: ``spawn``, the runtime's ``WorkerProcesses``) and
``isolation/`` (``isolation: subprocess``: ``caller``, ``supervisor``, ``child``, ``capture``,
``limits``, ``proctree``).

It never imports the pipeline, the server, the CLI or the worker front end.
"""

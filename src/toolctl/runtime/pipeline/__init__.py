"""The call pipeline: one run of one tool, step by step (DESIGN §3).

:class:`~toolctl.runtime.pipeline.call.Call` (``call``) writes the steps out once; each
collaborator acting on its :class:`~toolctl.runtime.pipeline.state.RunState` (``state``) has a
module: ``views`` and ``transforms`` (what UIs, transcripts and models see), ``validation``
and ``output`` (schema checks, ``toModelOutput``), ``hooks``, ``approval``, ``suspension``,
``recording`` (the history rows, through the ledger), ``ratelimit`` and ``tracing``. ``plan``
is the per-tool work done once (``validator_for``, transforms, redactors); ``start`` builds a
call for a registry (its store and ``CallSite``); ``handoff`` continues a run handed to a
background worker.

Other layers use :mod:`toolctl.runtime` (the public API); the server and the CLI may also use
``start`` (``resolve_store``, ``locator``), ``plan`` and ``transforms``. It never imports the
server, the CLI or the worker front end.
"""

"""``isolation: subprocess``: a handler in a child process that a timeout really stops.

``caller`` (``run_isolated``: the calling side), ``supervisor`` (``python -m
toolctl.runtime.execution.isolation.supervisor``), ``child`` (the handler's process),
``capture`` (bounded output and result buffers), ``limits`` (``run:`` resource limits),
``proctree`` (ending a whole process tree). docs/architecture.md has the guarantees.
"""

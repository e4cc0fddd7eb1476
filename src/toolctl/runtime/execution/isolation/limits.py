"""Resource limits for ``isolation: subprocess`` handlers (``run:`` in toolctl.yaml).

The handler's process sets them on itself before it imports the handler, so a tool that
allocates far too much gets a ``MemoryError`` (the run ends ``failed``) instead of taking the
machine, or the server, down with it. Each limit is set hard (soft = hard), so the handler cannot
raise it again, and is inherited by every process the handler starts:

* ``RLIMIT_AS`` bounds the address space (default 1 GiB, ``run.memoryLimitMb``; ``null`` for no
  limit);
* ``RLIMIT_CPU`` follows the run's timeout (rounded up, plus one second), a backstop behind the
  caller's wall-clock deadline: past it the kernel kills the process;
* ``RLIMIT_CORE`` is 0: a crashing handler leaves no core file (of up to its memory limit).

``RLIMIT_NPROC`` is deliberately not set: it counts every process of the user on the machine,
not the handler's, so any useful value would make the handler's ``fork`` fail whenever the user
runs other programs. Nor is ``RLIMIT_FSIZE``: writing files is what many tools are for. Limits
are POSIX only: elsewhere they are not set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.budget import DEFAULT_BUDGET_MS
from toolctl.config import (
    DEFAULT_MEMORY_LIMIT_MB,
    MIB,
    calls_per_minute,
    memory_limit_mb,
    validation_budget_ms,
)

if TYPE_CHECKING:
    from toolctl.runtime.history.records import HasProject

CPU_GRACE_S = 1  # the CPU limit is a backstop: the wall-clock deadline should fire first


@dataclass(frozen=True)
class ResourceLimits:
    """Limits for an isolated handler's process; ``None`` leaves a limit unset. Also the CPU
    budget of one call's input and output validation (``run.validationBudgetMs``)."""

    memory_mb: int | None = DEFAULT_MEMORY_LIMIT_MB
    validation_budget_ms: int = DEFAULT_BUDGET_MS
    calls_per_minute: int | None = None  # limits.callsPerMinute: every tool's default rate limit

    def for_child(self, timeout: float | None) -> dict[str, int | None]:
        """What the child sets: address space in bytes, CPU seconds (from the timeout)."""
        return {
            "memory_bytes": None if self.memory_mb is None else self.memory_mb * MIB,
            "cpu_seconds": None if timeout is None else math.ceil(timeout) + CPU_GRACE_S,
        }


def limits_of(registry: HasProject) -> ResourceLimits:
    """The limits in the registry project's ``run:`` section (defaults without a project)."""
    project = getattr(registry, "project", None)
    if project is None:
        return ResourceLimits()
    where = str(project.config_file or "toolctl.yaml")
    memory = memory_limit_mb(project.settings, lambda: where)  # checks that run is a mapping
    budget = validation_budget_ms(project.settings, lambda: where)
    rate = calls_per_minute(project.settings, lambda: where)
    return ResourceLimits(memory_mb=memory, validation_budget_ms=budget, calls_per_minute=rate)


def apply_in_child(limits: dict[str, Any] | None) -> None:
    """Set the limits, hard, on the current process (the handler's); a no-op off POSIX."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits
        return
    limits = limits or {}
    for name, value in (
        ("RLIMIT_AS", limits.get("memory_bytes")),
        ("RLIMIT_CPU", limits.get("cpu_seconds")),
        ("RLIMIT_CORE", 0),
    ):
        kind = getattr(resource, name, None)
        if value is None or kind is None:
            continue
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)  # an unprivileged process cannot raise its hard limit
        resource.setrlimit(kind, (value, value))


def memory_error_message(limits: dict[str, Any] | None) -> str:
    """The message of a handler that ran out of its memory limit."""
    cap = (limits or {}).get("memory_bytes")
    if cap is None:
        return "MemoryError: the handler ran out of memory"
    return (
        f"MemoryError: the handler exceeded its memory limit of {cap // MIB} MiB "
        "(run.memoryLimitMb in toolctl.yaml)"
    )

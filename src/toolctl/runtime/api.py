"""The Python API of the runtime: call, acall, resume, approve, decline, get_run, wait.

New calls are here; continuing pending runs is in :mod:`toolctl.runtime.pending` and building
a call for a registry in :mod:`toolctl.runtime.calls` (both re-exported here).

``Registry.call``/``acall`` forward here. ``store`` chooses the run history:

* ``None`` (default): the registry's SQLite history (``state`` in toolctl.yaml, by default
  ``.toolctl/state.db`` in the project); a registry without a project keeps runs in memory;
* ``False``: history off. Pending runs (awaiting approval, suspended) are kept in this process;
* a path, or a store object (:class:`~toolctl.runtime.store.SqliteStore`, ``MemoryStore``).
"""

from __future__ import annotations

from typing import Any

from toolctl.runtime import history
from toolctl.runtime.calls import locator as locator
from toolctl.runtime.calls import new_call
from toolctl.runtime.calls import resolve_store as resolve_store
from toolctl.runtime.pending import aapprove as aapprove
from toolctl.runtime.pending import approve as approve
from toolctl.runtime.pending import aresume as aresume
from toolctl.runtime.pending import decline as decline
from toolctl.runtime.pending import resume as resume
from toolctl.runtime.pipeline import Approver, OnSuspend, Progress, drive
from toolctl.runtime.result import RunResult


def call(
    registry: Any,
    name: str,
    input: Any = None,
    *,
    context: Any = None,
    approve: bool | None = None,
    decline: bool | str | None = None,
    timeout: float | None = None,
    background: bool = False,
    store: Any = None,
    approver: Approver | None = None,
    on_suspend: OnSuspend | None = None,
    on_progress: Progress | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run tool ``name`` with ``input`` (a dict or a JSON string) and return its result.

    Never raises for a tool problem (bad arguments, handler error, timeout): the result carries
    ``status`` and ``error``. Raises :class:`~toolctl.errors.ToolctlError` for caller mistakes
    (unknown tool, unusable history) and :class:`RunCancelled` on Ctrl-C.
    """
    c = new_call(
        registry,
        name,
        store,
        True,
        context=context,
        approve=approve,
        decline=decline,
        timeout=timeout,
        background=background,
        approver=approver,
        on_suspend=on_suspend,
        on_progress=on_progress,
        run_id=run_id,
    )
    return drive(c.run(input))


async def acall(
    registry: Any,
    name: str,
    input: Any = None,
    *,
    context: Any = None,
    approve: bool | None = None,
    decline: bool | str | None = None,
    timeout: float | None = None,
    background: bool = False,
    store: Any = None,
    approver: Approver | None = None,
    on_suspend: OnSuspend | None = None,
    on_progress: Progress | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Async :func:`call`: sync handlers run in a thread, so the event loop stays free."""
    c = new_call(
        registry,
        name,
        store,
        False,
        context=context,
        approve=approve,
        decline=decline,
        timeout=timeout,
        background=background,
        approver=approver,
        on_suspend=on_suspend,
        on_progress=on_progress,
        run_id=run_id,
    )
    with history.active():
        return await c.run(input)


# ---------------------------------------------------------------- reading runs back


def get_run(registry: Any, run_id: str, *, store: Any = None) -> RunResult:
    """The recorded run ``run_id`` (or a unique prefix) as a :class:`RunResult`, as it is now.

    See :func:`toolctl.runtime.runs.to_result` for what a stored result holds.
    """
    from toolctl.runtime import runs

    return runs.to_result(resolve_store(registry, store).get(run_id))


def wait(
    registry: Any, run_id: str, timeout: float | None = None, *, store: Any = None
) -> RunResult:
    """Wait until run ``run_id`` is no longer running (a background run: until its worker ends
    it) and return its result; :class:`TimeoutError` after ``timeout`` seconds."""
    from toolctl.runtime import runs

    return runs.to_result(runs.wait(resolve_store(registry, store), run_id, timeout))

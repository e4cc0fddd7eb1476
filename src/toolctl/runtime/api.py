"""The Python API of the runtime: call, acall, resume, approve, decline, get_run, wait.

New calls are here; continuing pending runs is in :mod:`toolctl.runtime.pending` and building
a call for a registry in :mod:`toolctl.runtime.pipeline.start` (both re-exported here).

``call``/``acall`` take the call's options as a :class:`~toolctl.runtime.options.CallOptions`
or, as a convenience that builds one, as keywords::

    registry.call("search", {"q": "x"}, CallOptions(approve=True, store=False))
    registry.call("search", {"q": "x"}, approve=True, store=False)   # the same call

The ``store`` option chooses the run history:

* ``None`` (default): the registry's SQLite history (``state`` in toolctl.yaml, by default
  ``.toolctl/state.db`` in the project); a registry without a project keeps runs in memory;
* ``False``: history off. Pending runs (awaiting approval, suspended) are kept in this process;
* a path, or a store object (:class:`~toolctl.runtime.history.sqlite.SqliteStore`, ``MemoryStore``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctl.runtime.history import writer as history
from toolctl.runtime.options import CallOptions as CallOptions
from toolctl.runtime.options import build as build_options
from toolctl.runtime.pending import aapprove as aapprove
from toolctl.runtime.pending import approve as approve
from toolctl.runtime.pending import aresume as aresume
from toolctl.runtime.pending import decline as decline
from toolctl.runtime.pending import resume as resume
from toolctl.runtime.pipeline.start import locator as locator
from toolctl.runtime.pipeline.start import new_call
from toolctl.runtime.pipeline.start import resolve_store as resolve_store
from toolctl.runtime.pipeline.state import RunCancelled as RunCancelled
from toolctl.runtime.result import RunResult
from toolctl.runtime.sync import run_sync

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.runtime.options import CallKeywords, StoreChoice
    from toolctl.runtime.source import ToolSource


def call(
    registry: ToolSource,
    name: str,
    input: Any = None,
    options: CallOptions | None = None,
    **keywords: Unpack[CallKeywords],
) -> RunResult:
    """Run tool ``name`` with ``input`` (a dict or a JSON string) and return its result.

    ``options`` and/or the keywords of :class:`CallOptions` say how. Never raises for a tool
    problem (bad arguments, handler error, timeout): the result carries ``status`` and
    ``error``. Raises :class:`~toolctl.errors.ToolctlError` for caller mistakes (unknown tool,
    unusable history) and :class:`RunCancelled` on Ctrl-C.
    """
    c = new_call(registry, name, build_options(options, keywords))
    return run_sync(c.run(input), c.cancelled_error)


async def acall(
    registry: ToolSource,
    name: str,
    input: Any = None,
    options: CallOptions | None = None,
    **keywords: Unpack[CallKeywords],
) -> RunResult:
    """Async :func:`call`: sync handlers run in a thread, so the event loop stays free."""
    c = new_call(registry, name, build_options(options, keywords))
    with history.active():
        return await c.run(input)


# ---------------------------------------------------------------- reading runs back


def get_run(registry: ToolSource, run_id: str, *, store: StoreChoice = None) -> RunResult:
    """The recorded run ``run_id`` (or a unique prefix) as a :class:`RunResult`, as it is now.

    See :func:`toolctl.runtime.history.runs.to_result` for what a stored result holds.
    """
    from toolctl.runtime.history import runs

    return runs.to_result(resolve_store(registry, store).get(run_id))


def wait(
    registry: ToolSource,
    run_id: str,
    timeout: float | None = None,
    *,
    store: StoreChoice = None,
) -> RunResult:
    """Wait until run ``run_id`` is no longer running (a background run: until its worker ends
    it) and return its result; :class:`TimeoutError` after ``timeout`` seconds."""
    from toolctl.runtime.history import runs

    return runs.to_result(runs.wait(resolve_store(registry, store), run_id, timeout))

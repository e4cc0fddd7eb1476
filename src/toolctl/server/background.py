"""Background tools over MCP: the runtime hands the run to a worker process; the call waits for
it, reports progress while it runs, and cancels the run when the client cancels the call.

A replica that starts draining stops waiting: the call answers with the run id and status
``running`` (:func:`toolctl.server.results.handed_off_text`), and the run goes on on its worker.
Being cut off because this replica stops is not the client cancelling: the run is not cancelled.

(MCP tasks would let the client collect the result later; the server does not offer them yet.)
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.registry import Registry
    from toolctl.runtime import RunResult
    from toolctl.runtime.history.records import RunStore
    from toolctl.server.drain import Drain

POLL_START, POLL_MAX, SWEEP_EVERY = 0.05, 1.0, 5.0


async def wait_for_run(
    registry: Registry,
    started: RunResult,
    ctx: ServerRequestContext[Any, Any],
    progress: bool,
    drain: Drain | None = None,
) -> RunResult:
    """The result of the background run ``started``, once its worker has finished it; or, once
    ``drain`` is active, the run as it stands (still ``running``, on its worker)."""
    from toolctl.runtime.api import resolve_store
    from toolctl.runtime.history.runs import cancel, sweep_if_lost, to_result

    store = resolve_store(registry)
    run_id, begin, poll, swept = started.run_id, time.monotonic(), POLL_START, time.monotonic()
    try:
        while True:
            record = await anyio.to_thread.run_sync(store.get, run_id)
            if record.status != "running" or (drain is not None and drain.active):
                return to_result(record)
            now = time.monotonic()
            if now - swept > SWEEP_EVERY:  # a worker that died becomes interrupted
                await anyio.to_thread.run_sync(sweep_if_lost, store, record)
                swept = now
            if progress:
                await ctx.session.report_progress(
                    round(now - begin, 1), None, f"running in the background (run {run_id})"
                )
            await anyio.sleep(poll)
            poll = min(poll * 1.5, POLL_MAX)
    except anyio.get_cancelled_exc_class():
        if drain is not None and drain.active:
            raise  # this replica is stopping, not the client cancelling: the run goes on
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_cancel_quietly, cancel, store, run_id)
        raise


def _cancel_quietly(cancel: Any, store: RunStore, run_id: str) -> None:
    from toolctl.runtime.errors import RunStateError

    with contextlib.suppress(RunStateError):  # it ended meanwhile: nothing to cancel
        cancel(store, run_id)

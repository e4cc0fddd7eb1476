"""Pending runs nobody answers: a run ``awaiting_approval`` or ``suspended`` for longer than
``run.approvalTtl`` (7 days by default) ends ``cancelled`` with an ``expired`` error saying
why, so an orphaned approval (the client that asked went away for good) does not wait forever
holding its raw input.

A transition of the run ledger (``awaiting_approval``/``suspended`` → ``cancelled``,
:func:`toolctl.runtime.history.ledger.expire`), one compare-and-set on the status, so an approval or
resume that lands at the same moment wins or loses cleanly and never both. The periodic sweep
of ``toolctl serve`` and ``toolctl worker`` runs it
(:func:`toolctl.runtime.history.queue.sweeping`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from toolctl.runtime.history import ledger
from toolctl.runtime.history.codec import MAX_QUERY_LIMIT
from toolctl.runtime.result import ErrorCode, RunStatus

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RunRecord, RunStore

PENDING = (RunStatus.AWAITING_APPROVAL, RunStatus.SUSPENDED)


def _error(rec: RunRecord, ttl: float) -> dict[str, object]:
    waited = _duration(ttl)
    if rec.status == RunStatus.SUSPENDED.value:
        what = (
            f"nobody resumed this run within run.approvalTtl ({waited}); the handler did not go on"
        )
    else:
        what = (
            f"nobody approved or declined this run within run.approvalTtl ({waited}); "
            "the tool did not run"
        )
    return {
        "code": ErrorCode.EXPIRED.value,
        "message": f"{what}. Call the tool again if it is still wanted.",
        "details": [],
    }


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def expire_pending(store: RunStore, ttl: float, now: float | None = None) -> list[str]:
    """End every pending run created more than ``ttl`` seconds before ``now``; their ids."""
    now = time.time() if now is None else now
    expired = []
    for status in PENDING:
        for rec in store.query(status=status.value, limit=MAX_QUERY_LIMIT):
            if rec.created_at + ttl > now:
                continue
            if ledger.expire(store, rec, _error(rec, ttl), now):
                expired.append(rec.run_id)
    return expired

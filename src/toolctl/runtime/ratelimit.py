"""Rate limits per caller and tool: ``limits: {callsPerMinute: N}`` on a tool or in toolctl.yaml.

A limit of N calls a minute is kept per **bucket**, one per (tool, principal): each verified
caller (:attr:`toolctl.principal.Principal.key`, issuer and subject) has its own, and every call
without a principal (the local CLI, the Python API, an unauthenticated or static-token server)
shares one ``local`` bucket per tool. A tool's own ``limits`` replaces the toolctl.yaml default.

The algorithm is GCRA (a token bucket kept as one timestamp, the "theoretical arrival time"):
N calls may come at once, then one every 60/N seconds; a refused call is told how long to wait
for the next free one. Where the bucket lives follows the run history:

* **PostgreSQL** (``state: postgresql://...``): one row per bucket in ``toolctl_rate_limits``,
  taken with one atomic ``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` on the database's clock,
  so every replica and worker shares the same limit;
* **SQLite or memory**: in this process (:class:`LocalBuckets`), one set per store object. Two
  processes on one SQLite file keep separate counts: use PostgreSQL to limit across processes.

A refused call ends before its arguments are parsed, with the error ``rate_limited`` and is
not recorded in the history (a flood of refused calls must not fill it). Over HTTP the server
answers it with ``429`` and ``Retry-After`` before the call reaches the MCP session
(:mod:`toolctl.server.ratelimits`).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.runtime.result import ErrorCode, ToolErrorInfo

if TYPE_CHECKING:
    from toolctl.principal import Principal
    from toolctl.runtime.history.capabilities import RateLimitStore
    from toolctl.runtime.history.records import RunStore
    from toolctl.runtime.pipeline.state import CallSite
    from toolctl.spec import ToolSpec

WINDOW_S = 60.0  # callsPerMinute: N calls in any burst, then one every WINDOW_S / N
LOCAL = "local"  # the bucket of calls without a principal
MAX_LOCAL_BUCKETS = 100_000  # past this, buckets whose calls have all drained are dropped


@dataclass(frozen=True)
class RateLimited:
    """A refused call: the limit, and how long until the caller may call again."""

    tool: str
    per_minute: int
    retry_after: float

    @property
    def retry_seconds(self) -> int:
        """``Retry-After``: whole seconds, at least 1."""
        return max(1, math.ceil(self.retry_after))

    def message(self) -> str:
        """What the caller reads: the tool, its limit, the setting and the wait."""
        return (
            f"rate limited: {self.tool} allows {self.per_minute} call(s) a minute per caller "
            f"(limits.callsPerMinute); retry in {self.retry_seconds} s"
        )

    def error(self) -> ToolErrorInfo:
        """The tool error the caller gets (``rate_limited``), naming the limit and the wait."""
        return ToolErrorInfo(
            ErrorCode.RATE_LIMITED.value,
            self.message(),
            [
                {
                    "type": "rate_limit",
                    "callsPerMinute": self.per_minute,
                    "retryAfter": self.retry_seconds,
                }
            ],
        )


def limit_of(spec: ToolSpec, site: CallSite) -> int | None:
    """The calls a minute ``spec`` allows each caller: its own ``limits``, else the project's."""
    own = spec.calls_per_minute
    return own if own is not None else site.limits.calls_per_minute


def bucket_of(tool: str, principal: Principal | None) -> str:
    """The bucket of ``tool`` for ``principal`` (None: the shared local bucket)."""
    who = LOCAL if principal is None else f"principal {principal.key}"
    return f"{tool}\n{who}"


class LocalBuckets:
    """GCRA buckets in this process (thread-safe). ``clock`` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tat: dict[str, float] = {}
        self._lock = threading.Lock()

    def take_call(self, bucket: str, per_minute: int) -> float:
        """Take one call from ``bucket``: 0.0 when allowed, else seconds until one is free."""
        interval = WINDOW_S / per_minute
        with self._lock:
            now = self._clock()
            after = max(self._tat.get(bucket, now), now) + interval
            if after - now > WINDOW_S:
                return after - now - WINDOW_S
            self._tat[bucket] = after
            if len(self._tat) > MAX_LOCAL_BUCKETS:
                self._drop_drained(now)
        return 0.0

    def _drop_drained(self, now: float) -> None:
        # a bucket whose arrival time has passed is the same as no bucket at all
        self._tat = {k: v for k, v in self._tat.items() if v > now}


class LocalBucketsByStore:
    """The in-process buckets of each store that does not share them (SQLite, memory), for
    as long as the store object lives: owned by the :class:`~toolctl.runtime.resources.Runtime`
    (tests that build their own runtime start with no bucket taken)."""

    def __init__(self) -> None:
        self._weak: weakref.WeakKeyDictionary[Any, LocalBuckets] = weakref.WeakKeyDictionary()
        self._strong: dict[int, tuple[Any, LocalBuckets]] = {}
        self._lock = threading.Lock()

    def of(self, store: Any) -> LocalBuckets:
        with self._lock:
            try:
                found = self._weak.get(store)
                if found is None:
                    found = self._weak[store] = LocalBuckets()
            except TypeError:  # a store that cannot be weakly referenced: kept for the runtime
                found = self._strong.setdefault(id(store), (store, LocalBuckets()))[1]
            return found


def is_shared(store: RunStore) -> bool:
    """Whether ``store`` keeps buckets for every process on it (a database round trip)."""
    return store.capabilities.rate_limits is not None


def buckets_for(store: RunStore) -> RateLimitStore | LocalBuckets:
    """Where ``store``'s buckets live: the store itself when it shares them across processes
    (PostgreSQL), else a :class:`LocalBuckets` kept for as long as the store object lives."""
    shared = store.capabilities.rate_limits
    if shared is not None:
        return shared
    from toolctl.runtime import resources

    return resources.current().rate_buckets.of(store)


def take(
    store: RunStore, spec: ToolSpec, site: CallSite, principal: Principal | None
) -> RateLimited | None:
    """Charge one call of ``spec`` by ``principal``: None when allowed (or unlimited), else
    what the caller is told."""
    per_minute = limit_of(spec, site)
    if per_minute is None:
        return None
    wait = buckets_for(store).take_call(bucket_of(spec.name, principal), per_minute)
    return RateLimited(spec.name, per_minute, wait) if wait > 0 else None


# ---------------------------------------------------------------- PostgreSQL

PG_TABLE = (
    "CREATE TABLE IF NOT EXISTS toolctl_rate_limits "
    "(bucket TEXT PRIMARY KEY, tat DOUBLE PRECISION NOT NULL)"
)
# One statement: the bucket's arrival time moves on by one interval unless that would put it
# more than a window ahead of now (refused: no row updated). The outer SELECT sees the row as it
# was before the statement, which is what a refused call's wait is worked out from. The
# database's clock, so that replicas with skewed clocks share one timeline.
PG_TAKE = """
WITH clock AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS now),
taken AS (
    INSERT INTO toolctl_rate_limits AS r (bucket, tat)
    SELECT %(bucket)s, clock.now + %(interval)s FROM clock
    ON CONFLICT (bucket) DO UPDATE
        SET tat = GREATEST(r.tat, EXCLUDED.tat - %(interval)s) + %(interval)s
        WHERE GREATEST(r.tat, EXCLUDED.tat - %(interval)s) - (EXCLUDED.tat - %(interval)s)
            + %(interval)s <= %(window)s
    RETURNING 1
)
SELECT (SELECT count(*) FROM taken) AS taken,
       (SELECT tat FROM toolctl_rate_limits WHERE bucket = %(bucket)s) AS tat,
       (SELECT now FROM clock) AS now
"""
PG_DRAINED = (
    "DELETE FROM toolctl_rate_limits WHERE tat < extract(epoch FROM clock_timestamp())::float8"
)
PG_CLEAN_EVERY = 1000  # takes between two clean-ups of drained buckets, per process


def pg_params(bucket: str, per_minute: int) -> dict[str, Any]:
    """The parameters of :data:`PG_TAKE`. The row's key is a digest: the table holds no
    caller identities."""
    digest = hashlib.sha256(bucket.encode("utf-8")).hexdigest()
    return {"bucket": digest, "interval": WINDOW_S / per_minute, "window": WINDOW_S}


def pg_wait(row: dict[str, Any], per_minute: int) -> float:
    """Seconds a refused call waits, from :data:`PG_TAKE`'s row (0.0: it was taken)."""
    if row["taken"]:
        return 0.0
    interval = WINDOW_S / per_minute
    return max(0.001, float(row["tat"]) + interval - WINDOW_S - float(row["now"]))

"""What a run store can do beyond storing rows, worked out once when the store is made.

Every store stores rows (:class:`~toolctl.runtime.history.records.RunStore`). Some can do more:
renew the leases of runs executing on a history shared by several machines, hold a task queue
for background runs, commit several writes in one transaction (or send them in one round
trip), answer a readiness ping. Each ability is a :class:`typing.Protocol`; a store's
:class:`Capabilities` record says which it has (checked once, in the store's constructor, by
:meth:`Capabilities.probe`), so callers ask ``store.capabilities.leases`` instead of probing
the store by attribute or class name on every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from procrastinate import App

    from toolctl.runtime.history.records import RowWrite


@runtime_checkable
class LeaseStore(Protocol):
    """A store shared across machines, whose runs' leases must be renewed (a run's owner on
    another host can only be judged by its lease)."""

    @property
    def closed(self) -> bool:
        """True once closed (its runs are no longer renewed)."""
        ...

    def renew_leases(self, runs: Sequence[tuple[str, str, float]]) -> set[str]:
        """Extend the lease of each ``(run_id, owner, lease_s)`` still ``running`` under that
        owner to now + ``lease_s``, in one statement; the ids renewed."""
        ...


@runtime_checkable
class QueueStore(Protocol):
    """A store that holds a task queue for background runs (PostgreSQL with Procrastinate)."""

    url: str

    def ensure_queue_schema(self) -> None:
        """Create the queue's tables once per database."""
        ...

    def queue_app(self) -> App:
        """The enqueuing side's queue application (opened on first use)."""
        ...

    def queue_job_status(self, run_id: str, token: str) -> str | None:
        """The state of run ``run_id``'s job enqueued with ``token`` (None: no such job)."""
        ...

    def sweep_exclusive(self) -> list[str] | None:
        """A sweep, unless another process on the database is sweeping (then None)."""
        ...


@runtime_checkable
class BatchingStore(Protocol):
    """A store whose writes from one thread can share a transaction (the history writer)."""

    def batch(self) -> AbstractContextManager[Callable[[], bool]]:
        """Inside the block, this thread's writes share one transaction; yields ``intact()``."""
        ...


@runtime_checkable
class PipelineStore(Protocol):
    """A store on a server that makes several row writes in one transaction sent as one
    round trip (PostgreSQL's pipeline mode): the history writer's batch, where each write
    waiting for its answer before the next is sent would cost a round trip each."""

    def write_many(self, writes: Sequence[RowWrite]) -> list[bool | Exception]:
        """Make ``writes`` in one transaction; for each, what
        :func:`~toolctl.runtime.history.ledger.apply` returns, or the error it alone failed
        with (not written; the others are). Raises when the transaction as a whole failed:
        then none of them is written."""
        ...


@runtime_checkable
class PingStore(Protocol):
    """A store on a server, which a readiness check pings."""

    def ping(self) -> None:
        """Raise :class:`~toolctl.runtime.errors.DatabaseUnavailableError` unless it answers."""
        ...


@runtime_checkable
class RateLimitStore(Protocol):
    """A store that keeps rate-limit buckets for every process on it (PostgreSQL)."""

    def take_call(self, bucket: str, per_minute: int) -> float:
        """Take one call from ``bucket``: 0.0 when allowed, else seconds until one is free."""
        ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a store can do; each ability is the store itself, typed, or None without it."""

    history: bool  # its runs outlive the process (False: the in-memory store)
    leases: LeaseStore | None = None
    queue: QueueStore | None = None
    batching: BatchingStore | None = None
    pipelining: PipelineStore | None = None
    ping: PingStore | None = None
    rate_limits: RateLimitStore | None = None  # buckets shared by every process on the store

    @property
    def shared(self) -> bool:
        """Several machines share the store: a run's owner elsewhere is judged by its lease."""
        return self.leases is not None

    @classmethod
    def probe(cls, store: object, *, history: bool = True) -> Capabilities:
        """The abilities ``store`` has (once, when it is made: a protocol check costs
        microseconds)."""
        return cls(
            history=history,
            leases=store if isinstance(store, LeaseStore) else None,
            queue=store if isinstance(store, QueueStore) else None,
            batching=store if isinstance(store, BatchingStore) else None,
            pipelining=store if isinstance(store, PipelineStore) else None,
            ping=store if isinstance(store, PingStore) else None,
            rate_limits=store if isinstance(store, RateLimitStore) else None,
        )

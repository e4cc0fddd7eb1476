"""A run-history row (:class:`RunRecord`) and what the pipeline needs from a store."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from toolctl.runtime.errors import RunNotFoundError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.config import Project
    from toolctl.runtime.history.capabilities import Capabilities


@dataclass
class RunRecord:
    """One row of the run history (JSON columns decoded)."""

    run_id: str
    tool: str
    status: str
    tool_digest: str
    created_at: float
    input_hash: str | None = None
    input: Any = None
    output: Any = None
    error: dict[str, Any] | None = None
    suspend: Any = None
    resume: Any = None
    notes: list[str] = field(default_factory=list)
    raw_input: Any = None
    raw_context: Any = None
    approval: dict[str, Any] | None = None
    background: bool = False
    timeout: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None
    owner: str | None = None
    owner_pid: int | None = None
    owner_host: str | None = None
    owner_start: str | None = None
    lease_expires: float | None = None
    resume_count: int = 0
    registry: dict[str, Any] | None = None
    model_output: dict[str, Any] | None = None
    display: dict[str, Any] | None = None
    binding: str | None = None  # MAC over the pending data (see toolctl.runtime.history.binding)
    traceback: str | None = None  # of a failed handler: user frames, redacted
    # the front end that started the run (an Origin member's value); None on rows written
    # before toolctl recorded it, which no front end may treat as its own
    origin: str | None = None
    # who started it over MCP (Principal.public(): iss, sub, client_id); None for the local
    # operator (CLI, API, test) and an unauthenticated server
    principal: dict[str, Any] | None = None
    # the answers a run was given before its handler started (a tool's ``inputRequests``),
    # kept raw for the background worker that runs it, like ``raw_input``, until it ends
    raw_resume: Any = None

    def public(self) -> dict[str, Any]:
        """The row without the pending raw data and owner bookkeeping (for ``runs show``)."""
        data = dataclasses.asdict(self)
        raw = ("raw_input", "raw_context", "raw_resume", "binding")
        for key in (*raw, "owner", "owner_start", "lease_expires"):
            data.pop(key)
        return data


class Origin:
    """Which front end started a run (``RunRecord.origin``, ``CallOptions.origin``).

    The MCP server lists and acts on its own runs only (see
    :func:`toolctl.server.visibility.visible_over_mcp`): a run started from the CLI, the
    Python API or ``toolctl test`` is never listed, approved, resumed or cancelled by an MCP
    client.
    """

    API = "api"
    CLI = "cli"
    TEST = "test"
    MCP = "mcp"


class RowChanges(TypedDict, total=False):
    """The columns one ``update`` of a run row may set (every :class:`RunRecord` field but the
    id): a typed ``**changes``, so a misspelt column is a type error, not a runtime one."""

    tool: str
    status: str
    tool_digest: str
    created_at: float
    input_hash: str | None
    input: Any
    output: Any
    error: dict[str, Any] | None
    suspend: Any
    resume: Any
    notes: list[str]
    raw_input: Any
    raw_context: Any
    raw_resume: Any
    approval: dict[str, Any] | None
    background: bool
    timeout: float | None
    started_at: float | None
    ended_at: float | None
    duration_ms: float | None
    owner: str | None
    owner_pid: int | None
    owner_host: str | None
    owner_start: str | None
    lease_expires: float | None
    resume_count: int
    registry: dict[str, Any] | None
    model_output: dict[str, Any] | None
    display: dict[str, Any] | None
    binding: str | None
    traceback: str | None
    origin: str | None


FIELDS = tuple(f.name for f in dataclasses.fields(RunRecord))  # the stores' column names
_FIELD_NAMES = frozenset(FIELDS)


def check_changes(changes: Mapping[str, object]) -> None:
    """Raise :class:`ValueError` naming any key of ``changes`` that is not a run field: every
    store's ``update`` refuses them alike (a programming error, not a damaged history)."""
    unknown = set(changes) - _FIELD_NAMES
    if unknown:
        raise ValueError(f"unknown run fields: {sorted(unknown)}")


def ambiguous_prefix(run_id: str) -> RunNotFoundError:
    """What every store's ``get`` raises when ``run_id`` is the prefix of several run ids."""
    return RunNotFoundError(
        f"run id prefix {run_id!r} matches several runs", hint="give more characters of the id"
    )


class HasProject(Protocol):
    """Anything with a ``project`` (a :class:`~toolctl.registry.Registry`): where its history is."""

    @property
    def project(self) -> Project | None: ...


class RunStore(Protocol):
    """Row storage for the run history: what every store does.

    A store only stores rows: which status change is allowed when is decided by the run
    ledger (:mod:`toolctl.runtime.history.ledger`), the only caller of ``update`` with an
    ``expect_status``. Optional abilities (lease renewal, a task queue, batched writes, a
    readiness ping) are in ``capabilities``, worked out once when the store is made
    (:mod:`toolctl.runtime.history.capabilities`).

    Calls come from any thread: the caller's, the event loop's, or the history writer's (see
    :mod:`toolctl.runtime.history`), so a store must be safe to use across threads.
    """

    capabilities: Capabilities

    @property
    def path(self) -> Path | None:
        """The database file (None: in memory; background runs need a file)."""
        ...

    def binding_key(self) -> bytes:
        """The store's secret for :mod:`toolctl.runtime.history.binding` (kept with mode 0600)."""
        ...

    def insert(self, record: RunRecord, *, durable: bool = False) -> None: ...

    def update(
        self,
        run_id: str,
        *,
        expect_status: str | tuple[str, ...] | None = None,
        expect_owner: str | None = None,
        durable: bool = False,
        **changes: Unpack[RowChanges],
    ) -> bool: ...

    def get(self, run_id: str) -> RunRecord: ...

    def query(
        self,
        *,
        tool: str | None = None,
        status: str | None = None,
        limit: int = 50,
        principal: str | None = None,
    ) -> list[RunRecord]:
        """The latest runs, newest first; ``principal`` keeps those of that subject."""
        ...

    def running(self) -> list[RunRecord]:
        """Every run now ``running`` (what a sweep looks at)."""
        ...

    def close(self) -> None:
        """Release its connections (a closed store is not used again)."""
        ...

    def sweep(self) -> list[str]:
        """End the runs whose owner died (:func:`toolctl.runtime.history.ledger.sweep`); their
        ids."""
        ...


@dataclass(frozen=True, slots=True)
class RowWrite:
    """One write of a run's row, described before it is made: the insert of ``record``, or
    the update of ``changes`` (a compare-and-set when ``expect_status`` / ``expect_owner`` are
    given). The run ledger makes them, and makes one on any store
    (:func:`~toolctl.runtime.history.ledger.apply`); a store that pipelines
    (:class:`~toolctl.runtime.history.capabilities.PipelineStore`) makes several calls' writes
    in one round trip (the history writer's batch)."""

    run_id: str
    record: RunRecord | None = None
    changes: RowChanges | None = None
    expect_status: str | tuple[str, ...] | None = None
    expect_owner: str | None = None
    durable: bool = False

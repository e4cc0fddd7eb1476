"""The in-memory run store: history off (``store=False``), pending runs still work within
this process."""

from __future__ import annotations

import dataclasses
import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from toolctl.runtime.errors import RunNotFoundError
from toolctl.runtime.history.capabilities import Capabilities
from toolctl.runtime.history.records import RunRecord, ambiguous_prefix, check_changes

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.runtime.history.records import RowChanges


class MemoryStore:
    """A process-local store: history off, pending runs still work within this process."""

    def __init__(self) -> None:
        self._runs: dict[str, RunRecord] = {}
        self._lock = threading.Lock()
        self.path: Path | None = None
        self._key = secrets.token_bytes(32)
        self.capabilities = Capabilities.probe(self, history=False)

    def binding_key(self) -> bytes:
        """This process's secret (the runs it binds live in this process only)."""
        return self._key

    def insert(self, record: RunRecord, *, durable: bool = False) -> None:
        with self._lock:
            self._runs[record.run_id] = dataclasses.replace(record)

    def update(
        self,
        run_id: str,
        *,
        expect_status: str | tuple[str, ...] | None = None,
        expect_owner: str | None = None,
        durable: bool = False,
        **changes: Unpack[RowChanges],
    ) -> bool:
        check_changes(changes)
        with self._lock:
            rec = self._runs.get(run_id)
            if rec is None:
                return False
            statuses = (expect_status,) if isinstance(expect_status, str) else expect_status
            if statuses and rec.status not in statuses:
                return False
            if expect_owner is not None and rec.owner != expect_owner:
                return False
            self._runs[run_id] = dataclasses.replace(rec, **changes)
            return True

    def get(self, run_id: str) -> RunRecord:
        """The run with this id, or the only run whose id starts with it (as SqliteStore)."""
        with self._lock:
            rec = self._runs.get(run_id)
            if rec is None and run_id:
                found = [r for r in self._runs.values() if r.run_id.startswith(run_id)]
                if len(found) > 1:
                    raise ambiguous_prefix(run_id)
                rec = found[0] if found else None
        if rec is None:
            raise RunNotFoundError(f"no run {run_id!r} in this process (history is off)")
        return dataclasses.replace(rec)

    def query(
        self,
        *,
        tool: str | None = None,
        status: str | None = None,
        limit: int = 50,
        principal: str | None = None,
    ) -> list[RunRecord]:
        with self._lock:
            runs = [
                r
                for r in self._runs.values()
                if (tool is None or r.tool == tool)
                and (status is None or r.status == status)
                and (not principal or (r.principal or {}).get("sub") == principal)
            ]
        runs.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)  # as the SQL stores
        return runs[:limit]

    def running(self) -> list[RunRecord]:
        with self._lock:
            return [dataclasses.replace(r) for r in self._runs.values() if r.status == "running"]

    def sweep(self) -> list[str]:
        from toolctl.runtime.history import ledger

        return ledger.sweep(self)

    def close(self) -> None:
        pass

"""The background worker: ``python -m toolctl.runtime.worker --state DB --registry JSON RUN TOKEN``.

It finishes one run that the spawning process stored as ``running`` with ``TOKEN`` as owner.
SIGTERM (``toolctl runs cancel``) cancels the run like Ctrl-C does in the foreground.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from toolctl.runtime import ledger
from toolctl.runtime.pipeline import Call, RunCancelled
from toolctl.runtime.redact import redact_text
from toolctl.runtime.result import ErrorCode
from toolctl.runtime.store import SqliteStore
from toolctl.runtime.sync import run_sync

if TYPE_CHECKING:
    from toolctl.registry import Registry
    from toolctl.runtime.records import RunStore


def _on_term(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt


def _fail(store: RunStore, run_id: str, token: str, message: str) -> None:
    error = {"code": ErrorCode.HANDLER_ERROR.value, "message": redact_text(message), "details": []}
    ledger.fail_owned(store, run_id, token, error)


def load_registry_at(locator: dict[str, Any]) -> Registry:
    """The registry a run was started from (its project root and tool paths)."""
    from toolctl.config import project_at
    from toolctl.loader import load_registry

    # The tool paths the caller used (its config's, or an explicit --registry path).
    return load_registry(project=project_at(locator["root"], tools=locator["tools"]))


def run(state: str, locator: dict[str, Any], run_id: str, token: str) -> int:
    """Finish the run; the exit code is for logs only (the row is the result)."""
    store = SqliteStore(state, sweep=False)
    rec = store.get(run_id)
    if rec.registry is None:
        store.update(run_id, expect_owner=token, registry=locator)
    call = prepare(store, run_id, token, locator)
    if call is None:
        return 0 if store.get(run_id).status != "failed" else 1
    return finish(call)


def prepare(
    store: RunStore, run_id: str, token: str, locator: dict[str, Any] | None = None
) -> Call | None:
    """The :class:`Call` that continues run ``run_id`` owned by ``token`` (None: it is not
    ``running`` under that owner any more, or it cannot run — its registry failed to load or
    its stored data no longer matches its binding — and then ended ``failed``)."""
    from toolctl.runtime import binding
    from toolctl.runtime.calls import site_of
    from toolctl.runtime.options import CallOptions

    rec = store.get(run_id)
    if rec.status != "running" or rec.owner != token:
        return None  # cancelled before we started, or another worker has it
    locator = locator or rec.registry or {}
    try:
        registry = load_registry_at(locator)
        spec = registry.get(rec.tool)
        site = site_of(registry)
    except Exception as exc:
        _fail(store, run_id, token, f"the worker could not load the registry: {exc}")
        return None
    if not binding.verify(store, rec):
        _fail(store, run_id, token, "the stored data of the run was modified; it will not run")
        return None
    return Call.continue_pending(rec, spec, store, site, CallOptions(store=store), owner=token)


def finish(call: Call) -> int:
    """Execute a prepared call to its end; 130 when it was cancelled."""
    try:
        run_sync(call.execute(), call.cancelled_error)
    except RunCancelled:
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="toolctl-worker")
    parser.add_argument("--state", required=True)
    parser.add_argument("--registry", required=True)
    parser.add_argument("run_id")
    parser.add_argument("token")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    code = run(args.state, json.loads(args.registry), args.run_id, args.token)
    if code == 0:
        from toolctl.runtime.background import log_path

        log_path(args.state, args.run_id).unlink(missing_ok=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

"""The local background worker: ``python -m toolctl.worker.local --state DB --registry JSON RUN
TOKEN``, the process :func:`toolctl.runtime.execution.background.spawn` starts on this machine.

It finishes one run that the spawning process stored as ``running`` with ``TOKEN`` as owner.
SIGTERM (``toolctl runs cancel``) cancels the run like Ctrl-C does in the foreground.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any, NoReturn

from toolctl.runtime.history.sqlite import SqliteStore
from toolctl.runtime.pipeline.handoff import finish, prepare


def _on_term(signum: int, frame: Any) -> NoReturn:
    raise KeyboardInterrupt


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
        from toolctl.runtime.execution.background import log_path

        log_path(args.state, args.run_id).unlink(missing_ok=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

"""``toolctl runs list|show|wait|cancel``: the run history."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RunStore

import typer

from toolctl.cli import exitcodes
from toolctl.cli.complete import complete_run_ids
from toolctl.cli.options import FormatOpt, OutputFormat, RegistryOpt, StateOpt, tool_option
from toolctl.cli.render import print_json
from toolctl.cli.run import DisplayOpt

runs_app = typer.Typer(
    help="The run history: list, show, wait for and cancel runs.", no_args_is_help=True
)

RunIdArg = Annotated[
    str,
    typer.Argument(
        metavar="RUN",
        help="Run id (or a unique prefix).",
        show_default=False,
        autocompletion=complete_run_ids,
    ),
]
STATUSES = (
    "running, succeeded, failed, awaiting_approval, declined, suspended, timed_out, cancelled, "
    "interrupted"
)
"""The values of ``RunStatus`` (not imported here: the help must stay fast; a test compares)."""


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms" if value >= 1 else f"{value:.2f} ms"


# SQL's LIMIT is a signed 64-bit integer (runtime.rowcodec.MAX_QUERY_LIMIT, which the stores
# clamp to; not imported here: loading the runtime would slow every command's start)
_MAX_LIMIT = 2**63 - 1


@runs_app.command("list")
def list_cmd(
    tool: Annotated[str | None, tool_option("Only runs of this tool.")] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", metavar="STATUS", help=f"Only runs in this state: {STATUSES}."),
    ] = None,
    limit: Annotated[
        int,
        typer.Option("--limit", "-n", min=1, max=_MAX_LIMIT, metavar="N", help="At most N runs."),
    ] = 20,
    principal: Annotated[
        str | None,
        typer.Option(
            "--principal",
            metavar="SUB",
            help="Only runs started over MCP by this subject (the token's sub).",
        ),
    ] = None,
    fmt: FormatOpt = OutputFormat.text,
    registry_path: RegistryOpt = None,
    state: StateOpt = None,
) -> None:
    """The most recent runs, newest first."""
    from toolctl.cli.registries import state_store
    from toolctl.cli.runview import out
    from toolctl.runtime.result import RunStatus

    if status is not None and status not in {s.value for s in RunStatus}:
        raise typer.BadParameter(f"--status must be one of {', '.join(s.value for s in RunStatus)}")
    store = state_store(registry_path, state, create=False)
    records = (
        store.query(tool=tool, status=status, limit=limit, principal=principal)
        if store is not None
        else []
    )
    if fmt is OutputFormat.json:
        print_json([r.public() for r in records])
        return
    if not records:
        sys.stderr.write("no runs recorded\n")
        return
    rows = [("RUN", "TOOL", "STATUS", "STARTED", "DURATION", "ERROR")]
    rows += [
        (
            r.run_id,
            r.tool,
            r.status,
            _when(r.created_at),
            _ms(r.duration_ms),
            (r.error or {}).get("code", ""),
        )
        for r in records
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _open(registry_path: Path | None, state: str | None) -> RunStore:
    from toolctl.cli.registries import state_store
    from toolctl.runtime.errors import RunNotFoundError

    store = state_store(registry_path, state, create=False)
    if store is None:
        raise RunNotFoundError("no runs recorded yet", hint="toolctl run NAME records a run")
    return store


@runs_app.command("show")
def show_cmd(
    run_id: RunIdArg,
    fmt: FormatOpt = OutputFormat.text,
    registry_path: RegistryOpt = None,
    state: StateOpt = None,
) -> None:
    """One run: status, timings, definition hash, transcript data, model output, notes and the
    traceback of a failed handler.

    --format json also gives the display views.
    """
    from toolctl.cli.runview import dump, out

    store = _open(registry_path, state)
    rec = store.get(run_id)
    data = rec.public()
    if fmt is OutputFormat.json:
        print_json(data)
        return
    rows = [
        ("run", rec.run_id),
        ("tool", rec.tool),
        ("status", rec.status),
        ("started", _when(rec.started_at or rec.created_at)),
        ("ended", _when(rec.ended_at)),
        ("duration", _ms(rec.duration_ms)),
        ("definition", rec.tool_digest[:16]),
    ]
    if rec.principal:
        who = rec.principal
        client = f" (client {who['client_id']})" if who.get("client_id") else ""
        rows.append(("principal", f"{who.get('sub')} from {who.get('iss')}{client}"))
    if rec.approval:
        how = "approved" if rec.approval.get("approved") else "declined"
        rows.append(
            ("approval", f"{how} by {rec.approval.get('by')} at {_when(rec.approval.get('at'))}")
        )
    out("\n".join(f"{label:<11}{value}" for label, value in rows))
    for key in ("input", "output", "suspend", "resume", "error"):
        if data.get(key) is not None:
            out(f"{key}:\n  " + dump(data[key]).replace("\n", "\n  "))
    if rec.model_output is not None and rec.status == "succeeded":
        shown = dump(rec.model_output.get("value"))
        out("model output:\n  " + shown.replace("\n", "\n  "))
    for note in rec.notes:
        out(f"note: {note}")
    if rec.traceback:
        out("handler traceback:\n  " + rec.traceback.rstrip().replace("\n", "\n  "))
    if rec.background and store.path is not None:
        from toolctl.runtime.execution.background import log_path

        log = log_path(store.path, rec.run_id)
        if log.exists() and log.stat().st_size:
            out(f"worker log: {log}")


@runs_app.command("wait")
def wait_cmd(
    run_id: RunIdArg,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0,
            metavar="SECONDS",
            help="Give up after SECONDS (exit 1; the run goes on). Default: wait forever.",
        ),
    ] = None,
    display: DisplayOpt = False,
    fmt: FormatOpt = OutputFormat.text,
    registry_path: RegistryOpt = None,
    state: StateOpt = None,
) -> None:
    """Wait until a run is no longer running, then print what the model sees.

    --display prints the display view, --format json the whole result. Exit codes as for
    toolctl run: 0 succeeded, 1 the tool failed, 4 awaiting approval or suspended.
    """
    from toolctl.cli.runview import Show, err, render
    from toolctl.runtime.history import runs

    if display and fmt is OutputFormat.json:
        raise typer.BadParameter("choose one of --display and --format json")
    store = _open(registry_path, state)
    try:
        rec = runs.wait(store, run_id, timeout)
    except TimeoutError as exc:
        err(f"toolctl: {exc}")
        raise typer.Exit(exitcodes.FINDINGS) from None
    result = runs.to_result(rec)
    show = Show.json if fmt is OutputFormat.json else Show.display if display else Show.model
    if show is Show.model and result.ok and result.model_output is None:
        err(
            "note: the model output was not stored (it is the raw output, which the tool's "
            "transcript transform hides); showing the transcript output"
        )
        result.model_output = {"type": "json", "value": rec.output}
    raise typer.Exit(render(result, show))


@runs_app.command("cancel")
def cancel_cmd(
    run_id: RunIdArg,
    registry_path: RegistryOpt = None,
    state: StateOpt = None,
) -> None:
    """Cancel a run awaiting approval, suspended, or running in the background."""
    from toolctl.cli.runview import err
    from toolctl.runtime.history import runs

    rec = runs.cancel(_open(registry_path, state), run_id)
    err(f"run {rec.run_id} {rec.status}")
    for note in rec.notes:
        err(f"note: {note}")


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")

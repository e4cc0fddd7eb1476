"""``toolctl run``, ``approve``, ``decline`` and ``resume``: run tools through the pipeline.

Exit codes: 0 the tool succeeded (or was started in the background), 1 the tool failed (invalid
input or output, handler error, timeout, declined, cancelled), 2 usage error (unknown tool,
unreadable --input), 4 the run is waiting (awaiting approval or suspended; its id is printed),
130 interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolctl.cli import exitcodes
from toolctl.cli.complete import complete_pending, complete_suspended, complete_tools
from toolctl.cli.options import (
    LockedOpt,
    OutputFormat,
    PacksOpt,
    RegistryOpt,
    StateOpt,
    VerifyKeyOpt,
    format_option,
    verify_key_usage,
)
from toolctl.cli.runview import Show

if TYPE_CHECKING:
    from toolctl.registry import Registry
    from toolctl.runtime.history.records import RunStore
    from toolctl.runtime.result import ApprovalRequest, RunResult

InputOpt = Annotated[
    str | None,
    typer.Option(
        "--input", "-i", metavar="JSON|@FILE|-", help="Arguments: JSON, @file, or - for stdin."
    ),
]


def _show(raw: bool, display: bool, fmt: OutputFormat) -> Show:
    if sum([raw, display, fmt is OutputFormat.json]) > 1:
        raise typer.BadParameter("choose one of --raw, --display, --format json")
    if fmt is OutputFormat.json:
        return Show.json
    return Show.raw if raw else Show.display if display else Show.model


RawOpt = Annotated[bool, typer.Option("--raw", help="Print the raw handler output.")]
DisplayOpt = Annotated[
    bool, typer.Option("--display", help="Print the display-transformed output.")
]
FormatOpt = Annotated[
    OutputFormat, format_option("text: what the model sees; json: the full result.")
]
TracebackOpt = Annotated[
    bool,
    typer.Option("--traceback", help="When the handler fails, print its traceback on stderr."),
]


def prompt_approval(request: ApprovalRequest) -> bool | None:
    """Ask on the terminal; the input shown is display-transformed with controls escaped."""
    from toolctl.cli.runview import dump, escape_controls

    hints = [k for k in ("destructiveHint", "openWorldHint") if request.annotations.get(k)]
    sys.stderr.write(
        f"{request.title or request.tool} wants to run ({request.tool}, run "
        f"{request.run_id})" + (f" [{', '.join(hints)}]" if hints else "") + "\n"
    )
    shown = request.display_input
    text = "(the input is hidden by the tool's display transform)" if shown is None else dump(shown)
    sys.stderr.write(escape_controls(text) + "\n")
    sys.stderr.write("Approve? [y/N] ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        return None  # EOF: leave the run waiting
    return line.strip().lower() in ("y", "yes")


def _progress(value: float, total: float | None, message: str | None) -> None:
    """Progress reports on a terminal's stderr (one line each, nothing when piped)."""
    if not sys.stderr.isatty():
        return
    from toolctl.cli.runview import escape_controls

    done = f"{value:g}/{total:g}" if total else f"{value:g}"
    sys.stderr.write(
        escape_controls(f"progress {done}" + (f" {message}" if message else "")) + "\n"
    )


def _answering(pairs: list[str], reads_stdin: bool) -> Any:
    """``on_suspend`` answering the handler's requests from ``--answer KEY=JSON`` (prompting on
    a terminal for the rest)."""
    import json

    from toolctl.errors import UsageError
    from toolctl.runtime import clientask

    answers: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        try:
            if not sep or not key:
                raise ValueError("expected KEY=JSON")
            answers[key] = json.loads(text)
        except ValueError as exc:
            raise UsageError(
                f"--answer {pair!r}: {exc}",
                hint='write it as KEY=JSON, e.g. --answer \'elicitation={"action": "accept", '
                '"content": {"name": "Ada"}}\'',
            ) from None
    interactive = not reads_stdin and sys.stdin.isatty()
    return clientask.answering(answers, _prompt_answer if interactive else None)


def _prompt_answer(key: str, request: dict[str, Any]) -> Any:
    """Ask on the terminal for the JSON answer to one request of the handler."""
    import json

    from toolctl.cli.runview import err, escape_controls

    params = request.get("params") or {}
    shown = params.get("message") or json.dumps(params, ensure_ascii=True)[:500]
    err(f"the tool asks ({request.get('method')}, {key}): {escape_controls(str(shown))}")
    while True:
        text = typer.prompt(f"{key} (JSON answer)", err=True)
        try:
            return json.loads(text)
        except ValueError as exc:
            err(f"not JSON ({exc}); try again")


def _finish(result: RunResult, show: Show, traceback: bool = False) -> None:
    from toolctl.cli.runview import render, show_traceback

    code = render(result, show)
    if traceback:
        show_traceback(result.traceback)
    raise typer.Exit(code)


def run(
    name: Annotated[
        str, typer.Argument(metavar="TOOL", help="The tool to run.", autocompletion=complete_tools)
    ],
    input: InputOpt = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context", "-c", metavar="JSON|@FILE|-", help="Request context: JSON, @file or -."
        ),
    ] = None,
    approve: Annotated[
        bool, typer.Option("--approve", "--yes", "-y", help="Approve the call up front.")
    ] = False,
    decline: Annotated[
        bool, typer.Option("--decline", help="Decline the call up front (the handler never runs).")
    ] = False,
    reason: Annotated[
        str | None,
        typer.Option("--reason", metavar="TEXT", help="Why it was declined (shown to the model)."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            metavar="SECONDS",
            help="Time limit of this call, instead of the tool's timeout; then the run timed_out.",
        ),
    ] = None,
    background: Annotated[
        bool, typer.Option("--background", "-b", help="Run in a detached worker; print the id.")
    ] = False,
    answer: Annotated[
        list[str] | None,
        typer.Option(
            "--answer",
            metavar="KEY=JSON",
            help="Answer what the handler asks the client (ctx.ask/elicit/sample/list_roots), "
            "by request key; repeatable. On a terminal, missing answers are prompted for.",
        ),
    ] = None,
    raw: RawOpt = False,
    display: DisplayOpt = False,
    fmt: FormatOpt = OutputFormat.text,
    traceback: TracebackOpt = False,
    registry_path: RegistryOpt = None,
    packs: PacksOpt = True,
    state: StateOpt = None,
    locked: LockedOpt = False,
    verify_key: VerifyKeyOpt = None,
) -> None:
    """Run a tool: validate its input, ask for approval if needed, call it, print the result.

    Prints what the model sees by default; --raw the handler's output, --display the
    display-transformed output, --format json the whole result; --traceback the failed
    handler's traceback (also kept in the history: toolctl runs show). Exit codes: 0 succeeded,
    1 the tool failed, 2 usage error, 4 awaiting approval or suspended (the run id is printed).
    With --locked the registry must match toolctl.lock, and a tool imported from an MCP server
    is refused when the server's live definition of it changed since.
    """
    from toolctl.cli.registries import for_tool
    from toolctl.cli.runview import read_json_arg
    from toolctl.yamlsrc import gc_paused

    with gc_paused():  # the runtime's modules live until the process ends: nothing to collect
        from toolctl.runtime import api
        from toolctl.runtime.history.records import Origin
        from toolctl.runtime.options import CallOptions
        from toolctl.runtime.pipeline.tracing import describe_run, run_span
        from toolctl.runtime.redact import guard_log_handlers

    guard_log_handlers()  # a handler's own log lines are scrubbed of its secrets too

    show = _show(raw, display, fmt)
    if approve and decline:
        raise typer.BadParameter("choose one of --approve and --decline")
    reads_stdin = "-" in (input, context)
    if input == "-" and context == "-":
        raise typer.BadParameter("--input and --context cannot both read stdin")
    text = read_json_arg(input, "input")
    ctx_text = read_json_arg(context, "context")
    verify_key_usage(locked, verify_key)
    registry = for_tool(registry_path, name, packs=packs)
    if locked:
        from toolctl.contract import verify_locked

        verify_locked(registry, verify_key=verify_key)  # a LockError exits 1
    approver = None
    if not approve and not decline and not reads_stdin and sys.stdin.isatty():
        approver = prompt_approval
    options = CallOptions(
        context=ctx_text,
        approve=approve or None,
        decline=(reason or True) if decline else None,
        timeout=timeout,
        background=background,
        store=state,
        approver=approver,
        on_progress=_progress,
        origin=Origin.CLI,
        on_suspend=_answering(answer or [], reads_stdin),
    )
    with run_span(name) as span:
        result = _cancellable(
            lambda: api.call(registry, name, "{}" if text is None else text, options)
        )
        describe_run(span, result)
    _finish(result, show, traceback)


def approve_cmd(
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN", help="The run awaiting approval.", autocompletion=complete_pending
        ),
    ],
    raw: RawOpt = False,
    display: DisplayOpt = False,
    fmt: FormatOpt = OutputFormat.text,
    traceback: TracebackOpt = False,
    registry_path: RegistryOpt = None,
    packs: PacksOpt = True,
    state: StateOpt = None,
) -> None:
    """Approve a run that is awaiting approval, and run it now.

    Refused when the tool's definition changed since the run was requested, or its stored input
    no longer matches the hash taken then.
    """
    show = _show(raw, display, fmt)
    registry, store = _pending(registry_path, state, run_id, packs)
    from toolctl.runtime import api

    result = _cancellable(lambda: api.approve(registry, run_id, store=store, by="cli"))
    _finish(result, show, traceback)


def decline_cmd(
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN", help="The run awaiting approval.", autocompletion=complete_pending
        ),
    ],
    reason: Annotated[
        str | None, typer.Option("--reason", metavar="TEXT", help="Why (shown to the model).")
    ] = None,
    fmt: FormatOpt = OutputFormat.text,
    registry_path: RegistryOpt = None,
    packs: PacksOpt = True,
    state: StateOpt = None,
) -> None:
    """Decline a run that is awaiting approval; its handler never runs."""
    from toolctl.runtime import api

    show = _show(False, False, fmt)
    registry, store = _pending(registry_path, state, run_id, packs)
    result = api.decline(registry, run_id, reason, store=store)
    if show is not Show.json:
        from toolctl.cli.runview import err

        err(f"run {result.run_id} declined")
        raise typer.Exit(exitcodes.OK)
    _finish(result, show)


def resume_cmd(
    run_id: Annotated[
        str,
        typer.Argument(metavar="RUN", help="The suspended run.", autocompletion=complete_suspended),
    ],
    data: Annotated[
        str | None,
        typer.Option("--data", "-d", metavar="JSON|@FILE|-", help="Resume data: JSON, @file or -."),
    ] = None,
    raw: RawOpt = False,
    display: DisplayOpt = False,
    fmt: FormatOpt = OutputFormat.text,
    traceback: TracebackOpt = False,
    registry_path: RegistryOpt = None,
    packs: PacksOpt = True,
    state: StateOpt = None,
) -> None:
    """Resume a suspended run with data (checked against the tool's resumeSchema).

    A run resumes at most once; resuming it again reports that it was already resumed.
    """
    from toolctl.cli.runview import read_json_arg
    from toolctl.runtime import api

    show = _show(raw, display, fmt)
    text = read_json_arg(data, "data")
    registry, store = _pending(registry_path, state, run_id, packs)
    data_text = "{}" if text is None else text
    result = _cancellable(lambda: api.resume(registry, run_id, data_text, store=store))
    _finish(result, show, traceback)


def _pending(
    registry_path: Path | None, state: str | None, run_id: str, packs: bool
) -> tuple[Registry, RunStore]:
    from toolctl.cli.registries import for_tool, state_store

    store = state_store(registry_path, state)
    tool = store.get(run_id).tool
    return for_tool(registry_path, tool, packs=packs), store


def _cancellable(fn: Callable[[], RunResult]) -> RunResult:
    """Run ``fn`` with everything a handler writes to stdout sent to stderr (stdout is the
    result) and Ctrl-C reported as a cancelled run (exit 130)."""
    from toolctl.cli.runview import err, stdout_to_stderr
    from toolctl.runtime.pipeline.state import RunCancelled

    try:
        with stdout_to_stderr():
            result = fn()
    except RunCancelled as exc:
        err(f"toolctl: run {exc.result.run_id} cancelled")
        raise typer.Exit(exitcodes.INTERRUPTED) from None
    return result


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("approve")(approve_cmd)
    app.command("decline")(decline_cmd)
    app.command("resume")(resume_cmd)

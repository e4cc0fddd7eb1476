"""Secrets by construction: a secret under any applicator, reached by any ``$ref`` form, sent out
through any channel, never leaves the process.

The project holds one tool per (applicator, ``$ref`` form, flag) for the input side and one for
the output side (tests/runtime/fixtures/secret_handlers.py). Hypothesis picks a tool, a channel
and a secret, runs the call through the real pipeline (Python API; the CLI's renderer; the MCP
``tools/call`` result and ``tools/list`` schema) and checks every sink: the result as a model
or a person sees it, stdout and stderr, the history rows, log records (a root handler without
any filter, as ``logging.basicConfig`` makes), warnings, exported OpenTelemetry spans, progress
messages and the question an ``on_suspend`` callback is asked.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sqlite3
import string
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolctl
from toolctl.registry import Registry
from toolctl.runtime import RunResult, api

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
import secret_handlers  # noqa: E402  (the handler module of the project below)

VARIANTS = secret_handlers.variants()
CHANNELS = sorted(secret_handlers.CHANNELS)
PIN_FILE = "{type: string, %s: true, description: a PIN kept in a schema file}\n"


def _tool(side: str, variant: str, schema: dict[str, Any]) -> dict[str, Any]:
    name = f"{side}__{variant.replace('.', '__')}"
    tool: dict[str, Any] = {
        "name": name,
        "description": "Checks that a secret never leaves the process, whatever the channel.",
        "handler": "secret_handlers:handle",
    }
    if side == "in":
        tool["inputSchema"] = schema
    else:
        tool["inputSchema"] = {
            "type": "object",
            "properties": {"seed": {"type": "string"}, "channel": {"type": "string"}},
        }
        tool["outputSchema"] = schema
        tool["hooks"] = {"onOutput": "secret_handlers:on_output"}
    return tool


def tool_name(side: str, variant: str) -> str:
    return f"{side}__{variant.replace('.', '__')}"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    root = tmp_path_factory.mktemp("secrets")
    schemas = root / "tools.d" / "schemas"
    schemas.mkdir(parents=True)
    (schemas / "pin-x.schema.yaml").write_text(PIN_FILE % "x-sensitive", "utf-8")
    (schemas / "pin-w.schema.yaml").write_text(PIN_FILE % "writeOnly", "utf-8")
    for side in ("in", "out"):
        tools = [_tool(side, v, schema) for v, (schema, _) in VARIANTS.items()]
        text = json.dumps({"toolctl": 1, "tools": tools}, indent=1)
        (root / "tools.d" / f"{side}.yaml").write_text(text, "utf-8")
    (root / "toolctl.yaml").write_text(f"tools: tools.d\npythonPath: ['{FIXTURES}']\n", "utf-8")
    reg = toolctl.load_project(root)
    assert reg.ok, [str(d) for d in reg.diagnostics][:5]
    assert len(reg.tools) == 2 * len(VARIANTS), "every variant loads"
    return reg


@dataclass
class Sinks:
    """Everything that left the process during one call."""

    log: io.StringIO = field(default_factory=io.StringIO)
    warned: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    spans: Any = None


@contextlib.contextmanager
def capture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sinks]:
    """Sinks for one call: a root log handler with no filter (at DEBUG), warnings shown, an
    OpenTelemetry SDK provider with an in-memory exporter."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    sinks = Sinks()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sinks.spans = exporter
    root = logging.getLogger()
    handler = logging.StreamHandler(sinks.log)
    handler.setFormatter(
        logging.Formatter(
            "%(name)s %(message)s %(toolctl_fields)s", defaults={"toolctl_fields": ""}
        )
    )
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    secret_handlers.SINK.seek(0)
    secret_handlers.SINK.truncate()
    with monkeypatch.context() as patch, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        patch.setattr(trace, "get_tracer_provider", lambda: provider)
        patch.setattr(trace, "get_tracer", lambda name, *a, **k: provider.get_tracer(name))
        try:
            yield sinks
        finally:
            root.removeHandler(handler)
            root.setLevel(level)
            sinks.warned = [f"{w.category.__name__}: {w.message} {w.line or ''}" for w in caught]
    provider.shutdown()


def call(reg: Registry, name: str, args: dict[str, Any], sinks: Sinks) -> RunResult:
    def on_progress(value: float, total: float | None, message: str | None) -> None:
        sinks.progress.append(str(message))

    def on_suspend(payload: Any, schema: Any) -> None:
        from toolctl.server.interaction import resume_question

        sinks.asked.append(resume_question(name, payload))
        return None

    return reg.call(name, args, on_progress=on_progress, on_suspend=on_suspend)


def rendered(result: RunResult) -> str:
    """What ``toolctl run`` prints for the result, in each of its forms."""
    from toolctl.cli.runview import Show, render

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for show in Show:
            render(result, show)
    return out.getvalue() + err.getvalue()


def served(reg: Registry, result: RunResult) -> str:
    """The MCP ``tools/call`` results (both protocols) and the tool's ``tools/list`` entry."""
    from toolctl.export import export
    from toolctl.server.results import call_result

    spec = reg.tools[result.tool]
    shown = [call_result(result, spec, p) for p in ("2025-11-25", "2026-07-28")]
    listed = export([spec], "mcp")
    return json.dumps([shown, listed], default=str)


def history(reg: Registry, run_id: str) -> str:
    """The run's stored row, but for the raw data a pending run continues with."""
    store = api.resolve_store(reg)
    con = sqlite3.connect(store.path)
    cursor = con.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,))
    names = [column[0] for column in cursor.description]
    row = dict(zip(names, cursor.fetchone(), strict=True))
    con.close()
    kept = {k: v for k, v in row.items() if k not in ("raw_input", "raw_context", "binding")}
    stored = reg.get_run(run_id).to_dict()
    return json.dumps([kept, stored], default=str)


def shown_result(result: RunResult) -> str:
    """The result as anything but the application sees it (not the raw output/payload)."""
    data = result.to_dict()
    data.pop("output")
    data.pop("suspend_payload")
    return json.dumps(data)


def leaks(secret: str, reg: Registry, result: RunResult, sinks: Sinks) -> dict[str, str]:
    found = {
        "result": shown_result(result),
        "terminal": rendered(result),
        "mcp": served(reg, result),
        "history": history(reg, result.run_id),
        "log": sinks.log.getvalue() + secret_handlers.SINK.getvalue(),
        "warnings": "\n".join(sinks.warned),
        "progress": "\n".join(sinks.progress),
        "question": "\n".join(sinks.asked),
        "spans": "\n".join(s.to_json() for s in sinks.spans.get_finished_spans()),
    }
    return {where: text for where, text in found.items() if secret in text}


SECRETS = st.text(string.ascii_letters + string.digits, min_size=4, max_size=16).map(
    lambda s: secret_handlers.PREFIX + s
)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(variant=st.sampled_from(sorted(VARIANTS)), channel=st.sampled_from(CHANNELS), secret=SECRETS)
def test_an_input_secret_never_leaves(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, variant: str, channel: str, secret: str
) -> None:
    args = {"channel": channel, **VARIANTS[variant][1](secret)}
    with capture(monkeypatch) as sinks:
        result = call(registry, tool_name("in", variant), args, sinks)
    assert result.error is None or result.error.code == "handler_error", result.error
    assert leaks(secret, registry, result, sinks) == {}


@SETTINGS
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.text(string.ascii_letters, min_size=4, max_size=12),
)
def test_an_output_secret_never_reaches_a_model_client_or_the_history(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, variant: str, seed: str
) -> None:
    secret = secret_handlers.output_secret(seed)
    with capture(monkeypatch) as sinks:
        result = call(registry, tool_name("out", variant), {"seed": seed}, sinks)
    assert result.ok, result.error
    assert secret in json.dumps(result.output), "the application gets the raw output"
    assert leaks(secret, registry, result, sinks) == {}


# Every applicator with every reference form (marked x-sensitive), and each applicator marked
# writeOnly directly; the property tests above mix the rest.
EACH = sorted(v for v in VARIANTS if v.endswith(".x") or ".direct." in v)


@pytest.mark.parametrize("variant", EACH)
def test_each_location_is_found_and_its_error_scrubbed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, variant: str
) -> None:
    secret = secret_handlers.PREFIX + "plainCheck42"
    args = {"channel": "error", **VARIANTS[variant][1](secret)}
    with capture(monkeypatch) as sinks:
        result = call(registry, tool_name("in", variant), args, sinks)
    assert result.error is not None and "[REDACTED]" in result.error.message
    assert leaks(secret, registry, result, sinks) == {}


@pytest.mark.parametrize("channel", CHANNELS)
def test_each_channel_is_scrubbed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, channel: str
) -> None:
    secret = secret_handlers.PREFIX + "channelCheck42"
    args = {"channel": channel, "codes": [secret]}
    with capture(monkeypatch) as sinks:
        result = call(registry, tool_name("in", "items.direct.x"), args, sinks)
    assert leaks(secret, registry, result, sinks) == {}
    seen = {
        "progress": sinks.progress,
        "observe": [sinks.log.getvalue()],
        "root_log": [sinks.log.getvalue()],
        "own_handler": [secret_handlers.SINK.getvalue()],
        "warn": sinks.warned,
        "span": [s.to_json() for s in sinks.spans.get_finished_spans()],
        "suspend": sinks.asked,
        "echo": [json.dumps(result.model_output)],
        "error": [result.error.message if result.error else ""],
    }[channel]
    # The channel did carry the message, with the secret redacted (not silently dropped).
    assert any("[REDACTED]" in text for text in seen), seen

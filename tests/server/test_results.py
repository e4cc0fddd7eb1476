"""Run results as MCP tools/call results: content blocks, checked with the SDK's types."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import mcp_types as types

from toolctl.runtime import RunResult, RunStatus, ToolErrorInfo
from toolctl.server.results import call_result


def _result(**fields: Any) -> RunResult:
    return RunResult(run_id="r1", tool="t", status=RunStatus.SUCCEEDED, **fields)


class _Spec:
    """What call_result reads of a tool: its output contract."""

    output_schema: Any = None
    output_validation = "strict"
    background = False
    transform: dict[str, Any] = {}  # noqa: RUF012 (never mutated)


def _checked(result: RunResult) -> dict[str, Any]:
    out = call_result(result, cast(Any, _Spec()))
    types.CallToolResult.model_validate(out, by_name=False)  # the SDK accepts the shape
    return out


def test_content_parts_become_mcp_content_blocks() -> None:
    parts = [
        {"type": "text", "text": "hello"},
        {"type": "image-data", "data": "AAAA", "mediaType": "image/png"},
        {"type": "file-data", "data": "UklGRg==", "mediaType": "audio/wav"},
        {
            "type": "file-data",
            "data": "JVBERi0=",
            "mediaType": "application/pdf",
            "filename": "report.pdf",
        },
        {"type": "file-url", "url": "https://example.com/a/report.pdf"},
        {"type": "file-id", "fileId": "file-123"},
        {"type": "custom", "value": {"type": "text", "text": "as is"}},
        {"type": "custom", "value": {"k": 1}},
    ]
    out = _checked(_result(output="x", model_output={"type": "content", "value": parts}))
    assert out["content"] == [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {
            "type": "resource",
            "resource": {
                "uri": "toolctl://runs/r1/report.pdf",
                "mimeType": "application/pdf",
                "blob": "JVBERi0=",
            },
        },
        # plain link text: a server without resources must not send a resource_link
        {"type": "text", "text": "report.pdf: https://example.com/a/report.pdf"},
        {"type": "text", "text": "[file-id: file-123]"},
        {"type": "text", "text": "as is"},
        {"type": "text", "text": '{"k": 1}'},
    ]
    assert "structuredContent" not in out  # the output is not an object


def test_text_model_output_and_object_output() -> None:
    out = _checked(_result(output={"n": 1}, model_output={"type": "text", "value": "one"}))
    assert out["content"] == [{"type": "text", "text": "one"}]
    assert out["structuredContent"] == {"n": 1}
    assert out["_meta"] == {"dev.toolctl/run": {"id": "r1", "status": "succeeded"}}


def test_errors_carry_their_details_for_the_model() -> None:
    error = ToolErrorInfo(
        "invalid_input",
        "Input is invalid.",
        [{"path": "/a", "message": "'x' is not of type 'integer'"}],
    )
    out = _checked(RunResult(run_id="r2", tool="t", status=RunStatus.FAILED, error=error))
    assert out["isError"] is True
    assert out["content"][0]["text"] == "Input is invalid.\n- /a: 'x' is not of type 'integer'"


def test_a_non_object_output_is_structured_only_where_its_schema_was_listed() -> None:
    # tools/list leaves a non-object outputSchema out for 2025-11-25 and every older handshake
    # revision (they share one listing); their results must not carry structuredContent.
    spec = _Spec()
    spec.output_schema = {"type": "array", "items": {"type": "integer"}}
    result = _result(output=[1, 2])
    for older in ("2025-11-25", "2025-06-18", "2025-03-26"):
        out = call_result(result, cast(Any, spec), older)
        types.CallToolResult.model_validate(out, by_name=False)
        assert "structuredContent" not in out and out["isError"] is False, older
        assert out["content"] == [{"type": "text", "text": "[1, 2]"}]
    modern = call_result(result, cast(Any, spec), "2026-07-28")
    assert modern["structuredContent"] == [1, 2]


def test_results_are_checked_against_the_output_schema_each_revision_lists(
    tmp_path: Path,
) -> None:
    # call_result decides which outputSchema a result must honour; tools/list (the mcp export)
    # decides which one the client holds. The SDK client checks structuredContent against the
    # latter, so the two must agree for every kind of schema and every revision.
    import toolctl
    from toolctl.server.results import advertised_output_schema
    from toolctl.server.toolset import mcp_listing

    schemas = {
        "obj": "{type: object, properties: {n: {type: integer}}}",
        "arr": "{type: array, items: {type: string}}",
        "anything": "true",
        "none": None,
    }
    for name, schema in schemas.items():
        lines = [
            "toolctl: 1",
            f"name: {name}",
            "description: A tool.",
            "handler: json:dumps",
            "inputSchema: {type: object}",
        ]
        if schema is not None:
            lines.append(f"outputSchema: {schema}")
        (tmp_path / f"{name}.yaml").write_text("\n".join(lines) + "\n")
    registry = toolctl.load(tmp_path)
    specs = [registry.get(name) for name in sorted(schemas)]
    for protocol in ("2025-11-25", "2026-07-28"):
        listing, _ = mcp_listing(specs, protocol)
        listed = {t["name"]: t.get("outputSchema") for t in listing["tools"]}
        held = {s.name: advertised_output_schema(s, protocol) for s in specs}
        assert held == listed, protocol

"""A :class:`~toolctl.runtime.RunResult` as an MCP ``tools/call`` result (plain dicts).

* success: ``toModelOutput`` becomes the content blocks (text, image, audio, resource link,
  embedded resource); an object output is also ``structuredContent``. Without ``toModelOutput``
  the content is the output's JSON, so the text block mirrors ``structuredContent``.
* failure: ``isError: true`` and the runtime's model-actionable message (already redacted).
* suspended or awaiting approval: ``isError: true``, a text block that says so, with the run
  id to continue it (a client that can take part answers through elicitation or, in 2026-07-28,
  an input-required round trip instead).
* output that breaks the advertised ``outputSchema`` (``outputValidation: warn`` or ``off``):
  ``isError: true``; a success result always carries ``structuredContent`` the schema accepts.

Every result carries ``_meta["toolctl/run"]`` (run id and status) so a client can find the run.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolctl.schema import cached_validator
from toolctl.sensitive import sensitive_map, shown_schema
from toolctl.server.toolset import MODERN

if TYPE_CHECKING:
    from toolctl.runtime import RunResult
    from toolctl.spec import ToolSpec

RUN_META_KEY = "toolctl/run"
LEGACY_PROTOCOL = "2025-11-25"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _uri_name(part: dict[str, Any], uri: str) -> str:
    return str(part.get("filename") or uri.rstrip("/").rsplit("/", 1)[-1] or uri)


def _data_block(part: dict[str, Any], run_id: str, index: int) -> dict[str, Any]:
    media = str(part.get("mediaType") or "application/octet-stream")
    if part["type"] == "image-data" or media.startswith(("image/", "audio/")):
        kind = "audio" if media.startswith("audio/") else "image"
        return {"type": kind, "data": part["data"], "mimeType": media}
    name = str(part.get("filename") or f"part-{index}")
    uri = f"toolctl://runs/{run_id}/{name}"
    return {"type": "resource", "resource": {"uri": uri, "mimeType": media, "blob": part["data"]}}


def content_block(part: dict[str, Any], run_id: str, index: int) -> dict[str, Any]:
    """One ``toModelOutput`` content part as an MCP content block."""
    kind = part.get("type")
    if kind == "text":
        return _text(str(part.get("text", "")))
    if kind in ("image-url", "file-url"):
        uri = str(part["url"])
        link: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": _uri_name(part, uri)}
        if part.get("mediaType"):
            link["mimeType"] = part["mediaType"]
        return link
    if kind in ("image-data", "file-data"):
        return _data_block(part, run_id, index)
    if kind in ("file-id", "image-file-id"):
        return _text(f"[{kind}: {part.get('fileId')}]")
    value = part.get("value")
    # A custom part that already is an MCP content block passes through unchanged.
    if isinstance(value, dict) and value.get("type") in (
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
    ):
        return dict(value)
    return _text(value if isinstance(value, str) else _json(value))


def model_content(model_output: dict[str, Any] | None, output: Any, run_id: str) -> list[Any]:
    """The content blocks for a successful run's model output."""
    if model_output is None:
        model_output = {"type": "json", "value": output}
    kind, value = model_output.get("type"), model_output.get("value")
    if kind == "text":
        return [_text(str(value))]
    if kind == "content" and isinstance(value, list):
        return [content_block(p, run_id, i) for i, p in enumerate(value) if isinstance(p, dict)]
    return [_text(value if isinstance(value, str) else _json(value))]


def _meta(result: RunResult) -> dict[str, Any]:
    return {RUN_META_KEY: {"id": result.run_id, "status": str(result.status.value)}}


def error_result(message: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``isError`` result with one text block."""
    out: dict[str, Any] = {"content": [_text(message)], "isError": True}
    if meta:
        out["_meta"] = meta
    return out


def shown_payload(result: RunResult) -> Any:
    """A suspended run's payload as the model and the user see it (its display form)."""
    value = (result.model_output or {}).get("value")
    return value.get("payload") if isinstance(value, dict) else result.suspend_payload


def suspended_text(result: RunResult) -> str:
    """What a model reads for a suspended run: the (display) payload and how to resume it."""
    return (
        f"The tool {result.tool} suspended (run {result.run_id}) and is waiting for input: "
        f"{_json(shown_payload(result))}. It continues when resumed: "
        f"toolctl resume {result.run_id} --data '<JSON>'."
    )


def approval_text(result: RunResult) -> str:
    """What a model reads when a tool needs approval the user has not given (the client cannot
    ask, or the question was dismissed)."""
    return (
        "Approval required: the user has not approved this call, so the tool did not run. "
        + error_text(result)
    )


def error_text(result: RunResult) -> str:
    """The runtime's error message (already redacted) with one line per detail."""
    if result.error is None:
        return f"The tool call ended as {result.status.value}."
    return result.error.text()


def advertised_output_schema(spec: ToolSpec, protocol: str) -> dict[str, Any] | bool | None:
    """The ``outputSchema`` ``tools/list`` shows for ``spec`` in ``protocol``: 2026-07-28 lists
    any; 2025-11-25 and the older handshake revisions (which get the same listing) only
    object-rooted schemas."""
    schema = shown_schema(spec.output_schema)  # without its sensitive fields
    if protocol == MODERN:
        return dict(schema) if isinstance(schema, dict) else schema
    if isinstance(schema, dict) and schema.get("type") == "object":
        return dict(schema)
    return None


def call_result(
    result: RunResult, spec: ToolSpec, protocol: str = LEGACY_PROTOCOL, *, stored: bool = False
) -> dict[str, Any]:
    """The ``tools/call`` result for a finished or paused run.

    A success carries ``structuredContent`` valid against the advertised ``outputSchema``;
    anything else (paused, failed, output the schema does not accept) is ``isError: true``
    with the run id. ``stored``: the result was read back from the run history (a background
    run), whose ``output`` is the transcript form and never becomes ``structuredContent``.
    """
    status = result.status.value
    if status == "succeeded":
        out = _success(result, spec, protocol, stored)
    elif status == "suspended":
        out = error_result(suspended_text(result), _meta(result))
    elif status == "awaiting_approval":
        out = error_result(approval_text(result), _meta(result))
    else:
        out = error_result(error_text(result), _meta(result))
    # The one way out to a client: no secret value the run saw, in any block or field.
    scrubbed: dict[str, Any] = result.scrub(out) if result.secrets else out
    return scrubbed


def _success(result: RunResult, spec: ToolSpec, protocol: str, stored: bool) -> dict[str, Any]:
    value = _structured_value(result, spec, stored)
    if value is not _NONE and result.secrets:
        value = result.scrub(value)  # an echoed secret value: checked against the schema below
    schema = advertised_output_schema(spec, protocol)
    if schema is not None:
        if value is _NONE:
            return error_result(
                f"The tool {result.tool} finished (run {result.run_id}), but its output cannot "
                "be returned as structured content: the run history keeps only the transcript "
                "form of a background run's output. See it with: "
                f"toolctl runs show {result.run_id}",
                _meta(result),
            )
        # The runtime already refused live output that breaks a strict schema (unless pruning
        # or scrubbing changed it).
        checked = not stored and spec.output_validation == "strict" and value is result.output
        problems = [] if checked else cached_validator(schema).errors(value, limit=5)
        if problems:
            found = "; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems)
            return error_result(
                f"The tool {result.tool} returned output that does not match its outputSchema "
                f"(run {result.run_id}): {found}. The output was not sent.",
                _meta(result),
            )
    # What the text block shows: the output, or (read back) its model view; failing that (no
    # outputSchema, transcript hides the output) the transcript form, which is safe to show.
    shown = value if value is not _NONE else result.output
    out: dict[str, Any] = {
        "content": model_content(result.model_output, shown, result.run_id),
        "isError": False,
        "_meta": _meta(result),
    }
    if value is not _NONE and (schema is not None or isinstance(value, dict)):
        out["structuredContent"] = value
    return out


_NONE: Any = object()


def _structured_value(result: RunResult, spec: ToolSpec, stored: bool) -> Any:
    """The raw output, or (read from the history) the model's JSON view of it; ``_NONE`` when
    neither is available."""
    if not stored:
        # A client never gets the output's sensitive fields (the advertised schema has none).
        return sensitive_map(spec.output_schema).prune(result.output)
    model = result.model_output
    if isinstance(model, dict) and model.get("type") == "json":
        return model.get("value")
    return _NONE


def unavailable_message(tool: str) -> str:
    """What a client is told when the run history's database does not answer: not the
    server's setup, so it names the outage and says to retry."""
    return (
        f"toolctl could not run {tool}: the run-history database is unavailable "
        "(restarting or unreachable). Retry the call in a moment."
    )

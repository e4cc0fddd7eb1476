"""A :class:`~toolctl.runtime.RunResult` as an MCP ``tools/call`` result (plain dicts).

* success: ``toModelOutput`` becomes the content blocks (text, image, audio, resource link,
  embedded resource); an object output is also ``structuredContent``. Without ``toModelOutput``
  the content is the output's JSON, so the text block mirrors ``structuredContent``.
* failure: ``isError: true`` and the runtime's model-actionable message (already redacted).
* suspended or awaiting approval: a text block that says so, with the run id to continue it.

Every result carries ``_meta["toolctl/run"]`` (run id and status) so a client can find the run.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime import RunResult

RUN_META_KEY = "toolctl/run"


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


def suspended_text(result: RunResult) -> str:
    """What a model reads for a suspended run: the (display) payload and how to resume it."""
    value = (result.model_output or {}).get("value")
    payload = value.get("payload") if isinstance(value, dict) else result.suspend_payload
    return (
        f"The tool {result.tool} suspended (run {result.run_id}) and is waiting for input: "
        f"{_json(payload)}. It continues when resumed: toolctl resume {result.run_id} "
        "--data '<JSON>'."
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


def call_result(result: RunResult) -> dict[str, Any]:
    """The ``tools/call`` result for a finished or paused run."""
    status = result.status.value
    if status == "succeeded":
        out: dict[str, Any] = {
            "content": model_content(result.model_output, result.output, result.run_id),
            "isError": False,
            "_meta": _meta(result),
        }
        if isinstance(result.output, dict):
            out["structuredContent"] = result.output
        return out
    if status == "suspended":
        return {
            "content": [_text(suspended_text(result))],
            "isError": False,
            "_meta": _meta(result),
        }
    if status == "awaiting_approval":
        return error_result(approval_text(result), _meta(result))
    return error_result(error_text(result), _meta(result))

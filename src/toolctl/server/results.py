"""A :class:`~toolctl.runtime.RunResult` as an MCP ``tools/call`` result (plain dicts).

* success: ``toModelOutput`` becomes the content blocks (text, image, audio, embedded
  resource; a URL part becomes a text link, as the server serves no resources); an object
  output is also ``structuredContent``. Without ``toModelOutput`` the content is the output's
  JSON, so the text block mirrors ``structuredContent``.
* failure: ``isError: true`` and the runtime's model-actionable message (already redacted).
* suspended or awaiting approval: ``isError: true``, a text block that says so, with the run
  id to continue it (a client that can take part answers through elicitation or, in 2026-07-28,
  an input-required round trip instead).
* output that breaks the advertised ``outputSchema`` (``outputValidation: warn`` or ``off``):
  ``isError: true``; a success result always carries ``structuredContent`` the schema accepts.

Every result carries ``_meta["dev.toolctl/run"]`` (run id and status) so a client can find the
run. Every ``_meta`` key toolctl defines is in the ``dev.toolctl/`` namespace.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from toolctl.schema import cached_validator
from toolctl.sensitive import sensitive_map
from toolctl.server.toolset import MODERN

if TYPE_CHECKING:
    from toolctl.runtime import RunResult
    from toolctl.spec import ToolSpec

RUN_META_KEY = "dev.toolctl/run"
LEGACY_PROTOCOL = "2025-11-25"


# One encoder for every result (json.dumps with options builds a new one per call).
_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _uri_name(part: dict[str, Any], uri: str) -> str:
    return str(part.get("filename") or uri.rstrip("/").rsplit("/", 1)[-1] or uri)


def _link_text(uri: str, media: Any, part: dict[str, Any]) -> dict[str, Any]:
    # A link as text, not a resource_link: the server offers no resources capability, so a
    # client could not resources/read it, and a link to another site is not an MCP resource.
    kind = f" ({media})" if media else ""
    return _text(f"{_uri_name(part, uri)}{kind}: {uri}")


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
        return _link_text(str(part["url"]), part.get("mediaType"), part)
    if kind in ("image-data", "file-data"):
        return _data_block(part, run_id, index)
    if kind in ("file-id", "image-file-id"):
        return _text(f"[{kind}: {part.get('fileId')}]")
    value = part.get("value")
    # A custom part that already is an MCP content block passes through unchanged.
    if isinstance(value, dict) and value.get("type") in ("text", "image", "audio", "resource"):
        return dict(value)
    if isinstance(value, dict) and value.get("type") == "resource_link":
        return _link_text(str(value.get("uri", "")), value.get("mimeType"), value)
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
    if result.error is None:  # read back from the history: the row keeps no error
        how = f"toolctl approve {result.run_id} or toolctl decline {result.run_id}"
        reason = f"The run {result.run_id} is waiting for approval ({how})."
    else:
        reason = error_text(result)
    return (
        "Approval required: the user has not approved this call, so the tool did not run. " + reason
    )


def hidden_text(result: RunResult) -> str:
    """What a model reads for a background run that succeeded but whose output the run history
    does not keep (its transcript hides it, and there is no model view)."""
    return (
        f"The tool {result.tool} finished (run {result.run_id}). Its output is not kept in the "
        "run history (the tool's transcript hides it), so it cannot be shown here."
    )


def handed_off_text(result: RunResult) -> str:
    """What a client reads when the replica waiting on a background run stops waiting (it is
    shutting down): the run goes on on its worker, and where to get its result."""
    return (
        f"The tool {result.tool} is still running in the background (run {result.run_id}); "
        "this server is shutting down and stopped waiting, but the run goes on and its result "
        f"is kept: poll it with `toolctl runs wait {result.run_id}`. "
        "Do not call the tool again for the same work."
    )


def error_text(result: RunResult) -> str:
    """The runtime's error message (already redacted) with one line per detail."""
    if result.error is None:
        return f"The tool call ended as {result.status.value}."
    return result.error.text()


def advertised_output_schema(spec: ToolSpec, protocol: str) -> dict[str, Any] | bool | None:
    """The ``outputSchema`` ``tools/list`` shows for ``spec`` in ``protocol``: 2026-07-28 lists
    any; 2025-11-25 and the older handshake revisions (which get the same listing) only
    object-rooted schemas. For a background tool it describes the transcript form the run
    history keeps, and never the sensitive fields (``export.mcp.delivered_output_schema``).
    The schema is shared (made once per tool): read it, do not change it."""
    from toolctl.export.mcp import delivered_output_schema

    schema = delivered_output_schema(spec)
    if protocol == MODERN or (isinstance(schema, dict) and schema.get("type") == "object"):
        return cast("dict[str, Any] | bool | None", schema)
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
    elif status == "running":  # a draining replica hands a background run over
        out = error_result(handed_off_text(result), _meta(result))
    else:
        out = error_result(error_text(result), _meta(result))
    # The one way out to a client: no secret value the run saw, in any block or field.
    scrubbed: dict[str, Any] = result.scrub(out) if result.secrets else out
    return scrubbed


def _success(result: RunResult, spec: ToolSpec, protocol: str, stored: bool) -> dict[str, Any]:
    # Live: the raw output. Read back from the history (a background run): its json model view
    # if it has one, else the transcript form of the output; the listed outputSchema of a
    # background tool describes that (export.mcp.delivered_output_schema). Either way a client
    # never gets the output's sensitive fields (the advertised schema has none).
    model = result.model_output
    shaped = stored and isinstance(model, dict) and model.get("type") == "json"
    value = model.get("value") if shaped and model is not None else result.output
    value = sensitive_map(spec.output_schema).prune(value)
    if result.secrets:
        value = result.scrub(value)  # an echoed secret value: checked against the schema below
    schema = advertised_output_schema(spec, protocol)
    if schema is not None:
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
    if stored and value is None and model is None:  # the transcript hides the whole output
        content = [_text(hidden_text(result))]
    else:
        content = model_content(model, value, result.run_id)
    out: dict[str, Any] = {
        "content": content,
        "isError": False,
        "_meta": _meta(result),
    }
    if schema is not None or isinstance(value, dict):
        out["structuredContent"] = value
    return out


def unavailable_message(tool: str) -> str:
    """What a client is told when the run history's database does not answer: not the
    server's setup, so it names the outage and says to retry."""
    return (
        f"toolctl could not run {tool}: the run-history database is unavailable "
        "(restarting or unreachable). Retry the call in a moment."
    )

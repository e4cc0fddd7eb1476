"""Transforms: what models, UIs and transcripts see instead of raw payloads.

Two forms, for ``transform.<target>.<phase>`` and ``toModelOutput`` alike:

* declarative: ``pick`` / ``omit`` / ``redact`` dotted field paths, a ``template`` over fields
  (``{city}``, ``{a.b}``, ``{items.0.name}``; ``{{`` for a literal brace), or ``suppress: true``.
  Paths only index into JSON objects and arrays: there is no attribute access and no code.
* callable: ``{call: "pkg.module:function"}``. A transform callable gets one mapping (``phase``,
  ``target``, ``toolName``, ``runId`` and the phase's payload under ``input``, ``inputTextDelta``,
  ``output``, ``error``, ``suspendPayload`` or ``resumeData``) and returns the payload to show;
  returning ``None`` suppresses it. A ``toModelOutput`` callable gets the raw output and returns
  ``{"type": ..., "value": ...}`` (a plain string means text, anything else json).

The handler always receives raw data; these run on copies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from toolctl.fieldpaths import Tree, path_tree
from toolctl.runtime import jsondata
from toolctl.runtime.exctext import describe
from toolctl.runtime.execution.loading import load_callable
from toolctl.runtime.redact import REDACTED

SUPPRESSED: Any = type("Suppressed", (), {"__repr__": lambda self: "SUPPRESSED"})()
"""Sentinel: a transform chose to show nothing for this phase."""

PHASE_KEYS = {
    "input": "input",
    "inputDelta": "inputTextDelta",
    "output": "output",
    "error": "error",
    "approval": "input",
    "suspend": "suspendPayload",
    "resume": "resumeData",
}


class TransformError(Exception):
    """A transform could not be applied (bad callable, callable raised, bad return value)."""


# ---------------------------------------------------------------- field paths


def _pick(data: Any, tree: Tree) -> Any:
    if not tree:
        return data
    if isinstance(data, list):
        return [_pick(item, tree) for item in data]
    if isinstance(data, dict):
        return {k: _pick(data[k], sub) for k, sub in tree.items() if k in data}
    return None


def _edit(data: Any, tree: Tree, leaf: Any) -> Any:
    """Copy of ``data`` where each leaf path is dropped (leaf=SUPPRESSED) or replaced."""
    if isinstance(data, list):
        branches = tree
        if branches and all(k.isdigit() for k in branches):
            out = list(data)
            for k, sub in branches.items():
                i = int(k)
                if i < len(out):
                    out[i] = _edit(out[i], sub, leaf) if sub else leaf
            return [x for x in out if x is not SUPPRESSED]
        return [_edit(item, tree, leaf) for item in data]
    if not isinstance(data, dict):
        return data
    result: dict[str, Any] = {}
    for key, value in data.items():
        sub = tree.get(key)
        if sub is None:
            result[key] = value
        elif sub:
            result[key] = _edit(value, sub, leaf)
        elif leaf is not SUPPRESSED:
            result[key] = leaf
    return result


def lookup(data: Any, path: str) -> tuple[bool, Any]:
    """Follow a dotted path through objects and arrays: (found, value)."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


# ---------------------------------------------------------------- templates

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    try:
        return jsondata.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def render(template: str, data: Any) -> str:
    """Fill ``{field}`` / ``{a.b}`` from ``data``; a missing field renders as empty text.

    A payload that is not an object is available as ``{value}``.
    """
    scope = data if isinstance(data, dict) else {"value": data}

    def sub(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        found, value = lookup(scope, match.group(1).strip())
        return _text(value) if found else ""

    return _TOKEN.sub(sub, template)


# ---------------------------------------------------------------- phase transforms


def apply_declarative(spec: dict[str, Any], payload: Any) -> Any:
    """Apply pick → omit → redact → template (or suppress) to ``payload``."""
    if spec.get("suppress") is True:
        return SUPPRESSED
    out = payload
    if "pick" in spec:
        out = _pick(out, path_tree(tuple(spec["pick"])))
    if "omit" in spec:
        out = _edit(out, path_tree(tuple(spec["omit"])), SUPPRESSED)
    if "redact" in spec:
        out = _edit(out, path_tree(tuple(spec["redact"])), REDACTED)
    if "template" in spec:
        out = render(spec["template"], out)
    return out


def apply(
    spec: dict[str, Any] | None, payload: Any, info: dict[str, Any], python_path: Sequence[str] = ()
) -> Any:
    """Transform one phase's payload; :data:`SUPPRESSED` when the transform hides it.

    ``info`` carries ``phase``, ``target``, ``toolName`` and ``runId`` for callables.
    """
    if not spec:
        return payload
    ref = spec.get("call")
    if ref is None:
        return apply_declarative(spec, payload)
    fn = load_callable(ref, python_path)
    arg = dict(info)
    arg[PHASE_KEYS.get(str(info.get("phase")), "payload")] = payload
    try:
        out = fn(arg)
    except Exception as exc:
        raise TransformError(f"transform {ref} raised {describe(exc)}") from exc
    return SUPPRESSED if out is None else out


# ---------------------------------------------------------------- toModelOutput

_PART_FIELDS = {
    "text": ("text",),
    "image-url": ("url",),
    "file-url": ("url",),
    "image-data": ("data",),
    "file-data": ("data",),
    "file-id": ("fileId",),
    "image-file-id": ("fileId",),
}


def default_model_output(output: Any) -> dict[str, Any]:
    """Text for a string output, JSON for anything else."""
    if isinstance(output, str):
        return {"type": "text", "value": output}
    return {"type": "json", "value": output}


def _part(spec: dict[str, Any], output: Any) -> dict[str, Any] | None:
    kind = spec["type"]
    part: dict[str, Any] = {"type": kind}
    if kind == "custom":
        part["value"] = spec.get("value")
        return part
    for key in ("text", "url", "data", "fileId", "mediaType", "filename"):
        if key in spec:
            part[key] = render(spec[key], output)
    required = _PART_FIELDS.get(kind, ())
    # A part whose main field rendered empty (an optional image, say) is left out.
    if any(not part.get(key) for key in required):
        return None
    return part


def to_model_output(
    spec: dict[str, Any] | None, output: Any, python_path: Sequence[str] = ()
) -> dict[str, Any]:
    """What the model sees for a successful ``output``."""
    if not spec:
        return default_model_output(output)
    if "call" in spec:
        fn = load_callable(spec["call"], python_path)
        try:
            value = fn(output)
        except Exception as exc:
            raise TransformError(f"toModelOutput {spec['call']} raised {describe(exc)}") from exc
        return _coerce_model_output(value, spec["call"])
    kind = spec["type"]
    if kind == "text":
        template = spec.get("template")
        return {
            "type": "text",
            "value": render(template, output) if template is not None else _text(output),
        }
    if kind == "json":
        value = output
        if "pick" in spec:
            value = _pick(value, path_tree(tuple(spec["pick"])))
        if "omit" in spec:
            value = _edit(value, path_tree(tuple(spec["omit"])), SUPPRESSED)
        return {"type": "json", "value": value}
    parts = [p for p in (_part(s, output) for s in spec["parts"]) if p is not None]
    return {"type": "content", "value": parts}


def shows_raw_output(spec: dict[str, Any] | None) -> bool:
    """True when ``toModelOutput`` passes the whole output through unshaped (absent, text
    without a template, json without pick/omit): the model output is then the raw output."""
    if not spec:
        return True
    if "call" in spec or spec.get("type") == "content":
        return False
    if spec.get("type") == "text":
        return spec.get("template") is None
    return "pick" not in spec and "omit" not in spec


def _coerce_model_output(value: Any, ref: str) -> dict[str, Any]:
    if (
        isinstance(value, dict)
        and value.get("type") in ("text", "json", "content")
        and "value" in value
    ):
        if value["type"] == "text" and not isinstance(value["value"], str):
            raise TransformError(f"toModelOutput {ref} returned a text value that is not a string")
        if value["type"] == "content" and not isinstance(value["value"], list):
            raise TransformError(f"toModelOutput {ref} returned content that is not a list")
        return {"type": value["type"], "value": value["value"]}
    return default_model_output(value)

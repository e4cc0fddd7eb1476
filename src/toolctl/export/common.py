"""Pieces every target shares: the parameters schema, the description, examples."""

from __future__ import annotations

import json
from typing import Any

from toolctl.export.base import ExportOptions, Findings
from toolctl.export.convert import Profile, convert
from toolctl.export.strict import to_strict_instance
from toolctl.spec import ToolSpec

PLAIN = Profile("pass-through")


def parameters(spec: ToolSpec, profile: Profile, out: Findings) -> dict[str, Any]:
    """The tool's input schema rewritten for ``profile`` (copy-on-write: read-only, shared with
    the spec where unchanged; the spec is untouched)."""
    schema, _ = convert(spec.input_schema, profile, out, ("inputSchema",))
    return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}


def example_inputs(spec: ToolSpec) -> list[dict[str, Any]]:
    """The ``input`` of each ``inputExamples`` entry (shared read-only with the spec)."""
    return [e["input"] for e in spec.input_examples]


def description(
    spec: ToolSpec, options: ExportOptions, out: Findings, *, openai_strict: bool = False
) -> str:
    """The description, with the examples appended when asked (for targets without a field).

    Under OpenAI strict mode the examples show optional arguments as ``null``, as the model will
    send them.
    """
    text = spec.description
    if not spec.input_examples:
        return text
    if not options.examples_in_description:
        out.info(
            "TX220",
            "inputExamples have no field on this target; left out",
            ("inputExamples",),
            hint="--examples-in-description appends them to the description",
        )
        return text
    lines = ["", "", "Examples:"]
    for example in spec.input_examples:
        value = example["input"]
        if openai_strict:
            value = to_strict_instance(spec.input_schema, value)
        line = "- " + json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if example.get("description"):
            line += f" ({example['description']})"
        lines.append(line)
    return text + "\n".join(lines)


def has_parameters(schema: dict[str, Any]) -> bool:
    """False for the empty object schema (a tool without arguments)."""
    return bool(schema.get("properties")) or not schema.keys() <= _EMPTY_OBJECT_KEYS


_EMPTY_OBJECT_KEYS = frozenset({"type", "additionalProperties", "properties"})

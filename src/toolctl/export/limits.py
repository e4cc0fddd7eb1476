"""OpenAI Structured Outputs size limits (provider-formats.md §3), checked on a converted schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolctl.export.base import Findings, JsonPath

# OpenAI Structured Outputs limits (provider-formats.md §3).
MAX_PROPERTIES = 5000
MAX_DEPTH = 10
MAX_ENUM_VALUES = 1000
MAX_BIG_ENUM_CHARS = 15_000
MAX_TOTAL_CHARS = 120_000


def check_openai_limits(
    schema: Any, out: Findings, path: JsonPath, fail: Callable[[str, str, JsonPath], None]
) -> None:
    """Report every OpenAI strict-mode size limit the schema exceeds."""
    totals = {"props": 0, "enums": 0, "chars": 0, "depth": 0}

    def walk(node: Any, depth: int, at: JsonPath) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, depth, (*at, i))
            return
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            depth += 1
            totals["depth"] = max(totals["depth"], depth)
            totals["props"] += len(props)
            totals["chars"] += sum(len(k) for k in props)
        enum = node.get("enum")
        if isinstance(enum, list):
            totals["enums"] += len(enum)
            strs = sum(len(v) for v in enum if isinstance(v, str))
            totals["chars"] += strs
            if len(enum) > 250 and strs > MAX_BIG_ENUM_CHARS:
                fail(
                    "TX330",
                    f"an enum of {len(enum)} values has {strs} characters "
                    f"(limit {MAX_BIG_ENUM_CHARS} above 250 values)",
                    (*at, "enum"),
                )
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                walk(value, depth, (*at, key))
        for name in node.get("$defs", {}) if isinstance(node.get("$defs"), dict) else ():
            totals["chars"] += len(name)

    walk(schema, 0, path)
    for key, limit, what in (
        ("props", MAX_PROPERTIES, "object properties"),
        ("depth", MAX_DEPTH, "levels of object nesting"),
        ("enums", MAX_ENUM_VALUES, "enum values"),
        ("chars", MAX_TOTAL_CHARS, "characters of names and enum values"),
    ):
        if totals[key] > limit:
            fail("TX330", f"the schema has {totals[key]} {what} (strict-mode limit {limit})", path)

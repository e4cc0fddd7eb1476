"""Tool declarations and handler modules as the text of new files.

YAML is written for people: block style, with short scalar-only mappings and lists in flow
style (``{type: string}``), keys in the order of the format's documentation, and the editor
schema modeline on the first line.
"""

from __future__ import annotations

import random
from typing import Any

import yaml

from toolctl.scaffold.introspect import ToolDraft
from toolctl.scaffold.types import Schema
from toolctl.yamlsrc import dumps

_FLOW_WIDTH = 60
SCHEMA_FILE = "schema/tool.v1.schema.json"
"""Where ``toolctl init`` puts the format's JSON Schema (``toolctl schema -o`` refreshes it)."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper that indents lists under their key and writes small leaves in flow style."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True  # toolctl's loader refuses anchors: repeat shared parts in full


def _is_leaf(items: list[Any]) -> bool:
    scalars = all(not isinstance(v, (dict, list)) for v in items)
    return scalars and len(repr(items)) <= _FLOW_WIDTH


def _dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    flow = bool(data) and _is_leaf([*data, *data.values()])
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


def _list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_is_leaf(data))


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(dict, _dict)
_Dumper.add_representer(str, _str)
_Dumper.add_representer(list, _list)


def dump_yaml(data: Any) -> str:
    """``data`` as block YAML with flow-style leaves; strings are quoted where toolctl's loader
    would read them as something else (``"1e3"``, ``"0o17"``, ``"yes"``)."""
    return dumps(data, base=_Dumper, sort_keys=False, allow_unicode=True, width=100, indent=2)


def modeline(schema_ref: str) -> str:
    """The first line that gives YAML language servers the format's schema."""
    return f"# yaml-language-server: $schema={schema_ref}\n"


def example_input(schema: Schema) -> dict[str, Any] | None:
    """A small input the schema accepts (defaults, examples, first enum values, plain
    placeholders), for the ``tests:`` stub; None when none is found."""
    from toolctl.schema import cached_validator

    value = _Sampler(schema).sample(schema)
    return value if isinstance(value, dict) and cached_validator(schema).is_valid(value) else None


class _Sampler:
    """Plain values for the stub: readable where the schema allows, generated where it asks for
    a pattern or format."""

    def __init__(self, root: Schema) -> None:
        self.root = root

    def sample(self, schema: Any, depth: int = 0) -> Any:
        if not isinstance(schema, dict) or depth > 8:
            return None
        if "$ref" in schema:
            from toolctl.testing.gen import resolve

            return self.sample(resolve(self.root, schema["$ref"]), depth + 1)
        for key in ("default", "const"):
            if key in schema:
                return schema[key]
        if schema.get("examples"):
            return schema["examples"][0]
        if schema.get("enum"):
            return schema["enum"][0]
        if schema.get("anyOf"):
            return self.sample(schema["anyOf"][0], depth + 1)
        kind = schema.get("type")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        if kind == "object":
            props = schema.get("properties", {})
            return {k: self.sample(props.get(k, {}), depth + 1) for k in schema.get("required", [])}
        if kind == "array":
            if "prefixItems" in schema:
                return [self.sample(s, depth + 1) for s in schema["prefixItems"]]
            return [self.sample(schema.get("items", {}), depth + 1)] * schema.get("minItems", 0)
        if kind == "string" and ("pattern" in schema or "format" in schema):
            return self._generated(schema)
        if kind == "string":
            return "example".ljust(schema.get("minLength", 0), "x")
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
            return max(1, low) if kind == "integer" else float(max(1, low))
        return True if kind == "boolean" else None

    def _generated(self, schema: Schema) -> Any:
        from toolctl.testing.gen import Unsatisfiable, ValueGenerator

        try:
            return ValueGenerator(schema, random.Random(0)).valid()
        except Unsatisfiable:
            return None


def declaration(
    draft: ToolDraft,
    handler: str,
    test_input: dict[str, Any] | None,
    annotations: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The tool declaration as a mapping, in the documented key order."""
    doc: dict[str, Any] = {
        "toolctl": 1,
        "name": draft.name,
        "title": draft.title,
        "description": draft.description,
        "handler": handler,
        "inputSchema": draft.input_schema,
    }
    if draft.output_schema is not None:
        doc["outputSchema"] = draft.output_schema
    if annotations:
        doc["mcp"] = {"annotations": annotations}
    case: dict[str, Any] = {"name": "example"}
    if test_input is not None:
        case["input"] = test_input
    case["skip"] = "write what the tool should return (output or outputContains), then delete skip"
    doc["tests"] = [case]
    return doc


def tool_file(
    draft: ToolDraft,
    handler: str,
    *,
    schema_ref: str | None,
    source: str,
    annotations: dict[str, bool] | None = None,
) -> str:
    """The text of the tool file: modeline, a header naming its source and its gaps, the YAML."""
    head = modeline(schema_ref) if schema_ref else ""
    head += f"# Declared from {source} by `toolctl new`: review the description and the tests.\n"
    for gap in draft.gaps:
        head += f"# TODO {gap}\n"
    body = dump_yaml(declaration(draft, handler, example_input(draft.input_schema), annotations))
    return head + body


def handler_module(function_module: str, attr: str, tool_file_name: str) -> str:
    """The text of the module whose ``handler`` calls ``function_module:attr`` with the tool's
    input as its arguments."""
    return (
        f'"""toolctl handler for {tool_file_name}: calls {function_module}:{attr} with the\n'
        'tool\'s input as its arguments. Written by `toolctl new --from`; yours to edit."""\n'
        "\n"
        f"from {function_module} import {attr.split('.')[0]}\n"
        "\n"
        "from toolctl.scaffold.adapter import from_function\n"
        "\n"
        f"handler = from_function({attr})\n"
    )

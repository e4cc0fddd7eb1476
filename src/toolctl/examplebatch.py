"""The input examples of many tools checked with one compiled validator.

First each tool's examples are walked (:func:`toolctl.schema.walk_accepts`): a walk of each
value along the subschemas that apply to it, with no compile, settles nearly every tool of a
real registry at once. Only the tools it does not accept (a wrong example, a keyword it does
not judge) wait for a chunk, as follows.

Compiling a validator costs more than checking a tool's few examples with it, and most of a
bundled input schema is the shared ``$defs`` every tool of a registry repeats. So a load
collects the tools whose examples it has to check and compiles, per :data:`CHUNK` tools, one
schema holding each shared definition once and each tool's own schema beside them:

    {"properties": {"toolctl.example.0": {"items": {"$ref": "#/$defs/toolctl.example.0"}}, ...},
     "$defs": {<shared definitions>, "toolctl.example.0": <tool 0 without $defs>, ...}}

checked against ``{"toolctl.example.0": [<its examples>], ...}``. That is only ever a quick
*accept*: when the chunk is not accepted as a whole (an example is wrong, a schema the fast path
does not take), every tool of it is checked on its own by the caller, as before, so messages and
locations are those of the one-tool check. A tool joins only when its bundled schema refers to
nothing but ``#/$defs/Name`` entries that mean the same object in every tool of the chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.spec.model import ToolSpec

CHUNK = 64
"""Tools per combined validator: large enough that the shared definitions are compiled rarely,
small enough that one wrong example sends few tools to the one-tool check and that a load's
peak memory stays as it was (5,000 realistic tools: 256 added 8 MiB, 1,024 added 29, 64 adds 3:
jsonschema-rs's compile of a combined schema is what grows)."""

_PREFIX = "toolctl.example."


class ExampleBatch:
    """Tools whose ``inputExamples`` wait to be checked together (see the module docs)."""

    def __init__(self) -> None:
        self._chunks: list[_Chunk] = [_Chunk()]

    def add(self, spec: ToolSpec) -> bool:
        """Settle ``spec``'s examples, or take them into the batch; False when neither can be
        (the caller checks them at once). Examples the walk of each value accepts
        (:func:`toolctl.schema.walk_accepts`: no compile at all) are settled at once."""
        from toolctl.schema import walk_accepts  # on a cache miss only

        schema = spec.input_schema
        if walk_accepts(schema, [example["input"] for example in spec.input_examples]):
            return True
        if not _joinable(schema):
            return False
        chunk = self._chunks[-1]
        if len(chunk.specs) >= CHUNK:
            chunk = _Chunk()
            self._chunks.append(chunk)
        if not chunk.add(spec, schema):
            chunk = _Chunk()
            self._chunks.append(chunk)
            if not chunk.add(spec, schema):  # pragma: no cover - a fresh chunk takes any joinable
                return False
        return True

    @property
    def full(self) -> bool:
        """Whether a chunk's worth of tools waits (time to check them: see the loader)."""
        return sum(len(chunk.specs) for chunk in self._chunks) >= CHUNK

    def rejected(self) -> Iterator[ToolSpec]:
        """The tools of every chunk not accepted as a whole: their examples need the one-tool
        check (which finds what is wrong, or accepts them after all)."""
        for chunk in self._chunks:
            if chunk.specs and not chunk.accepted():
                yield from chunk.specs
        self._chunks = [_Chunk()]


def _joinable(schema: Any) -> bool:
    """A 2020-12 object schema whose ``$defs`` (if any) is a mapping, with no name of ours."""
    from toolctl.schema import DEFAULT_DIALECT, dialect_of  # on a cache miss only

    if type(schema) is not dict or dialect_of(schema) != DEFAULT_DIALECT or "$id" in schema:
        return False
    defs = schema.get("$defs", {})
    return type(defs) is dict and not any(name.startswith(_PREFIX) for name in defs)


class _Chunk:
    def __init__(self) -> None:
        self.specs: list[ToolSpec] = []
        self.defs: dict[str, Any] = {}
        self.properties: dict[str, Any] = {}
        self.instance: dict[str, list[Any]] = {}

    def add(self, spec: ToolSpec, schema: dict[str, Any]) -> bool:
        """Join ``spec`` unless one of its ``$defs`` names something else in this chunk."""
        defs: dict[str, Any] = schema.get("$defs", {})
        mine = self.defs
        for name, node in defs.items():
            if mine.get(name, node) is not node:
                return False
        mine.update(defs)
        name = f"{_PREFIX}{len(self.specs)}"
        mine[name] = {k: v for k, v in schema.items() if k != "$defs" and k != "$schema"}
        self.properties[name] = {"items": {"$ref": f"#/$defs/{name}"}}
        self.instance[name] = [example["input"] for example in spec.input_examples]
        self.specs.append(spec)
        return True

    def accepted(self) -> bool:
        from toolctl.schema import make_validator

        combined = {"properties": self.properties, "$defs": self.defs}
        return make_validator(combined).quick_accept(self.instance)

"""Loading skips the ``$ref`` scan of a file with no ``$`` key and the pattern walk of a file
with no ``pattern`` key. The decision uses the keys as parsed, so a key written with an
escape is still seen: nothing a skipped walk would have found goes unreported."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolctl import refs
from toolctl.registry import Registry

from .conftest import codes

HEAD = """\
toolctl: 1
name: t
description: A tool.
inputSchema:
  type: object
  properties:
"""


def test_escaped_ref_key_is_still_bundled_and_checked(
    registry_of: Callable[..., Registry],
) -> None:
    # "\u0024ref" is "$ref": no "$" byte in the file
    registry = registry_of(
        {"tools.d/t.yaml": HEAD + '    a: {"\\u0024ref": "missing.schema.yaml"}\n'}
    )
    assert "TC302" in codes(registry)


def test_escaped_pattern_key_is_still_compiled(registry_of: Callable[..., Registry]) -> None:
    registry = registry_of(
        {"tools.d/t.yaml": HEAD + '    a: {type: string, "\\x70attern": "(["}\n'}
    )
    assert "TC301" in codes(registry)


def test_pattern_bundled_in_from_another_file_is_still_compiled(
    registry_of: Callable[..., Registry],
) -> None:
    """The tool file has no `pattern` key; the schema file it refers to has a bad one."""
    registry = registry_of(
        {
            "tools.d/t.yaml": HEAD + "    a: {$ref: 'common.schema.yaml#/$defs/A'}\n",
            "tools.d/common.schema.yaml": "$defs:\n  A: {type: string, pattern: '(['}\n",
        }
    )
    assert "TC301" in codes(registry)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("    b: {type: array, items: {type: string, pattern: '(['}}\n", (8, 53)),
        ("    b: {type: object, patternProperties: {'([': {}}}\n", (8, 49)),
    ],
)
def test_own_bad_pattern_beside_a_shared_ref_is_located(
    registry_of: Callable[..., Registry], body: str, where: tuple[int, int]
) -> None:
    """The bundling scan finds the tool's own patterns (no second walk): each still compiled
    and located, beside a definition bundled in from another file."""
    registry = registry_of(
        {
            "tools.d/t.yaml": HEAD + "    a: {$ref: 'common.schema.yaml#/$defs/A'}\n" + body,
            "tools.d/common.schema.yaml": "$defs:\n  A: {type: string, pattern: '^a'}\n",
        }
    )
    [diag] = registry.diagnostics
    assert (diag.code, diag.file, (diag.line, diag.col)) == ("TC301", "tools.d/t.yaml", where)


@pytest.mark.parametrize(
    ("body", "scanned"),
    [
        ("    a: {type: string}\n", False),
        ("    a: {type: string, description: '$ref in a value'}\n", False),
        ("    a: {$ref: '#/$defs/A'}\n  $defs: {A: {type: string}}\n", True),
    ],
)
def test_only_files_with_a_dollar_key_are_scanned_for_refs(
    registry_of: Callable[..., Registry],
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    scanned: bool,
) -> None:
    calls: list[object] = []
    real = refs.bundle

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(refs, "bundle", counting)
    registry = registry_of({"tools.d/t.yaml": HEAD + body})
    assert registry.ok, codes(registry)
    assert bool(calls) is scanned

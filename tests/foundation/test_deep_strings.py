"""Deep structures inside strings (a ``pattern`` with 400 nested groups, ``format: regex``
values): a diagnostic or a validation error everywhere, never ``RecursionError``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolctl.schema import MAX_PATTERN_DEPTH, check_schema, compile_pattern, make_validator

from .conftest import run_toolctl, write

DEEP = "(" * 400 + "a" + ")" * 400


def _deep_tool(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tools.d/d.yaml": "toolctl: 1\nname: d\ndescription: d\nhandler: json:dumps\n"
            "inputSchema: {type: object, properties: {a: {type: string, maxLength: 5, "
            f'pattern: "{DEEP}"}}}}}}\n',
            "tools.d/ok.yaml": "toolctl: 1\nname: ok\ndescription: d\nhandler: json:dumps\n"
            "inputSchema: {type: object, properties: {p: {type: string, format: regex}}}\n",
        },
    )


def test_deep_pattern_is_a_located_schema_error(registry_of: Any, tmp_path: Path) -> None:
    _deep_tool(tmp_path)
    registry = registry_of({})
    assert list(registry.tools) == ["ok"]
    [diag] = registry.diagnostics
    assert (diag.file, diag.line, diag.code) == ("tools.d/d.yaml", 5, "TC301")
    assert "nests groups 400 deep" in diag.message


@pytest.mark.parametrize(
    "args",
    [("validate",), ("lint",), ("list",), ("export", "openai"), ("run", "d", "-i", "{}")],
)
def test_deep_pattern_never_crashes_a_command(tmp_path: Path, args: tuple[str, ...]) -> None:
    _deep_tool(tmp_path)
    result = run_toolctl(*args, cwd=tmp_path)
    assert result.returncode in ((0, 1) if args[0] == "list" else (1, 2)), result.stderr
    assert "internal error" not in result.stderr and "Recursion" not in result.stderr
    assert "nests groups 400 deep" in result.stdout + result.stderr


def test_deep_regex_value_is_invalid_input_on_run(tmp_path: Path) -> None:
    _deep_tool(tmp_path)
    (tmp_path / "tools.d" / "d.yaml").unlink()
    payload = json.dumps({"p": "(" * 2000 + ")" * 2000})
    result = run_toolctl("run", "ok", "-i", payload, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "invalid_input" in result.stdout + result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("depth", [MAX_PATTERN_DEPTH + 1, 400, 5000])
def test_regex_format_follows_pattern_rules(depth: int) -> None:
    validator = make_validator({"type": "string", "format": "regex"})
    [problem] = validator.errors("(" * depth + ")" * depth)
    assert problem.keyword == "format"
    assert validator.errors("^[a-z]+$") == []
    assert validator.errors("[[a]") == []  # no FutureWarning from Python's re (warnings = errors)


def test_pattern_at_the_depth_limit_still_compiles() -> None:
    deepest = "(" * MAX_PATTERN_DEPTH + "a" + ")" * MAX_PATTERN_DEPTH
    assert compile_pattern(deepest).search("a")
    assert check_schema({"type": "string", "pattern": deepest}) == []


def test_escaped_and_class_parentheses_do_not_count() -> None:
    flat = r"\(" * 300 + "[(]" * 300
    assert check_schema({"type": "string", "pattern": flat}) == []


# beside: a long chain of $defs is a deep structure once the references are followed


def _chain(tmp_path: Path, length: int) -> None:
    defs = ", ".join(f"d{i}: {{$ref: '#/$defs/d{i + 1}'}}" for i in range(length))
    write(
        tmp_path,
        {
            "tools.d/c.yaml": "toolctl: 1\nname: c\ndescription: d\nhandler: json:dumps\n"
            "inputSchema: {type: object, properties: {a: {$ref: '#/$defs/d0'}}, "
            f"$defs: {{{defs}, d{length}: {{type: string}}}}}}\n"
        },
    )


@pytest.mark.parametrize(
    "args", [("validate",), ("lint",), ("export", "gemini"), ("run", "c", "-i", "{}")]
)
def test_long_ref_chain_is_a_diagnostic(tmp_path: Path, args: tuple[str, ...]) -> None:
    _chain(tmp_path, 1500)
    result = run_toolctl(*args, cwd=tmp_path)
    assert result.returncode in (1, 2), result.stderr
    assert "internal error" not in result.stderr
    assert "TC307 inputSchema nests 1504 levels deep" in result.stdout + result.stderr


def test_short_ref_chain_loads(registry_of: Any, tmp_path: Path) -> None:
    _chain(tmp_path, 40)
    registry = registry_of({})
    assert registry.ok, [d.format() for d in registry.diagnostics]
    assert make_validator(registry.get("c").schema("inputSchema")).errors({"a": 1})

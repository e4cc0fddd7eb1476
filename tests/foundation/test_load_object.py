"""``references.load_object``: whatever a user's module raises while it is imported becomes a
clear :class:`HandlerReferenceError` naming the reference, the exception and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.errors import HandlerReferenceError
from toolctl.references import load_object

BROKEN = {
    "syntax": ("def handler(:\n    pass\n", "SyntaxError"),
    "runtime": ("raise RuntimeError('no config at import')\n", "RuntimeError: no config at import"),
    "exits": ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    "bad_name": ("from json import nothing_like_this\n", "ImportError: cannot import name"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_exception_at_import_is_a_reference_error(tmp_path: Path, kind: str) -> None:
    source, expected = BROKEN[kind]
    module = f"lo_{kind}_{tmp_path.name}"
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    with pytest.raises(HandlerReferenceError) as info:
        load_object(f"{module}:handler", [tmp_path])
    message = str(info.value)
    assert f"{module}:handler" in message and expected in message
    assert info.value.hint and "toolctl lint --resolve" in info.value.hint


def test_a_missing_module_and_a_missing_dependency_get_different_hints(tmp_path: Path) -> None:
    with pytest.raises(HandlerReferenceError, match="cannot import 'lo_absent'") as info:
        load_object("lo_absent:handler", [tmp_path])
    assert info.value.hint is not None and "pythonPath" in info.value.hint
    module = f"lo_dep_{tmp_path.name}"
    (tmp_path / f"{module}.py").write_text("import lo_not_installed_pkg\n", encoding="utf-8")
    with pytest.raises(HandlerReferenceError, match="ModuleNotFoundError") as info:
        load_object(f"{module}:handler", [tmp_path])
    assert info.value.hint is not None and "install 'lo_not_installed_pkg'" in info.value.hint


def test_the_tool_error_of_a_crashing_module_names_reference_and_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolctl

    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(
        "toolctl: 1\nname: t\ndescription: A tool.\nhandler: lo_crash_at_import:handler\n"
    )
    (tmp_path / "lo_crash_at_import.py").write_text(
        "raise RuntimeError('no db at postgres://admin:hunter2@db/prod')\n"
        "def handler(i):\n    return i\n"
    )
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n")
    monkeypatch.chdir(tmp_path)
    result = toolctl.load().call("t", {}, store=False)
    assert result.error is not None and result.error.code == "handler_not_found"
    assert "lo_crash_at_import:handler" in result.error.message
    assert "RuntimeError" in result.error.message and "hunter2" not in result.error.message


@pytest.mark.parametrize(
    "ref",
    ["pkg.mod:func", "mod:Class.method", "pkg.mod : func", "pkg.mod:func [extra]", "été:façon"],
)
def test_references_split_as_entry_points_do(ref: str) -> None:
    from importlib_metadata import EntryPoint

    from toolctl.references import parse

    ep = EntryPoint(name="ref", value=ref, group="toolctl")
    parsed = parse(ref)
    assert (parsed.module, parsed.attr) == (ep.module, ep.attr)


@pytest.mark.parametrize("ref", ["pkg.mod", "pkg.mod:", ":func", "pkg mod:func", ""])
def test_a_malformed_reference_is_refused(ref: str) -> None:
    from toolctl.references import parse

    with pytest.raises(HandlerReferenceError, match="not a Python reference"):
        parse(ref)

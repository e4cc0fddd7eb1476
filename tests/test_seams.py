"""Tests reach the process-wide state through seams (a Runtime they build, a parameter, a public
setting), never by patching or resetting a private global of a toolctl module."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
# "toolctl.x._private" as a monkeypatch / mock.patch target string
PRIVATE_TARGET = re.compile(r"""["']toolctl(\.\w+)*\._[a-z]\w*["']""")
MAYBE_PRIVATE = re.compile(r"""\w\._[a-z]|["']_[a-z]""")
RESETS = {"cache_clear", "clear", "reset"}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(dotted: str) -> bool:
    base = SRC.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _module_aliases(tree: ast.Module) -> set[str]:
    """The names a test file binds to toolctl modules."""
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("toolctl") and a.asname:
                    aliases.add(a.asname)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolctl"):
            for a in node.names:
                if _is_module(f"{node.module}.{a.name}"):
                    aliases.add(a.asname or a.name)
    return aliases


def _private_of(node: ast.AST, modules: set[str]) -> str | None:
    """``module._name`` when ``node`` is that attribute of a toolctl module."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
        and _is_private(node.attr)
    ):
        return f"{node.value.id}.{node.attr}"
    return None


def _patches(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [f"{path.name}: {m.group()}" for m in PRIVATE_TARGET.finditer(text)]
    if "toolctl" not in text or not MAYBE_PRIVATE.search(text):
        return found  # nothing private is named: no need to parse it
    tree = ast.parse(text)
    modules = _module_aliases(tree)
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"{where}: {p} =" for t in targets if (p := _private_of(t, modules))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr in RESETS and (p := _private_of(func.value, modules)):
                found.append(f"{where}: {p}.{func.attr}()")
            elif func.attr in ("setattr", "delattr", "object") and len(node.args) >= 2:
                owner, name = node.args[0], node.args[1]
                if (
                    isinstance(owner, ast.Name)
                    and owner.id in modules
                    and isinstance(name, ast.Constant)
                    and isinstance(name.value, str)
                    and _is_private(name.value)
                ):
                    found.append(f"{where}: {func.attr}({owner.id}, {name.value!r})")
    return found


def _test_code() -> list[Path]:
    """The suite's own modules (not the projects and node packages it uses as data)."""
    found = []
    for directory, dirs, files in os.walk(TESTS):
        dirs[:] = [d for d in dirs if d not in ("node_modules", "fixtures", "__pycache__")]
        found += [Path(directory, f) for f in files if f.endswith(".py")]
    return sorted(p for p in found if p != Path(__file__).resolve())


def test_no_test_patches_a_private_global_of_toolctl() -> None:
    found = [hit for path in _test_code() for hit in _patches(path)]
    assert found == []


def test_the_check_sees_each_kind_of_patch(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "from toolctl import cache\n"
        "from toolctl.runtime import resources as res\n"
        "def test(monkeypatch):\n"
        "    monkeypatch.setattr(cache, '_stat_sig', None)\n"
        "    monkeypatch.setattr('toolctl.runtime.resources._current', None)\n"
        "    res._current = None\n"
        "    cache._memo.cache_clear()\n"
        "    monkeypatch.setattr(cache, 'DEFAULTS', None)  # public: a setting\n",
        encoding="utf-8",
    )
    assert len(_patches(sample)) == 4

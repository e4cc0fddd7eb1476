"""Registry packs: installed distributions contributing tools via `toolctl.registries`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_toolctl, write

MARKER = 'from pathlib import Path\nPath(__file__).with_name("IMPORTED").write_text("ran")\n'


def _pack(site: Path, dist: str, package: str, tools: dict[str, str], target: str = "") -> None:
    """An installed distribution ``dist`` whose ``package.registry`` directory holds ``tools``."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    files = {
        f"{info.name}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n",
        f"{info.name}/entry_points.txt": (
            f"[toolctl.registries]\n{package} = {target or package + '.registry'}\n"
        ),
        f"{package}/__init__.py": MARKER,
        f"{package}/handlers.py": MARKER + "\ndef run(payload):\n    return payload\n",
    }
    files.update({f"{package}/registry/{name}": text for name, text in tools.items()})
    write(site, files)


def _tool(name: str, handler: str = "") -> str:
    extra = f"handler: {handler}\n" if handler else ""
    return f"toolctl: 1\nname: {name}\ndescription: Tool {name}.\n{extra}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write(
        tmp_path / "project",
        {"toolctl.yaml": "tools: tools.d\n", "tools.d/local.yaml": _tool("local_tool")},
    )


def _env(site: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(site)}


def test_pack_tools_load_with_package_origin_without_import(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(
        site,
        "acme-tools",
        "acme_tools",
        {
            "search.yaml": _tool("acme_search", "acme_tools.handlers:run"),
            "more/fetch.yaml": _tool("acme_fetch", "acme_tools.handlers:run"),
        },
    )
    result = run_toolctl("list", "--format", "json", cwd=project, env=_env(site))
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert sorted(rows) == ["acme_fetch", "acme_search", "local_tool"]
    assert rows["acme_search"]["origin"] == {
        "kind": "package",
        "name": "acme-tools",
        "file": str(site / "acme_tools" / "registry" / "search.yaml"),
    }
    assert rows["local_tool"]["origin"]["kind"] == "file"
    validated = run_toolctl("validate", cwd=project, env=_env(site))
    assert validated.returncode == 0, validated.stderr
    assert list(site.rglob("IMPORTED")) == []


def test_pack_handler_problems_are_reported(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(site, "acme-tools", "acme_tools", {"a.yaml": _tool("acme_a", "acme_tools.handlers:nope")})
    result = run_toolctl("validate", cwd=project, env=_env(site))
    assert result.returncode == 1
    assert "error TC402 'acme_tools.handlers:nope' does not resolve" in result.stderr
    assert list(site.rglob("IMPORTED")) == []


def test_no_packs_option_leaves_packs_out(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(site, "acme-tools", "acme_tools", {"a.yaml": _tool("local_tool")})
    result = run_toolctl("validate", "--no-packs", cwd=project, env=_env(site))
    assert result.returncode == 0, result.stderr


def test_clash_between_packs_names_both_origins(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(site, "acme-tools", "acme_tools", {"a.yaml": _tool("search")})
    _pack(site, "beta-tools", "beta_tools", {"b.yaml": _tool("search")})
    result = run_toolctl("validate", "--format", "json", cwd=project, env=_env(site))
    assert result.returncode == 1
    diags = json.loads(result.stdout)["diagnostics"]
    assert [d["code"] for d in diags] == ["TC204", "TC204"]
    for diag in diags:
        assert "duplicate tool name 'search'" in diag["message"]
        assert "acme-tools pack" in diag["message"]
        assert "beta-tools pack" in diag["message"]


def test_clash_between_pack_and_local_file(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(site, "acme-tools", "acme_tools", {"a.yaml": _tool("local_tool")})
    result = run_toolctl("validate", cwd=project, env=_env(site))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "TC204" in line]
    assert len(lines) == 2
    for line in lines:
        assert "tools.d/local.yaml:2:7" in line
        assert "acme-tools pack" in line


def test_pack_pointing_nowhere_is_a_diagnostic(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    _pack(site, "ghost-tools", "ghost_tools", {}, target="ghost_tools.missing")
    result = run_toolctl("validate", cwd=project, env=_env(site))
    assert result.returncode == 1
    assert "<pack ghost-tools>: error TC205" in result.stderr
    assert list(site.rglob("IMPORTED")) == []

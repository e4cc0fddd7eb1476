"""A release can be published: the version is written once, the changelog has a section per
release, the release check names what to fix, the repository URL is one URL, install hints work
for a distribution that is not on PyPI yet, and the release workflow publishes with trusted
publishing (it cannot run here; tests/release/test_release.py runs its build steps)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import toolctl
from tests.docs.pages import ROOT, project_metadata

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def release_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "release_check", ROOT / ".github" / "release_check.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def workflow() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def test_the_version_is_written_once() -> None:
    project = project_metadata()
    assert "version" not in project and project["dynamic"] == ["version"]
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert '[tool.hatch.version]\npath = "src/toolctl/__init__.py"' in pyproject
    assert release_check().version(ROOT) == toolctl.__version__
    assert importlib.metadata.version(toolctl.DISTRIBUTION) == toolctl.__version__


def test_the_current_version_has_a_changelog_section() -> None:
    notes = release_check().sections((ROOT / "CHANGELOG.md").read_text("utf-8"))
    assert re.search(r"^- ", notes[toolctl.__version__], re.M)
    assert "Unreleased" in notes  # where changes go until the next release


def _tree(root: Path, version: str, changelog: str) -> Path:
    (root / "src" / "toolctl").mkdir(parents=True)
    (root / "src" / "toolctl" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (root / "CHANGELOG.md").write_text(changelog)
    return root


READY = "# Changelog\n\n## Unreleased\n\n## 0.2.0 — 2026-12-01\n\n### Added\n- a thing\n"


def test_the_release_check_passes_a_ready_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path, "0.2.0", READY)
    assert release_check().main(["v0.2.0", "--root", str(root)]) == 0
    assert "v0.2.0 is ready" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("tag", "changelog", "says"),
    [
        ("v0.3.0", READY, "tag v0.3.0 does not match __version__ '0.2.0'"),
        ("v0.2.0", READY.replace("## 0.2.0", "## 0.1.9"), "no '## 0.2.0' section with entries"),
        ("v0.2.0", READY.replace("## Unreleased\n", "## Unreleased\n- forgotten\n"), "still has"),
    ],
)
def test_the_release_check_says_what_to_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str, changelog: str, says: str
) -> None:
    root = _tree(tmp_path, "0.2.0", changelog)
    assert release_check().main([tag, "--root", str(root)]) == 1
    assert says in capsys.readouterr().err


def test_the_repository_url_is_one_url() -> None:
    source = project_metadata()["urls"]["Source"]
    mkdocs = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert f"\nrepo_url: {source}\n" in mkdocs
    assert "\nedit_uri: edit/main/docs/\n" in mkdocs
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for url in re.findall(r"git\+(https://[^\s'\"@`]+)", page.read_text("utf-8")):
            assert url == source, page.name
        for url in re.findall(r"git clone (\S+)", page.read_text("utf-8")):
            assert url == source, page.name


def test_install_hints_work_before_the_distribution_is_published() -> None:
    from toolctl.install import install_hint
    from toolctl.runtime.history.postgres import INSTALL_HINT as POSTGRES_HINT
    from toolctl.server import INSTALL_HINT as SERVE_HINT

    hint = install_hint("mcp")
    assert "from a checkout: pip install '.[mcp]'" in hint
    assert (
        f"once {toolctl.DISTRIBUTION} is published there: pip install '{toolctl.DISTRIBUTION}[mcp]'"
        in hint
    )
    assert hint == SERVE_HINT
    assert install_hint("postgres") in POSTGRES_HINT
    recipe = (ROOT / "docs" / "lock.md").read_text("utf-8").split("## In CI", 1)[1]
    installs = re.findall(r"- run: (pip install .*)", recipe)
    source = project_metadata()["urls"]["Source"]
    assert installs == [f'pip install "{toolctl.DISTRIBUTION} @ git+{source}"']
    assert "once it is published there, this line becomes: pip install toolctl-registry" in recipe


def test_the_workflow_publishes_with_trusted_publishing() -> None:
    flow = workflow()
    assert flow["on"]["push"] == {"tags": ["v*"]}
    assert flow["permissions"] == {"contents": "read"}
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    assert "permissions" not in build  # only the publishing job may ask for an OIDC token
    assert publish["needs"] == "build"
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert "pypa/gh-action-pypi-publish@release/v1" in uses
    publish_step = next(s for s in publish["steps"] if "pypi-publish" in s.get("uses", ""))
    assert "with" not in publish_step  # no password, no token: trusted publishing
    assert "secrets." not in WORKFLOW.read_text("utf-8")
    checkout = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["persist-credentials"] is False


def test_the_workflow_builds_checks_and_smoke_tests_the_release() -> None:
    runs = [step.get("run", "") for step in workflow()["jobs"]["build"]["steps"]]
    assert 'python .github/release_check.py "$GITHUB_REF_NAME"' in runs
    assert "python -m build" in runs
    assert "python -m twine check --strict dist/*" in runs
    assert any(".github/release_smoke.sh /tmp/smoke/bin" in run for run in runs)
    # the tools it installs are the `release` extra's, with the same lower bounds
    extra = project_metadata()["optional-dependencies"]["release"]
    assert f"python -m pip install {' '.join(repr(r) for r in extra)}".replace('"', "'") in runs

"""docs/export.md's first section: its output is real, and its SDK calls accept the exports."""

from __future__ import annotations

import re
import sys

import pytest

from tests.export.conftest import FORMATS, REPO
from toolctl.cli.app import run
from toolctl.export import export
from toolctl.registry import Registry

README = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
COMMAND = "$ toolctl export openai calculator\n"


def _section() -> str:
    start = README.index("## Export to provider APIs")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def test_readme_shows_the_real_output(
    examples: Registry, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _section()
    shown_out = section.split(COMMAND, 1)[1].split("```", 1)[0]
    shown_err = section.split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # what a terminal shows: indented
    assert run(["export", "openai", "calculator"]) == 0
    out, err = capsys.readouterr()
    assert out == shown_out
    assert err == shown_err


def test_readme_lists_every_format() -> None:
    rows = re.findall(r"^\| `([a-z-]+)` \|", _section(), flags=re.M)
    assert rows == list(FORMATS)


def test_readme_sdk_calls_accept_the_exports(fixtures: Registry) -> None:
    """The calls the README shows, up to the network: each SDK takes the export as given."""
    import botocore.session
    from botocore.validate import ParamValidator

    types = pytest.importorskip("google.genai.types")  # no Python 3.10 release
    from mcp_types._v2025_11_25 import ListToolsResult

    config = types.GenerateContentConfig(**export(fixtures, "gemini"))
    assert config.tools and config.tools[0].function_declarations
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    request = {
        "modelId": "m",
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        **export(fixtures, "bedrock"),
    }
    shape = model.operation_model("Converse").input_shape
    report = ParamValidator().validate(request, shape)
    assert not report.has_errors(), report.generate_report()
    assert ListToolsResult.model_validate(export(fixtures, "mcp")).tools

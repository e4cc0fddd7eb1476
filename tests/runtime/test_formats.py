"""``format`` is enforced at run time: a bad value is an ``invalid_input`` naming the field."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolctl.registry import Registry
from toolctl.runtime import RunStatus

ROOT = Path(__file__).resolve().parents[2]
RUN_ID = re.compile(r"\b[0-9a-f]{20}\b")
BOOKING = """\
toolctl: 1
name: book
description: Book a slot.
handler: rt_handlers:echo
inputSchema:
  type: object
  properties:
    when: {type: string, format: date-time}
    callback: {type: string, format: uri}
    contact: {type: string, format: email}
    host: {type: string, format: hostname}
    link: {type: string, format: iri}
    wait: {type: string, format: duration}
  additionalProperties: false
"""
GOOD = {
    "when": "2026-03-01T09:30:00Z",
    "callback": "https://example.com/hook?id=1",
    "contact": "ada@example.com",
    "host": "api.example.com",
    "link": "https://例え.jp/パス",
    "wait": "PT15M",
}


@pytest.fixture
def reg(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry({"formats.yaml": BOOKING})


def test_valid_formats_pass(reg: Registry) -> None:
    result = reg.call("book", GOOD)
    assert result.status is RunStatus.SUCCEEDED, result.error


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("when", "next tuesday"),
        ("when", "2026-02-30T09:30:00Z"),
        ("callback", "not a uri"),
        ("callback", "/relative/only"),
        ("contact", "ada.example.com"),
        ("host", "-bad-.example.com"),
        ("link", "https://example.com/a b"),
        ("wait", "15 minutes"),
    ],
)
def test_a_bad_value_is_invalid_input_naming_the_field(reg: Registry, field: str, bad: str) -> None:
    result = reg.call("book", {**GOOD, field: bad})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_input"
    [detail] = result.error.details
    assert (detail["path"], detail["keyword"]) == (f"/{field}", "format")
    assert result.model_output is not None  # what the model reads names the field and the format
    assert f"/{field}: {bad!r} is not a" in result.model_output["value"]


def test_format_packages_load_only_when_a_format_is_checked() -> None:
    """`--help`, and validating a schema without those formats, import no checker package."""
    code = (
        "import sys\n"
        "from toolctl.schema import make_validator\n"
        "v = make_validator({'type': 'object', 'properties': {'n': {'type': 'integer'}}})\n"
        "assert v.is_valid({'n': 1})\n"
        "lazy = ('rfc3339_validator', 'rfc3986_validator', 'fqdn', 'isoduration', 'jsonpointer')\n"
        "print(sorted(m for m in lazy if sys.modules.get(m) is not None))\n"
        "v = make_validator({'type': 'string', 'format': 'date-time'})\n"
        "assert not v.is_valid('soon')\n"
        "print(sorted(m for m in lazy if sys.modules.get(m) is not None))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == ["[]", "['rfc3339_validator']"]


def test_readme_formats_example_is_real_output(tmp_path: Path) -> None:
    """docs/run.md § Formats: the command's output, run in a copy of docs/examples/formats."""
    text = (ROOT / "docs" / "run.md").read_text("utf-8")
    section = text[text.index("\n## Formats\n") :]
    section = section[: section.index("\n## ", 1)]
    match = re.search(r"```console\n\$ toolctl ([^\n]+)\n(.*?)```", section, re.S)
    assert match is not None
    work = tmp_path / "formats"
    shutil.copytree(ROOT / "docs" / "examples" / "formats", work)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", *shlex.split(match.group(1))],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    assert RUN_ID.sub("<run>", done.stdout + done.stderr) == RUN_ID.sub("<run>", match.group(2))

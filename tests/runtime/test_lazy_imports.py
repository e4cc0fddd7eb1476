"""A plain synchronous call imports only what it uses: no event loop, export module, PostgreSQL
store or entry-point scanner (each was a visible part of ``toolctl run``'s start-up)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

UNUSED = ["asyncio", "ssl", "concurrent.futures", "toolctl.export", "importlib_metadata",
          "toolctl.runtime.history.postgres"]  # fmt: skip

HANDLERS = """
def shout(args):
    return {"text": args["text"].upper()}


async def ashout(args):
    return {"text": args["text"].upper()}
"""

TOOL = """toolctl: 1
name: {name}
description: Upper-cases a text.
handler: lazy_handlers:{name}
strict: true
inputSchema:
  type: object
  properties:
    text: {{type: string}}
    times: {{type: integer}}
  required: [text]
  additionalProperties: false
"""

PROBE = """
import json, sys
import toolctl
registry = toolctl.load()
before = set(sys.modules)
results = [registry.call(name, args) for name, args in json.loads(sys.argv[1])]
new = set(sys.modules) - before
print(json.dumps({"output": [r.output for r in results],
                  "loaded": [m for m in json.loads(sys.argv[2]) if m in new]}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "lazy_handlers.py").write_text(HANDLERS, encoding="utf-8")
    for name in ("shout", "ashout"):
        (tmp_path / "tools.d" / f"{name}.yaml").write_text(TOOL.format(name=name), "utf-8")
    return tmp_path


def _probe(project: Path, calls: list[tuple[str, dict[str, object]]]) -> dict[str, list[object]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(calls), json.dumps(UNUSED)],
        cwd=project, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_sync_call_imports_no_event_loop(project: Path) -> None:
    # a strict tool's call without a null needs no mapping back from the strict form either
    found = _probe(project, [("shout", {"text": "hi"}), ("shout", {"text": "yo", "times": 2})])
    assert found == {"output": [{"text": "HI"}, {"text": "YO"}], "loaded": []}


@pytest.mark.slow
def test_calls_that_need_the_loop_or_the_strict_mapping_still_get_them(project: Path) -> None:
    found = _probe(project, [("ashout", {"text": "a"}), ("shout", {"text": "b", "times": None})])
    assert found["output"] == [{"text": "A"}, {"text": "B"}]
    assert {"asyncio", "toolctl.export"} <= set(found["loaded"])  # type: ignore[arg-type]

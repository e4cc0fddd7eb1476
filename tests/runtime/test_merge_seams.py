"""Where this round's branches met in the pipeline (secrets, budget, cli): each step the
branches share still happens once, in the order the others rely on.

A callable error transform sends a run's error down the off-the-loop path (budget); that path
must scrub the error like the plain one does (secrets) before the transform, the views, the
result or the stored row see it."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.registry import Registry
from toolctl.runtime import RunStatus

KEY = "sk-" + "A1b2C3d4E5f6G7h8J9k0"  # secret-shaped: redacted even where no schema marks it
TOKEN = "hunter2-very-private"  # marked x-sensitive in the input schema

TOOLS = """\
toolctl: 1
tools:
  - name: leaky
    description: Fails with a message quoting a secret.
    handler: seam_handlers:leak
    inputSchema:
      type: object
      properties: {token: {type: string, x-sensitive: true}}
  - name: leaky_transformed
    description: The same, with a callable error transform.
    handler: seam_handlers:leak
    transform:
      display:
        error: {call: seam_handlers:show_error}
    inputSchema:
      type: object
      properties: {token: {type: string, x-sensitive: true}}
"""

HANDLERS = f"""\
SEEN = []

class Unreadable(dict):
    def items(self):
        raise RuntimeError("upstream refused " + self["token"] + " with key {KEY}")

def leak(args):
    # fails in toolctl's own output check, whose message quotes the exception's text
    return Unreadable(token=args.get("token", "none"))

def show_error(payload):
    SEEN.append(repr(payload))
    return payload["error"]
"""


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    root = tmp_path / "proj"
    (root / "tools.d").mkdir(parents=True)
    (root / "tools.d" / "seams.yaml").write_text(TOOLS, encoding="utf-8")
    (root / "seam_handlers.py").write_text(HANDLERS, encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: ['.']\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(__import__("sys").modules, "seam_handlers", raising=False)
    monkeypatch.chdir(root)
    return toolctl.load(project=root)


@pytest.mark.parametrize("args", [{"token": TOKEN}, {}], ids=["marked", "shaped"])
@pytest.mark.parametrize("tool", ["leaky", "leaky_transformed"])
def test_a_failed_run_never_quotes_a_secret_with_or_without_an_error_transform(
    reg: Registry, tool: str, args: dict[str, str]
) -> None:
    import seam_handlers

    result = reg.call(tool, args)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "upstream refused" in result.error.message
    stored = reg.get_run(result.run_id)  # the row in the history
    for where in (
        repr(result.error),
        repr(result.display),
        repr(result.transcript),
        repr(result.model_output),
        repr(stored.error),
        repr(stored.display),
        *seam_handlers.SEEN,  # what the error transform (user code) was given
    ):
        assert TOKEN not in where and KEY not in where, where
    assert seam_handlers.SEEN or tool == "leaky"

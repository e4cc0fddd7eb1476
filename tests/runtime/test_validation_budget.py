"""One call's validation has a total budget and never runs on a shared event loop (issue 20, 2).

A call whose validation runs out of ``run.validationBudgetMs`` is refused (never accepted, also
through ``not``); validation, synchronous hooks, callable transforms and ``toModelOutput`` run
on worker threads when the pipeline runs on someone else's loop (the server's), so the loop
keeps serving while they work.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import toolctl
from toolctl.cli.app import run as cli
from toolctl.errors import ConfigError
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, pending

HOSTILE = "^(?!x)(a|a)+$"  # lookahead: the backtracking fallback, exponential on "aaa...!"

TOOLS = f"""\
toolctl: 1
tools:
  - name: guarded
    description: A pattern that backtracks on hostile input.
    handler: budget_handlers:echo
    inputSchema:
      type: object
      properties: {{s: {{type: string, pattern: "{HOSTILE}"}}}}
  - name: forbidding
    description: Forbids values matching a backtracking pattern.
    handler: budget_handlers:echo
    inputSchema:
      type: object
      properties: {{s: {{type: string, not: {{pattern: "{HOSTILE}"}}}}}}
  - name: blocking
    description: Hooks, transforms and toModelOutput that block until released.
    handler: budget_handlers:echo
    hooks:
      onInputAvailable: budget_handlers:blocking_hook
    transform:
      display:
        output: {{call: budget_handlers:blocking_transform}}
    toModelOutput: {{call: budget_handlers:blocking_model_output}}
    inputSchema:
      type: object
      properties: {{s: {{type: string, format: email}}}}
  - name: blocking_error
    description: An error transform that blocks until released.
    handler: budget_handlers:echo
    transform:
      display:
        error: {{call: budget_handlers:blocking_error}}
    inputSchema:
      type: object
      properties: {{n: {{type: integer}}}}
  - name: blocking_phases
    description: Approval, suspend and failure transforms that block until released.
    handler: budget_handlers:suspend_or_fail
    requireApproval: true
    transform:
      display:
        approval: {{call: budget_handlers:blocking_approval}}
        suspend: {{call: budget_handlers:blocking_suspend}}
        error: {{call: budget_handlers:blocking_failure}}
    inputSchema:
      type: object
      properties: {{fail: {{type: boolean}}}}
  - name: resumable
    description: Suspends; its resume data has a backtracking pattern and a blocking transform.
    handler: budget_handlers:suspend_or_fail
    resumeSchema:
      type: object
      properties: {{s: {{type: string, pattern: "{HOSTILE}"}}}}
    transform:
      display:
        resume: {{call: budget_handlers:blocking_resume}}
"""

HANDLERS = """\
import threading

THREADS = {}
PHASES = (
    "hook", "transform", "toModelOutput", "error", "approval", "suspend", "failure", "resume"
)
RELEASE = {name: threading.Event() for name in PHASES}

def echo(args):
    return args

def _block(name):
    THREADS[name] = threading.current_thread().name
    THREADS[name + ":released"] = RELEASE[name].wait(30)

def blocking_hook(payload):
    _block("hook")

def blocking_transform(payload):
    _block("transform")
    return payload["output"]

def blocking_error(payload):
    _block("error")
    return payload["error"]

def blocking_approval(payload):
    _block("approval")
    return payload

def blocking_suspend(payload):
    _block("suspend")
    return payload

def blocking_failure(payload):
    _block("failure")
    return payload

def blocking_resume(payload):
    _block("resume")
    return payload

def suspend_or_fail(args, ctx):
    if ctx.resumed:
        return {"resumed": True}
    if args.get("fail"):
        raise RuntimeError("the handler failed")
    ctx.suspend({"question": "go on?"})

def blocking_model_output(output):
    _block("toModelOutput")
    return {"type": "text", "value": "ok"}
"""


def _project(root: Path, config: str = "") -> Registry:
    (root / "tools.d").mkdir(parents=True)
    (root / "tools.d" / "budget.yaml").write_text(TOOLS, encoding="utf-8")
    (root / "budget_handlers.py").write_text(HANDLERS, encoding="utf-8")
    (root / "toolctl.yaml").write_text(f"tools: tools.d\npythonPath: ['.']\n{config}")
    return toolctl.load(project=root)


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.syspath_prepend(str(tmp_path / "proj"))
    registry = _project(tmp_path / "proj", "run: {validationBudgetMs: 100}\n")
    monkeypatch.chdir(tmp_path / "proj")
    return registry


def test_a_call_over_its_validation_budget_is_refused(reg: Registry) -> None:
    result = reg.call("guarded", {"s": "a" * 60 + "!"}, store=False)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_input"
    assert "budget of 100 ms" in result.error.message
    assert "run.validationBudgetMs" in result.error.message
    assert reg.call("guarded", {"s": "aaa"}, store=False).ok


def test_a_forbidden_value_cannot_pass_not_by_timing_out(reg: Registry) -> None:
    result = reg.call("forbidding", {"s": "a" * 60 + "!"}, store=False)
    assert result.status is RunStatus.FAILED  # before: the timeout was "no match", so accepted
    assert result.error is not None and result.error.code == "invalid_input"
    assert reg.call("forbidding", {"s": "b"}, store=False).ok


@pytest.mark.parametrize("value", ["0", "true", "1.5", "86400001"])
def test_the_budget_setting_is_checked_when_the_project_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Like run.memoryLimitMb: with the rest of the config (so `validate` reports it), at the
    line of ``run``, not only when a tool is called."""
    monkeypatch.syspath_prepend(str(tmp_path / "proj"))
    with pytest.raises(ConfigError, match=r"toolctl\.yaml:3:\d+: run\.validationBudgetMs must be"):
        _project(tmp_path / "proj", f"run: {{validationBudgetMs: {value}}}\n")


def test_4_kib_of_hostile_input_through_run_is_refused(
    reg: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    value = '{"s": "' + "a" * 4096 + '!"}'
    code = cli(["run", "guarded", "--input", value])
    err = capsys.readouterr().err
    assert code == 1
    assert "validation exceeded its budget" in err and "run.validationBudgetMs" in err


def test_user_code_and_validation_run_off_a_shared_loop(reg: Registry) -> None:
    import budget_handlers

    budget_handlers.THREADS.clear()

    async def main() -> object:
        # While a hook/transform/toModelOutput blocks its thread, this loop must keep running:
        # the task below releases it. On the loop itself they would wait for themselves.
        async def release_when_blocked() -> None:
            waiting = {"hook", "transform", "toModelOutput", "error"}
            while waiting:
                for name in waiting & set(budget_handlers.THREADS):
                    budget_handlers.RELEASE[name].set()
                    waiting.discard(name)
                await asyncio.sleep(0.01)

        releaser = asyncio.ensure_future(release_when_blocked())
        result = await reg.acall("blocking", {"s": "ada@example.com"}, store=False)
        refused = await reg.acall("blocking_error", {"n": "not a number"}, store=False)
        await releaser
        return result, refused

    result, refused = asyncio.run(main())
    assert getattr(result, "ok", False), result
    assert getattr(refused, "status", None) is RunStatus.FAILED
    for name in ("hook", "transform", "toModelOutput", "error"):
        assert budget_handlers.THREADS[name + ":released"] is True, name
        assert budget_handlers.THREADS[name] != threading.main_thread().name


def test_approval_suspend_and_failure_transforms_run_off_a_shared_loop(reg: Registry) -> None:
    import budget_handlers

    budget_handlers.THREADS.clear()
    names = ("approval", "suspend", "failure")

    async def main() -> tuple[object, object]:
        async def release_when_blocked() -> None:
            waiting = set(names)
            while waiting:
                for name in waiting & set(budget_handlers.THREADS):
                    budget_handlers.RELEASE[name].set()
                    waiting.discard(name)
                await asyncio.sleep(0.01)

        releaser = asyncio.ensure_future(release_when_blocked())
        suspended = await reg.acall(
            "blocking_phases", {}, approver=lambda request: True, store=False
        )
        failed = await reg.acall("blocking_phases", {"fail": True}, approve=True, store=False)
        await releaser
        return suspended, failed

    suspended, failed = asyncio.run(main())
    assert getattr(suspended, "status", None) is RunStatus.SUSPENDED, suspended
    assert getattr(failed, "status", None) is RunStatus.FAILED, failed
    for name in names:
        assert budget_handlers.THREADS[name + ":released"] is True, name
        assert budget_handlers.THREADS[name] != threading.main_thread().name


def test_validation_runs_on_a_worker_thread_on_a_shared_loop(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolctl.runtime.pipeline import validation

    seen: list[str] = []
    original = validation.schema_problems

    def spy(*args: object) -> object:
        seen.append(threading.current_thread().name)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(validation, "schema_problems", spy)
    result = asyncio.run(reg.acall("guarded", {"s": "aaa"}, store=False))
    assert result.ok and seen and threading.main_thread().name not in seen
    seen.clear()
    assert reg.call("guarded", {"s": "aaa"}, store=False).ok  # the sync API: in place
    assert seen == [threading.current_thread().name]


def test_resume_data_is_checked_within_the_budget_and_off_a_shared_loop(reg: Registry) -> None:
    """Resume data is validated like input: a value over the budget is refused (the run stays
    suspended), and the resume transforms and validation run off the server's loop."""
    import budget_handlers

    budget_handlers.THREADS.clear()
    first = reg.call("resumable", {})
    assert first.status is RunStatus.SUSPENDED
    refused = reg.resume(first.run_id, {"s": "a" * 60 + "!"})
    assert refused.status is RunStatus.SUSPENDED and refused.error is not None
    assert refused.error.code == "invalid_resume"
    assert "run.validationBudgetMs" in refused.error.message

    async def main() -> object:
        async def release_when_blocked() -> None:
            while "resume" not in budget_handlers.THREADS:
                await asyncio.sleep(0.01)
            budget_handlers.RELEASE["resume"].set()

        releaser = asyncio.ensure_future(release_when_blocked())
        result = await pending.aresume(reg, first.run_id, {"s": "aaa"})
        await releaser
        return result

    result = asyncio.run(main())
    assert getattr(result, "ok", False), result
    assert budget_handlers.THREADS["resume:released"] is True
    assert budget_handlers.THREADS["resume"] != threading.main_thread().name

"""Running test cases through the call pipeline, exactly as ``toolctl run`` calls tools.

Every case is a ``registry.acall`` with the case's input, context, approval decision, resume data
and timeout, against a *temporary* state store that is thrown away afterwards, so tests never
touch the user's run history. Approval-gated handlers run only for cases that say
``approve: true``: no approver is passed, so any other case leaves the run awaiting approval.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.errors import ToolctlError
from toolctl.principal import Principal
from toolctl.runtime import clientask
from toolctl.runtime.history.records import Origin
from toolctl.schema import cached_validator
from toolctl.testing import expect, fuzz
from toolctl.testing.cases import EXAMPLE, TestCase, cannot_run, collect, fuzz_case, matches
from toolctl.testing.report import CaseResult, Outcome, TestReport

if TYPE_CHECKING:
    from toolctl.registry import Registry
    from toolctl.runtime.history.records import RunStore
    from toolctl.spec import ToolSpec

DEFAULT_TIMEOUT = 30.0
"""Seconds a case may take when neither the case, the tool nor the options say."""
GRACE = 5.0
"""Extra seconds the runner waits beyond a case's timeout before it gives up on the pipeline."""

Progress = Callable[[str, "CaseResult | None", int, int], None]
"""Called before each case with (its id, None, cases done, cases in all) and after it with
(its id, its result, cases done, cases in all)."""


@dataclass
class TestOptions:
    """What to run: selection, fuzzing and limits (the options of ``toolctl test``)."""

    __test__ = False  # not a pytest class

    tools: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    keyword: str | None = None
    examples: bool = True
    fuzz: int = 0
    seed: int | None = None
    timeout: float | None = None
    allow_errors: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, section: dict[str, Any], origin: Any = None) -> TestOptions:
        """Defaults from the ``test:`` section of the configuration (``timeout``,
        ``allowErrors``); :class:`~toolctl.errors.ConfigError` when they are malformed."""
        from toolctl.errors import ConfigError

        unknown = sorted(set(section) - {"timeout", "allowErrors"})
        if unknown:
            raise ConfigError(
                f"{origin}: unknown test setting(s) {', '.join(unknown)}",
                hint="known test settings: allowErrors, timeout",
            )
        timeout = section.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            raise ConfigError(f"{origin}: test.timeout must be a number of seconds above 0")
        allowed = section.get("allowErrors", [])
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            raise ConfigError(f"{origin}: test.allowErrors must be a list of exception names")
        return cls(timeout=timeout, allow_errors=tuple(allowed))


@contextlib.asynccontextmanager
async def temporary_store(registry: Registry) -> AsyncIterator[tuple[Registry, RunStore]]:
    """A copy of ``registry`` whose state path is a fresh temporary database, and that store."""
    from toolctl.runtime.history.sqlite import SqliteStore

    with tempfile.TemporaryDirectory(prefix="toolctl-test-") as tmp:
        path = Path(tmp) / "state.db"
        project = registry.project
        if project is not None:
            project = dataclasses.replace(project, state_path=path)
        isolated = dataclasses.replace(registry, project=project)
        store = SqliteStore(path)
        try:
            yield isolated, store
        finally:
            _stop_workers(store)
            store.close()


def _stop_workers(store: RunStore) -> None:
    """Cancel background runs still going (cases that expect ``running``) before cleanup."""
    from toolctl.runtime.history import runs

    for record in store.query(status="running", limit=1000):
        with contextlib.suppress(Exception):  # it may end on its own meanwhile
            runs.cancel(store, record.run_id)


class Runner:
    """Runs cases (and fuzzing) for one registry against one temporary store."""

    def __init__(self, registry: Registry, store: RunStore, options: TestOptions) -> None:
        self.registry = registry
        self.store = store
        self.options = options

    def timeout_for(self, spec: ToolSpec, case: TestCase) -> float:
        """The case's timeout, else the tool's, else the run's default."""
        return case.timeout or spec.timeout or self.options.timeout or DEFAULT_TIMEOUT

    async def call(self, spec: ToolSpec, case: TestCase) -> Any:
        """One pipeline call for ``case`` (the same options ``toolctl run`` passes)."""
        options: dict[str, Any] = {
            "context": case.context,
            "store": self.store,
            "timeout": self.timeout_for(spec, case),
            "origin": Origin.TEST,
        }
        if case.principal is not None:
            options["principal"] = _principal(case.principal)
        if case.approve:
            options["approve"] = True
        if case.decline:
            options["decline"] = case.decline
        if case.answers is not None:
            options["on_suspend"] = clientask.answering(case.answers)
        call = self.registry.acall(spec.name, case.input, **options)
        result = await asyncio.wait_for(call, options["timeout"] + GRACE)
        if case.resume is not None and expect.status_of(result) == "suspended":
            result = await self._resumed(result.run_id, case.resume, options["timeout"])
        if expect.status_of(result) == "running" and case.expect.get("status") != "running":
            result = await self._finished(result.run_id, options["timeout"])
        return result

    async def _resumed(self, run_id: str, data: Any, timeout: float) -> Any:
        """The suspended run continued with ``data``, as ``toolctl resume`` does it."""
        from toolctl.runtime import api

        resumed = api.aresume(self.registry, run_id, data, store=self.store)
        return await asyncio.wait_for(resumed, timeout + GRACE)

    async def _finished(self, run_id: str, timeout: float) -> Any:
        """The stored result of a background run once its worker has ended it."""
        from toolctl.runtime import api

        return await asyncio.to_thread(
            api.wait, self.registry, run_id, timeout + GRACE, store=self.store
        )

    async def run_case(self, spec: ToolSpec, case: TestCase) -> CaseResult:
        """Run one case and judge it."""
        if case.skip:
            return CaseResult(case, Outcome.SKIPPED, message=case.skip)
        started = time.perf_counter()
        if case.kind == EXAMPLE and cannot_run(spec):
            return self.check_example_input(spec, case, started)
        try:
            result = await self.call(spec, case)
        except (asyncio.TimeoutError, TimeoutError):
            return CaseResult(
                case,
                Outcome.ERROR,
                _ms(started),
                message=f"no result within {self.timeout_for(spec, case) + GRACE:g}"
                " s: the pipeline did not enforce the timeout",
            )
        except Exception as exc:  # a bug in toolctl or a broken case: report it, go on
            return CaseResult(case, Outcome.ERROR, _ms(started), message=_problem(exc))
        validator = None
        if spec.output_schema is not None and not spec.background:
            # a background run's result comes from the history, which keeps only the
            # transcript form of the output; its worker already enforced outputSchema
            validator = cached_validator(spec.output_schema)
        mismatches = expect.check(case, result, validator)
        outcome = Outcome.FAILED if mismatches else Outcome.PASSED
        return CaseResult(case, outcome, _ms(started), mismatches, run=_run_dict(result))

    def check_example_input(self, spec: ToolSpec, case: TestCase, started: float) -> CaseResult:
        """An example of a tool that cannot run here: its input must still validate."""
        problems = cached_validator(spec.input_schema).errors(case.input, limit=5)
        if problems:
            details = tuple(f"at {p.pointer or '/'}: {p.message}" for p in problems)
            mismatch = expect.Mismatch(
                "input", "the input example does not match inputSchema", details=details
            )
            return CaseResult(case, Outcome.FAILED, _ms(started), [mismatch])
        return CaseResult(
            case,
            Outcome.PASSED,
            _ms(started),
            message=f"input validated; not run: {cannot_run(spec)}",
        )

    async def run_fuzz(self, spec: ToolSpec, kind: str, seed: int) -> CaseResult:
        """Fuzz one tool with one kind of input; a finding fails the case."""
        case = fuzz_case(spec, kind)
        started = time.perf_counter()

        async def call(value: Any) -> Any:
            return await self.call(spec, dataclasses.replace(case, input=value))

        try:
            found = await fuzz.fuzz_tool(
                spec,
                call,
                runs=self.options.fuzz,
                seed=seed,
                kind=kind,
                allow_errors=self.options.allow_errors,
            )
        except Exception as exc:
            return CaseResult(case, Outcome.ERROR, _ms(started), message=_problem(exc))
        if found.skipped:
            return CaseResult(case, Outcome.SKIPPED, _ms(started), message=found.skipped)
        if found.finding is None:
            return CaseResult(
                case,
                Outcome.PASSED,
                _ms(started),
                message=f"{found.runs} {kind} input(s) handled correctly" + _answers(found),
            )
        finding = found.finding
        message = (
            f"{finding.problem} (input {finding.index} of seed {seed}; shrunk in "
            f"{finding.shrink_calls} call(s))"
        )
        return CaseResult(case, Outcome.FAILED, _ms(started), message=message, finding=finding)


def _answers(found: fuzz.FuzzOutcome) -> str:
    if not found.answered:
        return ""
    parts = ", ".join(f"{n} {name}" for name, n in found.answered.most_common())
    return f" ({parts}: deliberate handler errors)"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _run_dict(result: Any) -> dict[str, Any] | None:
    """The run as a report shows it: no secret value it saw (its raw output included)."""
    to_dict = getattr(result, "to_dict", None)
    if not callable(to_dict):
        return None
    data: dict[str, Any] = to_dict()
    return result.scrub(data) if getattr(result, "secrets", None) else data


def plan(registry: Registry, options: TestOptions) -> list[tuple[ToolSpec, TestCase | str]]:
    """The work in order: (tool, case) pairs, then (tool, "valid"/"invalid") fuzz runs."""
    specs = registry.select(options.tools or None, options.tags or None)
    work: list[tuple[ToolSpec, TestCase | str]] = []
    for spec in specs:
        work.extend(
            (spec, case)
            for case in collect([spec], keyword=options.keyword, examples=options.examples)
        )
    if options.fuzz > 0:
        for spec in specs:
            work.extend(
                (spec, kind)
                for kind in (fuzz.VALID, fuzz.INVALID)
                if matches(fuzz_case(spec, kind).id, options.keyword)
            )
    return work


async def arun_tests(
    registry: Registry, options: TestOptions | None = None, on_progress: Progress | None = None
) -> TestReport:
    """Run the selected cases (and fuzzing) and return the report. Never raises for a failure."""
    options = options or TestOptions()
    seed = options.seed if options.seed is not None else int(time.time() * 1000) % 1_000_000
    work = plan(registry, options)
    report = TestReport(seed=seed if options.fuzz else options.seed)
    started = time.perf_counter()
    async with temporary_store(registry) as (isolated, store):
        runner = Runner(isolated, store, options)
        for done, (spec, item) in enumerate(work):
            case_id = item.id if isinstance(item, TestCase) else fuzz_case(spec, item).id
            if on_progress is not None:
                on_progress(case_id, None, done, len(work))
            if isinstance(item, TestCase):
                result = await runner.run_case(spec, item)
            else:
                result = await runner.run_fuzz(spec, item, seed)
            report.results.append(result)
            if on_progress is not None:
                on_progress(case_id, result, done + 1, len(work))
    report.duration_ms = _ms(started)
    return report


def run_tests(
    registry: Registry, options: TestOptions | None = None, on_progress: Progress | None = None
) -> TestReport:
    """Synchronous :func:`arun_tests` (runs its own event loop)."""
    return asyncio.run(arun_tests(registry, options, on_progress))


def _problem(exc: Exception) -> str:
    """What went wrong: a user error's own message, a bug's exception type too."""
    if isinstance(exc, ToolctlError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _principal(declared: dict[str, Any]) -> Principal:
    """A case's ``principal:`` (checked by the format schema) as the caller it runs as."""
    return Principal(
        declared["iss"],
        declared["sub"],
        declared.get("client_id"),
        frozenset(declared.get("scopes", ())),
    )

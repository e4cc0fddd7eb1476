"""Execution: load the handler and invoke it (in process or isolated), with what it needs.

The pipeline (:mod:`toolctl.runtime.pipeline`) maps how the invocation ended to the run's end
state; :func:`user_traceback` keeps the frames of a failed handler for the developer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolctl.errors import HandlerReferenceError
from toolctl.runtime.context import AbortSignal, SuspendRequested
from toolctl.runtime.execution.invoke import HandlerTimeout, invoke, wants_context
from toolctl.runtime.execution.loading import load_callable
from toolctl.runtime.pipeline.state import StepFailed
from toolctl.runtime.redact import hold_more, release_secrets
from toolctl.runtime.result import ErrorCode
from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.state import CallSite, RunState


class Executor:
    """Invocation of one run's handler."""

    __slots__ = ("site", "state")

    def __init__(self, state: RunState, site: CallSite) -> None:
        self.state = state
        self.site = site

    def load(self) -> Callable[..., Any]:
        """The handler; :class:`StepFailed` when there is none to run."""
        spec = self.state.spec
        if spec.handler is None and (spec.http is not None or spec.upstream is not None):
            return self._builtin()
        if spec.handler is None:
            raise StepFailed(
                ErrorCode.NO_HANDLER.value,
                f"{spec.name} has no handler: it is declared for export only",
            )
        try:
            return load_callable(spec.handler, self.site.python_path)
        except HandlerReferenceError as exc:
            raise StepFailed(
                ErrorCode.HANDLER_NOT_FOUND.value, self.state.scrub(str(exc))
            ) from None

    def _builtin(self) -> Callable[..., Any]:
        """The built-in HTTP or upstream handler; the credentials it will send become the run's
        secrets first, so nothing that leaves the run (output, error, history, logs) can quote
        them."""
        from toolctl.runtime.execution.httpcall import HttpHandler, secret_values

        state = self.state
        spec = state.spec
        found = secret_values(spec.secrets)
        if found - state.secrets:
            state.secrets = state.secrets | found
        if spec.http is not None:
            return HttpHandler(spec.name, spec.http)
        from toolctl.upstream.handler import UpstreamHandler

        locked = self.site.locked
        return UpstreamHandler(spec, None if locked is None else locked.get(spec.name))

    @property
    def in_place(self) -> bool:
        """True when a sync handler would run on this thread (blocking the loop, which is
        then the synchronous API's private loop): no timer can fire while it runs."""
        state = self.state
        return (
            state.spec.isolation != "subprocess" and state.timeout is None and owns_running_loop()
        )

    async def invoke(
        self, handler: Callable[..., Any], ended: Callable[[], object] | None = None
    ) -> Any:
        """Run the handler once; its output (exceptions say how it ended otherwise).
        ``ended`` runs as soon as the handler has returned, on the thread it ran on (before this
        coroutine resumes, which on a busy loop can be much later)."""
        state = self.state
        if state.spec.isolation == "subprocess":
            return await self._isolated()
        if wants_context(handler):  # most handlers take only the input: skip building a context
            args: tuple[Any, ...] = (state.input, state.context_for_handler())
        else:
            args = (state.input,)
        # What the handler logs on its own is scrubbed of the run's secrets until the handler
        # has ended (a timed-out one may go on after its run has ended).
        secrets_ = state.secret_values
        hold_more(secrets_)
        return await invoke(
            handler,
            args,
            state.timeout,
            state.abort,
            in_place=owns_running_loop(),
            name=f"toolctl:{state.run_id}",
            ended=functools.partial(_ended, secrets_, ended),
        )

    async def _isolated(self) -> Any:
        from toolctl.runtime.execution.isolation.caller import run_isolated

        state = self.state
        payload = {
            "input": state.input,
            "context": state.context,
            "run_id": state.run_id,
            "tool_name": state.spec.name,
            "timeout": state.timeout,
            "resume_data": state.resume_data,
            "approval": state.approval.to_dict() if state.approval else None,
            "limits": self.site.limits.for_child(state.timeout),
            "client_capabilities": state.options.client_capabilities,
        }
        ref = state.spec.handler or ""

        def work() -> Any:
            return run_isolated(ref, self.site.python_path, payload, state.timeout, state.abort)

        outcome = await invoke(work, (), None, AbortSignal(), in_place=owns_running_loop())
        for text in outcome.notes:
            state.note(text)
        if outcome.kind == "ok":
            return outcome.value
        if outcome.kind == "suspend":
            raise SuspendRequested(outcome.value)
        if outcome.kind == "timeout":
            state.note("the handler process group was killed at the deadline")
            raise HandlerTimeout(state.timeout or 0.0)
        if outcome.kind == "cancelled":
            raise KeyboardInterrupt
        if outcome.traceback:  # kept like an in-process handler's, for the developer only
            state.traceback = state.scrub(outcome.traceback)
        raise StepFailed(ErrorCode.HANDLER_ERROR.value, state.scrub(outcome.message))


def _ended(secrets_: Callable[[], frozenset[str]], then: Callable[[], object] | None) -> None:
    """The handler has returned: its log lines no longer need the run's secrets, and ``then``."""
    release_secrets(secrets_)
    if then is not None:
        then()

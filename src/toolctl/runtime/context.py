"""The context a handler receives as its optional second argument."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from toolctl.runtime import clientask
from toolctl.runtime.pipeline.tracing import tracer
from toolctl.runtime.redact import install_log_filter, redact, redact_text, scrub_json
from toolctl.runtime.result import ApprovalInfo

log = logging.getLogger("toolctl.runtime")
install_log_filter(log)


class ToolAborted(Exception):
    """Raised by :meth:`AbortSignal.raise_if_aborted` once a run is timed out or cancelled."""


class SuspendRequested(BaseException):
    """Raised by :meth:`ToolContext.suspend`; a ``BaseException`` so ``except Exception`` in a
    handler does not swallow it."""

    def __init__(self, payload: Any) -> None:
        super().__init__("tool suspended")
        self.payload = payload


class AbortSignal:
    """Set when the run times out or is cancelled; cooperative handlers check it."""

    _lock = threading.Lock()

    def __init__(self) -> None:
        self._aborted = False
        self._event: threading.Event | None = None  # made on first wait: most runs never wait
        self.reason: str | None = None

    def _ensure_event(self) -> threading.Event:
        with self._lock:
            if self._event is None:
                self._event = threading.Event()
                if self._aborted:
                    self._event.set()
            return self._event

    @property
    def aborted(self) -> bool:
        return self._aborted

    def wait(self, seconds: float | None = None) -> bool:
        """Sleep up to ``seconds``; True as soon as the run is aborted (an interruptible sleep)."""
        return self._ensure_event().wait(seconds)

    def raise_if_aborted(self) -> None:
        """Raise :class:`ToolAborted` when the run has been aborted."""
        if self._aborted:
            raise ToolAborted(self.reason or "aborted")

    def abort(self, reason: str) -> None:
        with self._lock:
            if self._aborted:
                return
            self.reason, self._aborted = reason, True
            event = self._event
        if event is not None:
            event.set()


class Observe:
    """Tracing and structured logs from inside a handler.

    ``span(name)`` opens an OpenTelemetry span when OpenTelemetry is installed and a tracer
    provider is configured, and does nothing otherwise; ``log`` writes a redacted record to the
    ``toolctl.tool.<name>`` logger.
    """

    def __init__(
        self, tool_name: str, run_id: str, scrub: Callable[[str], str] | None = None
    ) -> None:
        self.tool_name = tool_name
        self.run_id = run_id
        self._scrub = scrub
        self._logger = logging.getLogger(f"toolctl.tool.{tool_name}")
        install_log_filter(self._logger)

    def _text(self, text: str) -> str:
        return self._scrub(text) if self._scrub is not None else redact_text(text)

    @contextlib.contextmanager
    def span(self, name: str, **attributes: Any) -> Iterator[Any]:
        """An OpenTelemetry span (None without a configured tracer provider). Its attributes,
        events, status and recorded exceptions are scrubbed of the run's secrets."""
        found = tracer()
        if found is None:
            yield None
            return
        attrs: dict[str, Any] = {"toolctl.tool": self.tool_name, "toolctl.run_id": self.run_id}
        attrs.update(
            {k: v for k, v in attributes.items() if isinstance(v, (str, bool, int, float))}
        )
        with found.start_as_current_span(
            self._text(name),
            attributes=_scrubbed_attributes(attrs, self._text),
            record_exception=False,  # recorded below, scrubbed
            set_status_on_exception=False,
        ) as span:
            shown = ScrubbedSpan(span, self._text)
            try:
                yield shown
            except BaseException as exc:
                if isinstance(exc, Exception):
                    shown.record_exception(exc)
                    shown.set_error(f"{type(exc).__name__}: {exc}")
                raise

    def log(self, msg: str, /, *, level: int = logging.INFO, **fields: Any) -> None:
        """A record on the ``toolctl.tool.<name>`` logger; the message and every field are
        scrubbed of the run's secrets (and redacted by key name and shape)."""
        safe = scrub_json(redact(fields), self._text) if fields else {}
        msg = self._text(msg)
        self._logger.log(
            level,
            "%s %s",
            msg,
            safe if safe else "",
            extra={"toolctl_run_id": self.run_id, "toolctl_fields": safe},
        )


def _scrubbed_attributes(attrs: dict[str, Any], scrub: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, str):
            value = scrub(value)
        elif isinstance(value, (list, tuple)):
            value = [scrub(v) if isinstance(v, str) else v for v in value]
        out[scrub(str(key))] = value
    return out


class ScrubbedSpan:
    """A handler's view of its OpenTelemetry span: what it writes on the span (attributes,
    events, status, exceptions) is scrubbed of the run's secrets before the span holds it, so
    no exporter ever sees them. Anything else is passed through to the span."""

    def __init__(self, span: Any, scrub: Callable[[str], str]) -> None:
        self._span = span
        self._scrub = scrub

    def __getattr__(self, name: str) -> Any:
        return getattr(self._span, name)

    def set_attribute(self, key: str, value: Any) -> None:
        self.set_attributes({key: value})

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        self._span.set_attributes(_scrubbed_attributes(dict(attributes), self._scrub))

    def add_event(
        self, name: str, attributes: dict[str, Any] | None = None, timestamp: int | None = None
    ) -> None:
        self._span.add_event(
            self._scrub(name), _scrubbed_attributes(dict(attributes or {}), self._scrub), timestamp
        )

    def update_name(self, name: str) -> None:
        self._span.update_name(self._scrub(name))

    def set_status(self, status: Any, description: str | None = None) -> None:
        text = getattr(status, "description", None)
        if text and hasattr(status, "status_code"):
            status = type(status)(status.status_code, self._scrub(text))
        self._span.set_status(status, self._scrub(description) if description else description)

    def set_error(self, description: str) -> None:
        """Mark the span failed with a (scrubbed) description."""
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, self._scrub(description)))

    def record_exception(
        self,
        exception: BaseException,
        attributes: dict[str, Any] | None = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """The exception as an ``exception`` event, its message and traceback scrubbed."""
        import traceback

        event = {
            "exception.type": type(exception).__name__,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": escaped,
            **(attributes or {}),
        }
        self.add_event("exception", event, timestamp)


ProgressFn = Callable[[float, "float | None", "str | None"], None]


class ToolContext:
    """What a handler may use besides its input.

    ``request_context`` (validated), ``timeout`` (seconds or None), ``abort``, ``suspend(payload)``,
    ``resume_data`` (the data of a resumed run, else None), ``approval`` (how the run was approved,
    else None), ``run_id``, ``tool_name``, ``progress(...)`` and ``observe``; asking the client:
    ``ask``, ``elicit``, ``elicit_url``, ``sample``, ``list_roots``, ``answers`` (those given so
    far, the tool's ``inputRequests`` included), and ``can_ask`` / ``client_capabilities`` (what
    the calling MCP client declared, None when unknown).
    """

    def __init__(
        self,
        *,
        run_id: str,
        tool_name: str,
        request_context: Any = None,
        timeout: float | None = None,
        resume_data: Any = None,
        approval: ApprovalInfo | None = None,
        on_progress: ProgressFn | None = None,
        abort: AbortSignal | None = None,
        scrub: Callable[[str], str] | None = None,
        client_capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.run_id = run_id
        self.tool_name = tool_name
        self.request_context = request_context
        self.timeout = timeout
        self.resume_data = resume_data
        self.approval = approval
        self.abort = abort or AbortSignal()
        self._on_progress = on_progress
        self._observe: Observe | None = None
        self._scrub = scrub
        # What the calling MCP client declared (its ClientCapabilities); None when unknown.
        self.client_capabilities = client_capabilities
        self._asked: dict[str, Any] = {}  # every request ``ask`` has seen in this invocation

    @property
    def resumed(self) -> bool:
        """True when this invocation continues a suspended run."""
        return self.resume_data is not None

    @property
    def observe(self) -> Observe:
        if self._observe is None:
            self._observe = Observe(self.tool_name, self.run_id, self._scrub)
        return self._observe

    def suspend(self, payload: Any = None) -> NoReturn:
        """Stop here and store the run as ``suspended`` with ``payload`` (never returns).

        The run continues when it is resumed: the handler is called again with the same input and
        ``ctx.resume_data`` set.
        """
        raise SuspendRequested(payload)

    def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Ask the client (the user, its model, its roots): ``{key: request}`` in MCP's shape
        (see :mod:`toolctl.runtime.clientask`). Returns ``{key: answer}`` once every request
        is answered; until then the run suspends (never returns) and runs again from the start
        when answered. Several keys are asked in one round; ``ask`` after ``ask`` is rounds."""
        wanted = clientask.check_requests(requests)
        self._asked.update(wanted)
        answers = clientask.answers_in(self.resume_data)
        missing = {k: r for k, r in wanted.items() if k not in answers}
        if missing:
            answered = {k: v for k, v in answers.items() if k not in missing}
            self.suspend(clientask.suspend_payload(missing, answered, self._asked))
        return {k: answers[k] for k in wanted}

    @property
    def answers(self) -> dict[str, Any]:
        """The client's answers given so far, by request key: to the tool's ``inputRequests``
        (asked before the handler ran) and to this run's earlier ``ask`` rounds."""
        return clientask.answers_in(self.resume_data)

    def can_ask(self, method: str) -> bool:
        """True when the caller can answer a ``method`` request (``"elicitation/create"``,
        ``"sampling/createMessage"``, ``"roots/list"``): an MCP client that declared the
        capability, or a caller that does not say (the CLI prompts or takes ``--answer``, the
        API resumes the run). Asking an MCP client what it cannot answer is an error
        (-32021), so a handler with a fallback checks first."""
        return clientask.can_answer(self.client_capabilities, method)

    def elicit(
        self, message: str, schema: dict[str, Any], *, key: str = "elicitation"
    ) -> dict[str, Any]:
        """Ask the user to fill a form: the client's answer (``{"action": "accept" | "decline" |
        "cancel", "content": {...}}``)."""
        answer: dict[str, Any] = self.ask({key: clientask.elicitation(message, schema)})[key]
        return answer

    def elicit_url(
        self, message: str, url: str, elicitation_id: str, *, key: str = "elicitation"
    ) -> dict[str, Any]:
        """Send the user to ``url`` (URL-mode elicitation): the client's answer."""
        request = clientask.url_elicitation(message, url, elicitation_id)
        answer: dict[str, Any] = self.ask({key: request})[key]
        return answer

    def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int = 1000,
        key: str = "sampling",
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model (sampling): its ``CreateMessageResult``."""
        request = clientask.sampling(messages, max_tokens, **params)
        answer: dict[str, Any] = self.ask({key: request})[key]
        return answer

    def list_roots(self, *, key: str = "roots") -> list[dict[str, Any]]:
        """The client's roots (``[{"uri": ..., "name": ...}]``)."""
        answer = self.ask({key: clientask.roots()})[key]
        found = answer.get("roots") if isinstance(answer, dict) else None
        return list(found) if isinstance(found, list) else []

    def progress(
        self, value: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress to the caller (MCP progress notifications, CLI status); the message
        is scrubbed of the run's secrets on its way out."""
        if self._on_progress is None:
            return
        if message is not None:
            message = self._scrub(str(message)) if self._scrub else redact_text(str(message))
        try:
            self._on_progress(value, total, message)
        except Exception:  # a broken progress sink must not fail the tool
            log.warning("progress callback failed for %s", self.tool_name, exc_info=True)

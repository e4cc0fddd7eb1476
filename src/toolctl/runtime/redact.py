"""Redaction of secrets before anything is stored, logged or shown.

Three signals mark a secret: a sensitive key name (``password``, ``api_key``, ``Authorization``,
...), a schema annotation on the field (``x-sensitive: true`` or ``writeOnly: true``), and the
shape of a value (bearer tokens, ``sk-...`` keys, AWS key ids, GitHub tokens, PEM blocks, URL
userinfo such as ``postgres://user:secret@host``, ``?api_key=`` query parameters).
"""

from __future__ import annotations

import functools
import json
import logging
import re
import warnings
import weakref
from collections.abc import Callable, Collection
from typing import Any, TextIO

from toolctl.runtime.memo import PerObject
from toolctl.sensitive import SensitiveMap, sensitive_map

REDACTED = "[REDACTED]"

_KEY_PARTS = (
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "authorization",
    "credential",
    "privatekey",
    "accesskey",
    "cookie",
    "sessionid",
    "clientsecret",
    "passphrase",
)
_KEY_EXACT = frozenset({"auth", "pwd", "pass"})


@functools.cache
def _value_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The secret-shaped value patterns and their replacements, compiled on the first text the
    pre-check below lets through (compiling them is a noticeable part of a small `toolctl run`)."""
    return (
        (
            re.compile(
                r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
                re.S,
            ),
            REDACTED,
        ),
        (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 " + REDACTED),
        (
            re.compile(r"\b([a-z][a-z0-9+.-]*://)([^/\s:@]*):([^/\s@]+)@", re.I),
            r"\1\2:" + REDACTED + "@",
        ),
        (
            re.compile(
                r"(?i)([?&](?:api[_-]?key|access[_-]?token|token|key|secret|password|sig|"
                r"signature|client[_-]?secret)=)[^&\s#]+"
            ),
            r"\1" + REDACTED,
        ),
        (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"), REDACTED),
        (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
        (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
        (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
        (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
        (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"), REDACTED),
    )


# A cheap pre-check: no value pattern can match a string without one of these.
_MAYBE = re.compile(
    r"(?i)BEGIN|bearer|basic|token|://|[?&]|sk-|AKIA|ASIA|gh[pousr]_|github_pat|"
    r"xox|eyJ"
)


# Remembered per key name: every call's views and stored row ask again about the same few keys
# (bounded, as a client chooses them).
@functools.lru_cache(maxsize=4096)
def is_sensitive_key(key: str) -> bool:
    """True for key names that conventionally hold secrets (``max_tokens`` holds a number)."""
    norm = key.lower().replace("_", "").replace("-", "").replace(".", "")
    return norm in _KEY_EXACT or any(part in norm for part in _KEY_PARTS)


def redact_text(text: str) -> str:
    """``text`` with every secret-shaped substring replaced by ``[REDACTED]``."""
    if not _MAYBE.search(text):
        return text
    for pattern, repl in _value_patterns():
        text = pattern.sub(repl, text)
    return text


def _plain(value: Any) -> Any:
    """Redact by key names and value patterns only (the fast path)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            k: REDACTED if is_sensitive_key(k) and isinstance(v, (str, dict, list)) else _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


MIN_SECRET_CHARS = 3  # shorter values would mangle every message they are searched in


def _leaves(value: Any, out: set[str]) -> None:
    """The text forms of the scalar leaves of a secret value."""
    if isinstance(value, dict):
        for item in value.values():
            _leaves(item, out)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = str(value)
        if len(text) >= MIN_SECRET_CHARS:
            out.add(text)


def _named(value: Any, out: set[str]) -> None:
    """The secret values under secret-like key names in ``value`` (no schema marks): the
    walk :meth:`Redactor.secret_values` does for a schema that marks nothing."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(item, (str, dict, list)):
                    if is_sensitive_key(key):
                        _leaves(item, out)
                    elif not isinstance(item, str):
                        stack.append(item)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (dict, list)))


_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
# keywords under which a schema may accept members or items the walk below does not see
_OPENING = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "dependentSchemas", "patternProperties", "unevaluatedProperties",
        "unevaluatedItems", "prefixItems", "additionalItems", "contains", "definitions",
    }
)  # fmt: skip


def _closed_without_secret_names(schema: Any, depth: int = 0) -> bool:
    """Whether no value ``schema`` accepts has a member with a secret-like name: scalars,
    closed objects (``additionalProperties: false``) whose property names are plain, arrays
    of those. Conservative: a ``$ref``, an applicator or an open object is "may have"."""
    if not isinstance(schema, dict) or depth > 32 or not _OPENING.isdisjoint(schema):
        return False
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _SCALAR_TYPES:
        return True
    if isinstance(kind, list) and kind and all(k in _SCALAR_TYPES for k in kind):
        return True
    if kind == "array":
        return _closed_without_secret_names(schema.get("items"), depth + 1)
    if kind != "object" or schema.get("additionalProperties") is not False:
        return False
    props = schema.get("properties", {})
    return isinstance(props, dict) and all(
        isinstance(name, str)
        and not is_sensitive_key(name)
        and _closed_without_secret_names(sub, depth + 1)
        for name, sub in props.items()
    )


def hold_more(source: Callable[[], Collection[str]]) -> None:
    """:func:`hold_secrets` for a part of a run already holding (its handler, which may
    outlive it): the guards were checked when the run began."""
    _in_flight.add(source)


MAX_PATTERN_FORMS = 2000  # past this many quoted forms, search them one by one


def _quoted_forms(secrets: Collection[str]) -> list[str]:
    """The forms a message quotes a secret value in (as is, ``repr``-escaped, JSON-escaped),
    longest first."""
    forms = {
        form
        for value in secrets
        for form in (value, repr(value)[1:-1], json.dumps(value)[1:-1])
        if len(form) >= MIN_SECRET_CHARS
    }
    return sorted(forms, key=len, reverse=True)


# One compiled search per set of secret values, for as long as that set lives (a run's
# registry is a frozenset held by the run and its result): nothing outlives the run.
_PATTERNS: weakref.WeakKeyDictionary[frozenset[str], re.Pattern[str] | None] = (
    weakref.WeakKeyDictionary()
)


def _secret_pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    try:
        return _PATTERNS[secrets]
    except KeyError:
        pass
    forms = _quoted_forms(secrets)
    found = (
        re.compile("|".join(map(re.escape, forms))) if 0 < len(forms) <= MAX_PATTERN_FORMS else None
    )
    _PATTERNS[secrets] = found
    return found


def scrub_values(text: str, secrets: Collection[str]) -> str:
    """``text`` with the known secret values in ``secrets`` replaced by ``[REDACTED]``, in the
    forms a message quotes them (as is, ``repr``-escaped, JSON-escaped)."""
    if not secrets:
        return text
    frozen = secrets if isinstance(secrets, frozenset) else frozenset(secrets)
    pattern = _secret_pattern(frozen)
    if pattern is not None:
        return pattern.sub(REDACTED, text)
    for form in _quoted_forms(frozen):  # very many values: plain searches
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def scrub_text(text: str, secrets: Collection[str]) -> str:
    """``text`` with the known secret values in ``secrets`` (and every secret-shaped substring)
    replaced by ``[REDACTED]``: what a handler's error message or log line may quote."""
    return redact_text(scrub_values(text, secrets))


class Redactor:
    """Redacts values shaped by one schema (its ``x-sensitive``/``writeOnly`` fields, found
    under every applicator by :class:`toolctl.sensitive.SensitiveMap`).

    Use :func:`redactor_for` (cached per schema); :meth:`redact` returns a redacted copy and never
    modifies its argument.
    """

    def __init__(self, schema: Any = None) -> None:
        self.schema = schema
        self.map: SensitiveMap | None = sensitive_map(schema) if schema is not None else None
        self._annotated = self.map is not None and self.map.any
        # every value the schema accepts is free of secrets by name and by mark: a value the
        # schema's validator accepted needs no walk to find them
        self.accepts_no_secrets = not self._annotated and _closed_without_secret_names(schema)

    @property
    def marks(self) -> bool:
        """Whether the schema marks any location ``x-sensitive``/``writeOnly``."""
        return self._annotated

    def redact(self, value: Any) -> Any:
        """A copy of ``value`` with secrets replaced by ``[REDACTED]``."""
        if not self._annotated:
            return _plain(value)
        if self._secret(None, value, [self.schema]):
            return REDACTED  # the whole value is marked secret
        return self._walk(value, [self.schema], 0)

    def secret_values(self, value: Any) -> set[str]:
        """The secret values inside ``value`` (the text of what :meth:`redact` hides by field:
        schema-marked fields and fields with secret-like names)."""
        out: set[str] = set()
        if not self._annotated:
            _named(value, out)  # the common case: no schema marks, key names only
        elif self._secret(None, value, [self.schema]):
            _leaves(value, out)
        else:
            self._collect(value, [self.schema], out)
        return out

    def marked_values(self, value: Any) -> set[str]:
        """The text of the values at schema-marked locations only (for output, whose key names
        are not the caller's to choose)."""
        out: set[str] = set()
        if self._annotated and self.map is not None:
            for found in self.map.values(value):
                _leaves(found, out)
        return out

    def _collect(self, value: Any, schemas: list[Any], out: set[str]) -> None:
        # (value, the schemas that apply to it, its key name: None for an array item)
        stack: list[tuple[Any, list[Any], str | None]] = [(value, schemas, None)]
        while stack:
            node, subs, name = stack.pop()
            if node is not value and self._secret(name, node, subs):
                _leaves(node, out)
            elif isinstance(node, dict):
                stack.extend((v, self._children(subs, k), k) for k, v in node.items())
            elif isinstance(node, list):
                stack.extend((v, self._children(subs, i), None) for i, v in enumerate(node))

    def _children(self, schemas: list[Any], key: str | int) -> list[Any]:
        return self.map.children(schemas, key) if schemas and self.map is not None else []

    def _secret(self, key: str | None, item: Any, schemas: list[Any]) -> bool:
        """Whether ``item`` (under ``key``; None for an array item) is a secret."""
        if schemas and self.map is not None and self.map.flagged(schemas):
            return item is not None
        # A sensitive name holding a number or flag (max_tokens, use_auth) is not a secret.
        return key is not None and is_sensitive_key(key) and isinstance(item, (str, dict, list))

    def _walk(self, value: Any, schemas: list[Any], depth: int) -> Any:
        if not schemas or depth > 512:  # deeper than any JSON the runtime accepts
            return _plain(value)
        if isinstance(value, str):
            return redact_text(value)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                subs = self._children(schemas, key)
                if self._secret(key, item, subs):
                    out[key] = REDACTED
                else:
                    out[key] = self._walk(item, subs, depth + 1)
            return out
        if isinstance(value, list):
            out_list = []
            for i, item in enumerate(value):
                subs = self._children(schemas, i)
                secret = self._secret(None, item, subs)
                out_list.append(REDACTED if secret else self._walk(item, subs, depth + 1))
            return out_list
        return value


_REDACTORS: PerObject[Any, Redactor] = PerObject(Redactor)


def redactor_for(schema: Any) -> Redactor:
    """The :class:`Redactor` of ``schema``, built once per schema object (specs are frozen)."""
    return _REDACTORS(schema)


def redact(value: Any, schema: Any = None) -> Any:
    """A redacted copy of ``value``; ``schema`` adds its ``x-sensitive``/``writeOnly`` fields."""
    return _plain(value) if schema is None else redactor_for(schema).redact(value)


def scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    """A copy of the JSON ``value`` with ``scrub`` applied to every string in it (keys too)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v, scrub) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_json(v, scrub) for v in value]
    return value


def hide_values(value: Any, secrets: frozenset[str]) -> Any:
    """The JSON ``value`` with the known secret values in ``secrets`` replaced wherever a
    string quotes them; ``value`` itself when none does (one search over its JSON text: the
    common case, for views already redacted by field, costs no walk and no copy)."""
    if value is None or not secrets:
        return value
    pattern = _secret_pattern(secrets)
    if pattern is not None:
        try:
            if not pattern.search(json.dumps(value)):
                return value
        except (TypeError, ValueError, RecursionError):
            pass  # not plain JSON: walk it
    return scrub_json(value, lambda text: scrub_values(text, secrets))


def scrubber(secrets: Collection[str]) -> Callable[[str], str]:
    """The text scrub for a set of known secret values (secret shapes only when empty)."""
    known = frozenset(secrets)
    return (lambda text: scrub_text(text, known)) if known else redact_text


# The secret values of the runs in flight now (each entry a run's ``secret_values``, evaluated
# only when a line is logged or a warning shown), so that what a handler, hook or transform logs
# through its own loggers, or warns, is scrubbed of them too. set.add/discard and list(set) are
# atomic under the GIL.
_in_flight: set[Callable[[], Collection[str]]] = set()


def hold_secrets(source: Callable[[], Collection[str]]) -> None:
    """While a run is in flight: every log record made (whatever its logger or handler) and
    every warning shown is scrubbed of the values ``source`` returns."""
    factory, show, last = _guarded
    if (
        logging.getLogRecordFactory() is not factory
        or warnings.showwarning is not show
        or logging.lastResort is not last
    ):
        _guard_record_factory()
        _guard_warnings()
        last = logging.lastResort
        if last is not None:
            # A program that never set up logging prints a handler's warnings through
            # ``logging.lastResort``: secret shapes are redacted there too.
            install_log_filter(last)
        _guarded[:] = [logging.getLogRecordFactory(), warnings.showwarning, last]
    _in_flight.add(source)


# What hold_secrets last found guarded (the record factory, showwarning, lastResort): one
# identity check each on every call, the guards reinstalled only when something replaced them.
_guarded: list[Any] = [None, None, None]


def release_secrets(source: Callable[[], Collection[str]]) -> None:
    """The run of ``source`` (or its handler) has ended."""
    _in_flight.discard(source)


def in_flight_secrets() -> frozenset[str]:
    """The secret values of every run in flight now."""
    sources = list(_in_flight)
    if len(sources) == 1:
        return frozenset(sources[0]())
    found: set[str] = set()
    for source in sources:
        found.update(source())
    return frozenset(found)


def _scrub_line(text: str) -> str:
    return scrub_text(text, in_flight_secrets()) if _in_flight else redact_text(text)


def _scrub_record(record: logging.LogRecord) -> None:
    """Replace a record's message, arguments, traceback and stack with scrubbed text."""
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: keep what it says, scrubbed
        message = f"{record.msg} {record.args!r}"
    record.msg = _scrub_line(message)
    record.args = None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        record.exc_text = _scrub_line(logging.Formatter().formatException(record.exc_info))
        record.exc_info = None
    elif record.exc_text:
        record.exc_text = _scrub_line(record.exc_text)
    if record.stack_info:
        record.stack_info = _scrub_line(record.stack_info)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from a record's message, arguments and traceback:
    secret-shaped strings, and the secret values of the runs in flight."""

    def filter(self, record: logging.LogRecord) -> bool:
        _scrub_record(record)
        return True


def install_log_filter(target: logging.Filterer) -> None:
    """Attach one :class:`RedactingFilter` to ``target``, a logger or a handler (idempotent)."""
    if not any(isinstance(f, RedactingFilter) for f in target.filters):
        target.addFilter(RedactingFilter())


def guard_log_handlers() -> None:
    """Attach a :class:`RedactingFilter` to each handler of the root logger and to
    ``logging.lastResort`` (what prints warnings when logging is not set up), so that secret
    shapes are redacted from every line (a running call's known secret values are scrubbed from
    every record whatever its handlers, see :func:`hold_secrets`). The CLI calls it; an
    application that sets up its own logging may call it after doing so."""
    for handler in [*logging.getLogger().handlers, logging.lastResort]:
        if handler is not None:
            install_log_filter(handler)


# ---------------------------------------------------------------- the egress points of logging
# and warnings: every record is made by the log record factory, every warning shown through
# ``warnings.showwarning``; wrapping them once covers handlers added at any time (a handler's
# own ``logging.basicConfig``, a ``logging.warning`` that sets up the root logger itself).

_SCRUBS = "_toolctl_scrubs"


def _guard_record_factory() -> None:
    current = logging.getLogRecordFactory()
    if getattr(current, _SCRUBS, False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        if _in_flight:
            _scrub_record(record)
        return record

    setattr(make, _SCRUBS, True)
    logging.setLogRecordFactory(make)


def _guard_warnings() -> None:
    current = warnings.showwarning
    if getattr(current, _SCRUBS, False):
        return

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if _in_flight:
            text = _scrub_line(str(message))
            if text != str(message):
                message = _rebuilt(message, category, text)
            line = _scrub_line(line) if line else line
        current(message, category, filename, lineno, file, line)

    setattr(show, _SCRUBS, True)
    warnings.showwarning = show


def _rebuilt(message: Warning | str, category: type[Warning], text: str) -> Warning | str:
    """A warning like ``message`` saying ``text`` instead (the text alone if its class cannot
    be built from one string)."""
    try:
        return category(text)
    except Exception:  # a warning class with another constructor
        return text

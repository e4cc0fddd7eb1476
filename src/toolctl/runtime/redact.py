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
from collections.abc import Callable, Iterator
from typing import Any

from toolctl.runtime.memo import PerObject
from toolctl.schema import NOT_SCHEMAS

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


def _schema_flag(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        schema.get("x-sensitive") is True or schema.get("writeOnly") is True
    )


def _resolve(schema: Any, root: Any, hops: int = 0) -> Any:
    """Follow a local ``$ref`` (bundled schemas only have ``#/...`` refs)."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and hops < 16:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        node: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return schema
        if _schema_flag(schema):
            return schema
        schema, hops = node, hops + 1
    return schema


def _subschemas(schema: Any, root: Any) -> Iterator[Any]:
    """``schema`` and the schemas combined with it in place (allOf/anyOf/oneOf)."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return
    yield schema
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, ()) if isinstance(schema.get(key), list) else ():
            yield from _subschemas(sub, root)


def _child_schemas(schema: Any, root: Any, key: str | int) -> list[Any]:
    out: list[Any] = []
    for sub in _subschemas(schema, root):
        if isinstance(key, str):
            props = sub.get("properties")
            if isinstance(props, dict) and key in props:
                out.append(props[key])
            elif isinstance(sub.get("additionalProperties"), dict):
                out.append(sub["additionalProperties"])
        else:
            items = sub.get("items")
            prefix = sub.get("prefixItems")
            if isinstance(prefix, list) and key < len(prefix):
                out.append(prefix[key])
            elif isinstance(items, dict):
                out.append(items)
    return out


def _has_flags(node: Any, depth: int = 0) -> bool:
    """True when any subschema carries ``x-sensitive``/``writeOnly`` (most schemas: none)."""
    if depth > 64:
        return True
    if isinstance(node, dict):
        if _schema_flag(node):
            return True
        return any(_has_flags(v, depth + 1) for k, v in node.items() if k not in NOT_SCHEMAS)
    if isinstance(node, list):
        return any(_has_flags(v, depth + 1) for v in node)
    return False


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


def scrub_text(text: str, secrets: set[str]) -> str:
    """``text`` with the known secret values in ``secrets`` (and every secret-shaped substring)
    replaced by ``[REDACTED]``: what a handler's error message or log line may quote."""
    for value in sorted(secrets, key=len, reverse=True):
        for form in {value, repr(value)[1:-1], json.dumps(value)[1:-1]}:
            if len(form) >= MIN_SECRET_CHARS and form in text:
                text = text.replace(form, REDACTED)
    return redact_text(text)


class Redactor:
    """Redacts values shaped by one schema (its ``x-sensitive``/``writeOnly`` fields).

    Use :func:`redactor_for` (cached per schema); :meth:`redact` returns a redacted copy and never
    modifies its argument.
    """

    def __init__(self, schema: Any = None) -> None:
        self.schema = schema
        self._annotated = schema is not None and _has_flags(schema)

    def redact(self, value: Any) -> Any:
        """A copy of ``value`` with secrets replaced by ``[REDACTED]``."""
        if not self._annotated:
            return _plain(value)
        return self._walk(value, [self.schema])

    def secret_values(self, value: Any) -> set[str]:
        """The secret values inside ``value`` (the text of what :meth:`redact` hides by field)."""
        out: set[str] = set()
        self._collect(value, [self.schema] if self._annotated else [], out)
        return out

    def _collect(self, value: Any, schemas: list[Any], out: set[str]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                subs = [c for s in schemas for c in _child_schemas(s, self.schema, key)]
                if _secret(key, item, subs, self.schema):
                    _leaves(item, out)
                else:
                    self._collect(item, subs, out)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                subs = [c for s in schemas for c in _child_schemas(s, self.schema, i)]
                self._collect(item, subs, out)

    def _walk(self, value: Any, schemas: list[Any]) -> Any:
        if not schemas:
            return _plain(value)
        if isinstance(value, str):
            return redact_text(value)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                subs = [c for s in schemas for c in _child_schemas(s, self.schema, key)]
                if _secret(key, item, subs, self.schema):
                    out[key] = REDACTED
                else:
                    out[key] = self._walk(item, subs)
            return out
        if isinstance(value, list):
            return [
                self._walk(item, [c for s in schemas for c in _child_schemas(s, self.schema, i)])
                for i, item in enumerate(value)
            ]
        return value


_REDACTORS: PerObject[Any, Redactor] = PerObject(Redactor)


def redactor_for(schema: Any) -> Redactor:
    """The :class:`Redactor` of ``schema``, built once per schema object (specs are frozen)."""
    return _REDACTORS(schema)


def _secret(key: str, item: Any, schemas: list[Any], root: Any) -> bool:
    if any(_schema_flag(_resolve(s, root)) or _schema_flag(s) for s in schemas):
        return item is not None
    # A sensitive name holding a number or flag (max_tokens, use_auth) is not a secret.
    return is_sensitive_key(key) and isinstance(item, (str, dict, list))


def redact(value: Any, schema: Any = None) -> Any:
    """A redacted copy of ``value``; ``schema`` adds its ``x-sensitive``/``writeOnly`` fields."""
    return _plain(value) if schema is None else redactor_for(schema).redact(value)


# The secret values of the runs whose handlers are running now (each entry a run's
# ``secret_values``, evaluated only when a line is logged), so that what a handler logs through
# its own loggers is scrubbed of them too. set.add/discard and list(set) are atomic under the GIL.
_in_flight: set[Callable[[], set[str]]] = set()


_guarded_last_resort: logging.Handler | None = None


def hold_secrets(source: Callable[[], set[str]]) -> None:
    """While a handler runs: log filters scrub the values ``source`` returns."""
    global _guarded_last_resort
    last = logging.lastResort
    if last is not _guarded_last_resort and last is not None:
        # A program that never set up logging prints a handler's warnings through
        # ``logging.lastResort``: guarded here, so the Python API needs no set-up for it.
        install_log_filter(last)
        _guarded_last_resort = last
    _in_flight.add(source)


def release_secrets(source: Callable[[], set[str]]) -> None:
    """The handler of ``source`` has returned."""
    _in_flight.discard(source)


def in_flight_secrets() -> set[str]:
    """The secret values of every run whose handler is running now."""
    found: set[str] = set()
    for source in list(_in_flight):
        found |= source()
    return found


def _scrub_line(text: str) -> str:
    return scrub_text(text, in_flight_secrets()) if _in_flight else redact_text(text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from a record's message, arguments and traceback:
    secret-shaped strings, and the secret values of the runs whose handlers are running."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave the record alone
            return True
        record.msg = _scrub_line(message)
        record.args = None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            record.exc_text = _scrub_line(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def install_log_filter(target: logging.Filterer) -> None:
    """Attach one :class:`RedactingFilter` to ``target``, a logger or a handler (idempotent)."""
    if not any(isinstance(f, RedactingFilter) for f in target.filters):
        target.addFilter(RedactingFilter())


def guard_log_handlers() -> None:
    """Attach a :class:`RedactingFilter` to each handler of the root logger and to
    ``logging.lastResort`` (what prints warnings when logging is not set up), so that a line a
    handler logs through its own loggers is scrubbed like toolctl's own. The CLI calls it; an
    application that sets up its own logging calls it after doing so."""
    for handler in [*logging.getLogger().handlers, logging.lastResort]:
        if handler is not None:
            install_log_filter(handler)

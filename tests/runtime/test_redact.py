"""Secrets never reach a stored or shown payload."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from toolctl.registry import Registry
from toolctl.runtime import api
from toolctl.runtime.redact import REDACTED, RedactingFilter, redact, redact_text


@pytest.mark.parametrize(
    "secret",
    [
        "Authorization: Bearer abcdefghijklmnop1234",
        "key sk-proj-abcdefghijklmnopqrstuvwx",
        "aws AKIAABCDEFGHIJKLMNOP",
        "gh ghp_abcdefghijklmnopqrstuvwxyz0123",
        "postgres://admin:hunter2@db.internal/prod",
        "https://api.example.com/v1?api_key=hunter2&x=1",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEhunter2\n-----END RSA PRIVATE KEY-----",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.hunter2sig",
    ],
)
def test_value_patterns(secret: str) -> None:
    out = redact_text(secret)
    assert REDACTED in out
    for word in ("hunter2", "abcdefghijklmnop", "AKIAABCD"):
        assert word not in out


def test_key_names_and_schema_annotations() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "x-sensitive": True},
            "pin": {"$ref": "#/$defs/pin"},
            "nested": {
                "type": "array",
                "items": {"type": "object", "properties": {"otp": {"writeOnly": True}}},
            },
        },
        "$defs": {"pin": {"type": "string", "writeOnly": True}},
    }
    value = {
        "code": "1234",
        "pin": "9999",
        "nested": [{"otp": "55"}],
        "max_tokens": 100,
        "api_key": "abc",
        "headers": {"Authorization": "Basic dXNlcjpwYXNz"},
        "password": "p",
        "author": "Ada",
    }
    out = redact(value, schema)
    assert out == {
        "code": REDACTED,
        "pin": REDACTED,
        "nested": [{"otp": REDACTED}],
        "max_tokens": 100,
        "api_key": REDACTED,
        "headers": {"Authorization": REDACTED},
        "password": REDACTED,
        "author": "Ada",
    }
    assert value["code"] == "1234"  # the original is untouched


def test_stored_row_and_result_views_are_redacted(reg: Registry) -> None:
    inp = {
        "msg": "token ghp_abcdefghijklmnopqrstuvwxyz0123",
        "api_key": "k-123456",
        "password": "pw",
        "pin": "0000",
        "headers": {"Authorization": "Bearer zzzzzzzzzzzz"},
        "max_tokens": 5,
    }
    result = reg.call("echo", inp)
    assert result.output == inp  # the caller asked for it: raw
    for view in (
        result.display,
        result.transcript,
        api.resolve_store(reg).get(result.run_id).public(),
    ):
        text = json.dumps(view)
        for secret in ("ghp_abc", "k-123456", '"pw"', "zzzzzzzz"):
            assert secret not in text
        # writeOnly marks the *input* field; the echoed output has no such schema.
        assert view["input"]["pin"] == REDACTED
        assert '"max_tokens": 5' in text


def test_logging_filter_redacts_messages_and_tracebacks() -> None:
    record = logging.LogRecord(
        "x", logging.ERROR, __file__, 1, "dsn=%s", ("postgres://a:b@h",), None
    )
    try:
        raise RuntimeError("token sk-abcdefghijklmnopqrstuvwx")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    RedactingFilter().filter(record)
    assert record.getMessage() == "dsn=postgres://a:[REDACTED]@h"
    assert record.exc_text is not None and "sk-abc" not in record.exc_text


def test_notes_are_redacted_in_the_result_too(
    make_registry: Callable[[dict[str, str]], Registry],
) -> None:
    # A warn-mode outputSchema note quotes the output; the result's notes (returned to the
    # caller, printed by --format json) must be as redacted as the stored row's.
    reg = make_registry(
        {
            "leak.yaml": "toolctl: 1\ntools:\n  - name: leak_warn\n    description: Leaks.\n"
            "    handler: rt_handlers:leaky_output\n    outputValidation: warn\n"
            "    outputSchema: {type: object, properties: {sum: {type: number}}}\n"
        }
    )
    result = reg.call("leak_warn", {})
    assert result.notes and "does not match outputSchema" in result.notes[0]
    assert "abcdefghijklmnop" not in json.dumps(result.notes)
    assert api.resolve_store(reg).get(result.run_id).notes == result.notes

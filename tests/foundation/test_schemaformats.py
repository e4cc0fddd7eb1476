"""Which ``format`` values the validator factory enforces, per dialect, and why others are not."""

from __future__ import annotations

import sys

import pytest

from toolctl import schemaformats
from toolctl.schema import enforced_formats, make_validator

DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_the_default_dialect_enforces_every_common_format() -> None:
    assert {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uri-template",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    } <= enforced_formats()


def test_a_format_applies_only_in_the_dialects_that_define_it() -> None:
    assert "duration" not in enforced_formats({"$schema": DRAFT7})
    assert make_validator({"$schema": DRAFT7, "format": "duration"}).is_valid("whenever")
    assert not make_validator({"format": "duration"}).is_valid("whenever")


_STDLIB_VALUES = {
    "email": ["ada@example.com", "no at sign", ""],
    "idn-email": ["ada@例え.jp", "ada"],
    "ipv4": ["192.168.0.1", "256.1.1.1", "1.2.3", "01.2.3.4", ""],
    "ipv6": ["::1", "fe80::1%eth0", "2001:db8::g", "1::2::3"],
    "date": ["2026-12-02", "2026-02-30", "2026-1-02", "20261202", "2026-12-02\n", "２026-12-02"],
    "uuid": [
        "123e4567-e89b-12d3-a456-426614174000",
        "123e4567e89b12d3a456426614174000",
        "{123e4567-e89b-12d3-a456-426614174000}",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3-a456-42661417400",
    ],
}


@pytest.mark.parametrize("fmt", sorted(_STDLIB_VALUES))
def test_standard_library_formats_decide_as_jsonschema_does(fmt: str) -> None:
    """toolctl's table is the one definition the fast path and python-jsonschema check with;
    its standard-library formats mirror jsonschema's own checkers (which toolctl no longer
    registers), so a schema that was valid or not stays so."""
    theirs = schemaformats.import_jsonschema().Draft202012Validator.FORMAT_CHECKER
    for value in _STDLIB_VALUES[fmt]:
        expected = theirs.conforms(value, fmt)
        assert schemaformats.checkers("Draft202012Validator")[fmt](value) is expected, value
        validator = make_validator({"format": fmt})
        assert validator.is_valid(value) is expected, value
        assert validator.quick_accept(value) is expected, value  # jsonschema-rs, same checker


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("iri", "https://例え.jp/パス?q=ü", "https://example.com/a b"),
        ("iri-reference", "/パス#frag", "/a\u200b\U000e0041"),  # a tag character is no IRI char
        ("idn-hostname", "例え.jp", "a..b"),
        ("json-pointer", "/a/b~0c", "a/b"),
        ("relative-json-pointer", "1/a", "01/a"),
        ("uri-template", "/users/{id}", "/users/{id"),
        ("time", "09:30:00Z", "9.30"),
    ],
)
def test_lazy_checkers(fmt: str, good: str, bad: str) -> None:
    validator = make_validator({"format": fmt})
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)
    assert validator.is_valid(42)  # formats apply to strings only


def test_why_a_format_is_not_checked() -> None:
    assert schemaformats.unchecked_reason("phone", "Draft202012Validator")[0] == (
        "is unknown and never checked"
    )
    reason, hint = schemaformats.unchecked_reason("duration", "Draft7Validator")
    assert reason == "is not a format of this schema's dialect (Draft7)"
    assert "2020-12" in hint
    reason, hint = schemaformats.unchecked_reason("hostname", "Draft202012Validator")
    assert reason == "is not checked here: the package 'fqdn' is not installed"
    assert hint == "reinstall toolctl-registry (it depends on fqdn), or add a pattern"


def test_a_missing_checker_package_leaves_its_format_unenforced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "fqdn", None)  # as if not installed: find_spec says None
    schemaformats.forget_installed()
    try:
        assert "hostname" not in schemaformats.enforced_formats("Draft202012Validator")
        assert "date-time" in schemaformats.enforced_formats("Draft202012Validator")
    finally:
        schemaformats.forget_installed()

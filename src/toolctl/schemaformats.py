"""The ``format`` assertions the validator factory enforces, each checker package loaded lazily.

jsonschema checks a format only when the package behind it was importable at the moment jsonschema
itself was imported, and it imports every such package then, at once (about 20 ms; with
``rfc3987-syntax`` installed, 0.7 s). toolctl depends on the small pure-Python checker packages
(``rfc3339-validator``, ``rfc3986-validator``, ``fqdn``, ``idna``, ``jsonpointer``,
``uri-template``, ``isoduration``) and registers its own checkers, each importing its package the
first time a value of that format is checked. :func:`import_jsonschema` keeps jsonschema from
importing them up front, so ``toolctl --help``, ``validate`` and runs of schemas without these
formats never pay for them.

The checkers mirror jsonschema's own (same packages, same calls); ``iri`` and ``iri-reference``
are checked as RFC 3987 §3.1 maps an IRI to a URI (non-ASCII characters that an IRI allows,
percent-encoded), then as that URI, instead of through ``rfc3987-syntax``'s slow-to-build parser.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from toolctl import DISTRIBUTION

# Packages jsonschema imports eagerly to enable formats; toolctl imports them on first use.
LAZY_PACKAGES = (
    "fqdn",
    "idna",
    "isoduration",
    "jsonpointer",
    "rfc3339_validator",
    "rfc3986_validator",
    "rfc3987",
    "rfc3987_syntax",
    "uri_template",
    "webcolors",
)
_DRAFTS = (
    "Draft4Validator",
    "Draft6Validator",
    "Draft7Validator",
    "Draft201909Validator",
    "Draft202012Validator",
)


def import_jsonschema() -> Any:
    """``jsonschema``, imported (the first time) without the format packages it would load.

    A package already imported by someone else is left alone: hiding only saves time, checking
    goes through :func:`format_checker` either way.
    """
    if "jsonschema" in sys.modules:
        return sys.modules["jsonschema"]
    hidden = [name for name in LAZY_PACKAGES if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises ImportError
    try:
        import jsonschema
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return jsonschema


# ---------------------------------------------------------------- the checkers


def _date_time(value: str) -> bool:
    from rfc3339_validator import validate_rfc3339

    return bool(validate_rfc3339(value.upper()))


def _time(value: str) -> bool:
    return _date_time("1970-01-01T" + value)


def _uri(value: str) -> bool:
    from rfc3986_validator import validate_rfc3986

    return bool(validate_rfc3986(value, rule="URI"))


def _uri_reference(value: str) -> bool:
    from rfc3986_validator import validate_rfc3986

    return bool(validate_rfc3986(value, rule="URI_reference"))


def _iri_char(code: int) -> bool:
    """RFC 3987 ``ucschar`` or ``iprivate``: the non-ASCII characters an IRI may hold."""
    if code < 0x10000:
        return 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFDCF or 0xFDF0 <= code <= 0xFFEF
    return (code & 0xFFFF) <= 0xFFFD and not 0xE0000 <= code <= 0xE0FFF


def _as_uri(value: str) -> str | None:
    """The URI an IRI maps to (RFC 3987 §3.1), or None when it holds a forbidden character."""
    if any(ord(ch) >= 0x80 and not _iri_char(ord(ch)) for ch in value):
        return None
    return "".join(quote(ch, safe="") if ord(ch) >= 0x80 else ch for ch in value)


def _iri(value: str) -> bool:
    uri = _as_uri(value)
    return uri is not None and _uri(uri)


def _iri_reference(value: str) -> bool:
    uri = _as_uri(value)
    return uri is not None and _uri_reference(uri)


def _hostname(value: str) -> bool:
    from fqdn import FQDN

    try:
        return bool(FQDN(value, min_labels=1).is_valid)
    except ValueError:  # fqdn raises on "" instead of answering
        return False


def _parses(parse: Callable[[str], object], errors: Any, value: str) -> bool:
    """True when ``parse(value)`` raises none of ``errors`` (an exception class or a tuple)."""
    try:
        parse(value)
    except errors:
        return False
    return True


def _idn_hostname(value: str) -> bool:
    import idna

    return _parses(idna.encode, (idna.IDNAError, UnicodeError), value)


def _json_pointer(value: str) -> bool:
    import jsonpointer

    return _parses(jsonpointer.JsonPointer, jsonpointer.JsonPointerException, value)


def _relative_json_pointer(value: str) -> bool:
    """A non-negative integer (no leading zero), then ``#`` or a JSON pointer."""
    digits = len(value) - len(value.lstrip("0123456789"))
    number, rest = value[:digits], value[digits:]
    if not number or (len(number) > 1 and number[0] == "0"):
        return False
    return rest == "#" or _json_pointer(rest)


def _uri_template(value: str) -> bool:
    """RFC 6570, as ``uri_template.validate`` reads it, in linear time.

    The package splits the template with ``\\{[^}]*\\}``, which rescans to the end of the
    text from every ``{`` that has no ``}`` after it (200 KB of ``{`` never finishes). Braces
    are checked here first, in one pass: every ``{`` must close before the next one opens and
    no ``}`` may stand alone (the package rejects both); the package then only sees a template
    its split reads in linear time.
    """
    import uri_template

    return _braces_pair(value) and bool(uri_template.validate(value))


def _braces_pair(value: str) -> bool:
    """True when every ``{`` of ``value`` closes before the next ``{`` and no ``}`` is alone."""
    at = 0
    while True:
        opened, closed = value.find("{", at), value.find("}", at)
        if opened < 0:
            return closed < 0
        if closed < opened:
            return False
        nested = value.find("{", opened + 1, closed)
        if nested >= 0:
            return False
        at = closed + 1


def _duration(value: str) -> bool:
    import isoduration

    try:
        isoduration.parse_duration(value)
    except isoduration.DurationParsingException:
        return False
    return value.endswith(tuple("DMYWHMS"))  # isoduration accepts a bare "P"


def _email(value: str) -> bool:
    return "@" in value  # jsonschema's test: an address's syntax is the mail server's business


def _ipv4(value: str) -> bool:
    import ipaddress

    return _parses(ipaddress.IPv4Address, ipaddress.AddressValueError, value)


def _ipv6(value: str) -> bool:
    import ipaddress

    try:
        address = ipaddress.IPv6Address(value)
    except ipaddress.AddressValueError:
        return False
    return not address.scope_id  # no zone (fe80::1%eth0): an interface of one machine


def _date(value: str) -> bool:
    import datetime

    if len(value) != 10 or not value.isascii() or value[4] != "-" or value[7] != "-":
        return False
    if not (value[:4] + value[5:7] + value[8:]).isdigit():
        return False
    return _parses(datetime.date.fromisoformat, ValueError, value)  # a month or day in range


def _uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) > 23 and all(value[at] == "-" for at in (8, 13, 18, 23))


def _regex(value: str) -> bool:
    """An ECMA-262 pattern as ``pattern`` reads it (jsonschema's own uses Python ``re``, which
    recurses without limit on nested groups and warns on ``[[``)."""
    from toolctl.patterns import check_value

    return _parses(check_value, ValueError, value)  # under the value memory cap, never cached


# format -> (checker, first draft index in _DRAFTS that defines it, package it imports; "" for
# the standard library). Every format toolctl enforces, in every dialect: the one definition the
# python-jsonschema validators and the jsonschema-rs fast path both check with. The same formats,
# semantics and drafts as jsonschema's own checkers (which it is tested against).
CHECKERS: dict[str, tuple[Callable[[str], bool], int, str]] = {
    "email": (_email, 0, ""),
    "idn-email": (_email, 0, ""),
    "ipv4": (_ipv4, 0, ""),
    "ipv6": (_ipv6, 0, ""),
    "date": (_date, 2, ""),
    "uuid": (_uuid, 3, ""),
    "date-time": (_date_time, 0, "rfc3339_validator"),
    "regex": (_regex, 0, "regex"),
    "uri": (_uri, 0, "rfc3986_validator"),
    "hostname": (_hostname, 0, "fqdn"),
    "uri-reference": (_uri_reference, 1, "rfc3986_validator"),
    "json-pointer": (_json_pointer, 1, "jsonpointer"),
    "uri-template": (_uri_template, 1, "uri_template"),
    "time": (_time, 2, "rfc3339_validator"),
    "iri": (_iri, 2, "rfc3986_validator"),
    "iri-reference": (_iri_reference, 2, "rfc3986_validator"),
    "idn-hostname": (_idn_hostname, 2, "idna"),
    "relative-json-pointer": (_relative_json_pointer, 2, "jsonpointer"),
    "duration": (_duration, 3, "isoduration"),
}


def _strings_only(check: Callable[[str], bool]) -> Callable[[object], bool]:
    """A format applies to strings; any other value passes (as in jsonschema)."""

    def run(instance: object) -> bool:
        return not isinstance(instance, str) or check(instance)

    return run


@functools.cache
def _installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def forget_installed() -> None:
    """Look the checker packages up afresh (one installed or removed since the last lookup in
    this process decides which formats are enforced)."""
    _installed.cache_clear()
    checkers.cache_clear()
    format_checker.cache_clear()


@functools.cache
def checkers(validator_class: str) -> dict[str, Callable[[str], bool]]:
    """The checkers of the formats one dialect (a jsonschema class name such as
    ``Draft202012Validator``) enforces, by name: :data:`CHECKERS` of its drafts whose package is
    installed. Imports neither jsonschema nor any checker's package."""
    level = _DRAFTS.index(validator_class)
    return {
        name: check
        for name, (check, since, package) in CHECKERS.items()
        if level >= since and (not package or _installed(package))
    }


@functools.cache
def format_checker(validator_class: str) -> Any:
    """The ``FormatChecker`` for one dialect: the formats of :func:`checkers` (nothing else:
    jsonschema's own checkers are mirrored there, so this table alone decides)."""
    own = import_jsonschema().FormatChecker(formats=())
    for name, check in checkers(validator_class).items():
        own.checks(name)(_strings_only(check))
    return own


def enforced_formats(validator_class: str = "Draft202012Validator") -> frozenset[str]:
    """The formats the validator factory rejects bad values of, for one dialect."""
    return frozenset(checkers(validator_class))


def unchecked_reason(fmt: str, validator_class: str) -> tuple[str, str]:
    """Why ``fmt`` is not enforced in a dialect, and what to do: (reason, hint)."""
    known = CHECKERS.get(fmt)
    if known is None:
        return "is unknown and never checked", "use a known format, or add a pattern"
    _check, since, package = known
    if _DRAFTS.index(validator_class) < since:
        return (
            f"is not a format of this schema's dialect ({validator_class[:-9]})",
            "declare $schema: https://json-schema.org/draft/2020-12/schema, or add a pattern",
        )
    return (
        f"is not checked here: the package {package!r} is not installed",
        f"reinstall {DISTRIBUTION} (it depends on {package.replace('_', '-')}), or add a pattern",
    )

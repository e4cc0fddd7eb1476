"""Canonical JSON (RFC 8785, JCS) and the SHA-256 digests of contracts and declarations.

Digests must be the same on every machine and Python version, and reproducible by a client in
another language, so they are taken over the RFC 8785 form: keys sorted by UTF-16 code units, no
whitespace, numbers written as ECMAScript writes them (``1.0`` is ``1``, ``1e-7`` is ``1e-7``),
strings escaped minimally. Integers beyond ±2**53 are written as the double a JSON parser in
JavaScript would read, as RFC 8785 requires.

The common case (no float, no huge integer, nothing outside the BMP) is :func:`json.dumps`'s own
output, checked by re-reading it; the rest goes through a small exact writer.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import re
from typing import Any

_SAFE = 2**53
_DUMP = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class _Special(Exception):
    """The text holds a number JCS writes differently from ``json.dumps``."""


def _refuse_float(_: str) -> Any:
    raise _Special


def _check_int(text: str) -> Any:
    if len(text) > 15 and not -_SAFE <= int(text) <= _SAFE:
        raise _Special
    return 0


def _plain(text: str) -> bool:
    """True when ``json.dumps``'s ``text`` is already the RFC 8785 form: no float (JCS writes
    them differently), no integer beyond ±2**53, no character outside the BMP (JCS sorts keys
    by UTF-16 code units). Checked by re-reading it with C's parser, calling back on numbers."""
    if not text.isascii() and _ASTRAL.search(text):
        return False
    try:
        json.loads(text, parse_float=_refuse_float, parse_int=_check_int)
    except _Special:
        return False
    return True


def es_number(number: float) -> str:
    """``number`` as ECMAScript's ``Number.prototype.toString`` writes it (RFC 8785 §3.2.2.3)."""
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError("NaN and infinity have no JSON form")
    if number == 0:
        return "0"
    sign, digits_t, exp = decimal.Decimal(repr(number)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exp, int)
    n = len("".join(map(str, digits_t))) + exp  # position of the decimal point
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits[0] + (f".{digits[1:]}" if k > 1 else "")
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return ("-" if sign else "") + text


def _exact(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(_DUMP(key))
            out.append(":")
            _exact(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _exact(item, out)
        out.append("]")
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        out.append(_DUMP(value))
    elif isinstance(value, (int, float)):
        out.append(es_number(float(value)))
    else:
        raise TypeError(f"not JSON data: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """The RFC 8785 canonical form of ``value`` (JSON data: dict, list, str, number, bool, None)."""
    text = str(_DUMP(value))
    if _plain(text):
        return text
    out: list[str] = []
    _exact(value, out)
    return "".join(out)


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical form of ``value``."""
    blob = canonical_json(value).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(blob).hexdigest()

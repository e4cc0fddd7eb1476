"""Canonical JSON (RFC 8785, JCS) and the SHA-256 digests of contracts and declarations.

Digests must be the same on every machine and Python version, and reproducible by a client in
another language, so they are taken over the RFC 8785 form: keys sorted by UTF-16 code units, no
whitespace, numbers written as ECMAScript writes them (``1.0`` is ``1``, ``1e-7`` is ``1e-7``),
strings escaped minimally. Integers beyond ±2**53 are written as the double a JSON parser in
JavaScript would read, as RFC 8785 requires.

The common case (no float that Python writes with an exponent, no key outside the BMP) goes
through :func:`json.dumps` after one normalising walk; the rest through a small exact writer.
"""

from __future__ import annotations

import decimal
import hashlib
import json
from typing import Any

_SAFE = 2**53
_DUMP = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


class _Hard(Exception):
    """The value needs the exact writer (a float with an exponent, a key outside the BMP)."""


def _normal(value: Any) -> Any:
    """``value`` with numbers in their JCS type (integral floats as ints, huge ints as floats);
    raises :class:`_Hard` when ``json.dumps`` would write something JCS writes differently."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if any(ord(c) > 0xFFFF for c in key):
                raise _Hard
            out[key] = _normal(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_normal(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if -_SAFE <= value <= _SAFE:
            return value
        raise _Hard
    if isinstance(value, float):
        if value.is_integer() and -_SAFE <= value <= _SAFE:
            return int(value)
        if "e" in repr(value) or "n" in repr(value):  # exponent, nan or inf
            raise _Hard
        return value
    raise TypeError(f"not JSON data: {type(value).__name__}")


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
    try:
        return str(_DUMP(_normal(value)))
    except _Hard:
        out: list[str] = []
        _exact(value, out)
        return "".join(out)


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical form of ``value``."""
    blob = canonical_json(value).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(blob).hexdigest()

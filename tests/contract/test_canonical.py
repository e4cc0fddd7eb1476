"""Canonical JSON and digests: RFC 8785 exactly, checked against an independent implementation."""

from __future__ import annotations

import math

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl.contract.canonical import canonical_json, digest, es_number

# RFC 8785 appendix B (IEEE 754 values and their ECMAScript text), plus the integer edges.
NUMBERS = [
    (0.0, "0"),
    (-0.0, "0"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (9007199254740992.0, "9007199254740992"),
    (-9007199254740992.0, "-9007199254740992"),
    (295147905179352830000.0, "295147905179352830000"),
    (9.000000000000001e21, "9.000000000000001e+21"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (0.000001, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (333333333.3333332, "333333333.3333332"),
    (1e23, "1e+23"),
    (123.456, "123.456"),
    (1.0, "1"),
    (-1.5, "-1.5"),
]


@pytest.mark.parametrize(("number", "text"), NUMBERS)
def test_numbers_are_written_as_ecmascript_writes_them(number: float, text: str) -> None:
    assert es_number(number) == text
    assert canonical_json([number]) == f"[{text}]"


def test_rfc_8785_example_object() -> None:
    data = {
        "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": '€$\u000f\nA\'B"\\\\"/',
        "literals": [None, True, False],
    }
    assert canonical_json(data) == (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16, after it in code points.
    data = {"\ufb33": 1, "\U0001f600": 2, "a": 3}
    assert canonical_json(data) == '{"a":3,"\U0001f600":2,"\ufb33":1}'


def test_integers_beyond_2_53_are_written_as_doubles() -> None:
    assert canonical_json({"maximum": 2**100}) == '{"maximum":1.2676506002282294e+30}'


def test_digest_is_fixed_for_a_fixed_value() -> None:
    # A regression anchor: a change here changes every lock file and pinned digest.
    assert digest({"name": "t", "n": [1, 1.5, True, None]}) == (
        "sha256:" + __import__("hashlib").sha256(b'{"n":[1,1.5,true,null],"name":"t"}').hexdigest()
    )


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_same_bytes_as_the_rfc8785_package(value: object) -> None:
    try:
        expected = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        return
    assert canonical_json(value).encode("utf-8") == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_es_number_round_trips(number: float) -> None:
    assert float(es_number(number)) == number or (number == 0 and math.copysign(1, number) < 0)

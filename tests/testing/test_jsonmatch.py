"""JSON-aware equality, subset matching and readable differences."""

from __future__ import annotations

from toolctl.testing.jsonmatch import contains, differences, json_equal, unified_diff


def test_json_equal_follows_json_types() -> None:
    assert json_equal(1, 1.0)
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal([1, 2], [2, 1])


def test_contains_matches_subsets() -> None:
    actual = {"city": "Paris, France", "days": [{"t": 21, "sky": "sun"}, {"t": 18}], "n": 2}
    assert contains({"city": "Paris"}, actual)
    assert contains({"days": [{"t": 18}]}, actual)
    assert not contains({"days": [{"t": 30}]}, actual)
    assert not contains({"missing": 1}, actual)
    assert not contains({"n": True}, actual)


def test_differences_name_the_path() -> None:
    found = differences({"a": {"b": 1}, "c": [1, 2]}, {"a": {"b": 2}, "c": [1], "d": 0})
    text = [str(d) for d in found]
    assert "at /a/b: expected 1, got 2" in text
    assert "at /c: expected 2 item(s), got 1" in text
    assert "at /d: unexpected key (value 0)" in text


def test_unified_diff_shows_expected_and_actual_lines() -> None:
    lines = unified_diff({"t": 21}, {"t": 22})
    assert '-  "t": 21' in lines
    assert '+  "t": 22' in lines

"""Hostile patterns and values cannot stall or exhaust validation (issue 20, class 2).

Patterns run on RE2 (linear, memory-capped) with a bounded fallback; a pattern that cannot be
evaluated in the budget refuses the value, never lets it through a ``not``; format checkers are
linear; jsonschema's own regex and pairwise comparisons are replaced.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from toolctl.budget import BudgetExceeded, ValidationBudget, ValidationRefused
from toolctl.patterns import (
    MAX_EXPANDED,
    PatternTooLarge,
    build,
    check_value,
    compile_pattern,
    expanded_size,
)
from toolctl.schema import check_schema, make_validator

HUGE = "(?:(?:(?:a{1000}){1000}){1000})"  # 32 bytes; 10^9 states written out
BACKTRACKING = "^(?!x)(a|a)+$"  # lookahead: the fallback engine, exponential on "aaa...!"


def test_the_32_byte_pattern_is_refused_with_a_message_not_compiled() -> None:
    with pytest.raises(PatternTooLarge, match="too large to run"):
        build(HUGE)
    [problem] = check_schema({"type": "string", "pattern": HUGE})
    assert problem.path == ("pattern",) and "too large" in problem.message


def test_a_large_pattern_that_needs_the_fallback_is_refused_too() -> None:
    lookaround = "(?=a)(?:a{1000}){1000}"
    assert expanded_size(lookaround) > MAX_EXPANDED
    with pytest.raises(PatternTooLarge):
        build(lookaround)


def test_ecma_semantics_on_re2() -> None:
    assert not compile_pattern("^abc$").fallback
    assert not compile_pattern("^abc$").search("abc\n")  # $ only at the very end
    assert not compile_pattern(r"^\d$").search("٣")  # \d is ASCII
    assert compile_pattern(r"^\s$").search("\u00a0")  # ECMA white space includes NBSP
    assert not compile_pattern("^.$").search("\r")  # . never matches a line terminator
    assert compile_pattern(r"^\u00e9$").search("é")  # \uXXXX escapes
    assert compile_pattern(r"^\u{1F600}$").search("\U0001f600")


@pytest.mark.parametrize(
    "pattern", ["^abc$", "b", "^$", r"^\d+$", "é.$", r"^\u{1F600}+", "(x|y)*z$", "\\s"]
)
@pytest.mark.parametrize(
    "text", ["", "abc", "abc\n", "xxyz", "ééé", "aé", "\U0001f600\U0001f600", "a\ud800b", "12", " "]
)
def test_re2s_own_match_is_the_bindings_search(pattern: str, text: str) -> None:
    """The search asks RE2 over UTF-8 bytes directly (Pattern.matches): the same verdict as
    the binding's ``search``, which also works out character offsets, on any text."""
    compiled = compile_pattern(pattern)
    assert compiled.matches is not None
    safe = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    assert compiled.search(text) == (compiled.engine.search(safe) is not None)


def test_lookaround_and_backreferences_use_the_bounded_fallback() -> None:
    assert compile_pattern("^(?=a)a+$").fallback
    assert compile_pattern("^(?=a)a+$").search("aaa")
    assert compile_pattern(r"^(a)\1$").search("aa")
    assert not compile_pattern(r"^(a)\1$").search("ab")


def test_re2_is_linear_where_backtracking_explodes() -> None:
    # Python's re (and the regex module) take exponential time on this; RE2 answers at once
    assert not compile_pattern("^(a|a)+$").fallback
    assert not make_validator({"pattern": "^(a|a)+$"}).is_valid("a" * 100_000 + "!")


@pytest.mark.parametrize("schema", [{"pattern": BACKTRACKING}, {"not": {"pattern": BACKTRACKING}}])
def test_a_pattern_out_of_budget_refuses_the_value_even_under_not(schema: dict) -> None:
    validator = make_validator({"type": "string", **schema})
    with pytest.raises(BudgetExceeded, match=r"run\.validationBudgetMs"):
        validator.errors("a" * 60 + "!", budget=ValidationBudget(50))
    # without a call budget: one problem, so the value is still refused, never accepted
    [problem] = validator.errors("a" * 60 + "!")
    assert problem.keyword == "refused"


def test_the_budget_is_shared_by_every_check_of_a_call() -> None:
    validator = make_validator({"type": "array", "items": {"type": "string", "format": "email"}})
    budget = ValidationBudget(0.001)  # a microsecond: used up by the first look at the clock
    with pytest.raises(BudgetExceeded):
        validator.errors(["x@example.com"] * 500, budget=budget)
    with pytest.raises(BudgetExceeded):  # spent: the output of the same call is refused too
        validator.errors(["x@example.com"] * 500, budget=budget)


def test_additional_properties_beside_pattern_properties_uses_the_bounded_engine() -> None:
    # jsonschema itself searches keys with Python's re here (exponential on this key)
    schema = {
        "type": "object",
        "patternProperties": {"^(a|a)+$": {}},
        "additionalProperties": False,
    }
    validator = make_validator(schema)
    assert validator.errors({"a" * 5000 + "!": 1})[0].keyword == "additionalProperties"
    assert validator.errors({"aaaa": 1}) == []


def test_an_uncompilable_pattern_refuses_instead_of_passing_a_not() -> None:
    validator = make_validator({"not": {"pattern": "(?<=a"}})
    assert not validator.is_valid("anything")
    with pytest.raises(ValidationRefused):
        validator.errors("anything", budget=ValidationBudget())


def test_unique_items_is_linear_and_keeps_json_equality() -> None:
    validator = make_validator({"type": "array", "uniqueItems": True})
    assert validator.errors([{"k": i} for i in range(50_000)]) == []
    assert validator.errors([{"k": 1}, {"k": 1.0}])  # 1 == 1.0 in JSON
    assert validator.errors([True, 1]) == []  # true is not 1
    assert validator.errors([[1, {"a": [2]}], [1, {"a": [2]}]])


@pytest.mark.parametrize("value", ["{" * 200_000, "a://" + "{" * 200_000 + "}"])
def test_uri_template_is_linear(value: str) -> None:
    validator = make_validator({"type": "string", "format": "uri-template"})
    assert validator.errors(value)  # answers (quadratic before: never finished)


def test_uri_template_still_checks_rfc_6570() -> None:
    validator = make_validator({"type": "string", "format": "uri-template"})
    for good in ("http://x/{id}", "/a{/b,c}{?q*}", "{+path:10}", "plain"):
        assert validator.errors(good) == [], good
    for bad in ("{", "}", "{a{b}", "a}b{c}", "{=a}"):
        assert validator.errors(bad), bad


def test_format_regex_value_is_checked_under_the_value_cap() -> None:
    with pytest.raises(PatternTooLarge):
        check_value(HUGE)
    check_value("(?=a)b")  # lookaround is ECMA: valid
    validator = make_validator({"type": "string", "format": "regex"})
    cached = compile_pattern.cache_info().currsize
    assert validator.errors(HUGE)[0].keyword == "format"
    assert validator.errors("^caller-chosen-[a-z]+$") == []
    assert compile_pattern.cache_info().currsize == cached  # values are never cached


def test_hostile_format_regex_value_stays_under_200_mib() -> None:
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from toolctl.schema import make_validator
        v = make_validator({{"type": "string", "format": "regex"}})
        for value in ({HUGE!r}, "(?=a)" + {HUGE!r}, {HUGE!r} * 100):
            assert v.errors(value), value
        # this process's own peak (VmHWM starts afresh at exec; ru_maxrss keeps the peak of
        # the process that forked it: a large pytest worker)
        status = Path("/proc/self/status").read_text()
        print(next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmHWM:")) // 1024)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert int(out.stdout.strip()) < 200, out.stdout


def test_exponential_applicators_are_cut_off_by_the_budget() -> None:
    # two anyOf branches through the same $ref: 2^30 evaluations for 30 levels of nesting
    both = {"type": "array", "items": {"$ref": "#/$defs/n"}}
    node = {"anyOf": [both, {**both, "minItems": 0}, {"type": "integer"}]}
    validator = make_validator({"$defs": {"n": node}, "$ref": "#/$defs/n"})
    value: object = "x"
    for _ in range(30):
        value = [value]
    with pytest.raises(BudgetExceeded):
        validator.errors(value, budget=ValidationBudget(50))
    assert validator.errors([[1]], budget=ValidationBudget(50)) == []

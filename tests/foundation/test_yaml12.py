"""Plain scalars resolve by the YAML 1.2 core schema, checked against reference 1.2 parsers.

A generated corpus of scalars is read by toolctl and by ``ruamel.yaml`` (what check-jsonschema
uses) and, when installed (``npm ci --prefix tests/node``), by the ``yaml`` package with the core
schema (what the editors' YAML language server uses). toolctl departs from the core schema
on purpose in one place: a decimal integer with a leading zero (``0755``) stays a string,
since YAML 1.1 reads it as octal. Non-finite numbers (``.inf``, ``.nan``, ``1e400``) are
numbers to every parser, and an error in toolctl (JSON cannot hold them), never a string.
"""

from __future__ import annotations

import datetime
import io
import itertools
import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolctl.errors import YamlError
from toolctl.yamlsrc import loads

NODE_DIR = Path(__file__).parents[1] / "node"
LEADING_ZERO = re.compile(r"[-+]?0[0-9]+\Z")

_BODIES = (
    *("0", "1", "7", "10", "42", "1234567890123", "00", "007", "0755", "0800", "019"),
    *("0x10", "0xFF", "0xff", "0xfg", "0x", "0X10", "0o17", "0o8", "0o", "0O17", "0b101"),
    *("1_000", "0x_1", "1.", ".5", "1.5", "01.5", "00.5", "1.5.2", "1..5", "1e3", "1E3"),
    *("1e+3", "1.5e-3", ".5e3", "5.e3", "1e", "e3", ".e3", "1e3.5", "1e400", "2.5E-400"),
    *(".inf", ".Inf", ".INF", ".iNf", "inf", "Infinity", ".nan", ".NaN", ".NAN", ".nAn", "nan"),
    *("1:30", "1:30:00", "190:20:30", "1,000", "1 000", "0x1p3", "١٢", "12ab", "1e3e3"),
)
_WORDS = (
    *("null", "Null", "NULL", "nUll", "~", "true", "True", "TRUE", "tRue", "false", "False"),
    *("FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"),
    *("y", "Y", "n", "N", "2026-01-02", "2026-01-02 10:00:00", "2026-01-02T10:00:00Z"),
    *("2026-1-2", ".", "+", "..", "..."),
)
CORPUS = sorted({*(s + b for s, b in itertools.product(("", "+", "-"), _BODIES)), *_WORDS})


def _toolctl(text: str) -> Any:
    try:
        return loads(f"k: {text}\n").data["k"]
    except YamlError as err:
        assert err.code == "TC109" and (err.line, err.col) == (1, 4), err
        return YamlError


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, bool) or theirs is None or isinstance(theirs, str):
        return ours is theirs if not isinstance(theirs, str) else ours == theirs
    if isinstance(theirs, float) and not math.isfinite(theirs):
        return ours is YamlError  # a number, just not one JSON can hold
    return type(ours) in (int, float) and ours == theirs


def _mismatches(reference: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(text, toolctl's value, the reference's) wherever they differ, toolctl's one intended
    departure (a leading-zero integer stays a string) taken into account."""
    wrong = []
    for text, theirs in reference.items():
        expected = text if LEADING_ZERO.match(text) else theirs
        if not _same(_toolctl(text), expected):
            wrong.append((text, _toolctl(text), expected))
    return wrong


def _ruamel_is_not_core(text: str, value: Any) -> bool:
    """ruamel.yaml's departures from the 1.2 core schema (it keeps some YAML 1.1 forms)."""
    return (
        "_" in text
        or re.match(r"[-+]?0b", text) is not None
        or re.match(r"[-+]0[xo]", text) is not None
        or re.match(r"[-+]?\.[0-9]+[eE]", text) is not None  # .5e3: a float to the core schema
        or isinstance(value, (datetime.date, datetime.datetime))
    )


def test_corpus_matches_ruamel_yaml() -> None:
    from ruamel.yaml import YAML

    reader = YAML(typ="safe", pure=True)
    answers = {text: reader.load(io.StringIO(f"k: {text}\n"))["k"] for text in CORPUS}
    # ruamel's own departures are checked against the core schema below (and the yaml package)
    assert _mismatches({t: v for t, v in answers.items() if not _ruamel_is_not_core(t, v)}) == []


@pytest.mark.requires("tests-node")  # CI (.ci/run) installs it: there a missing parser fails
def test_corpus_matches_the_language_servers_yaml_parser() -> None:
    result = subprocess.run(
        ["node", str(NODE_DIR / "yaml12.mjs")],
        input=json.dumps(CORPUS),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answers = dict(zip(CORPUS, json.loads(result.stdout), strict=True))
    assert [t for t, answer in answers.items() if "error" in answer] == []
    values = {
        t: float(a["nonfinite"]) if "nonfinite" in a else a["value"] for t, a in answers.items()
    }
    assert _mismatches(values) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *(("+1", 1), ("0x10", 16), ("0o17", 15), ("-.5", -0.5), ("5.e3", 5000.0), ("+12", 12)),
        *((".5e3", 500.0), ("1_000", "1_000"), ("0b11", "0b11"), ("-0x10", "-0x10")),
    ],
)
def test_yaml_12_numbers_load_as_numbers(text: str, value: Any) -> None:
    loaded = _toolctl(text)
    assert loaded == value and type(loaded) is type(value)


def test_the_issue_examples_export_as_numbers(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/t.yaml": "toolctl: 1\nname: t\ndescription: d\ninputSchema:\n"
            "  type: object\n  properties: {s: {enum: [+1, -1]}}\ntimeout: +5\n"
        }
    )
    assert registry.ok, [d.format() for d in registry.diagnostics]
    assert registry.get("t").input_schema["properties"]["s"]["enum"] == [1, -1]


@pytest.mark.parametrize("text", [".inf", "-.Inf", ".NAN", "1e400"])
def test_non_finite_numbers_are_located_errors(text: str) -> None:
    with pytest.raises(YamlError) as info:
        loads(f"a: 1\nk: {text}\n")
    assert (info.value.code, info.value.line, info.value.col) == ("TC109", 2, 4)
    assert f'"{text}"' in (info.value.hint or "")


def test_yaml_11_surprises_still_stay_strings() -> None:
    data = loads("a: NO\nb: 0755\nc: 1:30\nd: 2026-01-02\ne: on\nf: 0b11\ng: 1_0\n").data
    assert data == {
        "a": "NO",
        "b": "0755",
        "c": "1:30",
        "d": "2026-01-02",
        "e": "on",
        "f": "0b11",
        "g": "1_0",
    }


def test_dumped_strings_read_back_as_the_same_strings() -> None:
    """What toolctl writes as YAML (a fuzz finding to paste) means the same when read back:
    PyYAML, a YAML 1.1 emitter, would leave ``0o17`` or ``1e3`` plain."""
    from toolctl.yamlsrc import dumps

    data = [{"input": {"s": text}} for text in CORPUS] + [{"n": 1.5e300, "i": -(2**70)}]
    assert loads(dumps(data, allow_unicode=True)).data == data

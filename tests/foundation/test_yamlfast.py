"""The fast YAML path (yaml-rs, :mod:`toolctl.yamlfast`) takes a text only when it reads it
exactly as the strict parser does: the same data, of the same types, and no text the strict
parser refuses. Checked on generated scalars and structures, on what the strict rules refuse,
and on realistic registries; then its documents' positions, read on demand."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_helpers import imported_by
from toolctl import yamlfast, yamlparse
from toolctl.diagnostics import DeferredLocation, Location
from toolctl.errors import YamlError
from toolctl.loader import load_registry
from toolctl.yamlsrc import load_file, loads

REPO = Path(__file__).resolve().parents[2]


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``1 == 1.0 == True`` in Python)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _agrees(text: str) -> bool:
    """Whether the fast path took ``text`` (and if so, that the strict parser reads the same)."""
    fast = yamlfast.parse(text)
    if fast is None:
        return False
    try:
        strict = yamlparse.parse(text)
    except YamlError as exc:
        raise AssertionError(f"fast path took what the strict parser refuses: {text!r}") from exc
    assert _same(fast.data, strict.data), (text, fast.data, strict.data)
    assert fast.key_names == strict.key_names, text
    return True


NUMBERISH = "0123456789.+-_eExXoObBaAfFiInN"
SPECIAL = [
    "0755", "00", "0", "-0", "+0", "0.0", "-0.0", "0o17", "0o8", "0x1F", "0X1F", "+0x1", "-0o7",
    "0b101", "1_000", "1__0", "1_0.5", ".5", "5.", "+.5", "-.5", "1e3", "1E3", "1e+3", "1e-3",
    "1.5e3", "1.e3", ".5e3", "1e", "e3", "1e400", "-1e400", ".inf", "-.inf", "+.inf", ".Inf",
    ".INF", ".nan", ".NaN", ".NAN", ".iNf", "9" * 30, "9" * 4001, "12:30", "1:2:3", "2026-12-01",
    "2026-12-01T08:30:00Z", "1.2.3", "v1", "1a", "0x", "0o", "0xG", "~", "null", "Null", "NULL",
    "nUll", "true", "True", "TRUE", "tRue", "false", "yes", "no", "on", "off", "y", "n", "<<",
    "=", "-", "+", ".", "..", "a b", "a: b", "a #b", "@x", "`x", "%x", "&x", "*x", "!x", "!!str x",
    "|", ">", "'q'", '"q"', '"\\x41"', '"\\u263A"', '"\\N"', '"\\_"', '"\\L"', '"\\P"', '"\\/"',
    '"\\t"', "'it''s'", "[]", "{}", "[a, b]", "{a: 1}", "?", "? x", ": x", "#c", "a\\b",
]  # fmt: skip
CONTEXTS = ["a: {}\n", "- {}\n", "[{}]\n", "{{a: {}}}\n", "{}: 1\n", "{}\n", "a:\n  - {}\n"]


def _tokens() -> list[str]:
    rnd = random.Random(27)
    short = ["".join(p) for n in (1, 2) for p in itertools.product(NUMBERISH, repeat=n)]
    longer = ["".join(rnd.choice(NUMBERISH) for _ in range(rnd.randint(3, 7))) for _ in range(3000)]
    return SPECIAL + short + longer


def test_scalars_in_every_context_are_read_alike() -> None:
    taken = 0
    for token in _tokens():
        for context in CONTEXTS:
            taken += _agrees(context.format(token))
    assert taken > 10000  # the fast path takes most of them: it is not just refusing everything


STRICT_REFUSES = {
    "anchor": "a: &x 1\n",
    "alias": "a: &x 1\nb: *x\n",
    "tag": "a: !foo x\n",
    "core tag": "a: !!int 1\n",
    "merge key": "<<: {a: 1}\nb: 2\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "document end": "a: 1\n...\n",
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "nested duplicate": "x:\n  k: 1\n  k: 2\n",
    "int key": "1: x\n",
    "bool key": "true: x\n",
    "null key": "~: x\n",
    "complex key": "? [a]\n: x\n",
    "control character": "a: b\x01c\n",
    "DEL": "a: b\x7fc\n",
    "C1 control": "a: b\x81c\n",
    "leading zero": "a: 0755\n",
    "infinity": "a: .inf\n",
    "overflow": "a: 1e400\n",
    "long integer": "a: " + "9" * 4001 + "\n",
    "directive": "%YAML 1.2\n---\na: 1\n",
    "syntax error": "a: [1, 2\n",
    "tab indentation": "a:\n\tb: 1\n",
}


@pytest.mark.parametrize("text", STRICT_REFUSES.values(), ids=STRICT_REFUSES.keys())
def test_what_the_strict_rules_refuse_or_read_otherwise_takes_the_strict_parser(
    text: str,
) -> None:
    assert yamlfast.parse(text) is None


def _nested(depth: int, flow: bool) -> str:
    if flow:
        return "a: " + "[" * depth + "]" * depth + "\n"
    return "".join(" " * i + "k:\n" for i in range(depth)) + " " * depth + "k: 1\n"


@pytest.mark.parametrize("flow", [True, False])
def test_nesting_at_the_limit_agrees_and_past_it_is_refused(flow: bool) -> None:
    for depth in range(60, 70):
        text = _nested(depth, flow)
        try:
            yamlparse.parse(text)
        except YamlError:
            assert yamlfast.parse(text) is None, depth
        else:
            assert _agrees(text), depth


STRUCTURES = [
    "name: x\ndescription: |\n  one\n  two\n\n  three\nz: 1\n",
    "d: |-\n  keep\n  no newline\n",
    "d: |+\n  keep\n\n\n",
    "d: >\n  folded\n  text\n\n  para\n",
    "d: >-\n  folded\n    more indented\n  back\n",
    "d: |2\n   two spaces kept\n",
    "d: plain\n  continued\n  lines\n",
    "d: 'single\n\n  quoted'\n",
    'd: "double \\\n  escaped break"\n',
    "d: a#b\ne: a #comment\n",
    "---\na: 1\n",
    "--- \na: 1\n",
    "a: {b: [1, {c: d}], e: f}\n",
    "- a\n- - b\n  - c\n- d: e\n  f: g\n",
    "a: b\r\nc: d\r\n",
    "\ufeffa: 1\n",
    "a: 'caf\u00e9 \u2014 na\u00efve \U0001f600'\n",
    "a: x\u2028y\n",
    "a: x\u0085y\n",
    "a:\n",
    "",
    "# only a comment\n",
    "a: ''\nb: \"\"\n",
    "a: -\n",
    "a: - b\n",
]


@pytest.mark.parametrize("text", STRUCTURES)
def test_structures_agree_when_taken(text: str) -> None:
    _agrees(text)


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
        ),
        max_leaves=20,
    ),
    st.sampled_from([{}, {"default_flow_style": True}, {"allow_unicode": True}]),
)
def test_any_data_written_as_yaml_is_read_alike(data: Any, style: dict[str, Any]) -> None:
    import yaml

    _agrees(yaml.safe_dump(data, **style))


FAKE_HEADERS = {
    "in a comment": "# note: |\n  b: &x 1\n",
    "in a comment, nothing else": "# note: |\n  &x\n",
    "in a quoted string in a flow sequence": 'a: ["x: |\n  ", 0755]\n',
    "in a quoted string, then a tag": "a: {k: 'x: |\n  ', j: !t 1}\n",
}


@pytest.mark.parametrize("text", FAKE_HEADERS.values(), ids=FAKE_HEADERS.keys())
def test_a_block_scalar_header_that_is_not_one_hides_nothing(text: str) -> None:
    """What follows a ``|`` that only looks like a header is checked after all: the fast path
    refuses the text (the strict parser reads or refuses it)."""
    assert yamlfast.parse(text) is None


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=" \n-:|>&*!#'\"[]{},?abc019._\t%@`<", max_size=40)
    | st.text(alphabet="0123456789._+-eExXoObBiInN:- \n[]{},#'\"|>abc~", max_size=30)
)
def test_any_text_is_taken_alike_or_left_to_the_strict_parser(text: str) -> None:
    """The fast path never raises, and what it takes it reads as the strict parser does
    (found this way, before it was kept out: ``{:x}``, ``.0_``, a block scalar ending the
    file without a line break, an empty block scalar; 360,000 random texts agree now)."""
    _agrees(text)


def test_prose_in_block_scalars_stays_on_the_fast_path() -> None:
    text = "description: |\n  Limited: 5,000 requests & more *per* hour!\n  | a | b |\nx: 1\n"
    assert _agrees(text)


LINE = st.text(alphabet=" abc:#&*!%|>-?@`_019.,[]{}'\"", max_size=12)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["|", "|-", "|+", ">", ">-", ">+", "|2", "| #c"]),
    st.lists(st.tuples(st.integers(0, 4), LINE), max_size=5),
    st.integers(0, 2),
    st.sampled_from(["", "next: 1\n", "  &a x: 1\n", " *a\n", "- !t x\n", "k: 0755\n"]),
)
def test_block_scalars_and_what_follows_them_are_read_alike(
    header: str, lines: list[tuple[int, str]], indent: int, after: str
) -> None:
    body = "".join(" " * (indent + 1 + extra) + line + "\n" for extra, line in lines)
    _agrees(" " * indent + "key: " + header + "\n" + body + " " * indent + after)


def test_realistic_registries_take_the_fast_path_and_agree(tmp_path: Path) -> None:
    for corpus in ("realistic", "heldout"):
        out = tmp_path / corpus
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "corpus.py"), str(out), "--tools", "60",
             "--corpus", corpus],
            check=True, capture_output=True,
        )  # fmt: skip
        files = sorted(out.rglob("*.yaml"))
        taken = [f for f in files if _agrees(f.read_text(encoding="utf-8"))]
        for f in taken:
            text = f.read_text(encoding="utf-8")
            if "name" in yamlparse.parse(text).data:
                where = yamlparse.parse(text).locate(("name",))
                assert loads(text).locate_root_value("name") == where, f
        assert len(taken) >= 0.9 * len(files), (corpus, len(taken), len(files))
    for f in sorted((REPO / "examples").rglob("*.yaml")) + sorted(
        (REPO / "tools.d").rglob("*.yaml")
    ):
        _agrees(f.read_text(encoding="utf-8"))


TOOL = """\
toolctl: 1
name: {name}
description: Echoes.
handler: echo_handler:run
inputSchema:
  type: object
  properties:
    city: {{type: string}}
"""


def test_positions_of_a_fast_document_are_those_of_the_strict_parse() -> None:
    text = TOOL.format(name="echo") + "  required: [city]\n"
    fast, strict = loads(text, "t.yaml"), yamlparse.parse(text, "t.yaml")
    assert fast.arrays() is None  # not read until asked
    paths = [("name",), ("inputSchema", "properties", "city", "type"), ("nope",)]
    for path in [*paths, ("inputSchema", "required", 0)]:
        for key in (False, True):
            assert fast.locate(path, key=key) == strict.locate(path, key=key)
    assert fast.arrays() == strict.arrays()


ROOT_NAMES = [
    "name: echo\n",
    "a: 1\nname:   echo  # the tool\nb: 2\n",
    "name: 'echo'\n",
    'name: "echo"\n',
    "name: it's\n",
    "name: 'it''s'\n",
    'name: "e\\x63ho"\n',
    "name: echo\n  continued\n",
    "name:\n  echo\n",
    "description: |\n  text\nname: echo\n",
    'description: "x\nname: no"\nname: echo\n',
    "name: echo#not a comment\n",
    "name: a #b\n",
    "{name: echo}\n",
    "name: 1\n",
]


@pytest.mark.parametrize("text", ROOT_NAMES)
def test_a_tool_name_found_in_the_text_is_where_the_strict_parser_puts_it(text: str) -> None:
    """Each tool's location (its ``name``) is found in the text, not by parsing again."""
    fast = loads(text, "t.yaml")
    strict = yamlparse.parse(text, "t.yaml")
    assert fast.locate_root_value("name") == strict.locate(("name",))
    assert fast.arrays() is None or strict.arrays() == fast.arrays()


def test_a_file_changed_after_loading_gives_the_file_not_a_wrong_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TOOL.format(name="echo"), encoding="utf-8")
    doc = load_file(path, "t.yaml")
    path.write_text("# moved\n" + TOOL.format(name="other"), encoding="utf-8")
    assert doc.locate(("name",)) == (0, 0)  # the data differs now: no line is trusted
    path.write_text(TOOL.format(name="echo"), encoding="utf-8")
    again = load_file(path, "t.yaml")
    path.write_text("# a comment moves every line\n" + TOOL.format(name="echo"), encoding="utf-8")
    assert again.locate(("name",)) == (3, 7)  # same data: the lines as the file has them now


def test_tool_locations_are_read_when_asked_and_survive_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n", encoding="utf-8")
    (tmp_path / "tools.d" / "echo.yaml").write_text("\n\n" + TOOL.format(name="echo"), "utf-8")
    (tmp_path / "echo_handler.py").write_text("def run(x):\n    return x\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # cold, then warm from entries without positions
        spec = load_registry(packs=False, cache=True).tools["echo"]
        assert isinstance(spec.location, DeferredLocation)
        assert str(spec.location) == "tools.d/echo.yaml:4:7"
        where = spec.locate("inputSchema", "properties", "city")
        assert where == Location("tools.d/echo.yaml", 10, 11)


def test_a_warm_export_locates_no_info_note_it_does_not_show(tmp_path: Path) -> None:
    """Info notes (an OpenAI tool's examples have no field) are shown with --verbose only, so
    a plain warm export does not read positions (nor import a YAML parser) to place them."""
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n", encoding="utf-8")
    tool = TOOL.format(name="echo") + "inputExamples:\n  - input: {city: Oslo}\n"
    (tmp_path / "tools.d" / "echo.yaml").write_text(tool, encoding="utf-8")
    (tmp_path / "echo_handler.py").write_text("def run(x):\n    return x\n", encoding="utf-8")
    env = {"TOOLCTL_CACHE_DIR": str(tmp_path / "cache")}
    watch = ["yaml", "toolctl.yamlparse"]
    imported_by(["validate"], tmp_path, watch, env)  # cold: the cache is written
    _, imported = imported_by(["export", "openai"], tmp_path, watch, env)
    assert imported == []
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "export", "openai", "--verbose"],
        cwd=tmp_path, env={**os.environ, **env}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "tools.d/echo.yaml:9:1: info TX220" in done.stderr


def test_without_yaml_rs_every_text_takes_the_strict_parser() -> None:
    """A platform without yaml-rs's wheel (it is imported, never required): same results."""
    probe = (
        "import sys; sys.modules['yaml_rs'] = None\n"  # as if not installed
        "from toolctl import yamlfast\n"
        "from toolctl.yamlsrc import loads\n"
        f"doc = loads({TOOL.format(name='echo')!r}, 't.yaml')\n"
        "print(yamlfast.available(), doc.arrays() is not None, doc.locate(('name',)))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "(2,", "7)"]

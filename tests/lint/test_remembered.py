"""A warm `toolctl lint` takes the formats the validators check (TL207) and the installed rule
packs and export formats from the cache: it imports neither python-jsonschema, ``referencing``
and ``regex`` nor a metadata scanner nor (for findings in shared schema files) a YAML parser,
and finds exactly what a cold lint finds. Its findings themselves are remembered
(:mod:`toolctl.lint.memory`): the tests at the end change one thing they depend on at a time
and check that a stale finding is never served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import imported_by
from tests.lint.lintkit import Project
from toolctl import cache
from toolctl.diagnostics import Diagnostic
from toolctl.lint import packs
from toolctl.lint.memory import Memory

CHECKERS = ["jsonschema", "referencing", "regex", "importlib_metadata", "importlib.metadata"]
CHECKERS += ["yaml"]
# and, its findings remembered, neither jsonschema-rs (defaults, examples) nor an exporter
CHECKERS += ["jsonschema_rs", "toolctl.export.anthropic", "toolctl.export.openai"]
TOOL = """toolctl: 1
name: {name}
description: Book a meeting room for a team at a given time and tell who was invited.
inputSchema:
  {dialect}type: object
  properties:
    phone: {{type: string, format: phone, description: Who to call.}}
    within: {{type: string, format: duration, description: How long it may take.}}
    email: {{type: string, format: email, description: Who to invite.}}
    fax: {{$ref: "schemas/common.schema.yaml#/$defs/Fax"}}
    when: {{type: string, format: date-time, description: When it starts.}}
  additionalProperties: false
"""
SHARED = """$defs:
  Fax: {type: string, format: fax, description: Where to send a copy.}
"""
DRAFT7 = "$schema: http://json-schema.org/draft-07/schema#\n  "


def _lint(root: Path) -> tuple[str, list[str]]:
    # its own cache: cold at first, whatever ran before
    env = {"TOOLCTL_CACHE_DIR": str(root / "cache")}
    return imported_by(["lint", "--format", "json"], root, CHECKERS, env)


@pytest.mark.slow
def test_a_warm_lint_finds_what_a_cold_one_does_without_the_checkers(tmp_path: Path) -> None:
    (tmp_path / "tools.d" / "schemas").mkdir(parents=True)
    (tmp_path / "tools.d" / "schemas" / "common.schema.yaml").write_text(SHARED, "utf-8")
    for name, dialect in (("book_2020", ""), ("book_draft7", DRAFT7)):
        text = TOOL.format(name=name, dialect=dialect)
        (tmp_path / "tools.d" / f"{name}.yaml").write_text(text, encoding="utf-8")
    cold, cold_loaded = _lint(tmp_path)
    warm, warm_loaded = _lint(tmp_path)
    assert warm == cold
    assert "toolctl.export.openai" in cold_loaded  # the providers' checks ran
    sarif = ["lint", "--format", "sarif"]
    env = {"TOOLCTL_CACHE_DIR": str(tmp_path / "cache")}
    cold_sarif = imported_by(sarif, tmp_path, [], {**env, "TOOLCTL_NO_CACHE": "1"})[0]
    assert imported_by(sarif, tmp_path, [], env)[0] == cold_sarif
    found = json.loads(cold)["diagnostics"]
    tl207 = sorted((d["tool"], d["pointer"]) for d in found if d["code"] == "TL207")
    assert tl207 == [
        ("book_2020", "/inputSchema/properties/phone/format"),
        ("book_2020", "schemas/common.schema.yaml#/$defs/Fax/format"),  # located in that file
        ("book_draft7", "/inputSchema/properties/phone/format"),
        ("book_draft7", "/inputSchema/properties/within/format"),  # 2019-09 on
    ]
    # the cold run scanned the installed packs; the formats checked are toolctl's own table,
    # so neither run needs python-jsonschema
    assert "importlib_metadata" in cold_loaded and "jsonschema" not in cold_loaded
    assert warm_loaded == []


def test_a_rule_pack_installed_or_removed_since_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remembered list holds while ``sys.path`` and its directories are unchanged:
    installing a distribution (or taking it away) changes them, and the list is scanned again."""
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    before = packs._entry_points()
    site = tmp_path / "site"
    info = site / "acme_rules-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{packs.GROUP}]\nacme = acme_rules:RULES\n")
    monkeypatch.syspath_prepend(str(site))
    assert ("acme", "acme_rules:RULES", "acme_rules") in packs._entry_points()
    monkeypatch.undo()  # uninstalled: sys.path as it was
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    assert packs._entry_points() == before


def test_a_planted_scan_naming_a_rule_pack_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remembered lists decide what lint and export import: one forged in a shared cache
    directory (no MAC, or another key's) is a miss, and the real entry points are scanned."""
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    real = packs._entry_points()
    store = cache.LoadCache(tmp_path / "cache" / "scans", [])
    name = f"<entry points {packs.GROUP}>"
    key = cache.import_path_key()
    where = Path(f"{name} {cache.sha256(json.dumps(key).encode())}")
    evil = {"key": key, "value": [["evil", "attacker_mod:RULES", "attacker_mod"]], "at": 1}
    body = json.dumps({"context": store.context, "entries": {str(where): evil}}).encode()
    shard = store._shard_file(store._shard_of(where))
    shard.parent.mkdir(parents=True, exist_ok=True)
    for sealed in (body, cache._seal(body, b"attacker key".ljust(32, b"!"))):
        shard.write_bytes(sealed)
        assert packs._entry_points() == real


# ---------------------------------------------------------------- remembered findings
# A warm lint takes what the rules found from the cache (toolctl.lint.memory). Each test below
# lints once to fill it, changes one thing the findings depend on, and checks that the next
# lint finds what a lint without the memory finds, and that the change did change them (so a
# stale remembered finding fails the test).

SHARED_DEFS = """\
$defs:
  Person:
    type: object
    properties:
      name: {type: string}
    required: [name]
    additionalProperties: false
"""
PEOPLE = """\
toolctl: 1
name: {name}
description: Add a person to the address book of the current team and return its id.
inputSchema:
  type: object
  properties:
    who: {{$ref: "schemas/people.schema.yaml#/$defs/Person"}}
    note: {{type: string, maxLength: 200, description: Shown next to the name.}}
  required: [who]
  additionalProperties: false
mcp:
  annotations: {{destructiveHint: true}}
inputExamples:
  - input: {{who: {{name: Ann}}}}
{scopes}"""


def _tool(name: str, scopes: str = "") -> str:
    return PEOPLE.format(name=name, scopes=scopes)


@pytest.fixture
def remembering(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose lint findings are remembered (as by the CLI), in a cache of its own."""
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    (project.root / "tools.d" / "schemas").mkdir()
    (project.root / "tools.d" / "schemas" / "people.schema.yaml").write_text(SHARED_DEFS)
    project.write(_tool("add_person"), "add.yaml")
    project.write(_tool("add_member"), "member.yaml")
    return project


def _dicts(diags: list[Diagnostic]) -> list[dict[str, object]]:
    return [d.to_dict() for d in diags]


def _cold(project: Project, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> list[Diagnostic]:
    with monkeypatch.context() as m:
        m.setattr(cache.DEFAULTS, "cache", False)  # no memory: every rule runs
        return project.lint(**kw)


def _recalls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each lint from now on took its findings for the whole registry from memory."""
    seen: list[bool] = []
    recall = Memory.recall_all

    def spy(self: Memory, *args: Any) -> Any:
        found = recall(self, *args)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(Memory, "recall_all", spy)
    return seen


def test_a_warm_lint_takes_every_finding_from_memory_and_finds_the_same(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    recalled = _recalls(monkeypatch)
    first, again = remembering.lint(), remembering.lint()
    assert recalled == [False, True]
    assert _dicts(again) == _dicts(first) == _dicts(_cold(remembering, monkeypatch))
    # TL402 on each tool; TL105 in the shared file found once for both
    assert [(d.file, d.line, d.code) for d in again if d.code in ("TL105", "TL402")] == [
        ("tools.d/add.yaml", 7, "TL105"),
        ("tools.d/add.yaml", 12, "TL402"),
        ("tools.d/member.yaml", 7, "TL105"),
        ("tools.d/member.yaml", 12, "TL402"),
        ("tools.d/schemas/people.schema.yaml", 5, "TL105"),
    ]


def test_two_registries_linted_in_turn_from_one_directory_each_keep_their_memory(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One whole-registry entry per directory made each run take the other's place."""
    import shutil

    shutil.copytree(remembering.root / "tools.d", remembering.root / "other.d")
    recalled = _recalls(monkeypatch)
    other = {"tools": "other.d"}
    runs = [remembering.lint(), remembering.lint(config=other)]
    runs += [remembering.lint(), remembering.lint(config=other)]
    assert recalled == [False, False, True, True]
    assert _dicts(runs[2]) == _dicts(runs[0]) and _dicts(runs[3]) == _dicts(runs[1])
    assert {d.file for d in runs[3]} >= {"other.d/add.yaml", "other.d/member.yaml"}


def _after(
    project: Project, monkeypatch: pytest.MonkeyPatch, change: Any, **kw: Any
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(findings before, after ``change()``), checked against a lint without the memory."""
    before = project.lint(**kw)
    assert _dicts(project.lint(**kw)) == _dicts(before)  # warm
    change()
    after = project.lint(**kw)
    assert _dicts(after) == _dicts(_cold(project, monkeypatch, **kw))
    assert _dicts(project.lint(**kw)) == _dicts(after)  # and warm again
    return before, after


def test_a_changed_tool_is_linted_again(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    def change() -> None:
        text = _tool("add_member").replace("maxLength: 200", "pattern: '^[a-z]+$'")
        remembering.write(text, "member.yaml")

    before, after = _after(remembering, monkeypatch, change)
    assert "TL205" not in {d.code for d in before}
    assert [(d.file, d.code) for d in after if d.code == "TL205"] == [
        ("tools.d/member.yaml", "TL205")
    ]


def test_a_changed_lint_setting_is_seen(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings: dict[str, Any] = {}

    def change() -> None:
        settings["description"] = {"min-length": 90}

    before = remembering.lint()
    remembering.lint(settings)  # the same settings: warm
    change()
    after = remembering.lint(settings)
    assert _dicts(after) == _dicts(_cold(remembering, monkeypatch, settings=settings))
    assert "TL102" not in {d.code for d in before}
    assert {d.file for d in after if d.code == "TL102"} == {
        "tools.d/add.yaml",
        "tools.d/member.yaml",
    }


def test_a_suppression_added_in_a_shared_schema_file_is_seen(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = remembering.root / "tools.d" / "schemas" / "people.schema.yaml"

    def change() -> None:
        text = SHARED_DEFS.replace(
            "name: {type: string}", "name: {type: string}  # toolctl: ignore[TL105]"
        )
        shared.write_text(text)

    before, after = _after(remembering, monkeypatch, change)
    assert [d.line for d in before if d.file == str(shared.relative_to(remembering.root))] == [5]
    assert [d.file for d in after if d.file.endswith("people.schema.yaml")] == []


def test_a_finding_in_a_shared_file_moves_with_its_line(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a comment added above: the tools' declarations are the same, their findings in
    that file are not."""
    shared = remembering.root / "tools.d" / "schemas" / "people.schema.yaml"
    before, after = _after(
        remembering, monkeypatch, lambda: shared.write_text("# people\n\n" + SHARED_DEFS)
    )
    assert [d.line for d in before if d.file.endswith("people.schema.yaml")] == [5]
    assert [d.line for d in after if d.file.endswith("people.schema.yaml")] == [7]


def test_a_finding_that_depends_on_the_other_tools_follows_them(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TL410 reports a destructive tool without scopes once another tool has some: it reads
    the other tools, so what it found is not remembered with the tool."""
    before, after = _after(
        remembering,
        monkeypatch,
        lambda: remembering.write(_tool("add_member", "scopes: [team:write]\n"), "member.yaml"),
    )
    assert "TL410" not in {d.code for d in before}
    assert [(d.tool, d.code) for d in after if d.code == "TL410"] == [("add_person", "TL410")]


def test_a_rule_pack_that_takes_over_a_code_is_not_answered_from_memory(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package's rules are not remembered (toolctl's context does not cover their code),
    and a pack that replaces a built-in rule changes the key of what was remembered."""
    from toolctl.diagnostics import Severity
    from toolctl.lint import Hit, RuleSet

    pack = RuleSet("acme")

    @pack.tool("TL402", "acme-approval", Severity.ERROR, "acme's own approval policy")
    def acme(tool: Any, ctx: Any) -> Any:
        yield Hit(tool, ("name",), f"acme says no to {tool.name}")

    assert "TL402" in {d.code for d in remembering.lint()}
    remembering.lint()  # warm, with the built-in TL402
    built = packs.build()
    built.rules["TL402"] = pack.rules[0]
    monkeypatch.setattr("toolctl.lint.catalogue", lambda: built)
    after = [d.message for d in remembering.lint() if d.code == "TL402"]
    assert after == ["acme says no to add_person", "acme says no to add_member"]


def _forge(store_dir: Path, key: bytes, edit: Any) -> int:
    """Rewrite every shard of the lint store with ``edit(entries)`` sealed under ``key``."""
    shards = sorted((store_dir / "files").glob("*.json"))
    real = cache.LoadCache(store_dir, [])._mac_key(create=False)
    assert real is not None
    for shard in shards:
        payload = json.loads(cache._unseal(shard.read_bytes(), real) or b"{}")
        edit(payload["entries"])
        shard.write_bytes(cache._seal(json.dumps(payload).encode(), key))
    return len(shards)


def _say(entries: dict[str, Any]) -> None:
    for entry in entries.values():
        for stored in [entry, *entry.get("tools", {}).values()]:
            for items in stored.get("found", {}).values():
                for d in items:
                    d["message"] = "forged"


def test_a_forged_or_damaged_memory_changes_no_finding(
    remembering: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "cache" / "lint"
    truth = _dicts(remembering.lint())
    assert _forge(store, b"attacker key".ljust(32, b"!"), _say) > 0  # another key: a miss
    assert _dicts(remembering.lint()) == truth
    real = cache.LoadCache(store, [])._mac_key(create=False)
    assert real is not None

    def damage(entries: dict[str, Any]) -> None:  # sealed right, but not findings
        for entry in entries.values():
            entry["found"] = {"": [{"severity": "bogus"}]}
            for stored in entry.get("tools", {}).values():
                stored["found"] = {code: [["not", "a", "finding"]] for code in stored["found"]}

    remembering.lint()
    _forge(store, real, damage)
    assert _dicts(remembering.lint()) == truth


def test_a_changed_schema_file_changes_what_is_found_in_the_tools_using_it(
    remembering: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No finding points into the shared file: only the tools' bundled schemas say that it
    changed ('who' now has a description, through its $ref)."""
    shared = remembering.root / "tools.d" / "schemas" / "people.schema.yaml"
    described = SHARED_DEFS.replace("{type: string}", "{type: string, description: Full name.}")
    shared.write_text(described)
    who = described.replace("  Person:\n", "  Person:\n    description: Who to add.\n")
    before, after = _after(remembering, monkeypatch, lambda: shared.write_text(who))
    assert [(d.file, d.code) for d in before if d.code == "TL105"] == [
        ("tools.d/add.yaml", "TL105"),
        ("tools.d/member.yaml", "TL105"),
    ]
    assert [d for d in after if d.code == "TL105"] == []


def test_every_built_in_rule_reading_beyond_its_tool_is_never_remembered() -> None:
    """The memory trusts ``Rule.peers`` (and the resolve family): a one-tool rule that reads the
    other tools, the toolsets or the Python path without saying so would have its findings
    kept while what it read changes. Held here for every built-in rule, by its source."""
    import inspect

    from toolctl.lint.memory import remembered

    beyond = ("ctx.tools", "ctx.names", "ctx.toolsets", "ctx.python_path")
    reading = [
        rule
        for rule in packs.build()
        if rule.scope == "tool" and any(word in inspect.getsource(rule.check) for word in beyond)
    ]
    assert reading  # the check sees the rules it is about (TL410, TL605, the resolve family)
    assert [r.code for r in reading if remembered(r, providers_own=True)] == []

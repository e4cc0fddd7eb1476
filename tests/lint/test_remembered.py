"""A warm `toolctl lint` takes the formats the validators check (TL207) and the installed rule
packs and export formats from the cache: it imports neither python-jsonschema, ``referencing``
and ``regex`` nor a metadata scanner nor (for findings in shared schema files) a YAML parser,
and finds exactly what a cold lint finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import imported_by
from toolctl import cache
from toolctl.lint import packs

CHECKERS = ["jsonschema", "referencing", "regex", "importlib_metadata", "importlib.metadata"]
CHECKERS += ["yaml"]
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

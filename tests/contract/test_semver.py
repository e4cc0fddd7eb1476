"""The semver gate on ``version:``."""

from __future__ import annotations

from typing import Any

import pytest

from .kit import BASE, labels, run, variant


def versioned(version: str | None, **changes: Any) -> dict[str, Any]:
    def edit(raw: dict[str, Any]) -> None:
        raw.update(changes)
        if version is not None:
            raw["version"] = version

    return variant(edit)


NARROWER = {"inputSchema": {**BASE["inputSchema"], "required": ["city", "days"]}}
WIDER = {"inputSchema": {**BASE["inputSchema"], "required": []}}


@pytest.mark.parametrize(
    ("old", "new", "changes", "expected"),
    [
        ("1.2.0", "1.3.0", NARROWER, "TD401"),
        ("1.2.0", "2.0.0", NARROWER, None),
        ("0.3.1", "0.4.0", NARROWER, None),  # 0.x: a minor bump may break
        ("0.3.1", "0.3.2", NARROWER, "TD401"),
        ("1.2.0", "1.2.1", WIDER, "TD402"),
        ("1.2.0", "1.3.0", WIDER, None),
        ("1.2.0", "1.2.1", {"description": "Reworded."}, None),  # text: any bump
        ("1.2.0", "1.1.9", {"description": "Reworded."}, "TD403"),
        (None, "1.0.0", NARROWER, None),  # the gate starts once both sides have a version
    ],
)
def test_gate(old: str | None, new: str, changes: dict[str, Any], expected: str | None) -> None:
    found = {
        label
        for label in labels(run(versioned(old), versioned(new, **changes)))
        if label.startswith("TD40")
    }
    assert found == ({expected} if expected else set())


def test_message_names_the_version_to_use() -> None:
    result = run(versioned("1.2.0"), versioned("1.2.5", **NARROWER))
    (gate,) = [c for c in result.changes if c.code == "TD401"]
    assert "needs version 2.0.0 or later (was 1.2.0, now 1.2.5)" in gate.message

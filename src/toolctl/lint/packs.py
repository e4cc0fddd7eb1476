"""The rule catalogue: every rule from the ``toolctl.lint_rules`` entry-point group.

Built-in families are declared in toolctl's own ``pyproject.toml`` under the same group a
third-party rule pack uses. When package metadata is missing (a source checkout that was never
installed) the built-ins are imported directly, so lint never silently runs with no rules.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from toolctl.cache import remembered_scan, strings
from toolctl.diagnostics import Diagnostic, Location, error
from toolctl.lint.model import FAMILIES, Rule
from toolctl.lint.rules import BUILTIN
from toolctl.references import import_entry_point

GROUP = "toolctl.lint_rules"
_CODE = re.compile(r"[A-Z]{2,5}[0-9]{3}\Z")


@dataclass
class Catalogue:
    """Rules by code (sorted), plus diagnostics for rule packs that failed to load."""

    rules: dict[str, Rule] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)

    def get(self, code: str) -> Rule | None:
        """A rule by code (``TL203``) or name (``pattern-backtracking``), case-insensitively."""
        wanted = code.strip()
        found = self.rules.get(wanted.upper())
        return found or next((r for r in self if r.name == wanted.lower()), None)

    @property
    def families(self) -> list[str]:
        """Families in catalogue order (built-ins first, then plugin families)."""
        extra = sorted({r.family for r in self} - set(FAMILIES))
        return [f for f in FAMILIES if any(r.family == f for r in self)] + extra

    def add(self, rules: Iterable[Any], source: str) -> None:
        """Add the rules of one pack; bad or duplicate rules become diagnostics."""
        for rule in rules:
            if not isinstance(rule, Rule) or not _CODE.match(rule.code):
                self._fail(source, f"declares {rule!r}, which is not a Rule with a code like TL123")
            elif rule.code in self.rules:
                self._fail(
                    source,
                    f"rule {rule.code} is already defined by "
                    f"{self.rules[rule.code].check.__module__}",
                )
            else:
                self.rules[rule.code] = rule

    def _fail(self, source: str, message: str) -> None:
        self.problems.append(
            error(
                Location(f"<lint rules {source}>"),
                "TL000",
                f"lint rule pack {source}: {message}",
                hint="fix or uninstall the rule pack",
            )
        )


def _entry_points() -> list[tuple[str, str, str]]:
    """(name, value, module) of each rule pack, plugins before built-ins; remembered by the
    CLI's cache while ``sys.path`` is unchanged (scanning every distribution's metadata is a
    good part of a warm lint)."""
    found = remembered_scan(f"<entry points {GROUP}>", _scan, _triple)
    return sorted(found, key=lambda ep: (ep[2].startswith("toolctl."), ep[0]), reverse=True)


def _scan() -> list[list[str]]:
    from importlib_metadata import entry_points

    return [[ep.name, ep.value, ep.module] for ep in entry_points(group=GROUP)]


def _triple(item: Any) -> tuple[str, str, str]:
    name, value, module = strings(item)  # ValueError when not three
    return name, value, module


def build() -> Catalogue:
    """Load every rule pack (built-ins first) into a fresh :class:`Catalogue`."""
    cat = Catalogue()
    loaded: set[str] = set()
    for _name, value, module in _entry_points():
        try:
            pack = import_entry_point(value, GROUP)
        except Exception as exc:  # a broken plugin must not stop lint
            cat._fail(value, f"failed to load: {type(exc).__name__}: {exc}")
            continue
        loaded.add(module)
        cat.add(pack, value)
    for module in BUILTIN:
        if module not in loaded:
            cat.add(importlib.import_module(module).RULES, module)
    cat.rules = dict(sorted(cat.rules.items()))
    return cat


@functools.cache
def catalogue() -> Catalogue:
    """The process-wide catalogue (entry points are read once)."""
    return build()

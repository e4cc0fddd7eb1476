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

from toolctl.diagnostics import Diagnostic, Location, error
from toolctl.lint.model import FAMILIES, Rule
from toolctl.lint.rules import BUILTIN

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


def _entry_points() -> list[Any]:
    from importlib_metadata import entry_points

    return sorted(
        entry_points(group=GROUP),
        key=lambda ep: (ep.module.startswith("toolctl."), ep.name),
        reverse=True,
    )


def build() -> Catalogue:
    """Load every rule pack (built-ins first) into a fresh :class:`Catalogue`."""
    cat = Catalogue()
    loaded: set[str] = set()
    for ep in _entry_points():
        try:
            pack = ep.load()
        except Exception as exc:  # a broken plugin must not stop lint
            cat._fail(ep.value, f"failed to load: {type(exc).__name__}: {exc}")
            continue
        loaded.add(ep.module)
        cat.add(pack, ep.value)
    for module in BUILTIN:
        if module not in loaded:
            cat.add(importlib.import_module(module).RULES, module)
    cat.rules = dict(sorted(cat.rules.items()))
    return cat


@functools.cache
def catalogue() -> Catalogue:
    """The process-wide catalogue (entry points are read once)."""
    return build()

"""Selecting rules: codes, code prefixes, rule names, families and ``ALL``, as config uses them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from toolctl.lint.model import Rule

_PREFIX = re.compile(r"[A-Z]{2,5}[0-9]{0,2}\Z")


def specificity(rule: Rule, selector: str) -> int:
    """How precisely ``selector`` names ``rule``: 0 not at all, 1 ALL ... 4 code or name."""
    sel = selector.strip()
    if sel.upper() == rule.code or sel.lower() == rule.name:
        return 4
    if _PREFIX.match(sel.upper()) and rule.code.startswith(sel.upper()):
        return 3
    if sel.lower() == rule.family:
        return 2
    return 1 if sel.upper() == "ALL" else 0


def matches(rule: Rule, selectors: Iterable[str]) -> bool:
    """True when any selector names ``rule``."""
    return any(specificity(rule, s) for s in selectors)


def unknown(selectors: Iterable[str], rules: Iterable[Rule]) -> list[str]:
    """Selectors that name no rule at all (typos in config)."""
    rules = list(rules)
    return [s for s in selectors if not any(specificity(r, s) for r in rules)]

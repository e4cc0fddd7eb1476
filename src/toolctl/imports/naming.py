"""Tool names from operation ids (or method and path): snake_case, unique, valid everywhere."""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64  # the tightest provider rule (provider-formats.md §0)


def snake(text: str) -> str:
    """``listPets`` / ``list-pets`` / ``List Pets`` → ``list_pets``; letters and digits only."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text


def slug(text: str) -> str:
    """A directory name from a title: ``Pet Store API`` → ``pet-store-api``, ``GitHub's
    v3 REST API`` → ``githubs-v3-rest-api`` (words kept whole, at most 40 characters)."""
    words = re.sub(r"[^a-z0-9]+", " ", text.replace("'", "").lower()).split()
    out = ""
    for word in words:
        if out and len(out) + 1 + len(word) > 40:
            break
        out = f"{out}-{word}" if out else word[:40]
    return out or "api"


def operation_name(operation_id: object, method: str, path: str) -> str:
    """A tool name for one operation: its operationId, or ``<method>_<path words>``."""
    base = snake(operation_id) if isinstance(operation_id, str) else ""
    if not base:
        base = snake(f"{method} {path.replace('{', ' ').replace('}', ' ')}")
    if not base[:1].isalpha():
        base = f"op_{base}"
    return _fit(base)


def _fit(name: str, suffix: str = "") -> str:
    room = MAX_NAME - len(suffix)
    if len(name) <= room:
        return name + suffix
    tail = hashlib.sha256(name.encode()).hexdigest()[:6]
    return f"{name[: room - 7].rstrip('_')}_{tail}{suffix}"


class Names:
    """Hands out unique names in the order asked (the spec's order, so re-imports agree)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, name: str) -> str:
        """``name``, or ``name_2``, ``name_3``... when taken."""
        unique, n = name, 2
        while unique in self.taken:
            unique, n = _fit(name, f"_{n}"), n + 1
        self.taken.add(unique)
        return unique


def env_name(*parts: str) -> str:
    """An environment variable name: ``PETSTORE_API_KEY``."""
    return "_".join(p for p in (snake(x).upper() for x in parts) if p) or "API"

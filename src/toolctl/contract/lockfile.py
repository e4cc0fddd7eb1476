"""``toolctl.lock``: reading and writing the lock file.

The file is JSON, not YAML: one strict syntax with no implicit types, read the same way by every
language a client or CI script may use, and written byte-for-byte the same on every machine
(sorted keys, two-space indent, ``\\n`` line ends, non-ASCII kept as UTF-8, a final newline).
Each tool is one block under ``tools`` (sorted by name), so a pull request diff shows exactly the
tools and keys that changed.

A lock is checked against itself when read: each entry's ``contract`` must hash to its
``contractDigest`` (``lock --check`` and ``diff`` skip tools whose digests match, so a contract
left at its old text beside the digests of a changed tool would hide the change), and a key
written twice anywhere (JSON parsers keep the last, a reviewer reads the first) is an error.
Every problem names ``file:line:col``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolctl.atomicfile import replace
from toolctl.contract.canonical import digest
from toolctl.contract.model import LockEntry
from toolctl.errors import LockError, YamlError
from toolctl.yamlsrc import read_bytes

LOCK_NAME = "toolctl.lock"
LOCK_FORMAT = 1
MAX_LOCK_BYTES = 1 << 30
_ENTRY_KEYS = frozenset(
    {"version", "handler", "contractDigest", "declarationDigest", "contract", "runtime"}
)


def render(entries: Iterable[LockEntry]) -> str:
    """The lock file's text for ``entries``."""
    data = {
        "toolctlLock": LOCK_FORMAT,
        "tools": {e.name: e.to_json() for e in sorted(entries, key=lambda e: e.name)},
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


# --force: without it, `toolctl lock` reads the old lock to check version bumps, and fails again
_REGENERATE = "regenerate it with `toolctl lock --force` (and review the diff before committing)"


def _fail(where: str, message: str) -> LockError:
    return LockError(f"{where}: {message}", hint=_REGENERATE)


class _BadEntry(Exception):
    """What is wrong with one entry; :func:`parse` adds where it is written."""


def _entry(name: str, data: Any) -> LockEntry:
    if not isinstance(data, dict):
        raise _BadEntry(f"tools.{name} must be an object")
    missing = sorted({"contract", "runtime", "contractDigest"} - data.keys())
    unknown = sorted(data.keys() - _ENTRY_KEYS)
    if missing or unknown:
        what = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
        raise _BadEntry(f"tools.{name}: {what}")
    contract, runtime = data["contract"], data["runtime"]
    if not isinstance(contract, dict) or not isinstance(runtime, dict):
        raise _BadEntry(f"tools.{name}: contract and runtime must be objects")
    if contract.get("name") != name or not isinstance(contract.get("inputSchema"), dict):
        raise _BadEntry(f"tools.{name}: the contract's name or inputSchema is wrong")
    texts = [data.get(k) for k in ("version", "handler", "declarationDigest")]
    if not all(v is None or isinstance(v, str) for v in texts):
        raise _BadEntry(f"tools.{name}: version, handler and digests must be strings")
    if not isinstance(data["contractDigest"], str):
        raise _BadEntry(f"tools.{name}: contractDigest must be a string")
    if digest(contract) != data["contractDigest"]:
        raise _BadEntry(
            f"tools.{name}: the contract does not hash to its contractDigest (the contract text "
            "was edited, or the digest was copied from another contract); the lock cannot be "
            "trusted"
        )
    return LockEntry(
        name=name,
        contract=contract,
        runtime=runtime,
        version=data.get("version"),
        handler=data.get("handler"),
        contract_digest=str(data["contractDigest"]),
        declaration_digest=str(data.get("declarationDigest") or ""),
    )


def _key_place(text: str, name: str) -> str:
    """``:line:col`` of tool ``name``'s key as :func:`render` indents it ("" when not found)."""
    at = text.find("\n    " + json.dumps(name, ensure_ascii=False) + ":")
    if at >= 0:
        line = text.count("\n", 0, at) + 2  # the key is on the line after the newline found
        return f":{line}:5"
    other = re.search(re.escape(json.dumps(name)) + r"\s*:", text)  # written another way
    return _place(text, other.start()) if other else ""


class _Duplicate(Exception):
    """A key written twice in one object."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json`` object hook: the object, unless a key is written twice in it."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Duplicate
    return obj


def _place(text: str, at: int) -> str:
    """``:line:col`` of character ``at`` of ``text``."""
    line = text.count("\n", 0, at) + 1
    return f":{line}:{at - text.rfind(NEWLINE, 0, at)}"


NEWLINE = "\n"
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]')


def _first_duplicate(text: str) -> tuple[int, str] | None:
    """(offset, key) of the first key written a second time in its object, in ``text`` (valid
    JSON). Run only once a duplicate is known to exist; iterative, so any depth is fine."""
    stack: list[set[str] | None] = []  # per open container: the keys seen (None: an array)
    expect_key = False
    for token in _TOKEN.finditer(text):
        kind = token.group()
        if kind in "{[":
            stack.append(set() if kind == "{" else None)
            expect_key = kind == "{"
        elif kind in "}]":
            stack.pop()
            expect_key = False
        elif kind == ",":
            expect_key = bool(stack) and stack[-1] is not None
        elif kind == ":":
            expect_key = False
        elif expect_key and stack and stack[-1] is not None:
            seen, key = stack[-1], json.loads(kind)
            if key in seen:
                return token.start(), key
            seen.add(key)
    return None


def _load_json(text: str, where: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except json.JSONDecodeError as exc:
        raise _fail(f"{where}:{exc.lineno}:{exc.colno}", f"not valid JSON: {exc.msg}") from None
    except _Duplicate:
        dup = _first_duplicate(text)
        place, key = (_place(text, dup[0]), dup[1]) if dup else ("", "a key")
        raise _fail(
            where + place,
            f"{json.dumps(key, ensure_ascii=False)} is written twice in one object (JSON readers "
            "keep the last, a reviewer reads the first)",
        ) from None
    except RecursionError:
        raise _fail(where, "nested too deeply to be a lock file") from None


def parse(text: str, where: str = LOCK_NAME) -> dict[str, LockEntry]:
    """The entries of a lock file's text; :class:`LockError` naming what is wrong."""
    data = _load_json(text, where)
    if not isinstance(data, dict) or "tools" not in data:
        raise _fail(f"{where}:1:1", "not a toolctl lock file (no `tools`)")
    if data.get("toolctlLock") != LOCK_FORMAT:
        raise _fail(f"{where}:1:1", f"lock format {data.get('toolctlLock')!r} is not {LOCK_FORMAT}")
    tools = data["tools"]
    if not isinstance(tools, dict):
        at = max(text.find('"tools"'), 0)
        raise _fail(where + _place(text, at), "`tools` must be an object")
    entries = {}
    for name, value in sorted(tools.items()):
        try:
            entries[name] = _entry(name, value)
        except _BadEntry as exc:  # located only on failure: finding a key is a scan of the text
            raise _fail(where + _key_place(text, name), str(exc)) from None
        except RecursionError:
            raise _fail(where + _key_place(text, name), "nested too deeply") from None
    return entries


def read(path: Path) -> dict[str, LockEntry]:
    """The entries of the lock file at ``path``."""
    if not os.path.lexists(path):
        raise LockError(
            f"{path}: no lock file", hint="create it with `toolctl lock` and commit it"
        ) from None
    try:  # a regular file only: a FIFO planted as the lock would make a plain read wait forever
        text = read_bytes(path, max_bytes=MAX_LOCK_BYTES).decode("utf-8")
    except YamlError as exc:
        raise LockError(f"{path}: cannot read: {exc.message}", hint=exc.hint) from None
    except UnicodeDecodeError as exc:
        raise LockError(
            f"{path}: cannot read: not UTF-8 ({exc.reason} at byte {exc.start})",
            hint=_REGENERATE,
        ) from None
    return parse(text, str(path))


def write(path: Path, entries: Mapping[str, LockEntry]) -> bool:
    """Write the lock file; returns False when it already had exactly this content."""
    data = render(entries.values()).encode("utf-8")
    try:  # bytes, not text: an old lock that is not UTF-8 is overwritten, not an error
        if path.is_file() and path.read_bytes() == data:
            return False
        replace(path, data)  # an interrupted write never leaves half a lock
    except OSError as exc:
        raise LockError(f"cannot write {path}: {exc.strerror or exc}") from None
    return True

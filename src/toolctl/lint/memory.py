"""Remembered findings: what the rules that look at one tool found on it, kept between runs.

As ruff keeps each file's results, a warm ``lint`` takes a tool's findings of those rules from
the cache while nothing they read has changed, and runs only the rules that look across tools
(and those it cannot vouch for). A rule that looks at one tool reads its declaration (with the
bundled schemas: :attr:`~toolctl.spec.ToolSpec.digest`), where it is written (the tool file's
bytes, its name as messages give it, its pointer), the lint settings, the rule set and
toolctl's code. So the findings of a tool are kept under

* the file's entry (its absolute path) in the store beside ``scans/`` (``lint/``, sealed with
  the user's key like every shard: a forged or damaged entry is a miss, never a finding),
  valid for one *run key*: the settings, each remembered rule with its severity, and (from the
  store's context) toolctl's code, the checking libraries and the Python version;
* the SHA-256 of the file's bytes, and per tool a key of its digest, name, pointer and place;
* the SHA-256 of every other file a finding points into (a ``$ref``-d schema file), checked
  again before the findings are used.

Not remembered: rules from other packages (their code is not in the context), rules that read
other tools or the project's toolsets (:attr:`~toolctl.lint.model.Rule.peers`), ``--resolve``'s
(they import user code), the providers family when a selected export format is not toolctl's
own, and every finding of a tool on which a rule crashed. Suppressions are applied afterwards,
on every run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolctl.cache import LoadCache, remembered_store, sha256
from toolctl.diagnostics import Diagnostic, Severity
from toolctl.errors import YamlError
from toolctl.lint.config import LintConfig
from toolctl.lint.model import Rule
from toolctl.spec import ToolSpec
from toolctl.yamlsrc import read_bytes

STORE = "lint"
"""The store's directory in the user cache, beside ``scans/`` and ``configs/``."""
_OWN = "toolctl.lint.rules."
Found = dict[str, list[Diagnostic]]  # rule code -> its findings on one tool, in rule order


def remembered(rule: Rule, providers_own: bool) -> bool:
    """Whether ``rule``'s findings on a tool may be remembered: a rule of toolctl's own that
    reads only its tool (and, for the providers family, only toolctl's export formats)."""
    return (
        rule.scope == "tool"
        and not rule.peers
        and rule.family != "resolve"  # imports user code: whatever it finds is of this run
        and rule.check.__module__.startswith(_OWN)
        and (providers_own or rule.family != "providers")
    )


def _providers_own(config: LintConfig) -> bool:
    """True when every selected provider is an export format toolctl ships (a package may
    install one under a built-in name: its code is not in the cache's context)."""
    from toolctl.export.formats import installed, is_builtin

    formats = installed()
    return all(p in formats and is_builtin(formats[p]) for p in config.providers)


class Memory:
    """The remembered findings of one lint run: :meth:`recall` before a tool's rules run,
    :meth:`keep` after, :meth:`flush` at the end."""

    def __init__(
        self, store: LoadCache, run_key: str, codes: frozenset[str], whole: bool = False
    ) -> None:
        self.store = store
        self.run_key = run_key
        self.codes = codes  # the rules remembered, by code
        self.whole = whole  # every active rule may be remembered over the whole registry
        self._hashes: dict[str, str | None] = {}  # file -> SHA-256 of its bytes, once a run
        self._entries: dict[str, dict[str, Any]] = {}  # tool file -> its usable tools
        self._next: dict[str, dict[str, Any]] = {}  # tool file -> the tools to write
        self._dirty: set[str] = set()
        self._keys: dict[int, str] = {}  # id(tool) -> _tool_key(tool): asked up to three times

    @classmethod
    def open(cls, rules: Iterable[tuple[Rule, Severity]], config: LintConfig) -> Memory | None:
        """The memory for ``rules`` (the active ones, with their severity) under ``config``;
        None without the CLI's cache or when no rule may be remembered."""
        store = remembered_store(STORE)
        if store is None:
            return None
        own = _providers_own(config)
        active = list(rules)
        kept = [(r, level) for r, level in active if remembered(r, own)]
        if not kept:
            return None
        whole = all(_across(r, own) for r, _ in active)
        signature = [
            [
                r.code,
                r.name,
                r.family,
                r.scope,
                level.value,
                r.check.__module__,
                r.check.__qualname__,
            ]
            for r, level in (active if whole else kept)
        ]
        run_key = sha256(json.dumps([repr(config), signature]).encode())
        return cls(store, run_key, frozenset(r.code for r, _ in kept), whole)

    # ------------------------------------------------------------------ the whole registry

    def recall_all(self, tools: Sequence[ToolSpec], toolsets: Mapping[str, Any]) -> Found | None:
        """Every rule's findings on ``tools`` (under the code ``""``, in the order the engine
        found them) when no tool, its place or file, the toolsets and no file a finding points
        into changed since they were remembered; else None. The usual warm run: then no rule
        runs, not even those that look across tools."""
        key = self._whole_key(tools, toolsets)
        entry = self.store.read(Path(_whole_name(tools))) if key is not None else None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        try:
            stored = entry["found"]
            if not isinstance(stored, dict) or set(stored) != {""}:
                return None
            return self._decode_files(entry["files"], stored)
        except (KeyError, TypeError, ValueError, AttributeError):  # damaged: computed again
            return None

    def keep_all(
        self, tools: Sequence[ToolSpec], toolsets: Mapping[str, Any], found: list[Diagnostic]
    ) -> None:
        """Remember ``found``, every rule's findings on ``tools`` (none crashed)."""
        key = self._whole_key(tools, toolsets)
        if key is None:
            return
        stored = self._encode(tools, {"": found})
        if stored is not None:
            entry = {"key": key, **stored, "at": time.time_ns()}
            self.store.write(Path(_whole_name(tools)), entry)

    def _whole_key(self, tools: Sequence[ToolSpec], toolsets: Mapping[str, Any]) -> str | None:
        """A digest of everything the rules read of the registry; None when not remembered."""
        if not self.whole:
            return None
        places = []
        for tool in tools:
            where = self._file(tool)
            if where is None:
                return None
            places.append([self._key(tool), self._hash(where)])
        ours = [self.run_key, places, sorted((k, repr(v)) for k, v in toolsets.items())]
        return sha256(json.dumps(ours).encode())

    # ------------------------------------------------------------------ reading

    def recall(self, tool: ToolSpec) -> Found | None:
        """The remembered findings of ``tool`` when nothing they depend on changed; else None."""
        where = self._file(tool)
        if where is None:
            return None
        tools = self._tools_of(where)
        key = self._key(tool)
        stored = tools.get(key)
        if stored is None:
            return None
        try:
            found = self._decode(stored)
        except (KeyError, TypeError, ValueError, AttributeError):  # damaged: computed again
            return None
        if found is not None:
            self._next.setdefault(where, {})[key] = stored  # kept if the file's entry is rewritten
        return found

    def _tools_of(self, where: str) -> dict[str, Any]:
        """The remembered tools of the file at ``where`` (absolute) usable in this run."""
        if where not in self._entries:
            entry = self.store.read(Path(where))
            usable = (
                isinstance(entry, dict)
                and entry.get("key") == self.run_key
                and entry.get("sha") == self._hash(where)
                and isinstance(entry.get("tools"), dict)
            )
            self._entries[where] = entry["tools"] if usable else {}  # type: ignore[index]
        return self._entries[where]

    def _decode(self, stored: Any) -> Found | None:
        found = stored["found"]
        if not isinstance(found, dict) or set(found) != self.codes:
            return None
        return self._decode_files(stored["files"], found)

    def _decode_files(self, files: Any, found: dict[str, Any]) -> Found | None:
        for name, digest in files:
            if not isinstance(name, str) or self._hash(name) != digest:
                return None  # a file a finding points into changed (or is gone)
        return {code: [Diagnostic.from_dict(d) for d in items] for code, items in found.items()}

    # ------------------------------------------------------------------ writing

    def keep(self, tool: ToolSpec, found: Found) -> None:
        """Remember ``found`` (every remembered rule's findings on ``tool``, none crashed)."""
        where = self._file(tool)
        if where is None or set(found) != self.codes:
            return
        stored = self._encode([tool], found)
        if stored is not None:
            self._next.setdefault(where, {})[self._key(tool)] = stored
            self._dirty.add(where)

    def _encode(self, tools: Sequence[ToolSpec], found: Found) -> dict[str, Any] | None:
        """``found`` as stored, with the files its findings point into besides the tools'
        own (``$ref``-d schema files) and their digests; None when it cannot be kept."""
        if not all(_plain(d.extra) for items in found.values() for d in items):
            return None
        encoded = {code: [d.to_dict() for d in items] for code, items in found.items()}
        own = {tool.location.file for tool in tools} | {""}
        others = sorted({d.file for items in found.values() for d in items} - own)
        files = [[name, self._hash(name)] for name in others]
        if any(digest is None for _, digest in files):
            return None
        return {"found": encoded, "files": files}

    def flush(self) -> None:
        """Write the entries of the files that had a tool computed in this run."""
        for where in sorted(self._dirty):
            digest = self._hash(where)
            if digest is not None:
                entry = {"key": self.run_key, "sha": digest, "tools": self._next[where]}
                self.store.write(Path(where), entry)
        self.store.flush()

    # ------------------------------------------------------------------ keys

    def _file(self, tool: ToolSpec) -> str | None:
        """The tool file's absolute path when its bytes can be read (and so compared)."""
        where = os.path.abspath(tool.origin.file)
        return where if self._hash(where) is not None else None

    def _key(self, tool: ToolSpec) -> str:
        key = self._keys.get(id(tool))
        if key is None:
            key = self._keys[id(tool)] = _tool_key(tool)
        return key

    def _hash(self, name: str) -> str | None:
        if name not in self._hashes:
            try:
                self._hashes[name] = sha256(read_bytes(Path(name)))
            except (OSError, YamlError):  # gone, unreadable, not a regular file, too large
                self._hashes[name] = None
        return self._hashes[name]


_SCALARS = (str, int, float, bool, type(None))


def _plain(extra: dict[str, Any]) -> bool:
    """Whether ``extra`` reads back equal from JSON: string keys and scalar values (a tuple
    would come back a list; a rule's own object not at all). Else the findings are not kept."""
    return all(type(k) is str and type(v) in _SCALARS for k, v in extra.items())


def _across(rule: Rule, providers_own: bool) -> bool:
    """Whether ``rule``'s findings may be remembered for the registry as a whole: a rule of
    toolctl's own that reads only the tools, the toolsets and the settings."""
    return (
        rule.family != "resolve"
        and rule.check.__module__.startswith(_OWN)
        and (providers_own or rule.family != "providers")
    )


def _whole_name(tools: Sequence[ToolSpec]) -> str:
    """The whole-registry entry's name: one per working directory and registry (the places
    its tools come from), replaced by each run that computes its findings (the findings of a
    registry as it was are of no use once it changed, and a large one's are large). Two
    registries linted in turn from one directory keep one each: with one per directory, each
    run took the other's place and found nothing. The store keeps the most recent few
    registries' per directory and shard (:func:`toolctl.cache._live` groups ``<...> rest``
    names by what comes before the last space)."""
    places = sorted({(t.origin.kind, t.origin.name, os.path.dirname(t.origin.file)) for t in tools})
    return f"<lint whole> {os.getcwd()} {sha256(json.dumps(places).encode())[:16]}"


def _tool_key(tool: ToolSpec) -> str:
    """What a one-tool rule reads of ``tool`` beyond its file's bytes: its declaration with
    the bundled schemas, and where (and under which name) it is written."""
    loc, origin = tool.location, tool.origin
    where = [loc.file, loc.line, loc.col, list(tool.pointer), origin.kind, origin.name]
    return sha256(json.dumps([tool.digest, tool.name, where]).encode())

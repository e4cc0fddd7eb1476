"""``$ref`` handling for tool schemas: bundling registry files in, and finding endless cycles.

A tool schema may refer to ``#/$defs/...`` in itself or to schema files inside the project
(``common.schema.yaml#/$defs/Id``, ``schemas/id.json`` with ``schemas: [schemas]``). :func:`bundle`
copies every such target into the schema's own ``$defs`` and rewrites the references, so each
schema is self-contained and nothing downstream (validators, exporters, the MCP server) ever
resolves a reference outside it.

What a reference may name is a :class:`RefScope`: schema files (``*.schema.yaml|yml|json``, or
YAML/JSON files under a configured ``schemas:`` directory) inside the project root, with symlinks
resolved. Never the configuration, the lock, a state or key file, a dot-file or anything in a
dot-directory, whatever ``tools:`` or ``schemas:`` say: a bundled file is printed by ``export``
and sent by ``tools/list``, and a pull request controls both the tool files and the config.
Remote URIs and ``file:`` URIs are refused too. A refused file is never opened, and no file
contents appear in a message.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from toolctl.contentdigest import content_digest
from toolctl.errors import YamlError
from toolctl.refscope import ALLOWED, RefScope
from toolctl.schema import NOT_SCHEMAS, check_schema
from toolctl.yamlsrc import Document, JsonPath, real_path

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_IN_PLACE = ("allOf", "anyOf", "oneOf")
_IN_PLACE_SINGLE = ("not", "if", "then", "else")
_APPLICATORS = frozenset(_IN_PLACE + _IN_PLACE_SINGLE)


@dataclass
class RefProblem:
    """A reference that cannot be used: in ``file`` at ``path`` (a JSON path inside the file)."""

    file: str
    path: JsonPath
    message: str
    code: str = "TC302"
    hint: str | None = None


def parse_pointer(fragment: str) -> list[str]:
    """``/a/b~1c`` → ``['a', 'b/c']``."""
    if not fragment:
        return []
    if not fragment.startswith("/"):
        raise ValueError(f"fragment {fragment!r} is not a JSON pointer (use #/$defs/Name)")
    return [unquote(p).replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/")]


def resolve_pointer(doc: Any, tokens: list[str]) -> Any:
    """Follow JSON pointer tokens; ``KeyError`` when the target does not exist."""
    node = doc
    for tok in tokens:
        if isinstance(node, dict) and tok in node:
            node = node[tok]
        elif isinstance(node, list) and tok.isdigit() and int(tok) < len(node):
            node = node[int(tok)]
        else:
            raise KeyError(tok)
    return node


_DYNAMIC = ("$dynamicRef", "$recursiveRef")
_ANCHORS = ("$anchor", "$dynamicAnchor")


@dataclass
class _Found:
    """What one pass over a schema found, each with the JSON path of the object holding it."""

    refs: list[tuple[JsonPath, str]]  # $ref strings
    ids: list[JsonPath]  # nested $id (and draft-04 id)
    dynamic: list[tuple[JsonPath, str, Any]]  # $dynamicRef / $recursiveRef: keyword, value
    anchors: set[str]  # names defined by $anchor / $dynamicAnchor
    # every `pattern` and `patternProperties` name, with its own path (as
    # schema._walk_patterns finds them: the same walk, so the loader need not walk again)
    patterns: list[tuple[JsonPath, str]]
    # nesting level of the deepest container (the root is 1), and of each object holding a
    # $ref in `refs` (the same order): the expanded depth of a bundled schema follows from
    # them (see bundle), so the loader need not walk it again either
    deepest: int = 0
    ref_levels: list[int] = field(default_factory=list)


def _scan(root: Any, base: JsonPath = (), id_keys: tuple[str, ...] = ("$id",)) -> _Found:
    """One pass over a schema: its references, nested base-URI changes and anchors.

    This runs on every schema of every tool, so it is iterative and builds a node's path (as a
    linked ``(parent, key)`` pair, turned into a tuple only for hits) instead of a tuple per node.
    """
    found: list[tuple[Any, str]] = []
    levels: list[int] = []
    deepest = 0
    ids: list[Any] = []
    dynamic: list[tuple[Any, str, Any]] = []
    anchors: set[str] = set()
    patterns: list[tuple[Any, str]] = []
    legacy = "id" in id_keys  # draft-04: `id` sets the base URI too
    stack: list[tuple[Any, Any, int]] = [(root, None, 1)]
    push, pop = stack.append, stack.pop
    while stack:
        node, link, level = pop()
        if level > deepest:
            deepest = level
        below = level + 1
        if type(node) is dict:
            ref = node.get("$ref")
            if type(ref) is str:
                found.append((link, ref))
                levels.append(level)
            if link is not None and (
                type(node.get("$id")) is str or (legacy and type(node.get("id")) is str)
            ):
                ids.append(link)
            if "$dynamicRef" in node or "$recursiveRef" in node:
                dynamic += [(link, k, node[k]) for k in _DYNAMIC if k in node]
            if "$anchor" in node or "$dynamicAnchor" in node:
                anchors.update(node[k] for k in _ANCHORS if type(node.get(k)) is str)
            if "pattern" in node and isinstance(node["pattern"], str):
                patterns.append(((link, "pattern"), node["pattern"]))
            if "patternProperties" in node and isinstance(node["patternProperties"], dict):
                patterns += [
                    (((link, "patternProperties"), n), n) for n in node["patternProperties"]
                ]
            for key, value in reversed(node.items()):  # reversed: pop in document order
                if (type(value) is dict or type(value) is list) and key not in NOT_SCHEMAS:
                    push((value, (link, key), below))
        else:
            for i in range(len(node) - 1, -1, -1):
                if type(node[i]) is dict or type(node[i]) is list:
                    push((node[i], (link, i), below))
    return _Found(
        [((*base, *_unlink(at)), ref) for at, ref in found],
        [(*base, *_unlink(at)) for at in ids],
        [((*base, *_unlink(at)), key, value) for at, key, value in dynamic],
        anchors,
        [((*base, *_unlink(at)), name) for at, name in patterns],
        deepest,
        levels,
    )


def _unlink(link: Any) -> JsonPath:
    parts: list[str | int] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def iter_refs(node: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, str]]:
    """Every ``$ref`` string in a schema, with the JSON path of the object holding it."""
    return iter(_scan(node, path).refs)


_Key = tuple[str, str]  # a referenced schema: (real path of its file, JSON pointer fragment)


@dataclass
class _Failure:
    """Why a reference cannot be bundled, and the files read to find out."""

    message: str
    hint: str | None = None
    files: tuple[Path, ...] = ()


@dataclass
class _Definition:
    """A referenced schema, bundled once per load and shared by every schema that names it.

    ``node`` is the target with its own ``$id``/``$schema`` dropped and its references rewritten
    to ``#/$defs/<name>`` of the definitions they name (``deps``; ``rewritten`` says where).
    Tools' bundled schemas hold ``node`` itself, so nothing may ever modify it.
    """

    key: _Key
    name: str
    node: Any = None
    deps: list[_Key] = field(default_factory=list)
    rewritten: list[tuple[JsonPath, _Key]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    problems: list[RefProblem] = field(default_factory=list)
    structure: tuple[int, bool] | None = None  # see Bundler.structure


def _copy_digest(node: Any, kids: list[Any] | None = None) -> bytes | None:
    """:func:`content_digest` of a copy made on the way to a ``$ref`` (None: too deep to tell).

    ``kids``: the keys of ``node``'s children that are themselves shared copies (see
    :meth:`Bundler.shared_copy`). They stand in the content as ``null``, named by their key and
    identity beside it: the copies are shared deepest first, so a parent's content need not
    spell out its children's again (that made each schema's encoding two or three times its
    size). The values are plain JSON (as parsed from YAML or JSON files), which the digest
    tells exactly."""
    if not kids:
        return content_digest(node)
    view: Any = dict(node) if type(node) is dict else list(node)
    # sorted: equal nodes name the same children in the same order, whatever order the
    # references below them were met in
    order = sorted(kids)
    for key in order:
        view[key] = None
    # the stand-ins' keys and identities digested with the content: a key per copy of the
    # registry, so no tuple of them is kept
    return content_digest((view, [(key, id(node[key])) for key in order]))


def _def_base(file: Path, fragment: str) -> str:
    """The ``$defs`` name of a bundled target: ``common_schema__Id``."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", file.stem)
    tail = re.sub(r"[^A-Za-z0-9_]+", "_", fragment.split("/")[-1]) if fragment else ""
    return f"{stem}__{tail}" if tail else stem


class Bundler:
    """Bundles the references of one load's schemas, each referenced schema once.

    Resolving a reference (its path, the :class:`RefScope` check, loading, the pointer) and
    rewriting and checking its target happen once per load, not once per referencing tool:
    registries share a few definitions between thousands of tools. ``load`` reads a schema
    file (once per load: the loader memoises it); ``touch`` records a file a tool depends on.
    """

    def __init__(self, load: Callable[[Path], Document], touch: Callable[[Path], None]) -> None:
        self.load = load
        self.touch = touch
        # outcomes of resolve, by scope and directory, then by reference text: a schema looks
        # its table up once, each of its references is one lookup of its text
        self._outcomes: dict[tuple[RefScope, str], dict[str, _Definition | _Failure]] = {}
        self._defs: dict[_Key, _Definition] = {}
        # by (id of a definition's node, held by _defs; whether patterns were compiled)
        self._valid: dict[tuple[int, bool], bool] = {}
        # Rewritten copies (see _with_refs) by a digest of their JSON text, and the ``$defs``
        # of each closure: tools that write the same referencing part hold one copy of it.
        self._copies: dict[Any, Any] = {}
        self._added: dict[tuple[_Key, ...], dict[str, Any]] = {}
        # what the schemas naming the same definitions (in the same order) share, by their
        # keys; at most CLOSURE_MEMO at a time (see closure_of)
        self._closures: dict[tuple[_Key, ...], _Closure] = {}

    def shared_copy(self, node: Any, kids: list[Any] | None = None) -> Any:
        """The copy made earlier in this load that is equal to the rewritten ``node`` (same
        content: key order, types and all), else ``node`` itself, remembered. Nothing may
        modify a bundled schema, so equal copies can be one object. ``kids``: see
        :func:`_copy_digest`."""
        digest = _copy_digest(node, kids)
        if digest is None:
            return node  # kept as it is
        return self._copies.setdefault(digest, node)

    def shared_root(self, node: Any, key: tuple[Any, ...]) -> Any:
        """The bundled schema made earlier in this load under ``key`` (a tuple that tells
        equal bundled schemas: see :func:`bundle`), else ``node``, remembered."""
        return self._copies.setdefault(key, node)

    def shared_defs(self, closure: list[_Definition]) -> dict[str, Any]:
        """The ``$defs`` of a schema that names exactly ``closure`` (shared names), one per
        load for each set of definitions."""
        key = tuple(d.key for d in closure)
        found = self._added.get(key)
        if found is None:
            found = self._added[key] = {d.name: d.node for d in closure}
        return found

    def resolve(
        self, scope: RefScope, from_file: Path, ref: str, directory: str | None = None
    ) -> _Definition | _Failure:
        """What the non-local ``ref`` written in ``from_file`` names (memoised per load).
        ``directory``: ``str(from_file.parent)`` when the caller has it already."""
        table = self.outcomes(scope, str(from_file.parent) if directory is None else directory)
        found = table.get(ref)
        if found is None:
            found = table[ref] = self._resolve(scope, from_file, ref)
        return found

    def outcomes(self, scope: RefScope, directory: str) -> dict[str, _Definition | _Failure]:
        """The outcomes of the references written in files of ``directory`` under ``scope``,
        by their text (the memo of :meth:`resolve`; a miss is resolved by it)."""
        table = self._outcomes.get((scope, directory))
        if table is None:
            table = self._outcomes[scope, directory] = {}
        return table

    def _resolve(self, scope: RefScope, from_file: Path, ref: str) -> _Definition | _Failure:
        if _SCHEME.match(ref):
            return _Failure(
                f"remote and file: references are not allowed ({ref.split('#')[0]})",
                "copy the schema into the registry and refer to it by relative path",
            )
        target, _, fragment = ref.partition("#")
        try:
            path = real_path(from_file.parent / unquote(target))
        except (ValueError, OSError):  # a NUL byte (%00), a name the system refuses
            return _Failure(f"reference {target[:80]!r} is not a usable file path")
        refused = scope.refusal(path)  # before the file is opened, whatever it is
        if refused is not None:
            message, hint = refused
            return _Failure(f"reference {target!r} {message}: {ALLOWED}", hint)
        key = (str(path), fragment)
        known = self._defs.get(key)
        if known is not None:
            return known
        rel = str(path.relative_to(scope.root))
        read = (path,)
        try:
            doc = self.load(path)
            tokens = parse_pointer(fragment)
            target_node = resolve_pointer(doc.data, tokens)
        except YamlError as exc:  # say where the referenced file is broken
            where = f"{rel}:{exc.line}:{exc.col}" if exc.line else rel
            return _Failure(f"{ref!r}: cannot load {where}: {exc.message}", files=read)
        except KeyError:
            return _Failure(f"{ref!r}: no such location in {rel}", files=read)
        except ValueError as exc:
            return _Failure(f"{ref!r}: {exc}", files=read)
        except Exception as exc:  # an OSError from the referenced file
            return _Failure(f"{ref!r}: cannot load {rel}: {exc}", files=read)
        if type(target_node) is not dict and type(target_node) is not bool:
            where = f"#{fragment}" if fragment else "the document"
            return _Failure(
                f"{ref!r}: {where} in {rel} is {_kind(target_node)}, not a schema",
                "a $ref must name a schema: an object (or true/false)",
                read,
            )
        return self._define(scope, key, path, doc, tokens, target_node)

    def _define(
        self, scope: RefScope, key: _Key, path: Path, doc: Document, tokens: list[str], target: Any
    ) -> _Definition:
        found = self._defs[key] = _Definition(key, _def_base(path, key[1]), files=[path])
        node = copy.deepcopy(target)  # before descending: a definition may name itself
        if type(node) is dict:
            # a file's own base URI and dialect would re-base the references inside it
            node.pop("$id", None)
            node.pop("$schema", None)
            base = tuple(tokens)
            scanned = _scan(node, base)
            found.problems += [
                RefProblem(doc.file, at, "nested $id is not supported in tool schemas", "TC305")
                for at in scanned.ids
            ]
            found.problems += _dynamic_problems(node, scanned, doc.file)
            for where, ref in scanned.refs:
                at = where[len(base) :]
                # a local reference of another file names that file's own part
                outcome = self.resolve(scope, path, path.name + ref if ref[:1] == "#" else ref)
                if isinstance(outcome, _Failure):
                    found.problems.append(
                        RefProblem(doc.file, (*where, "$ref"), outcome.message, hint=outcome.hint)
                    )
                    found.files += outcome.files
                    continue
                holder = resolve_pointer(node, [str(p) for p in at]) if at else node
                holder["$ref"] = f"#/$defs/{outcome.name}"
                found.deps.append(outcome.key)
                found.rewritten.append((at, outcome.key))
        found.node = node
        return found

    def closure(self, roots: list[_Key]) -> list[_Definition]:
        """The definitions ``roots`` need, each once, in the order a reader meets them."""
        out: list[_Definition] = []
        seen: set[_Key] = set()
        stack = list(reversed(roots))
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            found = self._defs[key]
            out.append(found)
            stack += reversed(found.deps)
        return out

    def closure_of(self, roots: tuple[_Key, ...]) -> _Closure:
        """What every schema of the load naming the definitions ``roots`` (in this order)
        shares: the closure and what follows from it, worked out on its first use."""
        found = self._closures.get(roots)
        if found is None:
            if len(self._closures) >= CLOSURE_MEMO:
                # registries name many orders of the same definitions (a third to four fifths
                # of the schemas of the realistic corpora name an order of their own): memory
                # stays flat, and the repeats a few hundred tools apart are still found
                self._closures.clear()
            found = self._closures[roots] = _Closure(self, self.closure(list(roots)))
        return found

    def closure_valid(self, closure: _Closure, patterns: bool) -> bool:
        """Whether every definition of ``closure`` is valid on its own (see schema_valid)."""
        found = closure.valid.get(patterns)
        if found is None:
            found = closure.valid[patterns] = all(
                self.schema_valid(d.node, patterns) for d in closure.defs
            )
        return found

    def schema_valid(self, node: Any, patterns: bool) -> bool:
        """Whether a shared definition's ``node`` is a valid 2020-12 schema on its own
        (meta-validation, and its patterns compile when ``patterns``): checked once per load,
        not once per referencing tool. Validity of ``$defs`` entries is entry by entry, so a
        tool's schema is valid when its own part is and each definition it holds is."""
        memo = self._valid.get((id(node), patterns))
        if memo is None:
            memo = self._valid[id(node), patterns] = not check_schema(node, patterns=patterns)
        return memo

    def structure(self, found: _Definition) -> tuple[int, bool]:
        """(expanded depth, whether an endless cycle runs through it) of one definition,
        measured once per load over the definitions it needs."""
        if found.structure is None:
            context = {"$defs": {d.name: d.node for d in self.closure([found.key])}}
            depths: dict[int, int] = {}
            _expanded_depths(context, depths)
            cyclic = bool(endless_cycles(context))
            found.structure = (depths.get(id(found.node), 0), cyclic)
        return found.structure


CLOSURE_MEMO = 1024
"""Closures a :class:`Bundler` remembers at a time (see :meth:`Bundler.closure_of`)."""


class _Closure:
    """The definitions a schema needs and what follows from them alone, shared by the
    schemas of the load that name the same ones in the same order: the files they come
    from, their problems, whether their shared names clash with each other, their ``$defs``
    and, when no endless cycle runs through any of them, their expanded depths."""

    __slots__ = (
        "added",
        "defs",
        "files",
        "keys",
        "known",
        "names",
        "placed",
        "problems",
        "unique",
        "valid",
    )

    def __init__(self, bundler: Bundler, defs: list[_Definition]) -> None:
        self.defs = defs
        self.files = [path for d in defs for path in d.files]
        self.problems = [p for d in defs for p in d.problems]
        self.names = frozenset(d.name for d in defs)
        self.unique = len(self.names) == len(defs)
        self.added = bundler.shared_defs(defs)
        self.keys = tuple(d.key for d in defs)
        shapes = [(d, bundler.structure(d)) for d in defs]
        # depth of each definition by the id of its node; None when one is part of a cycle
        self.known: dict[int, int] | None = None
        self.placed = 0  # the deepest definition as placed in $defs (level 2)
        if not any(cyclic for _, (_, cyclic) in shapes):
            self.known = {id(d.node): depth for d, (depth, _) in shapes}
            self.placed = max([2 + depth for _, (depth, _) in shapes], default=0)
        self.valid: dict[bool, bool] = {}  # see Bundler.closure_valid

    def names_for(self, taken: frozenset[str]) -> dict[_Key, str] | None:
        """:func:`_names` of these definitions in a schema whose own ``$defs`` are ``taken``."""
        if self.unique and self.names.isdisjoint(taken):
            return None
        return _names(self.defs, taken)


@dataclass
class Bundled:
    """A schema made self-contained (see :func:`bundle`)."""

    schema: Any
    problems: list[RefProblem]
    has_refs: bool  # any $ref at all (else reference_structure has nothing to find)
    # expanded depth of each shared definition in ``schema`` (by id) when none is part of an
    # endless cycle: reference_structure then measures the schema's own part only
    known: dict[int, int] | None = None
    local: bool = True  # ``schema`` had local references of its own (``#...``)
    # the patterns of the schema's own part (not of the shared definitions bundled in), as
    # check_schema's `patterns` takes them; None: not known (look)
    patterns: list[tuple[JsonPath, str]] | None = None
    # expanded depth (see expanded_depth) when the bundling scan tells it: the schema's own
    # part is a tree and its every reference names a shared definition of ``known`` depth
    depth: int | None = None
    files: list[Path] = field(default_factory=list)  # the files its definitions came from
    # the shared definitions it holds (None: not one closure's, under their shared names)
    closure: _Closure | None = None
    # ``schema`` without its ``$defs`` when they are exactly ``closure``'s (what is left to
    # check once they are known valid); None: not known
    own: Any = None
    # the local references of ``schema`` outside the shared definitions of ``known`` (see
    # reference_structure); None: not known (its bundled definitions are renamed copies)
    local_refs: list[str] | None = None


def _names(closure: list[_Definition], taken: frozenset[str]) -> dict[_Key, str] | None:
    """Each definition's ``$defs`` name in one schema: None when the shared names serve (no
    clash with the schema's own ``$defs`` or between files of the same name)."""
    if not any(d.name in taken for d in closure) and len({d.name for d in closure}) == len(closure):
        return None
    names: dict[_Key, str] = {}
    used = set(taken)
    for d in closure:
        name, n = d.name, 2
        while name in used:
            name, n = f"{d.name}_{n}", n + 1
        names[d.key] = name
        used.add(name)
    return names


def _renamed(found: _Definition, names: dict[_Key, str]) -> Any:
    """A copy of a definition with its references following ``names``."""
    node = copy.deepcopy(found.node)
    for at, key in found.rewritten:
        holder = resolve_pointer(node, [str(p) for p in at]) if at else node
        holder["$ref"] = f"#/$defs/{names[key]}"
    return node


def _with_refs(
    schema: dict[str, Any], edits: list[tuple[JsonPath, str]], bundler: Bundler
) -> tuple[dict[str, Any], list[Any]]:
    """``schema`` with the ``$ref`` at each path set to a new value, copying only the
    containers on those paths (the rest is shared with ``schema``, which is not modified),
    and the keys of the root's copied children. Each copy below the root is the load's one
    copy of its kind (:meth:`Bundler.shared_copy`): thousands of tools write the same
    ``{"$ref": ...}`` and the same parts around it."""
    root = dict(schema)
    copies: dict[JsonPath, Any] = {(): root}
    kids: dict[JsonPath, list[Any]] = {(): []}  # the keys of each copy's copied children
    for at, ref in edits:
        node: Any = root
        for i in range(len(at)):
            here = at[: i + 1]
            below = copies.get(here)
            if below is None:
                child = node[at[i]]
                below = copies[here] = dict(child) if type(child) is dict else list(child)
                node[at[i]] = below
                kids[at[:i]].append(at[i])
                kids[here] = []
            node = below
        node["$ref"] = ref
    for at in sorted(copies, key=len, reverse=True):  # deepest first: children shared first
        if at:
            copies[at[:-1]][at[-1]] = bundler.shared_copy(copies[at], kids[at])
    return root, kids[()]


def outward(schema: Any) -> list[tuple[JsonPath, str, str]]:
    """(path, keyword, value) of each ``$ref``, ``$dynamicRef`` or ``$recursiveRef`` that names
    something outside ``schema`` (a URI or a file). A loaded registry has none left (they are
    refused or bundled); a schema built in code may, and must not be shipped by an export."""
    if not isinstance(schema, (dict, list)):
        return []
    found = _scan(schema)
    pairs = [(at, "$ref", ref) for at, ref in found.refs]
    pairs += [(at, key, value) for at, key, value in found.dynamic if isinstance(value, str)]
    return [(at, key, value) for at, key, value in pairs if not value.startswith("#")]


def _id_keys(schema: dict[str, Any]) -> tuple[str, ...]:
    """Keywords that set a base URI: ``$id``, and ``id`` in a draft-04 schema."""
    dialect = str(schema.get("$schema", "")).rstrip("#")
    return ("$id", "id") if dialect.endswith("//json-schema.org/draft-04/schema") else ("$id",)


def _local_target(schema: Any, ref: str, anchors: set[str]) -> bool:
    """True when ``#/pointer`` or ``#anchor`` names something in ``schema``."""
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        return fragment in anchors
    try:
        resolve_pointer(schema, parse_pointer(ref[1:]))
    except (KeyError, ValueError):
        return False
    return True


def _kind(value: Any) -> str:
    """How a message names a value that is not a schema."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else "a number"


def _not_a_schema(schema: Any, ref: str) -> str:
    """A message when the local ``#/pointer`` ``ref`` names a value that is no schema (a
    number, a string, an array: validators crash on those); "" when it names a schema."""
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        return ""  # an anchor names the object that declares it
    target = resolve_pointer(schema, parse_pointer(ref[1:]))
    if type(target) is dict or type(target) is bool:
        return ""
    return f"reference {ref!r} points at {_kind(target)}, not a schema (an object or true/false)"


def _dynamic_problems(schema: Any, found: _Found, display: str) -> list[RefProblem]:
    """``$dynamicRef`` and ``$recursiveRef`` under the same rule as ``$ref``: they may only
    name something inside the schema (no URI, no file: those are never fetched, and the
    bundler does not follow them)."""
    out = []
    for at, key, value in found.dynamic:
        where = (*at, key)
        if not isinstance(value, str):
            continue  # the meta-schema reports the type
        if key == "$recursiveRef" and value != "#":
            out.append(RefProblem(display, where, f'$recursiveRef must be "#", not {value!r}'))
        elif not value.startswith("#"):
            what = value.split("#")[0]
            out.append(
                RefProblem(
                    display,
                    where,
                    f"{key} {what!r} points outside the schema; only #... is supported"
                    + (
                        " (remote and file: references are not allowed)"
                        if _SCHEME.match(value)
                        else ""
                    ),
                    hint="use $ref to a schema file in the registry, or a #anchor in this schema",
                )
            )
        elif not _local_target(schema, value, found.anchors):
            out.append(
                RefProblem(display, where, f"{key} {value!r} points at nothing in this schema")
            )
    return out


def bundle(
    schema: Any,
    *,
    file: Path,
    display: str,
    scope: RefScope,
    bundler: Bundler,
    directory: str | None = None,
    digest: bytes | None = None,
) -> Bundled:
    """``schema`` made self-contained, the reference problems found, and whether it holds
    any ``$ref``.

    Every schema a non-local reference names is copied into ``$defs`` (shared with every other
    schema of the load that names it) and the references rewritten. Files are referenced only
    as ``scope`` allows (see :class:`RefScope`). ``schema`` is not modified (only the
    containers on the way to a rewritten reference are copied); without external references
    it is returned as is. ``directory``: ``str(file.parent)`` when the caller has it;
    ``digest``: :func:`content_digest` of ``schema`` when the caller has it (equal schemas
    written in the same directory under the same scope bundle to equal ones, which are then
    one object without comparing them again).
    """
    if not isinstance(schema, dict):
        return Bundled(schema, [], False)
    found = _scan(schema, id_keys=_id_keys(schema))
    problems = [
        RefProblem(
            display,
            at,
            "nested $id is not supported in tool schemas",
            "TC305",
            hint="use $defs and '#/$defs/Name' references instead",
        )
        for at in found.ids
    ]
    refs = found.refs
    external = [(at, r) for at, r in refs if not r.startswith("#")]
    for at, ref in refs:
        if not ref.startswith("#"):
            continue
        if not _local_target(schema, ref, found.anchors):
            message = f"reference {ref!r} points at nothing in this schema"
        else:
            message = _not_a_schema(schema, ref)
        if message:
            problems.append(RefProblem(display, (*at, "$ref"), message))
    problems += _dynamic_problems(schema, found, display)
    local_refs = [ref for _, ref in refs if ref[:1] == "#"]
    if not external:
        return Bundled(schema, problems, bool(refs), patterns=found.patterns, local_refs=local_refs)
    uses: list[tuple[JsonPath, _Definition]] = []
    below: list[tuple[int, _Definition]] = []  # (level of the object holding it, target)
    if directory is None:
        directory = str(file.parent)
    outcomes = bundler.outcomes(scope, directory)  # once per schema, not once per reference
    for (at, ref), level in zip(refs, found.ref_levels, strict=True):
        if ref[:1] == "#":
            continue
        outcome = outcomes.get(ref)
        if outcome is None:
            outcome = bundler.resolve(scope, file, ref, directory)
        if isinstance(outcome, _Failure):
            problems.append(RefProblem(display, (*at, "$ref"), outcome.message, hint=outcome.hint))
            for path in outcome.files:
                bundler.touch(path)
        else:
            uses.append((at, outcome))
            below.append((level, outcome))
    closure = bundler.closure_of(tuple([d.key for _, d in uses]))
    problems += closure.problems
    for path in closure.files:
        bundler.touch(path)
    own_defs = schema.get("$defs")
    names = closure.names_for(frozenset(own_defs) if isinstance(own_defs, dict) else frozenset())
    if names is None:
        out, kids = _with_refs(schema, [(at, f"#/$defs/{d.name}") for at, d in uses], bundler)
    else:
        out, kids = _with_refs(schema, [(at, f"#/$defs/{names[d.key]}") for at, d in uses], bundler)
    own = None  # the schema without the shared definitions, when they are all it adds
    if closure.defs and own_defs is None and names is None:
        # the common case: only shared definitions, so the whole schema may be shared too
        # (the $defs follow from the closure: its keys stand for them in the comparison)
        key: tuple[Any, ...] | None = (
            None if digest is None else ("declared", digest, directory, scope)
        )
        if key is None:
            text = _copy_digest(out, kids)
            key = None if text is None else ("bundled", text, closure.keys)
        own = out
        out = dict(own)
        out["$defs"] = closure.added
        if key is not None:
            out = bundler.shared_root(out, key)
    elif closure.defs and (own_defs is None or isinstance(own_defs, dict)):
        if names is None:
            out["$defs"] = {**(own_defs or {}), **closure.added}
        else:
            out["$defs"] = {
                **(own_defs or {}),
                **{names[d.key]: _renamed(d, names) for d in closure.defs},
            }
    known = None
    local = len(external) < len(refs)
    depth = None
    if names is None and closure.known is not None:
        known = closure.known
        if not local and (own_defs is None or type(own_defs) is dict):
            # as _tree_depth measures it: each definition in $defs (level 2) and at
            # each reference, the own part's containers at their levels
            reaches = max([level + known[id(d.node)] for level, d in below], default=0)
            depth = max(found.deepest, reaches, closure.placed)
    shared = closure if names is None else None
    # with the shared definitions in known, the scan's local references are all the others
    mine = local_refs if known is not None else None
    return Bundled(
        out, problems, True, known, local, found.patterns, depth, closure.files, shared, own, mine
    )


MAX_EXPANDED_DEPTH = 64
"""Deepest a schema may nest once its local ``$ref`` chains are followed (as the YAML cap)."""


def _edges(node: Any, schema: Any) -> Iterator[Any]:
    """The containers below ``node``, and the target of its local ``$ref``."""
    if type(node) is dict:
        for key, value in node.items():
            if (type(value) is dict or type(value) is list) and key not in NOT_SCHEMAS:
                yield value
        ref = node.get("$ref")
        if type(ref) is str and ref.startswith("#"):
            try:
                target = resolve_pointer(schema, parse_pointer(ref[1:]))
            except (KeyError, ValueError):
                return
            if type(target) is dict or type(target) is list:
                yield target
    else:
        for item in node:
            if type(item) is dict or type(item) is list:
                yield item


def expanded_depth(schema: Any, known: dict[int, int] | None = None) -> int:
    """How deeply ``schema`` nests with each ``$ref`` replaced by its target (cycles cut).

    Validators and exporters recurse once (or several times) per level of this depth, so a
    long chain of ``$defs`` referring to each other (``d0 → d1 → … → d1500``) would crash them.
    Iterative and linear: each container is measured once. ``known``: depths already measured
    (of shared definitions, by id), not measured again.
    """
    if type(schema) is not dict and type(schema) is not list:
        return 0
    depth = dict(known or {})
    _expanded_depths(schema, depth)
    return depth[id(schema)]


def _expanded_depths(schema: Any, depth: dict[int, int]) -> None:
    """Fill ``depth`` (by id) for every container of ``schema`` not already in it."""
    active: set[int] = {id(schema)}
    stack: list[list[Any]] = [[schema, _edges(schema, schema), 0]]
    while stack:
        frame = stack[-1]
        child = next(frame[1], None)
        if child is None:
            stack.pop()
            active.discard(id(frame[0]))
            depth[id(frame[0])] = frame[2] + 1
            if stack:
                stack[-1][2] = max(stack[-1][2], frame[2] + 1)
        elif id(child) in depth:
            frame[2] = max(frame[2], depth[id(child)])
        elif id(child) not in active:  # a child on the active path closes a cycle: not deeper
            active.add(id(child))
            stack.append([child, _edges(child, schema), 0])


def _target(schema: dict[str, Any], ref: str) -> Any:
    """What the local ``ref`` names in ``schema`` (None: nothing); a bundled reference,
    ``#/$defs/Name`` with no escape in the name, is one lookup."""
    name = ref[8:] if ref.startswith("#/$defs/") else ""
    defs = schema.get("$defs")
    if name and "/" not in name and "~" not in name and "%" not in name and type(defs) is dict:
        return defs.get(name)
    try:
        return resolve_pointer(schema, parse_pointer(ref[1:]))
    except (KeyError, ValueError):
        return None


def _tree_depth(schema: dict[str, Any], known: dict[int, int]) -> int | None:
    """:func:`expanded_depth` of a schema whose own part is a tree and whose every local
    ``$ref`` names a shared definition of ``known`` depth (a bundled schema without local
    references of its own): one pass, each container at its level, none measured twice. None
    when a reference names anything else (then the general walk decides)."""
    best = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    push, pop = stack.append, stack.pop
    while stack:
        node, level = pop()
        if level > best:
            best = level
        if type(node) is dict:
            ref = node.get("$ref")
            if type(ref) is str and ref.startswith("#"):
                target = _target(schema, ref)
                if type(target) is dict or type(target) is list:
                    below = known.get(id(target))
                    if below is None:
                        return None
                    best = max(best, level + below)
            children: Any = [v for k, v in node.items() if k not in NOT_SCHEMAS]
        else:
            children = node
        for child in children:
            if type(child) is dict or type(child) is list:
                below = known.get(id(child))
                if below is None:
                    push((child, level + 1))
                elif level + below > best:
                    best = level + below
    return best


def reference_structure(
    schema: Any,
    *,
    has_refs: bool | None = None,
    known: dict[int, int] | None = None,
    local: bool = True,
    depth: int | None = None,
    local_refs: list[str] | None = None,
) -> tuple[int, list[tuple[JsonPath, list[str]]]]:
    """(:func:`expanded_depth`, :func:`endless_cycles`) of ``schema``, with one cheap scan
    first (skipped when ``has_refs`` says): a schema without any ``$ref`` (the common case)
    has neither problem. ``known``: the depths of the shared definitions bundled into
    ``schema`` (see :class:`Bundled`), which no endless cycle runs through: only the rest of
    the schema is walked. Without ``local`` references besides those (``local=False``) the
    rest is a tree: no cycle to look for, and ``depth`` (see :class:`Bundled`), when given, is
    the answer. ``local_refs``: every local reference of the schema outside the definitions of
    ``known`` (see :class:`Bundled`), so that the cycle search is needed only when one of them
    leads somewhere (see :func:`_dead_ends`)."""
    if has_refs is None:
        has_refs = isinstance(schema, dict) and bool(_scan(schema).refs)
    if not isinstance(schema, dict) or not has_refs:
        return 0, []
    if known is not None and not local and depth is not None:
        return depth, []
    tree = None if known is None or local else _tree_depth(schema, known)
    depth = expanded_depth(schema, known) if tree is None else tree
    if depth > MAX_EXPANDED_DEPTH:
        return depth, []  # the cycle search recurses along the chains: not on this one
    if known is not None and not local:
        return depth, []
    skip = known or {}
    if local_refs is not None and _dead_ends(schema, local_refs, skip):
        return depth, []
    return depth, endless_cycles(schema, scanned=True, skip=skip)


def _dead_ends(schema: dict[str, Any], local_refs: list[str], skip: Container[int]) -> bool:
    """True when no endless cycle can run through ``schema``, told from the targets of its
    local references alone (``local_refs``: all of them outside ``skip``): each names a
    subschema with no ``$ref`` and no in-place applicator, or one of ``skip``, or nothing.

    An endless cycle (see :func:`endless_cycles`) follows references and in-place
    applicators; applicators only lead down the tree, so every cycle enters some reference's
    target and leaves it again, by its own ``$ref`` or an applicator. A target that has
    neither ends every path into it. The common recursive definition (``next: {$ref:
    '#/$defs/Node'}`` under ``properties``) passes; anything else takes the full search."""
    for ref in local_refs:
        target = _target(schema, ref)
        if (
            type(target) is dict
            and id(target) not in skip
            and ("$ref" in target or not target.keys().isdisjoint(_APPLICATORS))
        ):
            return False
    return True


def endless_cycles(
    schema: Any, *, scanned: bool = False, skip: Container[int] = ()
) -> list[tuple[JsonPath, list[str]]]:
    """``$ref`` cycles that never consume any input (``{"$ref": "#"}``, ``a → b → a``).

    Recursion through ``properties`` or ``items`` is fine (a tree); a cycle through only
    references and in-place applicators (allOf, anyOf, oneOf, not, if/then/else) never ends.
    Returns the path where each cycle starts and the chain of references. ``skip``: ids of
    subschemas known to hold no cycle and to lead nowhere else (shared definitions).
    """
    if not isinstance(schema, dict) or (not scanned and not _scan(schema).refs):
        return []  # no $ref at all: no cycle (the common case, so checked cheaply first)
    found: list[tuple[JsonPath, list[str]]] = []
    state: dict[str, int] = {}

    def edges(node: Any, ptr: str) -> Iterator[tuple[str, Any]]:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            try:
                target = resolve_pointer(schema, parse_pointer(ref[1:]))
            except (KeyError, ValueError):
                target = None
            if target is not None and id(target) not in skip:
                yield ref[1:], target
        for key in _IN_PLACE:
            for i, sub in enumerate(node.get(key, []) if isinstance(node.get(key), list) else []):
                yield f"{ptr}/{key}/{i}", sub
        for key in _IN_PLACE_SINGLE:
            if isinstance(node.get(key), dict):
                yield f"{ptr}/{key}", node[key]

    def visit(node: Any, ptr: str, chain: list[str]) -> None:
        state[ptr] = 1
        for nptr, sub in edges(node, ptr):
            if state.get(nptr) == 1:
                start = chain.index(nptr) if nptr in chain else 0
                found.append((tuple(parse_pointer(nptr)), [*chain[start:], nptr]))
            elif nptr not in state:
                visit(sub, nptr, [*chain, nptr])
        state[ptr] = 2

    def walk(node: Any, ptr: str) -> None:
        if id(node) in skip:
            return
        if isinstance(node, dict):
            if ptr not in state:
                visit(node, ptr, [ptr])
            for key, value in node.items():
                if key not in NOT_SCHEMAS:
                    walk(value, f"{ptr}/{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{ptr}/{i}")

    walk(schema, "")
    return found

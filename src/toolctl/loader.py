"""tools.d → Registry. Collects every diagnostic in every file; never stops at the first.

Loading is pure data work: files are read with the strict YAML loader, checked against the format
schema, their schemas bundled and meta-validated, examples and test inputs validated, and handler
references located *without importing them*.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolctl import cache, references
from toolctl.cache import DEFAULTS, LoadCache, sha256
from toolctl.catalog import unknown_toolsets
from toolctl.config import Project, project_at, project_for
from toolctl.contentdigest import content_digest
from toolctl.diagnostics import (
    DeferredLocation,
    Diagnostic,
    Location,
    error,
    has_errors,
    json_pointer,
    sorted_unique,
)
from toolctl.discovery import TOOL_SUFFIXES as TOOL_SUFFIXES
from toolctl.discovery import discover as _discover
from toolctl.discovery import display_path as display_path
from toolctl.discovery import short as _short
from toolctl.discovery import skipped_directory as skipped_directory
from toolctl.discovery import skipped_file as skipped_file
from toolctl.discovery import source_files as source_files
from toolctl.errors import DeclarationError, YamlError
from toolctl.examplebatch import ExampleBatch
from toolctl.refscope import RefScope
from toolctl.registry import Registry
from toolctl.spec.model import APPROVAL_WHEN, SCHEMA_KEYS, Origin, ToolSpec
from toolctl.yamlsrc import (
    Document,
    JsonPath,
    decode_text,
    freeze_for_good,
    gc_paused,
    load_file,
    loads,
    may_hold_directive,
    read_bytes,
    real_path,
)

REGISTRY_GROUP = "toolctl.registries"


@dataclass
class _Context:
    """State shared while loading one registry."""

    python_path: list[Path]
    cache: LoadCache | None = None
    docs: dict[Path, Document] = field(default_factory=dict)
    invalid: set[int] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    touched: dict[Path, None] = field(default_factory=dict)  # $ref files of the current file
    directives: dict[str, bool] = field(default_factory=dict)  # see Registry.directive_files
    searches: dict[str, list[str]] = field(default_factory=dict)  # see search()
    formats: list[str] | None = None  # see _format_names()
    shared_defs: dict[Any, Any] = field(default_factory=dict)  # see cache.from_entry

    def search(self, origin_kind: str) -> list[str]:
        """Where handler modules of a file of ``origin_kind`` are looked for (once per load)."""
        found = self.searches.get(origin_kind)
        if found is None:
            own = self.python_path if origin_kind == "file" else []
            found = self.searches[origin_kind] = references.search_path(own)
        return found

    bundler: Any = None  # refs.Bundler, made on the first tool with a reference
    examples: Any = None  # examplebatch.ExampleBatch: examples checked a chunk at a time
    # cache entries of files whose examples wait in the batch: (path, entry, its tools)
    entries: list[tuple[Path, dict[str, Any], list[ToolSpec]]] = field(default_factory=list)
    # schemas found sound, by (content digest, directory): (the bundled schema, or None when
    # it is the declared one as is; the files it was bundled from; the scope it was bundled
    # under, compared on a hit rather than hashed into every key). See _check_schemas.
    sound: dict[Any, tuple[Any, list[Path], RefScope]] = field(default_factory=dict)

    def touch(self, path: Path) -> None:
        """Record ``path`` (a real path) as a file the current tool file depends on."""
        self.touched[path] = None

    def load_doc(self, path: Path) -> Document:
        path = real_path(path)
        self.touched[path] = None
        if path not in self.docs:
            self.docs[path] = load_file(path, _short(path))
        return self.docs[path]


# ---------------------------------------------------------------- one tool


def _refs_in(raw: dict[str, Any]) -> Iterator[tuple[JsonPath, str]]:
    """Every callable reference in a declaration, with its path."""
    if isinstance(raw.get("handler"), str):
        yield ("handler",), raw["handler"]
    for hook, ref in raw.get("hooks", {}).items():
        yield ("hooks", hook), ref
    tmo = raw.get("toModelOutput")
    if isinstance(tmo, dict) and "call" in tmo:
        yield ("toModelOutput", "call"), tmo["call"]
    for target, phases in raw.get("transform", {}).items():
        for phase, spec in phases.items():
            if "call" in spec:
                yield ("transform", target, phase, "call"), spec["call"]


def _check_instances(
    spec: ToolSpec,
    out: list[Diagnostic],
    bad_schemas: set[str],
    examples: bool = True,
    tests: bool = True,
) -> None:
    """Check the tool's input examples (unless ``examples`` is False: batched, see
    :mod:`toolctl.examplebatch`) and test cases (unless ``tests`` is False) against its
    schemas."""
    from toolctl.schema import Validator, make_validator

    checks: list[tuple[str, JsonPath, Any, str, str]] = []
    for i, example in enumerate(spec.input_examples if examples else ()):
        checks.append(
            (
                "inputSchema",
                ("inputExamples", i, "input"),
                example["input"],
                "TC304",
                "input example",
            )
        )
    for i, case in enumerate(spec.tests if tests else ()):
        label = f"test {case.get('name', i)!r}"
        # a case that expects its input, resume data or context to be rejected is written
        # invalid on purpose
        rejected = case.get("error", {}).get("code")
        if "input" in case and rejected != "invalid_input":
            given = case["input"]
            if spec.apply_defaults and isinstance(given, dict):
                # the case runs through the pipeline, which fills the schema's defaults in
                from toolctl.schemadefaults import fill_defaults

                given = fill_defaults(spec.input_schema, given)
            checks.append(("inputSchema", ("tests", i, "input"), given, "TC306", label))
        if "resume" in case and spec.resume_schema is not None and rejected != "invalid_resume":
            checks.append(
                (
                    "resumeSchema",
                    ("tests", i, "resume"),
                    case["resume"],
                    "TC306",
                    f"{label} resume data",
                )
            )
        if (
            "context" in case
            and spec.request_context_schema is not None
            and rejected != "invalid_context"
        ):
            checks.append(
                (
                    "requestContextSchema",
                    ("tests", i, "context"),
                    case["context"],
                    "TC306",
                    f"{label} context",
                )
            )
    # one compiled validator per schema of the tool, for its examples and test cases alike
    # (not the process-wide cache: every tool's schema differs, and a load keeps none of them)
    validators: dict[str, Validator] = {}
    for key, path, instance, code, label in checks:
        if key in bad_schemas:
            continue
        validator = validators.get(key)
        if validator is None:
            validator = validators[key] = make_validator(spec.schema(key))
        for problem in validator.errors(instance, limit=5):
            where = problem.pointer or "/"
            out.append(
                error(
                    spec.locate(*path, *problem.path),
                    code,
                    f"{label} does not match {key} at {where}: {problem.message}",
                    tool=spec.name,
                )
            )


def _schema_slots(raw: dict[str, Any]) -> Iterator[tuple[str, JsonPath, Any]]:
    """Every schema a declaration holds: (bundled key, path in the declaration, schema). The
    schema keys, and the condition of ``requireApproval: {when: ...}``."""
    for key in SCHEMA_KEYS:
        if key in raw:
            yield key, (key,), raw[key]
    approval = raw.get("requireApproval")
    if isinstance(approval, dict) and isinstance(approval.get("when"), (dict, bool)):
        yield APPROVAL_WHEN, ("requireApproval", "when"), approval["when"]


def _check_schemas(
    raw: dict[str, Any],
    doc: Document,
    pointer: JsonPath,
    file: Path,
    scope: RefScope,
    ctx: _Context,
    out: list[Diagnostic],
) -> tuple[dict[str, Any], set[str]]:
    refs = _module("toolctl.refs")
    bundled: dict[str, Any] = {}
    bad: set[str] = set()
    name = raw.get("name")
    # Keys the file was parsed with: without a `$...` key no schema of it has a $ref, $id,
    # $anchor or $schema to bundle or check (the scan would find nothing), and without a
    # `pattern...` key, or a $ref that may bundle one in from another file, no regex to
    # compile. Unknown (None): look.
    names = doc.key_names
    # a key starting with "$" sorts from "$" to before "%": min() (C speed, per tool) says
    # whether any key sorts before "%" (also true for a rare few other first characters:
    # then the scan just runs)
    dollars = names is None or (bool(names) and min(names) < "%")
    patterns = dollars or bool(names and ("pattern" in names or "patternProperties" in names))

    def loc(path: JsonPath, in_file: str | None = None) -> Location:
        if in_file and in_file != doc.file:
            other = next((d for d in ctx.docs.values() if d.file == in_file), None)
            if other is not None:
                line, col = other.locate(path)
                return Location(in_file, line, col)
            return Location(in_file)
        line, col = doc.locate((*pointer, *path))
        return Location(doc.file, line, col)

    # once per tool (a Path's parent is a new Path each time), and one string per directory:
    # the bundler keeps it in the key of each bundled schema it shares
    directory = sys.intern(str(file.parent))
    for key, at, declared in _schema_slots(raw):
        # Registries repeat schemas (most output schemas of a realistic one are one of a few):
        # an equal schema that checked sound is sound again where its relative references
        # name the same files (same directory and scope): only its bundled form and the
        # files it depends on are taken over.
        digest = content_digest(declared) if type(declared) is dict else None
        memo = None if digest is None else (digest, directory)
        known_sound = ctx.sound.get(memo) if memo is not None else None
        if known_sound is not None and known_sound[2] == scope:
            bundled[key] = declared if known_sound[0] is None else known_sound[0]
            for path in known_sound[1]:
                ctx.touch(path)
            continue
        files: list[Path] = []
        split: Any = None  # (the closure, the own part): see _schema_problems
        if dollars:
            if ctx.bundler is None:
                ctx.bundler = refs.Bundler(ctx.load_doc, ctx.touch)
            bundled_schema = refs.bundle(
                declared,
                file=file,
                display=doc.file,
                scope=scope,
                bundler=ctx.bundler,
                directory=directory,
                digest=digest,
            )
            schema, problems = bundled_schema.schema, bundled_schema.problems
            has_refs, known = bundled_schema.has_refs, bundled_schema.known
            local, measured = bundled_schema.local, bundled_schema.depth
            files, local_refs = bundled_schema.files, bundled_schema.local_refs
            # the scan found the own part's patterns: not walked again (when there may be any)
            found = bundled_schema.patterns if patterns else False
            if bundled_schema.closure is not None and bundled_schema.own is not None:
                split = (bundled_schema.closure, bundled_schema.own)
        else:
            schema, problems, has_refs, known, local = declared, [], False, None, True
            measured, local_refs = None, None
            found = patterns
        for p in problems:
            own = p.file == doc.file
            out.append(
                error(
                    loc((*at, *p.path) if own else p.path, p.file),
                    p.code,
                    p.message,
                    hint=p.hint,
                    tool=name,
                )
            )
            bad.add(key)
        depth, cycles = refs.reference_structure(
            schema,
            has_refs=has_refs,
            known=known,
            local=local,
            depth=measured,
            local_refs=local_refs,
        )
        if depth > refs.MAX_EXPANDED_DEPTH:
            out.append(
                error(
                    loc(at),
                    "TC307",
                    f"{key} nests {depth} levels deep once its $refs are followed "
                    f"(at most {refs.MAX_EXPANDED_DEPTH})",
                    tool=name,
                    hint="shorten the chain of $defs that refer to each other",
                )
            )
            bad.add(key)
            bundled[key] = schema
            continue
        for sp in _schema_problems(schema, known, ctx.bundler, patterns, found, split):
            out.append(
                error(
                    loc((*at, *sp.path)),
                    "TC301",
                    f"{key} is not a valid JSON Schema: {sp.message}",
                    tool=name,
                    hint="see https://json-schema.org/understanding-json-schema/",
                )
            )
            bad.add(key)
        for where, chain in cycles:
            out.append(
                error(
                    loc((*at, *where)),
                    "TC303",
                    f"{key} has a $ref cycle that never ends: {' -> '.join(chain)}",
                    tool=name,
                    hint="break the cycle with properties/items",
                )
            )
            bad.add(key)
        bundled[key] = schema
        if memo is not None and key not in bad:
            if len(ctx.sound) >= SOUND_MEMO:
                ctx.sound.clear()
            ctx.sound[memo] = (None if schema is declared else schema, files, scope)
    return bundled, bad


SOUND_MEMO = 1024
"""Sound schemas a load remembers at a time (see _check_schemas): repeats within a thousand
tools are found, and memory stays flat (a digest per schema of a large registry is not)."""


def _schema_problems(
    schema: Any,
    known: dict[int, int] | None,
    bundler: Any,
    patterns: bool,
    own_patterns: bool | list[tuple[JsonPath, str]] | None = None,
    split: Any = None,
) -> list[Any]:
    """:func:`~toolctl.schema.check_schema` of a bundled schema, with the shared definitions
    of ``known`` (ids) checked once per load by ``bundler`` instead of once per tool: only the
    tool's own part is checked here when they are all valid. Any problem: the whole schema is
    checked, so the messages and paths are those of checking it whole. ``own_patterns``: the
    own part's patterns as the bundling scan found them (None: walk it for them). ``split``:
    (the closure of shared definitions that are the schema's whole ``$defs``, the schema
    without them) when the bundler knows them, so they need not be told apart again."""
    schema_module = _module("toolctl.schema")
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if (
        known
        and isinstance(defs, dict)
        and schema_module.dialect_of(schema) == schema_module.DEFAULT_DIALECT
    ):
        mine = patterns if own_patterns is None else own_patterns
        if split is not None:
            closure, own = split
            shared_valid = bundler.closure_valid(closure, patterns)
        else:
            own = {**schema, "$defs": {k: v for k, v in defs.items() if id(v) not in known}}
            shared_valid = all(
                bundler.schema_valid(node, patterns) for node in defs.values() if id(node) in known
            )
        if shared_valid and not schema_module.check_schema(own, patterns=mine):
            return []
    problems: list[Any] = schema_module.check_schema(schema, patterns=patterns)
    return problems


@functools.cache
def _module(name: str) -> Any:
    """The module ``name`` (:mod:`toolctl.refs`, :mod:`toolctl.schema`), imported on the
    first schema checked (a warm load checks none), then without an import statement's
    lookups per tool."""
    return importlib.import_module(name)


def _schemas_beside(
    raw: Any,
    doc: Document,
    pointer: JsonPath,
    file: Path,
    scope: RefScope,
    ctx: _Context,
    format_diags: list[Diagnostic],
) -> None:
    """The schema errors of a tool that has format errors elsewhere, so that `validate`
    reports every error of a file at once instead of hiding these until the others are
    fixed. Schema keys with format errors of their own are left to those."""
    if not isinstance(raw, dict):
        return
    base = json_pointer(pointer)
    hit = {
        d.pointer[len(base) :].split("/")[1]
        for d in format_diags
        if d.pointer.startswith(base + "/")
    }
    keys = {
        k: raw[k]
        for k in SCHEMA_KEYS
        if k in raw and k not in hit and isinstance(raw[k], (dict, bool))
    }
    if keys:
        name = raw.get("name")
        keys["name"] = name if isinstance(name, str) else None
        _check_schemas(keys, doc, pointer, file, scope, ctx, ctx.diagnostics)


def _build_tool(
    raw: dict[str, Any],
    doc: Document,
    pointer: JsonPath,
    file: Path,
    scope: RefScope,
    origin: Origin,
    ctx: _Context,
) -> tuple[ToolSpec, list[Diagnostic]]:
    out: list[Diagnostic] = []
    bundled, bad = _check_schemas(raw, doc, pointer, file, scope, ctx, out)
    spec = ToolSpec.from_validated(
        raw,
        origin=origin,
        location=DeferredLocation(doc.file, doc, (*pointer, "name")),
        document=doc,
        pointer=pointer,
        schemas=bundled,
    )
    # examples of a sound input schema wait for the load's batch (see _settle_examples)
    batched = (
        bool(spec.input_examples)
        and "inputSchema" not in bad
        and ctx.examples is not None
        and ctx.examples.add(spec)
    )
    _check_instances(spec, out, bad, examples=not batched)
    if spec.provider_options:  # imported only then: most tools have none
        from toolctl.spec.providers import provider_key_problems

        out.extend(provider_key_problems(spec))
    python_path = ctx.python_path if origin.kind == "file" else []
    for path, ref in _refs_in(raw):
        problem = references.check_static(ref, python_path)
        if problem:
            out.append(
                error(
                    spec.locate(*path),
                    "TC402",
                    f"{ref!r} does not resolve: {problem}",
                    tool=spec.name,
                    hint=_python_path_hint(python_path),
                )
            )
    return spec, out


def _python_path_hint(python_path: list[Path]) -> str:
    """Where handler modules were looked for, so a wrong project root is visible."""
    if not python_path:
        return "a pack's handlers must be importable from its installed package"
    where = ", ".join(str(p) for p in python_path)
    return (
        f"handler modules are looked up in {where} (pythonPath, relative to the project root) "
        "and site-packages; check the module path, or set pythonPath in toolctl.yaml"
    )


# ---------------------------------------------------------------- one file


def _tools_of(data: dict[str, Any]) -> list[tuple[JsonPath, dict[str, Any]]]:
    if "tools" in data:
        return [(("tools", i), t) for i, t in enumerate(data["tools"])]
    return [((), data)]


# what a file's current cache entry rebuilt (see _warm_files): whether it may hold a directive,
# its tools, its diagnostics, its tools with errors
_Warm = tuple[bool, list[ToolSpec], list[Diagnostic], list[ToolSpec]]


def _load_file(
    path: Path,
    scope: RefScope,
    origin_kind: str,
    origin_name: str,
    ctx: _Context,
    warm: _Warm | None = None,
) -> list[ToolSpec]:
    """Load one tool file: ``warm`` when its cache entry was current (see :func:`_warm_files`),
    else checked (and its entry written when there is a cache); diagnostics go to ``ctx``."""
    origin = Origin(origin_kind, origin_name, _short(path))
    if warm is not None:
        ctx.directives[origin.file], specs, diags, invalid = warm
        ctx.diagnostics.extend(diags)
        ctx.invalid.update(id(spec) for spec in invalid)
        return specs
    try:
        content = read_bytes(path)
    except YamlError as exc:
        ctx.diagnostics.append(_yaml_error(origin.file, exc))
        return []
    ctx.directives[origin.file] = may_hold_directive(content)
    if ctx.cache is None:
        return _check_file(content, path, scope, origin, ctx)[0]
    digest = sha256(content)
    search = ctx.search(origin_kind)
    start = len(ctx.diagnostics)
    ctx.touched = {}
    specs, doc = _check_file(content, path, scope, origin, ctx)
    modules = [ctx.cache.module_dep(ref, search) for spec in specs for _, ref in _refs_in(spec.raw)]
    files = [ctx.cache.file_dep(p, _short) for p in ctx.touched]
    entry = cache.to_entry(
        formats=_format_names(any(spec.provider_options for spec in specs), ctx),
        sha=digest,
        root=scope.key,
        origin=origin,
        doc=doc,
        diagnostics=ctx.diagnostics[start:],
        specs=specs,
        invalid=ctx.invalid,
        files=files,
        modules=modules,
    )
    ctx.entries.append((path, entry, specs))  # written once the examples are settled
    return specs


def _settle_examples(ctx: _Context) -> None:
    """Check the batched input examples; the tools of a chunk not accepted whole are checked
    one by one (their diagnostics also go into their file's cache entry). Then write the cache
    entries that waited for this."""
    late: dict[int, list[Diagnostic]] = {}
    if ctx.examples is not None:
        for spec in ctx.examples.rejected():
            out: list[Diagnostic] = []
            _check_instances(spec, out, set(), tests=False)
            if out:
                late[id(spec)] = out
                ctx.diagnostics.extend(out)
                ctx.invalid.add(id(spec))
    entries, ctx.entries = ctx.entries, []
    for path, entry, specs in entries:
        found = [d for spec in specs for d in late.get(id(spec), ())]
        if found:
            cache.add_late(entry, found, [id(spec) in ctx.invalid for spec in specs])
        if ctx.cache is not None:
            ctx.cache.write(path, entry)


def _warm_files(
    files: list[Path], scope: RefScope, kind: str, name: str, ctx: _Context
) -> dict[Path, _Warm]:
    """What the cache entry of each of ``files`` gave, for those whose entry is current and
    intact.

    The entries come a cache shard at a time (:meth:`LoadCache.entries`), not in ``files``'
    order, so that a warm load holds about one shard's decoded entries beyond the registry
    (in path order, every shard was decoded within a few files: 50 MiB at 10,000 tools). The
    caller takes the results in ``files``' order: tools and diagnostics come out as before.
    """
    found: dict[Path, _Warm] = {}
    if ctx.cache is None:
        return found
    search = ctx.search(kind)
    for i, entry in ctx.cache.entries([str(file) for file in files]):
        file = files[i]
        try:
            content = read_bytes(file)
        except YamlError:
            continue  # loaded in order, which reports it
        origin = Origin(kind, name, _short(file))
        rebuilt = _rebuilt(entry, sha256(content), file, scope, origin, search, ctx)
        if rebuilt is not None:
            found[file] = (may_hold_directive(content), *rebuilt)
    return found


def _rebuilt(
    entry: dict[str, Any],
    digest: str,
    file: Path,
    scope: RefScope,
    origin: Origin,
    search: list[str],
    ctx: _Context,
) -> tuple[list[ToolSpec], list[Diagnostic], list[ToolSpec]] | None:
    """(tools, diagnostics, tools with errors) from a file's cache entry when that is current
    and intact; else None."""
    store = ctx.cache
    assert store is not None
    try:
        if (
            entry["sha"] != digest
            or entry["root"] != scope.key
            or entry["origin"] != [origin.kind, origin.name]
            or entry["formats"] != _format_names(entry["formats"] is not None, ctx)
            or not store.deps_current(entry, search)
        ):
            return None
        return cache.from_entry(entry, origin, _short, ctx.shared_defs, file)
    except Exception:  # a damaged entry is a miss, never trusted: the file is loaded again
        return None


def _format_names(has_options: bool, ctx: _Context) -> list[str] | None:
    """The installed export formats when a file's tools have ``providerOptions`` (their TC206
    warnings depend on which formats are installed), else None. Once per load, and from the
    cache while ``sys.path`` is unchanged: scanning every distribution's metadata (and importing
    ``importlib.metadata``) costs more than a small warm `validate` itself."""
    if not has_options:
        return None
    if ctx.formats is None:
        from toolctl.spec.providers import GROUP, installed_format_names

        ctx.formats = cache.remembered(
            ctx.cache,
            f"<entry points {GROUP}>",
            lambda: sorted(installed_format_names()),
            cache.text,
        )
    return ctx.formats


def _yaml_error(display: str, exc: YamlError) -> Diagnostic:
    return error(Location(display, exc.line, exc.col), exc.code, exc.message, hint=exc.hint)


def _check_file(
    content: bytes, path: Path, scope: RefScope, origin: Origin, ctx: _Context
) -> tuple[list[ToolSpec], Document | None]:
    """Parse and check one file's ``content``: its tools (and document); tools with errors
    are marked invalid in ``ctx``."""
    from toolctl.formatcheck import check_file_format  # imported on a cache miss only

    display = origin.file
    try:
        doc = loads(decode_text(content), display)
    except YamlError as exc:
        ctx.diagnostics.append(_yaml_error(display, exc))
        return [], None
    checked = check_file_format(doc)
    format_diags = checked.diagnostics
    ctx.diagnostics.extend(format_diags)
    if not isinstance(doc.data, dict) or checked.whole_file:
        if isinstance(doc.data, dict) and isinstance(doc.data.get("tools", []), list):
            for pointer, raw in _tools_of(doc.data):
                _schemas_beside(raw, doc, pointer, path, scope, ctx, format_diags)
        doc.release()
        doc.positions_from(path)
        return [], doc
    specs = []
    for pointer, raw in _tools_of(doc.data):
        if pointer and pointer[1] in checked.broken:
            _schemas_beside(raw, doc, pointer, path, scope, ctx, format_diags)
            continue
        spec, diags = _build_tool(raw, doc, pointer, path, scope, origin, ctx)
        ctx.diagnostics.extend(diags)
        if has_errors(diags):
            ctx.invalid.add(id(spec))
        specs.append(spec)
    doc.release()  # checked
    doc.positions_from(path)
    return specs, doc


# ---------------------------------------------------------------- packs


@functools.cache
def _installed_packs() -> tuple[tuple[str, str, str], ...]:
    """(entry point name, value, distribution name) of each installed registry pack."""
    from importlib_metadata import entry_points

    return tuple(
        (ep.name, ep.value, getattr(ep.dist, "name", None) or ep.name)
        for ep in entry_points(group=REGISTRY_GROUP)
    )


def _pack_entry_points(store: LoadCache | None) -> list[tuple[str, str, str]]:
    """The installed registry packs; from the cache while ``sys.path`` is unchanged (scanning
    every distribution's metadata is most of a small `validate`)."""

    def triple(item: Any) -> tuple[str, str, str]:
        name, value, dist = item
        return str(name), str(value), str(dist)

    return cache.remembered(store, f"<entry points {REGISTRY_GROUP}>", _installed_packs, triple)


def _pack_dirs(ctx: _Context) -> Iterator[tuple[str, Path]]:
    """(pack name, directory) for each installed registry pack, located without importing."""
    for ep_name, value, dist in _pack_entry_points(ctx.cache):
        target = value.replace(":", ".")
        directory = references.package_dir(target)
        if directory is None or not directory.is_dir():
            ctx.diagnostics.append(
                error(
                    Location(f"<pack {dist}>"),
                    "TC205",
                    f"registry pack {ep_name!r}: {target!r} is not a "
                    "package directory that can be found",
                    hint="point the entry point at a package with YAML",
                )
            )
            continue
        yield dist, directory


# ---------------------------------------------------------------- registry


def _dedupe(specs: list[ToolSpec], ctx: _Context) -> dict[str, ToolSpec]:
    by_name: dict[str, list[ToolSpec]] = {}
    for spec in specs:
        by_name.setdefault(spec.name, []).append(spec)
    tools: dict[str, ToolSpec] = {}
    for name in sorted(by_name):
        group = by_name[name]
        valid = [s for s in group if id(s) not in ctx.invalid]
        if valid:
            tools[name] = valid[0]
        if len(group) > 1:
            where = ", ".join(
                str(s.location)
                if s.origin.kind == "file"
                else f"{s.origin.name} pack ({s.location})"
                for s in group
            )
            code = "TC204" if any(s.origin.kind == "package" for s in group) else "TC203"
            for spec in group:
                ctx.diagnostics.append(
                    error(
                        spec.location,
                        code,
                        f"duplicate tool name {name!r}: defined in {where}",
                        tool=name,
                        hint="rename all but one",
                    )
                )
    return tools


def load_registry(
    path: str | Path | None = None,
    *,
    packs: bool = True,
    project: Project | None = None,
    cache: bool | None = None,
) -> Registry:
    """Load a registry and return it with every diagnostic. Raises only for a bad config.

    ``cache`` (default :data:`DEFAULTS`.cache): reuse and update the load cache.
    """
    use = DEFAULTS.cache if cache is None else cache
    with gc_paused():  # the load builds big acyclic trees; collecting them frees nothing
        registry = _load_registry(path, packs, project, use)
        if DEFAULTS.freeze:
            freeze_for_good()  # before collecting resumes: nothing of it is scanned again
    return registry


_loads = 0


def _forget_modules() -> None:
    """Handler modules, export formats and registry packs are looked up afresh per load: they
    may have changed since the last load in this process (a server reloading, a test), or
    appeared."""
    global _loads
    if _loads:
        forget_installed()
    _loads += 1


def forget_installed() -> None:
    """Look handler modules, export formats and registry packs up afresh at the next load
    (installed, removed or changed since the last lookup in this process)."""
    from toolctl.spec.providers import installed_format_names

    references._find_module_cached.cache_clear()
    references._module_names.cache_clear()
    installed_format_names.cache_clear()  # an export format installed since
    _installed_packs.cache_clear()  # a registry pack installed since
    importlib.invalidate_caches()  # directories that did not exist at the last lookup


def _load_registry(
    path: str | Path | None, packs: bool, project: Project | None, use_cache: bool
) -> Registry:
    project = project or project_for(Path(path) if path is not None else None)
    _forget_modules()
    store = None
    if use_cache:
        directory = cache.cache_dir(project.state_path, project.config_file is not None)
        store = LoadCache(directory, project.python_path)
    ctx = _Context(project.python_path, store)
    ctx.examples = ExampleBatch()
    specs: list[ToolSpec] = []
    for tool_path, scope, kind, name in _sources(project, packs, ctx):
        listed = list(_discover(tool_path))
        found = [file for file, problem in listed if problem is None]
        warm = _warm_files(found, scope, kind, name, ctx)
        for file, problem in listed:
            if problem is not None:
                ctx.diagnostics.append(problem)
                continue
            specs.extend(_load_file(file, scope, kind, name, ctx, warm.pop(file, None)))
            if ctx.examples.full:  # memory: about one chunk's tools wait at a time
                _settle_examples(ctx)
        del listed, found  # not held while the cache is written
    _settle_examples(ctx)
    if store is not None:
        store.flush()
    tools = _dedupe(specs, ctx)
    registry = Registry(tools, [], project, ctx.directives, packs)
    ctx.diagnostics.extend(unknown_toolsets(tools.values(), registry.toolsets))
    registry.diagnostics = sorted_unique(ctx.diagnostics)
    return registry


def pack_directories(project: Project) -> list[Path]:
    """The directories of the installed registry packs (the load cache's list of them when
    the CLI keeps one)."""
    store = None
    if DEFAULTS.cache:
        directory = cache.cache_dir(project.state_path, project.config_file is not None)
        store = LoadCache(directory, project.python_path)
    ctx = _Context(project.python_path, store)
    found = [directory for _, directory in _pack_dirs(ctx)]
    if store is not None:
        store.flush()
    return found


def _protected(project: Project) -> frozenset[Path]:
    """The project's own files a ``$ref`` may never name, whatever they are called: its
    configuration and its run history with the files beside it (key, journal)."""
    state = project.state_path
    beside = [state.with_name(state.name + s) for s in (".key", "-wal", "-shm", "-journal")]
    files = [state, *beside] + ([project.config_file] if project.config_file else [])
    return frozenset(real_path(f) for f in files)


def _sources(
    project: Project, packs: bool, ctx: _Context
) -> Iterator[tuple[Path, RefScope, str, str]]:
    """(tools path, what its ``$ref``s may name, origin kind, origin name): the project's, then
    packs'. A project's tool files may refer to its schema files, wherever ``tools:`` points
    (a ``tools: ..`` widens nothing); a pack's to the schema files of its own directory."""
    scope = RefScope(real_path(project.root), tuple(project.schema_dirs), _protected(project))
    for tool_path in project.tool_paths:
        yield tool_path, scope, "file", ""
    if packs:
        for name, directory in _pack_dirs(ctx):
            yield directory, RefScope(real_path(directory)), "package", name


def load(
    path: str | Path | None = None,
    *,
    strict: bool = True,
    packs: bool = True,
    project: Project | str | Path | None = None,
    cache: bool = False,
) -> Registry:
    """Load the registry at ``path`` (default: found from the working directory).

    ``path`` is a tools file or directory. ``project`` instead loads the project rooted at that
    directory (its toolctl.yaml and the ``tools:`` paths it lists; see :func:`load_project`),
    or a :class:`~toolctl.config.Project` as given. With ``strict`` (the default) any error
    raises :class:`DeclarationError` listing every diagnostic; with ``strict=False`` the valid
    tools load and ``registry.diagnostics`` tells what was left out. ``cache=True`` reuses
    the load cache (what the CLI does; see :mod:`toolctl.cache`): unchanged files load
    without being parsed or checked again.
    """
    if project is not None and path is not None:
        raise TypeError("give either path (a tools path) or project (a project root), not both")
    if isinstance(project, (str, Path)):
        project = project_at(project)
    registry = load_registry(path, packs=packs, project=project, cache=cache)
    if strict and not registry.ok:
        errors = [d for d in registry.diagnostics if d.severity.value == "error"]
        raise DeclarationError(
            f"{len(errors)} error(s) in the registry; first: {errors[0].format()}",
            diagnostics=registry.diagnostics,
        )
    return registry


def load_project(
    root: str | Path, *, strict: bool = True, packs: bool = True, cache: bool = False
) -> Registry:
    """Load the registry of the project rooted at directory ``root``.

    Reads the config found at ``root`` (``toolctl.yaml`` or ``[tool.toolctl]``, at or above it,
    as from a working directory) and loads the ``tools:`` paths it lists (default ``tools.d``),
    with its ``pythonPath`` and ``state``. ``toolctl.load(root)`` differs: it takes ``root`` as
    the tools directory itself.
    """
    return load(project=project_at(root), strict=strict, packs=packs, cache=cache)

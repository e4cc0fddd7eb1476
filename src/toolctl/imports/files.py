"""Writing imported tools into a directory, merging with what a previous import wrote.

The importer owns the keys it generates. Of those, the ones people edit by hand
(:data:`PRESERVED`: description, title, annotations, ``enabled``, ``requireApproval``) survive a
re-import when they differ from what the last import wrote (``x-import.upstream`` keeps a
digest of each generated value); every other generated key takes the upstream's new value, and
keys the importer never writes (tests, timeout, transforms ...) are kept as they are. The
change list is the contract diff (:func:`toolctl.contract.diff`) of the directory before and
after, in ``toolctl diff``'s classes.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.errors import ToolctlError, UsageError

if TYPE_CHECKING:
    from toolctl.contract.diff import DiffResult
    from toolctl.contract.sides import Side

# (key path, how the report names it)
PRESERVED: tuple[tuple[str, ...], ...] = (
    ("description",),
    ("title",),
    ("mcp", "annotations"),
    ("enabled",),
    ("requireApproval",),
)
_MISSING = object()
GENERATED_KEYS = frozenset(
    {
        "toolctl",
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "outputValidation",
        "http",
        "upstream",
        "secrets",
        "mcp",
        "tags",
        "x-import",
        "enabled",
        "requireApproval",
    }
)


@dataclass
class Written:
    """What one import did to the directory."""

    directory: Path
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    kept_edits: list[str] = field(default_factory=list)  # "tool: description"
    changes: DiffResult | None = None
    notes: list[str] = field(default_factory=list)


def _digest(value: Any) -> str | None:
    if value is _MISSING:
        return None
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if value is _MISSING:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def stamp(declaration: dict[str, Any]) -> dict[str, Any]:
    """``declaration`` with the digests of its generated :data:`PRESERVED` values recorded."""
    marks = {".".join(p): _digest(_get(declaration, p)) for p in PRESERVED}
    declaration.setdefault("x-import", {})["upstream"] = marks
    return declaration


def merge(old: dict[str, Any], new: dict[str, Any], edits: list[str]) -> dict[str, Any]:
    """``new`` (stamped) with ``old``'s hand edits and the keys the importer does not own."""
    recorded = old.get("x-import", {}).get("upstream", {})
    out: dict[str, Any] = json.loads(json.dumps(new))
    for path in PRESERVED:
        label = ".".join(path)
        before = _get(old, path)
        if label in recorded and recorded[label] == _digest(before):
            continue  # not edited since the last import: take the upstream's value
        if _digest(before) != _digest(_get(new, path)):
            _set(out, path, before)
            edits.append(f"{new['name']}: {label}")
    for key, value in old.items():
        if key not in GENERATED_KEYS:
            out[key] = value
    return out


def read_imported(directory: Path, kind: str) -> dict[str, tuple[Path, dict[str, Any]]]:
    """The files a previous ``kind`` import wrote in ``directory``, by upstream identity."""
    from toolctl.yamlsrc import load_file

    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.yaml")):
        try:
            data = load_file(path).data
        except (ToolctlError, OSError):
            continue  # not ours to merge; the load after writing reports it
        mark = data.get("x-import") if isinstance(data, dict) else None
        if isinstance(mark, dict) and mark.get("kind") == kind and "operation" in mark:
            found[str(mark["operation"])] = (path, data)
    return found


def render(declaration: dict[str, Any]) -> bytes:
    """The YAML text of one tool file."""
    from toolctl.yamlsrc import dumps

    head = "# Written by `toolctl import`; hand edits to description, title, annotations,\n"
    head += "# enabled and requireApproval survive a re-import.\n"
    plain = json.loads(json.dumps(declaration))  # no shared objects: they would become aliases
    text = dumps(plain, base=_fast_dumper(), sort_keys=False, width=100, allow_unicode=True)
    return (head + text).encode("utf-8")


@functools.cache
def _fast_dumper() -> Any:
    """libyaml's emitter when PyYAML has it (a large spec's files are written several times
    faster than with the pure-Python one), with multi-line text as literal blocks."""
    import yaml

    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None  # the emitter quotes it when it must
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


def write_all(
    directory: Path,
    kind: str,
    declarations: Iterable[dict[str, Any]],
    upstream_ids: set[str],
) -> Written:
    """Write (merge) ``declarations`` into ``directory``; remove the files of a ``kind`` import
    whose upstream identity is no longer in ``upstream_ids``."""
    from toolctl.atomicfile import replace

    result = Written(directory)
    before = _side(directory, "before")
    old = read_imported(directory, kind)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {directory}: {exc.strerror or exc}") from None
    for declaration in declarations:
        stamp(declaration)
        ident = declaration["x-import"]["operation"]
        previous = old.pop(ident, None)
        if previous is not None:
            declaration = merge(previous[1], declaration, result.kept_edits)
        target = directory / f"{declaration['name']}.yaml"
        data = render(declaration)
        if previous is not None and previous[0] != target:
            previous[0].unlink(missing_ok=True)
            result.removed.append(previous[0])
        if target.is_file() and target.read_bytes() == data:
            result.unchanged.append(target)
            continue
        replace(target, data)
        result.written.append(target)
    for ident, (path, _) in old.items():
        if ident not in upstream_ids:  # gone upstream (not merely left out of this selection)
            path.unlink(missing_ok=True)
            result.removed.append(path)
    after = _side(directory, "after") if before is not None else None  # a first import: no diff
    if before is not None and after is not None:
        from toolctl.contract import diff

        result.changes = diff(before, after)
    return result


def _side(directory: Path, label: str) -> Side | None:
    """The directory as a diff side (None when it has no tools or does not load cleanly)."""
    if not directory.is_dir() or not any(directory.glob("*.yaml")):
        return None
    from toolctl.contract import registry_side
    from toolctl.loader import load_registry

    try:
        return registry_side(load_registry(directory, packs=False, cache=False), label)
    except ToolctlError:
        return None

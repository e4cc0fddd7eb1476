"""The load cache: each tool file's load results, reused while nothing they depend on changed.

An entry holds what loading one tool file produced (the data, the compact positions, the
bundled schemas, every diagnostic) and is valid only for the same

* file content (SHA-256 of its bytes) at the same path, ``$ref`` root and origin;
* toolctl (version and its own source files) and the libraries that check (PyYAML,
  jsonschema, jsonschema-rs, referencing, regex), and the Python version;
* configuration that loading reads (``pythonPath``);
* for a file with ``providerOptions``, the installed export formats (which keys TC206 knows);
* ``$ref``-d schema files (their content hashes) and handler modules (handler references
  are checked statically, TC4xx: the module file each one resolves to, and its size and
  modification time).

Entries live in ``<state dir>/cache`` of a project with a config file (next to the run
history), else in the user cache (``$XDG_CACHE_HOME/toolctl``); ``TOOLCTL_CACHE_DIR``
overrides both. Entries are grouped in 16 files by a hash of the tool file's path; each is
written to a temporary name and renamed into place, so concurrent runs never see half a file
(the last writer wins; an entry it lacks is rebuilt next time); a write drops the entries of
files that no longer exist. Each file starts with a keyed MAC (HMAC-SHA256) of its payload and
is plain JSON (no pickle: a planted cache file cannot run code). The key (:func:`cache_key`)
lives in the user's data directory, never in a cache directory: whoever can write a cache
directory (a shared volume, a CI cache restored from a pull request's run) but not read the
key cannot forge an entry that is used. Anything that does not check out (no key, a wrong
MAC, truncated, garbage, another version, nested too deeply, a shape that does not rebuild)
is a miss, and the entry is rebuilt. Caching never fails a command: an unwritable directory
just means no cache.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import hmac
import json
import os
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, Any, TypeVar

from toolctl import __version__
from toolctl.atomicfile import replace
from toolctl.keyfile import KeyFileError, load_or_create_key, read_key

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic
    from toolctl.spec.model import Origin, ToolSpec
    from toolctl.yamlsrc import Document

T = TypeVar("T")

FORMAT = 8  # 4: bundled schemas as patches of the written ones (see to_entry); 5: positions
# as character offsets and line starts (see Document); 6: the parts bundling made, as JSON
# text shared by the load (see _Text); 7: those texts once per shard file, and the
# dependency records (see _Tables); 8: positions and tool lines may be null (unread: the
# fast parser's files; see encode_positions)
_MAGIC = b"toolctl-cache hmac-sha256"
DATA_ENV = "TOOLCTL_DATA_DIR"  # where the cache key lives (tests point it elsewhere)
KEY_NAME = "cache.key"
SHARDS = 16
# Libraries whose behaviour decides the diagnostics: a reinstall changes their files.
CHECKERS = (
    "yaml",
    "yaml_rs",  # the fast parser (toolctl.yamlfast)
    "jsonschema",
    "jsonschema_rs",
    "jsonschema_specifications",
    "referencing",
    "regex",  # which schema patterns compile (TC301)
)


@dataclass
class LoadDefaults:
    """Process-wide defaults of :func:`toolctl.loader.load_registry` (the CLI turns both on).

    ``cache``: reuse the load cache. ``freeze``: after a load, move every live object into the
    collector's permanent generation (``gc.freeze``): a registry lives as long as a command,
    and at 10,000 tools each later collection would walk its millions of objects for nothing.
    Library callers pass ``cache=`` per call instead.
    """

    cache: bool = False
    freeze: bool = False


DEFAULTS = LoadDefaults()


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def cache_dir(state_path: Path | None, has_config: bool) -> Path:
    """Where entries go: ``TOOLCTL_CACHE_DIR``, the project's state directory, or the user cache."""
    env = os.environ.get("TOOLCTL_CACHE_DIR")
    if env:
        return Path(env)
    if has_config and state_path is not None:
        return state_path.parent / "cache"
    return _user_cache()


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolctl"


def data_dir() -> Path:
    """The user's toolctl data directory: ``TOOLCTL_DATA_DIR``, else ``$XDG_DATA_HOME/toolctl``
    (default ``~/.local/share/toolctl``)."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "toolctl"


def cache_key(cache_directory: Path, *, create: bool) -> bytes | None:
    """The secret that keys the MACs of ``cache_directory``'s files: ``cache.key`` in
    :func:`data_dir` (mode 0600), created when missing if ``create``. None when there is no
    usable key (missing, unsafe, or inside the cache directory itself, where it would travel
    with the cache): then nothing is read from the cache or written to it."""
    path = data_dir() / KEY_NAME
    where, cache = os.path.realpath(path), os.path.realpath(cache_directory)
    if where == cache or where.startswith(cache.rstrip(os.sep) + os.sep):
        return None
    try:
        return load_or_create_key(path) if create else read_key(path)
    except KeyFileError:
        return None


MAX_CACHE_FILE = 1 << 31  # larger than any shard a real registry writes


def _read(path: Path) -> bytes | None:
    """The bytes of a cache file; None when missing, unreadable or not a regular file (a FIFO
    planted in a shared cache directory would make a plain read wait forever)."""
    from toolctl.errors import YamlError
    from toolctl.yamlsrc import read_bytes

    try:
        return read_bytes(path, max_bytes=MAX_CACHE_FILE)
    except YamlError:
        return None


def _seal(payload: bytes, key: bytes) -> bytes:
    """``payload`` behind a header with its MAC under ``key``: a file cut short, edited or
    forged without the key is detected."""
    return _MAGIC + b" " + _mac(payload, key) + b"\n" + payload


def _unseal(blob: bytes, key: bytes) -> bytes | None:
    """The payload of a sealed ``blob``; None when it is truncated, garbage, hand-edited or
    sealed under another key."""
    start = unsealed_at(blob, key)
    return blob[start:] if start is not None else None


def unsealed_at(blob: bytes, key: bytes) -> int | None:
    """Where the payload of a sealed ``blob`` starts (see :func:`_unseal`), without copying
    it: a large entry (the search index) is read in place."""
    end = blob.find(b"\n")
    if end < 0:
        return None
    payload = memoryview(blob)[end + 1 :]
    return end + 1 if hmac.compare_digest(blob[:end], _MAGIC + b" " + _mac(payload, key)) else None


def _mac(payload: bytes | memoryview, key: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode()


# ------------------------------------------------------------------ the configuration file
# Parsing ``toolctl.yaml`` is the one YAML parse of a command that loads every tool file from
# the cache, and importing PyYAML for it costs more than the rest of a small `validate`. So the
# settings read from a config file, once parsed and checked, are kept in the user cache (the
# project's cache directory is named by the config itself), keyed by the file's exact bytes
# and toolctl's code.


def _configs_root() -> Path:
    env = os.environ.get("TOOLCTL_CACHE_DIR")
    return Path(env) if env else _user_cache()


def _config_entry(config_file: Path) -> Path:
    return _configs_root() / "configs" / f"{sha256(str(config_file).encode())[:32]}.json"


def remembered_settings(config_file: Path, raw: bytes) -> dict[str, Any] | None:
    """The settings read earlier from exactly these bytes of ``config_file``; None: parse it
    (also when the entry's MAC does not check out under this user's key: see :func:`_seal`)."""
    if not DEFAULTS.cache:
        return None
    try:
        blob = _read(_config_entry(config_file))
        key = cache_key(_configs_root(), create=False) if blob is not None else None
        payload = _unseal(blob, key) if blob is not None and key is not None else None
        entry = json.loads(payload) if payload is not None else None
    except (OSError, ValueError, RecursionError):
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("sha") != sha256(raw)
        or entry.get("code") != code_fingerprint()
        or not isinstance(entry.get("settings"), dict)
    ):
        return None
    settings: dict[str, Any] = entry["settings"]
    return settings


MAX_CONFIGS = 64  # remembered config files; the least recently written go first


def remember_settings(config_file: Path, raw: bytes, settings: dict[str, Any]) -> None:
    """Keep ``settings``, parsed and checked from ``raw``, for :func:`remembered_settings`."""
    if not DEFAULTS.cache:
        return
    target = _config_entry(config_file)
    key = cache_key(_configs_root(), create=True)
    if key is None:
        return
    entry = {"sha": sha256(raw), "code": code_fingerprint(), "settings": settings}
    with contextlib.suppress(OSError, ValueError, TypeError, RecursionError):
        target.parent.mkdir(parents=True, exist_ok=True)
        # Only the owner may read it: a config may hold a `state:` URL with a password.
        replace(target, _seal(json.dumps(entry, ensure_ascii=False).encode(), key), 0o600)
        _forget_old_configs(target.parent)


def _forget_old_configs(directory: Path) -> None:
    """At most :data:`MAX_CONFIGS` entries (temporary projects would otherwise add one each,
    forever); a config whose entry went is parsed again, once. Runs only when one is written."""
    entries = []
    for path in directory.glob("*.json"):
        with contextlib.suppress(OSError):
            entries.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(entries, reverse=True)[MAX_CONFIGS:]:
        with contextlib.suppress(OSError):
            path.unlink()


def _stat_sig(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def source_stats(package: str) -> list[list[Any]]:
    """``[relative path, [size, mtime_ns]]`` of each ``.py`` and ``.json`` file below
    ``package`` (``__pycache__`` aside), a directory's files in name order before its
    subdirectories. Every warm command asks (through :func:`code_fingerprint`): one
    ``scandir`` per directory and one ``stat`` per file, no path arithmetic."""
    found: list[list[Any]] = []
    pending = [("", package)]  # (relative, full) directories still to list, the next one last
    while pending:
        relative, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            name = relative + entry.name
            if entry.is_dir():
                if entry.name != "__pycache__" and not entry.is_symlink():
                    subdirs.append((name + os.sep, entry.path))
            elif entry.name.endswith((".py", ".json")):
                try:
                    st = entry.stat()
                except OSError:
                    found.append([name, None])
                    continue
                found.append([name, [st.st_size, st.st_mtime_ns]])
        pending.extend(reversed(subdirs))  # depth first, in name order
    return found


@functools.cache
def code_fingerprint(checkers: tuple[str, ...] = CHECKERS) -> str:
    """toolctl's version and source files, the files of the checking libraries (``checkers``,
    module names), the Python version."""
    parts: list[Any] = [FORMAT, __version__, sys.version]
    parts += source_stats(os.path.dirname(__file__))
    for module in checkers:
        spec = PathFinder.find_spec(module)
        origin = spec.origin if spec is not None else None
        parts.append([module, origin, _stat_sig(origin) if origin else None])
    return sha256(json.dumps(parts).encode())


def import_path_key() -> list[Any]:
    """``sys.path`` with each entry's stat: installing or removing a distribution changes it."""
    return [[p, _stat_sig(p)] for p in sys.path if p]


def _interned(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A decoded object with its string values interned, as the YAML parser gives them: a
    warm load keeps every tool's data, and "string", "object" and shared descriptions once
    each instead of once per use were about a third of a large registry's decoded entries."""
    return {k: intern(v) if type(v) is str else v for k, v in pairs}


class _Text:
    """A part of a bundled schema that bundling made (see :func:`_patches`), in an entry being
    written: stored once per shard file as its JSON text, in the shard's ``parts``, and named
    in the entry by its index there (see :class:`_Tables`). A warm load keeps one copy of each
    such part by its exact text (see :func:`_shared`), as the bundler keeps one of each equal
    part: files whose tools hold the same parts share them without hashing or decoding them
    again."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Defs(_Text):
    """An added ``$defs`` being written: stored as the index of each definition's JSON text
    (the sets of definitions that tools add differ, the definitions in them recur)."""

    __slots__ = ()


class _Tables:
    """What the load entries of one shard file being written share, each once, named in the
    entries by its index: ``parts``, the JSON text of each part that bundling made (the shared
    definitions recur in most tools of a registry: written and read back per entry, they were
    most of an entry's bytes), and ``deps``, each dependency record (a ``$ref``-d file and its
    digest, a handler module and its stat: most tool files share a few). ``texts`` maps a part
    or record (by id; each held with its text, so ids stay unique) to its JSON text for the
    whole write: the loader shares them between the files of all shards."""

    def __init__(self, texts: dict[int, tuple[Any, str]]) -> None:
        self.texts = texts
        self.parts: list[str] = []
        self.deps: list[Any] = []
        self._parts: dict[str, int] = {}
        self._deps: dict[str, int] = {}

    def _text(self, value: Any) -> str:
        found = self.texts.get(id(value))
        if found is None:
            found = self.texts[id(value)] = (value, _dumps(value))
        return found[1]

    def part(self, value: Any) -> int:
        """The index in ``parts`` of the JSON text of ``value`` (a :class:`_Text`'s)."""
        return self.part_text(self._text(value))

    def part_text(self, text: str) -> int:
        """The index in ``parts`` of ``text`` (an entry read back: see :func:`_inline`)."""
        return _numbered(self._parts, self.parts, text, text)

    def dep(self, record: Any) -> int:
        """The index in ``deps`` of a dependency record equal to ``record``."""
        return _numbered(self._deps, self.deps, self._text(record), record)

    def tabled(self, entry: Any) -> None:
        """Name each part of a load entry's bundled schemas and each of its dependency records
        by its index (in place); entries of other kinds (no list of tools) are left as they
        are. TypeError, ValueError, IndexError or AttributeError for a damaged entry read
        back."""
        tools = entry.get("tools") if type(entry) is dict else None
        if type(tools) is not list:
            return
        entry["files"] = [self.dep(record) for record in entry["files"]]
        entry["modules"] = [self.dep(record) for record in entry["modules"]]
        for tool in tools:
            for patches in tool[1].values():
                for patch in patches:
                    if len(patch) != 3:
                        continue
                    part = patch[2]
                    if type(part) is _Defs:
                        patch[2] = {name: self.part(node) for name, node in part.value.items()}
                    elif type(part) is _Text:
                        patch[2] = self.part(part.value)
                    elif type(part) is dict:  # read back: {name: text}
                        patch[2] = {name: self.part_text(text) for name, text in part.items()}
                    elif type(part) is str:
                        patch[2] = self.part_text(part)
                    else:
                        raise ValueError("not a part")


def _numbered(index: dict[str, int], table: list[T], text: str, item: T) -> int:
    """The index in ``table`` of the item whose JSON text is ``text``, ``item`` added when
    there is none (``index``: the table's texts)."""
    at = index.get(text)
    if at is None:
        at = index[text] = len(table)
        table.append(item)
    return at


def _inline(entries: dict[str, Any], parts: list[str], deps: list[Any]) -> dict[str, Any]:
    """``entries`` of a shard read back, each index of a load entry replaced (in place) by what
    it names in the shard's ``parts`` or ``deps``: the entries then hold their parts' texts
    and their dependency records as format 6 stored them, each one object for all the entries
    of the shard. An entry that names what the shard does not have is dropped (a miss)."""
    for path in list(entries):
        entry = entries[path]
        tools = entry.get("tools") if type(entry) is dict else None
        if type(tools) is not list:
            continue
        try:
            entry["files"] = [_named(i, deps) for i in entry["files"]]
            entry["modules"] = [_named(i, deps) for i in entry["modules"]]
            for tool in tools:
                for patches in tool[1].values():
                    for patch in patches:
                        if len(patch) == 3:
                            at = patch[2]
                            patch[2] = (
                                {name: _named(i, parts) for name, i in at.items()}
                                if type(at) is dict
                                else _named(at, parts)
                            )
        except (TypeError, ValueError, IndexError, AttributeError, KeyError):
            del entries[path]
    return entries


def _named(index: Any, table: list[T]) -> T:
    """What ``index`` names in a shard's table; ValueError or IndexError when nothing."""
    if type(index) is not int or index < 0:
        raise ValueError("not an index")
    return table[index]


def _json_default(value: Any) -> Any:
    """The ``json.dumps`` hook of a write: position arrays as base64 (see
    :func:`encode_positions`)."""
    if isinstance(value, array):
        return _b64(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _b64(positions: array[int]) -> str:
    return base64.b64encode(positions.tobytes()).decode()


def encode_positions(doc: Document | None) -> list[str] | None:
    """A document's position arrays as stored: base64 of their bytes (see
    :func:`decode_positions`); None when the fast parser left them unread (a warm load then
    reads them from the file when asked, as a cold one does)."""
    arrays = doc.arrays() if doc is not None else None
    return None if arrays is None else [_b64(a) for a in arrays]


def _dumps(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """Compact JSON of an entry or a part of one (loaded YAML is a tree: aliases are refused).
    ASCII (other characters as ``\\u`` escapes): one character beyond Latin-1 anywhere in a
    registry made the whole text of a shard two bytes a character, to copy and to encode as
    UTF-8 (a tenth of a cold write), and a warm load decode it the same way."""
    return json.dumps(value, separators=(",", ":"), default=default, check_circular=False)


def decode_positions(encoded: list[str]) -> tuple[array[int], array[int], array[int]]:
    """The position arrays as stored (base64; see ``Document.arrays``); ValueError when they
    do not decode."""
    if len(encoded) != 3:
        raise ValueError("not three position arrays")
    out = []
    for text in encoded:
        arr = array("I")
        arr.frombytes(base64.b64decode(text.encode(), validate=True))
        out.append(arr)
    return out[0], out[1], out[2]


class LoadCache:
    """The entries of one load: read, check and write them (see the module docs).

    Entries are grouped in :data:`SHARDS` files by a hash of their path: a load of thousands of
    files then opens a few cache files, not one per tool file. Writes are collected and made
    by :meth:`flush`, which merges them into the shard as it is on disk at that moment.
    """

    def __init__(self, directory: Path, python_path: Iterable[Path]) -> None:
        self.directory = directory
        self.python_path = [str(p) for p in python_path]
        self.context = sha256(json.dumps([code_fingerprint(), self.python_path]).encode())
        self._hashes: dict[str, str | None] = {}
        self._stats: dict[str, list[int] | None] = {}  # handler modules, once per load
        self._deps: dict[tuple[str, ...], list[Any]] = {}  # see module_dep
        self._files: dict[str, list[Any]] = {}  # see file_dep
        self._shards: dict[int, dict[str, Any]] = {}
        self._dirty: dict[int, dict[str, Any]] = {}
        self._key: bytes | None = None  # see cache_key; read once per load

    def _mac_key(self, create: bool) -> bytes | None:
        if self._key is None:
            self._key = cache_key(self.directory, create=create)
        return self._key

    # ------------------------------------------------------------------ files

    def _shard_of(self, path: str | Path) -> int:
        return zlib.crc32(os.fsencode(path)) % SHARDS  # spreads paths; nothing to defend

    def _shard_file(self, shard: int) -> Path:
        return self.directory / "files" / f"{shard:02x}.json"

    def _load_shard(self, shard: int) -> dict[str, Any]:
        """The entries of one shard file when intact and of this context; {} otherwise."""
        blob = _read(self._shard_file(shard))
        key = self._mac_key(create=False) if blob is not None else None
        payload = _unseal(blob, key) if blob is not None and key is not None else None
        del blob  # not beside its payload's copy while that is decoded
        if payload is None:
            return {}  # no key, truncated, garbage, hand-edited or forged
        try:
            data = json.loads(payload, object_pairs_hook=_interned)
        except (ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or data.get("context") != self.context:
            return {}
        entries, parts, deps = data.get("entries"), data.get("parts"), data.get("deps")
        if not isinstance(entries, dict) or type(parts) is not list or type(deps) is not list:
            return {}
        if not all(type(text) is str for text in parts):
            return {}  # not what a write makes: no entry of the shard is trusted
        return _inline(entries, parts, deps)

    def _opened(self, shard: int) -> dict[str, Any]:
        """The entries of ``shard`` not taken yet (decoded on the first use in this load)."""
        entries = self._shards.get(shard)
        if entries is None:
            entries = self._shards[shard] = self._load_shard(shard)
        return entries

    def read(self, path: Path) -> dict[str, Any] | None:
        """The entry stored for ``path``; None when there is none usable."""
        # taken out: the registry keeps what it needs of an entry (its data), and the rest
        # (encoded positions, diagnostics) is freed as the load goes on, not at its end
        entry = self._opened(self._shard_of(path)).pop(str(path), None)
        return entry if isinstance(entry, dict) else None

    def entries(self, paths: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
        """(index in ``paths``, entry) for each of ``paths`` with an entry, taken out as by
        :meth:`read`, a shard at a time: each shard is decoded when its first path comes and
        its paths' entries are handed on before the next one is. In ``paths``' order (which
        the shards' hash ignores) every shard would be decoded within a few files, and all of
        their entries held until their file came."""
        by_shard: dict[int, list[int]] = {}
        for i, path in enumerate(paths):
            by_shard.setdefault(self._shard_of(path), []).append(i)
        for shard in sorted(by_shard):
            entries = self._opened(shard)
            for i in by_shard[shard]:
                entry = entries.pop(paths[i], None)
                if isinstance(entry, dict):
                    yield i, entry

    def write(self, path: Path, entry: dict[str, Any]) -> None:
        """Queue ``entry`` for ``path`` (written by :meth:`flush`)."""
        self._dirty.setdefault(self._shard_of(path), {})[str(path)] = entry

    def flush(self) -> None:
        """Write the queued entries, each shard atomically; an OS error leaves it uncached."""
        dirty, self._dirty = self._dirty, {}
        self._shards.clear()  # the registry holds what it needs; free the rest
        if not dirty:
            return
        key = self._mac_key(create=True)
        if key is None:
            return  # no usable key: an entry nobody can check is not written
        try:
            self._prepare()
        except OSError:
            return
        texts: dict[int, tuple[Any, str]] = {}  # see _Tables
        while dirty:  # each shard's entries freed once written (the registry keeps its data)
            shard, entries = dirty.popitem()
            kept = _live(self._load_shard(shard))  # keep other runs' entries
            for path in entries:
                kept.pop(path, None)  # replaced: its parts are not written
            tables = _Tables(texts)
            for path, entry in list(kept.items()):
                try:
                    tables.tabled(entry)
                except (TypeError, ValueError, IndexError, AttributeError, KeyError):
                    del kept[path]  # damaged: rebuilt when its file is loaded
            try:
                for entry in entries.values():
                    tables.tabled(entry)
                shard_data = {
                    "context": self.context,
                    "parts": tables.parts,
                    "deps": tables.deps,
                    "entries": kept,
                }
                kept.update(entries)
                payload = _dumps(shard_data, _json_default).encode()
                replace(self._shard_file(shard), _seal(payload, key))
            except (OSError, ValueError, TypeError, RecursionError):  # nothing cached beats failing
                pass

    def _prepare(self) -> None:
        (self.directory / "files").mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():  # never committed by accident (as ruff and pytest do)
            ignore.write_text("# created by toolctl\n*\n", encoding="utf-8")

    def remember(self, name: str, key: Any, build: Callable[[], Any]) -> Any:
        """``build()``'s JSON value, stored under ``name`` and ``key`` (one entry per key, so
        that runs with different keys do not overwrite each other's)."""
        where = Path(f"{name} {sha256(json.dumps(key).encode())}")
        entry = self.read(where)
        if entry is not None and entry.get("key") == key and "value" in entry:
            return entry["value"]
        value = build()
        self.write(where, {"key": key, "value": value, "at": time.time_ns()})
        return value

    # ------------------------------------------------------------------ dependencies

    def file_hash(self, path: str) -> str | None:
        """Content hash of a dependency (None when unreadable), once per load."""
        if path not in self._hashes:
            content = _read(Path(path))
            self._hashes[path] = sha256(content) if content is not None else None
        return self._hashes[path]

    def file_dep(self, path: Path, short: Callable[[Path], str]) -> list[Any]:
        """What a file depends on in a ``$ref``-d file: ``[path, content hash, its name as
        shown (short(path))]``, one record per file and load (most tool files name the same
        few, and an entry's records are written once per shard: see :class:`_Tables`)."""
        name = str(path)
        found = self._files.get(name)
        if found is None:
            found = self._files[name] = [name, self.file_hash(name), short(path)]
        return found

    def module_dep(self, ref: str, search: list[str]) -> list[Any]:
        """What a handler reference's static check depended on: its module file and stat
        (once per reference and search path per load: most tools share a few modules)."""
        memo = (ref, *search)
        found = self._deps.get(memo)
        if found is None:
            found = self._deps[memo] = self._module_dep(ref, search)
        return found

    def _module_dep(self, ref: str, search: list[str]) -> list[Any]:
        from toolctl.references import _find_module

        module = ref.partition(":")[0].strip()
        try:
            origin, problem = _find_module(module, search) if module else (None, "")
        except Exception:  # a reference no finder takes: its diagnostic does not depend on files
            origin, problem = None, "unresolvable"
        if origin and origin not in self._stats:
            self._stats[origin] = _stat_sig(origin)
        return [ref, origin, problem, self._stats[origin] if origin else None]

    def deps_current(self, entry: dict[str, Any], search: list[str]) -> bool:
        """True when every file and module ``entry`` depends on is as it was."""
        for path, digest, _ in entry["files"]:
            if self.file_hash(path) != digest:
                return False
        return all(self.module_dep(dep[0], search) == dep for dep in entry["modules"])


def remembered(
    store: LoadCache | None, name: str, scan: Callable[[], Iterable[Any]], item: Callable[[Any], T]
) -> list[T]:
    """``scan()`` (of what the Python environment has installed), kept in ``store`` under
    ``name`` while ``sys.path`` and its directories are unchanged (installing or removing a
    distribution changes them; :class:`LoadCache`'s context adds toolctl's code and the checking
    libraries); each item converted by ``item``. A damaged entry is scanned again."""
    if store is not None:
        found = store.remember(name, import_path_key(), lambda: [*map(_plain, scan())])
        try:
            return [item(x) for x in found]
        except (TypeError, ValueError):
            pass
    return [item(x) for x in scan()]


def _plain(item: Any) -> Any:
    return list(item) if isinstance(item, tuple) else item


def remembered_scan(
    name: str, scan: Callable[[], Iterable[Any]], item: Callable[[Any], T]
) -> list[T]:
    """:func:`remembered` for what no project decides (installed export formats and lint rule
    packs, the formats the validators check): kept in the user cache (``scans/``, beside the
    remembered configs) in a :class:`LoadCache` of its own, so it is read before any project is
    known and without a shard full of tool files. Only with :data:`DEFAULTS`.cache (the CLI's);
    otherwise scanned."""
    if not DEFAULTS.cache:
        return [item(x) for x in scan()]
    store = LoadCache(_configs_root() / "scans", [])
    try:
        return remembered(store, name, scan, item)
    finally:
        store.flush()


def remembered_store(name: str) -> LoadCache | None:
    """A sealed store of its own beside ``scans/`` in the user cache (``lint/``: lint's
    remembered findings), so that its entries, one per tool file and as large as the findings,
    never weigh on the small scans every warm command reads; None unless :data:`DEFAULTS`.cache
    (the CLI's). Its context is toolctl's code and the checking libraries, as for the scans."""
    return LoadCache(_configs_root() / name, []) if DEFAULTS.cache else None


def remembered_document(path: Path, display: str) -> Document:
    """:func:`toolctl.yamlsrc.load_file` of a file that is no tool file (a ``$ref``-d schema file
    that lint reports a finding in), its data and positions kept in the ``scans/`` store of
    :func:`remembered_scan` while its bytes are unchanged (SHA-256): a warm lint then imports no
    YAML parser. The entry goes when the file does. Raises :class:`~toolctl.errors.YamlError`."""
    from toolctl.yamlsrc import Document, load_file

    content = _read(path) if DEFAULTS.cache else None
    if content is None:
        return load_file(path, display)
    parsed: list[Document] = []

    def parse() -> dict[str, Any]:
        parsed.append(load_file(path, display))
        # a scanned file is one lint reports a finding in: its positions are read now
        parsed[0].positions()
        return {"data": parsed[0].data, "pos": encode_positions(parsed[0])}

    store = LoadCache(_configs_root() / "scans", [])
    try:
        found = store.remember(f"<file {os.path.realpath(path)}>", [sha256(content)], parse)
        if parsed:
            return parsed[0]
        return Document(found["data"], display, *decode_positions(found["pos"]))
    except (KeyError, TypeError, ValueError):  # a damaged entry: parsed again
        return load_file(path, display)
    finally:
        store.flush()


def text(item: Any) -> str:
    """An item of a remembered list that must be a string (TypeError otherwise)."""
    if not isinstance(item, str):
        raise TypeError("not a name")
    return item


def strings(item: Any) -> tuple[str, ...]:
    """An item of a remembered list that must be a list of strings (TypeError otherwise)."""
    if not isinstance(item, list):
        raise TypeError("not a list")
    return tuple(map(text, item))


MAX_REMEMBERED = 4
""":meth:`LoadCache.remember` entries kept per name and shard, the most recently written: each
``sys.path`` state (every install into a site-packages changes it) adds one."""


def _live(entries: dict[str, Any]) -> dict[str, Any]:
    """``entries`` without those of tool files that no longer exist, and with at most
    :data:`MAX_REMEMBERED` of each name of :meth:`LoadCache.remember`'s (named ``<...> digest``):
    a shard (the user cache in particular, shared by every project without a config file)
    would otherwise only grow, and every warm command reads it."""
    live: dict[str, Any] = {}
    remembered: dict[str, list[tuple[int, str]]] = {}
    for k, v in entries.items():
        if k.startswith("<file ") and not os.path.exists(k.rpartition(" ")[0][6:-1]):
            continue  # a remembered_document of a file that is gone
        if k.startswith("<"):
            at = v.get("at") if isinstance(v, dict) else None
            written = at if type(at) is int else 0
            remembered.setdefault(k.rpartition(" ")[0], []).append((written, k))
        elif os.path.exists(k):
            live[k] = v
    for group in remembered.values():
        for _, k in sorted(group, reverse=True)[:MAX_REMEMBERED]:
            live[k] = entries[k]
    return live


# ---------------------------------------------------------------------- entries


def to_entry(
    *,
    sha: str,
    root: str,
    origin: Origin,
    doc: Document | None,
    diagnostics: list[Diagnostic],
    specs: list[ToolSpec],
    invalid: set[int],
    files: list[list[Any]],
    modules: list[list[Any]],
    formats: list[str] | None,
) -> dict[str, Any]:
    """The JSON-ready entry for one loaded file (see :func:`from_entry`)."""
    from toolctl.diagnostics import DeferredLocation
    from toolctl.spec.model import APPROVAL_WHEN, SCHEMA_KEYS

    tools: list[list[Any]] = []
    first: dict[int, list[Any]] = {}  # id of a patch value -> [tool, key, index] first with it
    for spec in specs:
        bundled: dict[str, list[list[Any]]] = {}
        raw = spec.raw
        written = [(key, raw[key], spec.schema(key)) for key in SCHEMA_KEYS if key in raw]
        when = raw.get("requireApproval")
        if isinstance(when, dict):
            written.append((APPROVAL_WHEN, when.get("when"), spec.approval_when))
        for key, orig, schema in written:
            if schema is not orig:  # $refs bundled in: the patches from the file's schema
                patches: list[list[Any]] = []
                _patches(orig, schema, [], patches)
                _link_shared(patches, first, [len(tools), key])
                bundled[key] = patches
        loc = spec.location
        if isinstance(loc, DeferredLocation) and not loc.resolved:
            tools.append([list(spec.pointer), bundled, id(spec) in invalid, None, None])
        else:
            tools.append([list(spec.pointer), bundled, id(spec) in invalid, loc.line, loc.col])
    return {
        "sha": sha,
        "root": root,
        "origin": [origin.kind, origin.name],
        "display": origin.file,
        "data": doc.data if doc is not None else None,
        "pos": encode_positions(doc),
        "diagnostics": [d.to_dict() for d in diagnostics],
        "tools": tools,
        "files": files,
        "modules": modules,
        "formats": formats,
    }


def add_late(entry: dict[str, Any], diagnostics: list[Diagnostic], invalid: list[bool]) -> None:
    """Add to a :func:`to_entry` entry the diagnostics found after it was made (its tools'
    batched example checks), and which of its tools (in order) those made invalid."""
    entry["diagnostics"] += [d.to_dict() for d in diagnostics]
    for tool, bad in zip(entry["tools"], invalid, strict=True):
        tool[2] = tool[2] or bad


def _patches(orig: Any, new: Any, at: list[Any], out: list[list[Any]]) -> bool:
    """Append to ``out`` the ``[path, value]`` settings that make ``orig`` (a schema as
    written) into ``new`` (as bundled): a bundled schema is the written one with a few
    ``$ref`` strings set and its ``$defs`` added, so an entry stores that much instead of
    the whole schema a second time (decoded, it would be a second copy of every schema).

    True when ``new`` holds none of ``orig``'s containers: bundling made all of it (the
    mapping around a rewritten ``$ref``, a schema equal to another tool's, whose copy the
    bundler shares). Such a part is set whole, not key by key, so that a warm load holds one
    copy of it for all the tools that hold it, as the bundler does (see :class:`_Text`); a
    mapping with ``$defs`` is not (a schema's root: its definitions are shared one by one)."""
    if new is orig:
        return type(new) is not dict and type(new) is not list
    start = len(out)
    if type(new) is dict and type(orig) is dict and list(new)[: len(orig)] == list(orig):
        fresh = True
        for key, value in new.items():
            if key not in orig:
                out.append([[*at, key], value])  # added after the written keys, as bundled
                continue
            was = orig[key]
            if value is was:  # most of a copied mapping: no call, no path (as the walk would)
                fresh = fresh and type(value) is not dict and type(value) is not list
            elif not _patches(was, value, [*at, key], out):
                fresh = False
        if not fresh or not at or "$defs" in new:
            return fresh
    elif type(new) is list and type(orig) is list and len(new) == len(orig):
        fresh = True
        for i, (was, value) in enumerate(zip(orig, new, strict=True)):
            if value is was:
                fresh = fresh and type(value) is not dict and type(value) is not list
            elif not _patches(was, value, [*at, i], out):
                fresh = False
        if not fresh or not at:
            return fresh
    elif type(new) is type(orig) and new == orig:
        return True
    del out[start:]
    out.append([at, new])
    return True


def _link_shared(patches: list[list[Any]], first: dict[int, list[Any]], where: list[Any]) -> None:
    """Replace each patch value an earlier patch of the file already wrote (the same object:
    the bundler shares each set of ``$defs`` and equal parts) by ``[path, None, tool, key,
    index]``, naming that patch: the decoded entry then holds one copy of it. The first of
    each becomes ``[path, None, its JSON text]`` (see :class:`_Text`), other files' tools
    holding the same; an added ``$defs`` ``[path, None, {name: the definition's JSON text}]``:
    the sets of definitions that tools add differ, the definitions in them recur."""
    for i, (path, value) in enumerate(patches):
        if type(value) is not dict and type(value) is not list:
            continue
        seen = first.get(id(value))
        if seen is not None:
            patches[i] = [path, None, *seen]
            continue
        first[id(value)] = [*where, i]
        defs = path[-1:] == ["$defs"] and type(value) is dict
        patches[i] = [path, None, _Defs(value) if defs else _Text(value)]


def _bundled(
    raw: dict[str, Any],
    stored: dict[str, Any],
    done: list[dict[str, Any]],
    shared: dict[Any, Any],
) -> Any:
    """The bundled schemas of a tool from its entry's patches (see :func:`to_entry`): the
    written schema with only the containers on each patch's path copied. ``done``: each
    earlier tool's resolved patch values, by key, which linked patches name; ``shared``: the
    load's parts made by bundling, by their JSON text (see :func:`_shared`)."""
    from toolctl.spec.model import APPROVAL_WHEN

    bundled: dict[str, Any] = {}
    values: dict[str, list[Any]] = {}
    done.append(values)  # before its keys: a later key may name an earlier one's patch
    for key, patches in stored.items():
        schema = raw["requireApproval"]["when"] if key == APPROVAL_WHEN else raw[key]
        got = values[key] = []
        for path, value, *link in patches:
            if len(link) > 1:
                value = done[link[0]][link[1]][link[2]]
            elif link:
                value = _shared(link[0], shared)
            got.append(value)
            schema = _set_copied(schema, path, value)
        bundled[key] = schema
    return bundled


def _shared(stored: Any, shared: dict[Any, Any]) -> Any:
    """The part of a bundled schema stored as JSON text (see :func:`_link_shared`), or the
    ``$defs`` stored as the texts of its definitions: decoded on the first use in the load,
    then the same object for every later tool that holds it, as without the cache. Keyed by
    the exact text, not by a digest an entry states: no entry can make another file's tools
    take parts other than the ones it stores. ValueError or TypeError (a miss) for anything
    else."""
    if type(stored) is dict:  # an added $defs
        key = ("$defs", *stored.items())  # TypeError when a text is not a string
        found = shared.get(key)
        if found is None:
            found = shared[key] = {name: _decoded(text, shared) for name, text in stored.items()}
        return found
    return _decoded(stored, shared)


def _decoded(text: Any, shared: dict[Any, Any]) -> Any:
    """The JSON value of ``text``, one object per load for the same text."""
    if type(text) is not str:
        raise ValueError("a shared part is not JSON text")
    found = shared.get(text, shared)
    if found is shared:
        found = shared[text] = json.loads(text, object_pairs_hook=_interned)
    return found


def _set_copied(node: Any, path: list[Any], value: Any) -> Any:
    """``node`` with ``value`` at ``path``, copying the containers on the way (the decoded
    entry's data is shared with the tool's declaration, which must not change)."""
    if not path:
        return value
    copied = dict(node) if type(node) is dict else list(node)
    head = path[0]
    copied[head] = _set_copied(node[head] if len(path) > 1 else None, path[1:], value)
    return copied


def from_entry(
    entry: dict[str, Any],
    origin: Origin,
    short: Callable[[Path], str],
    shared: dict[Any, Any] | None = None,
    source: Path | None = None,
) -> tuple[list[ToolSpec], list[Diagnostic], list[ToolSpec]]:
    """(tools, diagnostics, tools with errors) as loading the file gave them.

    Raises (anything) when the entry does not rebuild: the caller treats that as a miss.
    ``origin.file`` is the file's name now; names in the entry that the working directory
    changed (the file's own, its ``$ref`` files') are renamed. ``shared``: one dict for the
    whole load, so that files whose tools add the same ``$defs`` (the shared definitions
    their ``$ref``s bundle) hold one copy of them, as a load without the cache does (each
    file's entry is decoded apart: 100 files of a 10,000-tool registry held 100 copies).
    """
    from toolctl.diagnostics import DeferredLocation, Diagnostic, Location, Severity
    from toolctl.spec.model import ToolSpec
    from toolctl.yamlsrc import Document

    display = origin.file
    rename = {entry["display"]: display}
    for path, _, was in entry["files"]:
        rename[was] = short(Path(path))
    diags = [
        Diagnostic(
            Severity(d["severity"]),
            d["code"],
            d["message"],
            rename.get(d["file"], d["file"]),
            d["line"],
            d["col"],
            d["pointer"],
            d["hint"],
            d["tool"],
            d.get("extra") or {},
        )
        for d in entry["diagnostics"]
    ]
    if entry["data"] is None:
        return [], diags, []
    if entry["pos"] is None:  # read from the file when asked (see _positions)
        doc = Document(entry["data"], display, source=source)
    else:
        doc = Document(entry["data"], display, *decode_positions(entry["pos"]))
    specs, invalid = [], []
    done: list[dict[str, Any]] = []
    for pointer, stored, bad, line, col in entry["tools"]:
        raw = doc.data
        for part in pointer:
            raw = raw[part]
        bundled = _bundled(raw, stored, done, {} if shared is None else shared)
        spec = ToolSpec.from_validated(
            raw,
            origin=origin,
            location=(
                DeferredLocation(display, doc, (*pointer, "name"))
                if line is None
                else Location(display, int(line), int(col))
            ),
            document=doc,
            pointer=tuple(pointer),
            schemas=bundled,
        )
        specs.append(spec)
        if bad:
            invalid.append(spec)
    return specs, diags, invalid

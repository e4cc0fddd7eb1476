"""The search index kept in the load cache, so that a warm ``toolctl search`` is a lookup.

One file per cache directory, ``search/index``, sealed with the load cache's keyed MAC
(:func:`toolctl.cache.cache_key`; plain JSON then the raw half-float vectors, never
pickle), holding the last index built
there under two keys:

* ``content``: SHA-256 of what the index was built from (each enabled tool's searchable
  fields, the model, this engine's version). A registry with the same content reuses it.
* ``fingerprint``: what the CLI can check without loading the registry: toolctl's code, the
  import path (installed packs), the configuration file's bytes, and the path, size,
  modification and change times and inode of every tool file a load would read. While it
  matches, ``toolctl search`` loads no tool file at all.

A file that does not check out (no key, a wrong MAC, garbage, another engine) is a miss, and
the index is rebuilt; writing it never fails a search.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl import cache
from toolctl.atomicfile import replace
from toolctl.search.lexical import Lexical

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.search.index import SearchIndex

ENGINE = 3  # bump when what an index holds or how it ranks changes
FILE = Path("search") / "index"


def content_key(names: Sequence[str], docs: Sequence[Mapping[str, str]], model: str | None) -> str:
    """What an index built from ``docs`` with ``model`` depends on."""
    return cache.sha256(json.dumps([ENGINE, model, list(names), list(docs)]).encode())


def _stat(path: Path) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [str(path), None]
    return [str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def fingerprint(project: Project, files: Sequence[Path], packs: bool, model: str | None) -> str:
    """The cheap key of ``project``'s index: see the module docs."""
    config = None
    if project.config_file is not None:
        raw = cache._read(project.config_file)
        config = [str(project.config_file), cache.sha256(raw) if raw is not None else None]
    parts = [
        ENGINE,
        model,
        cache.code_fingerprint(),
        cache.import_path_key() if packs else None,
        [str(p) for p in project.python_path],
        config,
        [_stat(f) for f in files],
    ]
    return cache.sha256(json.dumps(parts).encode())


def _path(project: Project) -> Path:
    return cache.cache_dir(project.state_path, project.config_file is not None) / FILE


def read(project: Project) -> dict[str, Any] | None:
    """The stored index record of ``project``'s cache directory, when intact."""
    path = _path(project)
    blob = cache._read(path)
    key = cache.cache_key(path.parent.parent, create=False) if blob is not None else None
    start = cache.unsealed_at(blob, key) if blob is not None and key is not None else None
    if blob is None or start is None:
        return None
    end = blob.find(b"\0", start)  # JSON never holds a raw NUL
    end = len(blob) if end < 0 else end
    try:
        record = json.loads(memoryview(blob)[start:end].tobytes())
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("engine") != ENGINE:
        return None
    # the vectors stay in the file's bytes (10,000 tools: 7 MiB not copied)
    vectors = memoryview(blob)[end + 1 :]
    record["vectors"] = vectors or None
    return record


def write(project: Project, record: dict[str, Any]) -> None:
    """Store ``record`` (see :func:`to_record`); an OS error leaves the index uncached."""
    path = _path(project)
    key = cache.cache_key(path.parent.parent, create=True)
    if key is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        vectors = record.get("vectors") or b""
        header = {"engine": ENGINE, **record, "vectors": None}
        payload = json.dumps(header, separators=(",", ":")).encode() + b"\0" + vectors
        replace(path, cache._seal(payload, key))
    except (OSError, ValueError, TypeError):
        pass


def to_record(index: SearchIndex, **keys: Any) -> dict[str, Any]:
    """``index`` as JSON values (but its vectors: half floats, written after the JSON), with
    ``keys`` beside it."""
    vectors = None
    if index.vectors is not None:
        vectors = index.vectors.astype("<f2").tobytes()
    postings = {t: p for t, p in index.lexical.packed_postings().items() if " " not in t}
    return {
        **keys,
        "model": index.model,
        "names": index.names,
        "lengths": index.lexical.lengths,
        # two strings, not an object of 20,000 keys: a warm search parses them in a tenth of
        # the time (terms are words: they hold no space; packed postings are base64)
        "terms": " ".join(postings),
        "postings": " ".join(postings.values()),
        "vectors": vectors,
        "keys": index.keys if vectors is not None else None,
    }


def from_record(record: Mapping[str, Any]) -> SearchIndex | None:
    """The index a record holds; None when its shape is off (a hand-made file)."""
    from toolctl.search.index import SearchIndex

    try:
        names, lengths, terms = record["names"], record["lengths"], record["terms"]
        packed = record["postings"]
        # sealed by toolctl: the shape is checked, the numbers are trusted (see lexical.scores)
        if not (
            isinstance(names, list)
            and isinstance(lengths, list)
            and isinstance(terms, str)
            and isinstance(packed, str)
        ):
            return None
        postings = dict(zip(terms.split(" "), packed.split(" "), strict=True)) if terms else {}
        if len(lengths) != len(names) or not all(isinstance(n, str) for n in names):
            return None
        vectors = None
        if record.get("vectors") is not None:
            from toolctl.search.embed import import_numpy

            import_numpy()
            import numpy as np

            # half floats as stored (read-only): toolctl.search.index.cosines widens them
            vectors = np.frombuffer(record["vectors"], dtype="<f2").reshape(len(names), -1)
        model = record.get("model")
        keys = record.get("keys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            keys = []
    except (KeyError, TypeError, ValueError, AttributeError, ImportError):  # wrong vector size too
        return None
    lexical = Lexical({}, lengths, postings)
    return SearchIndex(names, lexical, vectors, model if vectors is not None else None, keys)

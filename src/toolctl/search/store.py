"""The search index kept in the load cache, so that a warm ``toolctl search`` is a lookup.

One file per cache directory, ``search/index``, sealed with the load cache's keyed MAC
(:func:`toolctl.cache.cache_key`; a small JSON header then raw binary sections, never
pickle: see :func:`to_record`), holding the last index built there under two keys:

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
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl import cache
from toolctl.atomicfile import replace
from toolctl.search.lexical import Lexical

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from toolctl.config import Project
    from toolctl.search.index import SearchIndex

ENGINE = 4  # bump when what an index holds, how it is laid out or how it ranks changes
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
    """The stored index record of ``project``'s cache directory, when intact: its JSON header,
    with ``tail`` the bytes of its sections (see :func:`to_record`), left in the file's bytes."""
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
    record["tail"] = memoryview(blob)[end + 1 :]
    return record


def write(project: Project, record: dict[str, Any]) -> None:
    """Store ``record`` (see :func:`to_record`); an OS error leaves the index uncached."""
    path = _path(project)
    key = cache.cache_key(path.parent.parent, create=True)
    if key is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sections: dict[str, bytes] = record.get("sections") or {}
        header = {
            "engine": ENGINE,
            **{k: v for k, v in record.items() if k != "sections"},
            "sections": [[name, len(data)] for name, data in sections.items()],
        }
        payload = json.dumps(header, separators=(",", ":")).encode() + b"\0"
        replace(path, cache._seal(payload + b"".join(sections.values()), key))
    except (OSError, ValueError, TypeError):
        pass


def to_record(index: SearchIndex, **keys: Any) -> dict[str, Any]:
    """``index`` as a small JSON header (the names, ``keys`` beside them) and binary sections
    written after it, so that a warm search parses no large JSON: the vectors (half floats),
    the documents' lengths (float64), the vectors' text keys, the terms (one a line), the byte
    offsets of each term's postings (uint32) and the packed postings (see
    :func:`toolctl.search.lexical.pack`)."""
    vectors = b""
    if index.vectors is not None:
        vectors = index.vectors.astype("<f2").tobytes()
    # terms are words: they hold no newline (the separator)
    postings = {t: p for t, p in index.lexical.packed_postings().items() if t and "\n" not in t}
    offsets = array("I", [0])
    for packed in postings.values():
        offsets.append(offsets[-1] + len(packed))
    return {
        **keys,
        "model": index.model,
        "names": index.names,
        "sections": {
            "vectors": vectors,
            "lengths": array("d", index.lexical.lengths).tobytes(),
            "keys": "\n".join(index.keys if vectors else []).encode(),
            "terms": ("\n" + "\n".join(postings) + "\n").encode(),
            "offsets": offsets.tobytes(),
            "postings": b"".join(postings.values()),
        },
    }


def widen_halves(halves: NDArray[Any], out: NDArray[np.float32]) -> None:
    """``out[...] = halves`` (the kept vectors' little-endian half floats) as float32, exactly.

    numpy's own cast converts one value at a time (10,000 tools: 10 ms a search); these four
    whole-array integer steps take a fifth of that: the half's bits, sign-extended, moved to
    float32's places (its sign stays the top bit, the three bits above its exponent cleared),
    then scaled by 2**112, the difference of the two exponent biases. Exact for every finite
    half, zeros and subnormals too (a kept unit vector holds no infinity or NaN)."""
    import numpy as np

    bits = out.view(np.int32)
    np.copyto(bits, halves.view("<i2"))
    bits <<= 13
    bits &= np.int32(-0x70000001)  # 0x8fffffff: the sign and the half's 15 bits, shifted
    out *= np.float32(2.0**112)


class _Postings(Mapping[str, bytes]):
    """term -> packed postings of a kept index, read from its sections when a query names the
    term: a warm search decodes the postings of its own few terms, not of 20,000."""

    def __init__(self, terms: bytes, offsets: memoryview, postings: memoryview) -> None:
        self._terms, self._offsets, self._postings = terms, offsets, postings
        self._numbers: dict[str, int] | None = None  # made when every term is asked for

    def _number(self, term: str) -> int | None:
        if self._numbers is not None:
            return self._numbers.get(term)
        if not term or "\n" in term:
            return None
        at = self._terms.find(b"\n" + term.encode() + b"\n")
        return None if at < 0 else self._terms.count(b"\n", 0, at)

    def __getitem__(self, term: str) -> bytes:
        number = self._number(term)
        if number is None or number + 1 >= len(self._offsets):
            raise KeyError(term)
        return bytes(self._postings[self._offsets[number] : self._offsets[number + 1]])

    def __iter__(self) -> Iterator[str]:
        if self._numbers is None:  # a rebuild or a rewrite: every term, looked up once each
            terms = self._terms.decode()[1:-1].split("\n") if len(self._terms) > 2 else []
            self._numbers = dict(zip(terms, range(len(terms)), strict=True))
        return iter(self._numbers)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _sections(record: Mapping[str, Any]) -> dict[str, memoryview] | None:
    tail, table = record.get("tail"), record.get("sections")
    if not isinstance(tail, memoryview) or not isinstance(table, list):
        return None
    out: dict[str, memoryview] = {}
    at = 0
    for entry in table:
        name, size = entry  # a wrong shape raises: the caller's miss
        if not isinstance(name, str) or not isinstance(size, int) or size < 0:
            return None
        out[name] = tail[at : at + size]
        at += size
    return out if at == len(tail) else None


def from_record(record: Mapping[str, Any], *, keys: bool = True) -> SearchIndex | None:
    """The index a record holds; None when its shape is off (a hand-made file). Without
    ``keys`` its vectors' text keys are left out (what only a rebuild reads)."""
    from toolctl.search.index import SearchIndex

    try:
        names, parts = record["names"], _sections(record)
        # sealed by toolctl: the shape is checked, the numbers are trusted (see lexical.scores)
        if parts is None or not isinstance(names, list):
            return None
        lengths = array("d")
        lengths.frombytes(parts["lengths"])
        offsets = parts["offsets"].cast("I")
        if len(lengths) != len(names):
            return None
        "".join(names)  # a TypeError unless every name is a string (no loop in Python)
        postings = _Postings(parts["terms"].tobytes(), offsets, parts["postings"])
        vectors, model = None, record.get("model")
        if model is not None:  # built with the model (a registry without tools too)
            from toolctl.search.embed import import_numpy

            import_numpy()
            import numpy as np

            # half floats as stored (read-only): toolctl.search.index.cosines widens them
            halves = np.frombuffer(parts["vectors"], dtype="<f2")
            if names and not len(halves):
                return None
            vectors = halves.reshape(len(names), -1) if names else halves.reshape(0, 0)
        found = parts["keys"].tobytes().decode().split("\n") if keys and vectors is not None else []
    except (KeyError, TypeError, ValueError, AttributeError, ImportError):  # wrong sizes too
        return None
    lexical = Lexical({}, lengths.tolist(), postings)
    return SearchIndex(names, lexical, vectors, model if vectors is not None else None, found)

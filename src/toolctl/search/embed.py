"""The semantic signal: a static word-embedding model that installs with its weights.

The model is WordLlama's ``l2_supercat`` (256 dimensions, MIT), shipped inside the
``wordllama`` wheel (``pip install 'toolctl-registry[search]'``): its token embedding table and
its tokenizer's vocabulary. Nothing is downloaded at run time. A text's vector is the mean of
its tokens' vectors, normalised. Tokens come from a greedy longest match over the vocabulary
per word (words as :func:`~toolctl.search.text.split_words` gives them), which needs neither
the ``tokenizers`` library nor its start-up time, and reads ``get_current_weather`` as the
three words it is made of.

numpy and the model are imported lazily: without the extra, :func:`load` returns None and
search is lexical only.
"""

from __future__ import annotations

import json
import os
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.search.text import STOP_WORDS, split_words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MODEL = "wordllama/l2_supercat_256"
_MARK = "\u2581"  # the tokenizer's word-start mark


class Embedder:
    """Texts to unit vectors with a token table and a vocabulary."""

    def __init__(self, table: NDArray[Any], vocab: dict[str, int]) -> None:
        self.table = table
        self.vocab = vocab
        self._longest = max(len(t) for t in vocab)

    def tokens(self) -> list[str] | None:
        """The vocabulary in id order (None when its ids are not 0..n-1, or a token holds a
        line break: then it is not kept, see :func:`load`)."""
        ordered = sorted(self.vocab, key=self.vocab.__getitem__)
        if [self.vocab[t] for t in ordered] != list(range(len(ordered))):
            return None
        return None if any("\n" in t for t in ordered) else ordered

    def _tokens(self, word: str) -> list[int]:
        ids: list[int] = []
        piece, start = _MARK + word, 0
        while start < len(piece):
            for end in range(min(len(piece), start + self._longest), start, -1):
                found = self.vocab.get(piece[start:end])
                if found is not None:
                    ids.append(found)
                    start = end
                    break
            else:
                start += 1  # a character the vocabulary lacks: skipped
        return ids

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text``'s content words (all words when it has only stop words)."""
        words = split_words(text)
        content = [w for w in words if w not in STOP_WORDS] or words
        return [i for w in content for i in self._tokens(w)]

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """One unit vector per text (a zero vector for a text without a known token)."""
        import numpy as np

        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.ids(text)
            if ids:
                vector = self.table[ids].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(vector))
                if norm:
                    out[row] = vector / norm
        return out


MODEL_ENV = "TOOLCTL_SEARCH_MODEL"  # "off": rank by words only, as without the extra


def available() -> bool:
    """True when the ``search`` extra (numpy and wordllama's model files) is installed and
    not turned off (``TOOLCTL_SEARCH_MODEL=off``)."""
    if os.environ.get(MODEL_ENV) == "off":
        return False
    return util.find_spec("numpy") is not None and _model_dir() is not None


def _model_dir() -> Path | None:
    spec = util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    ok = (root / "weights" / "l2_supercat_256.safetensors").is_file()
    return (
        root
        if ok and (root / "tokenizers" / "l2_supercat_tokenizer_config.json").is_file()
        else None
    )


_loaded: list[Embedder | None] = []  # the model, once per process (it is read-only)


def load(tokens: list[str] | None = None) -> Embedder | None:
    """The model, once per process; None without the ``search`` extra or with broken files.

    ``tokens`` (the vocabulary in id order, as :meth:`Embedder.tokens` gave it and a kept
    index holds) saves parsing the tokenizer's 1.8 MB configuration.
    """
    if os.environ.get(MODEL_ENV) == "off":
        return None
    if not _loaded:
        _loaded.append(_load(tokens))
    return _loaded[0]


def unload() -> None:
    """Forget the loaded model: the next :func:`load` reads it from the installed files."""
    _loaded.clear()


def _load(tokens: list[str] | None) -> Embedder | None:
    if util.find_spec("numpy") is None:
        return None
    root = _model_dir()
    if root is None:
        return None
    try:
        table = read_table(root / "weights" / "l2_supercat_256.safetensors", "embedding.weight")
        if tokens is not None and len(tokens) == table.shape[0]:
            vocab = dict(zip(tokens, range(len(tokens)), strict=True))
        else:
            config = json.loads(
                (root / "tokenizers" / "l2_supercat_tokenizer_config.json").read_bytes()
            )
            vocab = config["model"]["vocab"]
    except Exception:  # a damaged install is no reason to fail a search: lexical only
        return None
    return Embedder(table, vocab)


_DTYPES = {"F16": "<f2", "F32": "<f4"}


def read_table(path: Path, name: str) -> NDArray[Any]:
    """Tensor ``name`` of a safetensors file, mapped rather than read: a query touches a few
    rows of the 16 MB table. (The format: an 8-byte little-endian header length, a JSON header
    of dtype, shape and byte offsets per tensor, then the data.)"""
    import mmap

    import numpy as np

    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    entry = header[name]
    start, end = (int(x) for x in entry["data_offsets"])
    rows, dim = (int(x) for x in entry["shape"])
    dtype = np.dtype(_DTYPES[entry["dtype"]])
    if end - start != rows * dim * dtype.itemsize or 8 + size + end > len(mapped):
        raise ValueError(f"{path}: tensor {name} does not fit its header")
    return np.frombuffer(mapped, dtype=dtype, count=rows * dim, offset=8 + size + start).reshape(
        rows, dim
    )

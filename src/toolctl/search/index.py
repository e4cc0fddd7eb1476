"""The search index: documents of tools, their lexical index and vectors, and the ranking.

Scores fuse the two signals linearly, ``ALPHA * cosine + (1 - ALPHA) * lexical`` (both in
[0, 1]; the cosine of all-MiniLM-L6-v2's vectors, see toolctl.search.embed). A query is scored
lexically without its words of asking ("can you help me...", see
toolctl.search.text.REQUEST_WORDS); the model reads it whole.

Whether any tool fits is decided by toolctl.search.decide: a logistic model over what ranking
the query already gave (the best fused score and its lead over the second and fifth, the best
cosine and lexical score, the query's length, the share of its terms the catalog knows),
fitted on the tune splits of three benchmarks by bench/search_tune.py. It replaced one floor on
the best score: real prompts no tool serves (long requests for advice, writing or facts) score
as high as paraphrased requests a tool does serve, so a floor strict enough for the first
turned many of the second away. Without the model, the best lexical score alone is compared
with ``LEXICAL_FLOOR`` (fitted by the same script: at most 15% of each benchmark's no-answer
queries get a tool).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.search.decide import DEPTH, features, fits
from toolctl.search.lexical import Lexical
from toolctl.search.text import request_words_out, split_words, terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from toolctl.search.embed import Embedder

ALPHA = 0.4
LEXICAL_FLOOR = 0.148


@dataclass(frozen=True)
class Hit:
    """One search result: a tool's name and its score (higher is better, at most 1)."""

    name: str
    score: float


def semantic_text(fields: Mapping[str, str]) -> str:
    """What the model reads of a tool: its name's words, then its description (parameters,
    read too, scored lower on the tuning split: they crowd out what the tool is for)."""
    name = " ".join(split_words(fields.get("name", "")))
    return f"{name}: {fields.get('description', '')}"


def text_key(text: str) -> str:
    """A short digest of what the model read of a tool: a rebuilt index re-embeds only the
    tools whose text changed (see toolctl.search.store)."""
    return hashlib.sha256(text.encode()).hexdigest()[:24]


CHUNK = 256  # kept vectors widened this many at a time: a buffer that stays in cache (cosines)


def cosines(vectors: NDArray[Any], unit: NDArray[np.float32]) -> NDArray[np.float32]:
    """``vectors @ unit`` as float32. A kept index holds half floats: they are widened a chunk
    at a time into one small buffer, not all at once (10,000 tools would be 15 MiB of fresh
    memory per search, more than the products cost)."""
    import numpy as np

    from toolctl.search.store import widen_halves

    if vectors.dtype == np.float32:
        out: NDArray[np.float32] = vectors @ unit
        return out
    out = np.empty(len(vectors), dtype=np.float32)
    buffer = np.empty((min(CHUNK, len(vectors)), vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(vectors), CHUNK):
        rows = vectors[start : start + CHUNK]
        widen_halves(rows, buffer[: len(rows)])
        np.matmul(buffer[: len(rows)], unit, out=out[start : start + len(rows)])
    return out


def cosine_stats(cosine: NDArray[Any]) -> tuple[float, float, float]:
    """The best, mean and standard deviation of a query's cosines (two passes fewer than
    numpy's std: a third of the time on 10,000 tools)."""
    mean = float(cosine.sum()) / max(1, len(cosine))
    square = float(cosine @ cosine) / max(1, len(cosine))
    return float(cosine.max()), mean, max(0.0, square - mean * mean) ** 0.5


class SearchIndex:
    """Ranks a fixed list of tools for queries; build it once, query it many times."""

    def __init__(
        self,
        names: Sequence[str],
        lexical: Lexical,
        vectors: NDArray[np.float32] | None,
        model: str | None,
        keys: Sequence[str] = (),
    ) -> None:
        self.names = list(names)
        self.lexical = lexical
        self.vectors = vectors
        self.model = model  # the model the vectors come from; None: lexical only
        self.keys = list(keys)  # text_key of each tool's vector ([] when unknown)

    @classmethod
    def build(
        cls,
        names: Sequence[str],
        docs: Sequence[Mapping[str, str]],
        embedder: Embedder | None,
        known: Mapping[str, NDArray[np.float32]] | None = None,
    ) -> SearchIndex:
        """Index ``docs`` (field name -> text, one per name); with ``embedder``, vectors too,
        taken from ``known`` (text_key -> vector, from a previous index) where the text is
        the same: the encoder is the costly part of a build."""
        from toolctl.search.embed import MODEL, TOOL_TOKENS

        lexical = Lexical.build(docs)
        if embedder is None:
            return cls(names, lexical, None, None)
        import numpy as np

        texts = [semantic_text(d) for d in docs]
        keys = [text_key(t) for t in texts]
        known = known or {}
        missing = [i for i, k in enumerate(keys) if k not in known]
        vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        if missing:
            vectors[missing] = embedder.embed([texts[i] for i in missing], TOOL_TOKENS)
        for row, key in enumerate(keys):
            if key in known:
                vectors[row] = known[key]
        return cls(names, lexical, vectors, MODEL, keys)

    def known(self) -> dict[str, NDArray[np.float32]]:
        """text_key -> vector of this index's tools (what a rebuild can reuse)."""
        if self.vectors is None or len(self.keys) != len(self.vectors):
            return {}
        return dict(zip(self.keys, self.vectors, strict=True))

    @property
    def semantic(self) -> bool:
        """True when results fuse the embedding model's signal with the lexical one."""
        return self.vectors is not None

    def scores(self, query: str, embedder: Embedder | None) -> dict[int, float]:
        """Document number -> fused score, for documents with any signal."""
        fused, _, _ = self._fused(query, embedder)
        if isinstance(fused, dict):
            return fused
        import numpy as np

        return {int(n): float(fused[n]) for n in np.flatnonzero(fused > 0)}

    def _fused(
        self, query: str, embedder: Embedder | None
    ) -> tuple[dict[int, float] | NDArray[Any], dict[int, float], NDArray[Any] | None]:
        """The fused scores, the lexical ones and the cosines (None: lexical only)."""
        lexical = self.lexical.scores(request_words_out(query))
        if self.vectors is None or embedder is None or not len(self.names):
            return lexical, lexical, None
        import numpy as np

        cosine = cosines(self.vectors, embedder.embed([query])[0])
        fused: NDArray[Any] = ALPHA * np.clip(cosine, 0.0, 1.0)
        for number, score in lexical.items():
            fused[number] += (1.0 - ALPHA) * score
        return fused, lexical, cosine

    def _top(self, fused: dict[int, float] | NDArray[Any], k: int) -> list[tuple[int, float]]:
        if isinstance(fused, dict):
            ranked = sorted(fused.items(), key=lambda item: (-item[1], self.names[item[0]]))
            return ranked[:k]
        import numpy as np

        # the k best without sorting them all; ties broken by name as in the dict case
        count = min(len(fused), k)
        cut = np.argpartition(-fused, count - 1)[:count] if count < len(fused) else np.arange(count)
        edge = fused[cut].min()
        pool = np.flatnonzero(fused >= edge)  # every document tied at the edge too
        ranked = sorted(
            ((int(n), float(fused[n])) for n in pool), key=lambda i: (-i[1], self.names[i[0]])
        )
        return [item for item in ranked if item[1] > 0][:k]

    def ranked(
        self, query: str, k: int, embedder: Embedder | None
    ) -> tuple[list[tuple[int, float]], tuple[float, ...] | None]:
        """The best ``k`` (document number, fused score), best first, and the decision's
        features (see toolctl.search.decide; None when ranking is lexical only)."""
        fused, lexical, cosine = self._fused(query, embedder)
        best = self._top(fused, max(k, DEPTH))
        if cosine is None:
            return best[:k], None
        query_terms = set(terms(request_words_out(query)))
        known = sum(bool(self.lexical.posting(t)) for t in query_terms) / max(1, len(query_terms))
        values = features(
            [s for _, s in best],
            cosine_stats(cosine),
            max(lexical.values(), default=0.0),
            len(query.split()),
            known,
        )
        return best[:k], values

    def query(self, query: str, k: int, embedder: Embedder | None) -> list[Hit]:
        """The best ``k`` tools for ``query``, best first; [] when no tool fits (abstain
        rather than guess: toolctl.search.decide, or lexical only, the best score under
        ``LEXICAL_FLOOR``)."""
        best, values = self.ranked(query, k, embedder)
        answer = (
            fits(values) if values is not None else confident([s for _, s in best], LEXICAL_FLOOR)
        )
        return [Hit(self.names[n], round(s, 4)) for n, s in best] if answer else []


def confident(scores: Sequence[float], floor: float) -> bool:
    """True when the best of ``scores`` (best first) reaches ``floor``: the abstention rule of
    lexical-only ranking."""
    return bool(scores) and scores[0] >= floor

"""The search index: documents of tools, their lexical index and vectors, and the ranking.

Scores fuse the two signals linearly, ``ALPHA * cosine + (1 - ALPHA) * lexical`` (both in
[0, 1]), and a result is returned only at or above ``FLOOR``. Both were fitted on the tuning
half of the benchmark in bench/bench_search.py (see docs/large-catalogs.md, "Search quality"),
never on its held-out half. Without the model, the lexical score alone is compared with
``LEXICAL_FLOOR``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.search.lexical import Lexical

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from toolctl.search.embed import Embedder

ALPHA = 0.4
FLOOR = 0.195
LEXICAL_FLOOR = 0.143


@dataclass(frozen=True)
class Hit:
    """One search result: a tool's name and its score (higher is better, at most 1)."""

    name: str
    score: float


def semantic_text(fields: Mapping[str, str]) -> str:
    """What the model reads of a tool: its name's words and description (parameters, read
    too, scored lower on the tuning split: a mean of many words blurs)."""
    return f"{fields.get('name', '')} {fields.get('description', '')}"


class SearchIndex:
    """Ranks a fixed list of tools for queries; build it once, query it many times."""

    def __init__(
        self,
        names: Sequence[str],
        lexical: Lexical,
        vectors: NDArray[np.float32] | None,
        model: str | None,
    ) -> None:
        self.names = list(names)
        self.lexical = lexical
        self.vectors = vectors
        self.model = model  # the model the vectors come from; None: lexical only

    @classmethod
    def build(
        cls, names: Sequence[str], docs: Sequence[Mapping[str, str]], embedder: Embedder | None
    ) -> SearchIndex:
        """Index ``docs`` (field name -> text, one per name); with ``embedder``, vectors too."""
        from toolctl.search.embed import MODEL

        vectors = embedder.embed([semantic_text(d) for d in docs]) if embedder else None
        return cls(names, Lexical.build(docs), vectors, MODEL if embedder else None)

    @property
    def semantic(self) -> bool:
        """True when results fuse the embedding model's signal with the lexical one."""
        return self.vectors is not None

    def scores(self, query: str, embedder: Embedder | None) -> dict[int, float]:
        """Document number -> fused score, for documents with any signal."""
        fused = self._fused(query, embedder)
        if isinstance(fused, dict):
            return fused
        import numpy as np

        return {int(n): float(fused[n]) for n in np.flatnonzero(fused > 0)}

    def _fused(self, query: str, embedder: Embedder | None) -> dict[int, float] | NDArray[Any]:
        lexical = self.lexical.scores(query)
        if self.vectors is None or embedder is None or not len(self.names):
            return lexical
        import numpy as np

        cosine = self.vectors @ embedder.embed([query])[0]
        fused: NDArray[Any] = ALPHA * np.clip(cosine, 0.0, 1.0)
        for number, score in lexical.items():
            fused[number] += (1.0 - ALPHA) * score
        return fused

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

    def query(self, query: str, k: int, embedder: Embedder | None) -> list[Hit]:
        """The best ``k`` tools for ``query``, best first; [] when the best is under the floor
        (abstain rather than guess)."""
        floor = FLOOR if self.vectors is not None and embedder is not None else LEXICAL_FLOOR
        best = self._top(self._fused(query, embedder), k)
        if not best or best[0][1] < floor:
            return []
        return [Hit(self.names[n], round(s, 4)) for n, s in best]

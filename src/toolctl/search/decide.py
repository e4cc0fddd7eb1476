"""Whether any tool fits a query: a small logistic model over what the ranking already has.

One floor on the fused score cannot tell real prompts that no tool serves (long requests for
writing, advice or facts, which share words and topics with many tools) from paraphrased
requests that a tool does serve: their best scores overlap. The decision weighs more of what
ranking a query yields anyway (:data:`FEATURES`: the best fused score and its lead over the
second and the fifth, the best cosine and how far it stands above the catalog's cosines, the
best lexical score, the query's length, the share of its terms the catalog knows) and answers
only when ``WEIGHTS . features + BIAS >= 0``. Weights and bias were fitted by
``bench/search_tune.py`` on the tune splits of three benchmarks together (each weighted alike),
with the bias set so that at most 15% of each one's no-answer queries get a tool; no held-out
split was read (docs/large-catalogs.md, "Search quality"). Costs a few microseconds a query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FEATURES = (
    "best",  # the best fused score
    "lead2",  # its lead over the second
    "lead5",  # and over the fifth: a tool standing out from many alike
    "cosine",  # the best cosine, whichever tool has it
    "cosine_z",  # how many standard deviations it sits above the catalog's mean cosine
    "lexical",  # the best lexical score, whichever tool has it
    "words",  # log(1 + the query's words)
    "known",  # the share of the query's terms found in the catalog's vocabulary
)
DEPTH = 5  # ranked scores the features read (lead5)

# fitted by bench/search_tune.py (its last lines print these)
WEIGHTS = (7.6631, 4.1385, 8.7738, 10.3538, -0.5523, 4.4843, 0.73, -0.0667)
BIAS = -6.9473


def features(
    ranked: Sequence[float],
    cosine: tuple[float, float, float],
    lexical: float,
    words: int,
    known: float,
) -> tuple[float, ...]:
    """The decision's inputs, in :data:`FEATURES` order. ``ranked``: the best fused scores,
    best first (missing ranks count as 0); ``cosine``: the best, mean and standard deviation
    of the query's cosines over the catalog; ``lexical``: the best lexical score; ``words``:
    the query's word count; ``known``: the share of its terms the catalog has."""
    top = [*ranked[:DEPTH], *[0.0] * max(0, DEPTH - len(ranked))]
    best_cosine, mean, spread = cosine
    return (
        top[0],
        top[0] - top[1],
        top[0] - top[DEPTH - 1],
        best_cosine,
        (best_cosine - mean) / spread if spread > 1e-6 else 0.0,
        lexical,
        math.log1p(words),
        known,
    )


def margin(values: Sequence[float]) -> float:
    """How far ``values`` (see :func:`features`) are past the decision's boundary: answer at 0
    or above."""
    return sum(w * x for w, x in zip(WEIGHTS, values, strict=True)) + BIAS


def fits(values: Sequence[float]) -> bool:
    """True when some tool fits the query whose :func:`features` are ``values``."""
    return margin(values) >= 0.0

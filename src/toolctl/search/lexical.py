"""BM25F over a tool's fields: its name's words count most, then description, parameters.

Each field's term counts are weighted and summed into one pseudo-document (BM25F, simplified),
then scored by BM25. Scores are normalised by the query's own best possible score, so they
lie in [0, 1] and mean the same across catalogs: what the abstention
(toolctl.search.decide; lexical only, a floor) reads.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolctl.search.text import terms

K1 = 1.2
MIN_TERMS = 5
B = 0.75
# field weights: a word of the name says more about the tool than a word of a parameter
WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "description": 1.0,
    "parameters": 0.7,
    "toolset": 0.5,
}


def weighted_terms(fields: Mapping[str, str]) -> dict[str, float]:
    """One document's weighted term frequencies over its fields."""
    tf: dict[str, float] = {}
    for name, text in fields.items():
        weight = WEIGHTS.get(name, 1.0)
        for term, count in Counter(terms(text)).items():
            tf[term] = tf.get(term, 0.0) + weight * count
    return tf


@dataclass
class Lexical:
    """An inverted index: term -> [document number, weighted frequency, number, ...] (flat:
    a kept index loads without building a tuple per posting)."""

    postings: dict[str, list[float]] = field(default_factory=dict)
    lengths: list[float] = field(default_factory=list)
    # a kept index: term -> packed postings (see pack), unpacked when a query names the term
    # (toolctl.search.store reads only those terms' bytes)
    packed: Mapping[str, bytes] = field(default_factory=dict)

    def posting(self, term: str) -> list[float]:
        """The flat postings of ``term`` ([] when no document has it)."""
        found = self.postings.get(term)
        if found is None:
            raw = self.packed.get(term)
            found = self.postings[term] = unpack(raw) if isinstance(raw, bytes) else []
        return found

    def packed_postings(self) -> dict[str, bytes]:
        """Every term's postings packed (what toolctl.search.store keeps)."""
        return {**self.packed, **{t: pack(p) for t, p in self.postings.items() if p}}

    @classmethod
    def build(cls, docs: Sequence[Mapping[str, str]]) -> Lexical:
        """Index ``docs`` (each a mapping of field name to text)."""
        index = cls()
        for number, fields in enumerate(docs):
            tf = weighted_terms(fields)
            index.lengths.append(sum(tf.values()))
            for term, freq in tf.items():
                index.postings.setdefault(term, []).extend((number, freq))
        return index

    def idf(self, term: str) -> float:
        n = len(self.posting(term)) // 2
        return math.log(1.0 + (len(self.lengths) - n + 0.5) / (n + 0.5))

    def scores(self, query: str) -> dict[int, float]:
        """Document number -> normalised BM25 score in [0, 1] (documents scoring 0 left out)."""
        if not self.lengths:
            return {}
        avg = sum(self.lengths) / len(self.lengths) or 1.0
        query_terms = set(terms(query))
        # the best a document can score: every query term, at saturation. Unknown terms count
        # too (as rare ones), so a query mostly about something else scores low everywhere
        rare = math.log(1.0 + (len(self.lengths) + 0.5) / 0.5)
        idfs = [self.idf(t) if self.posting(t) else rare for t in query_terms]
        # and a query of one or two words is held to a longer one's standard: "how was your
        # day" shares one word with a calendar tool, which says little
        idfs += [rare] * max(0, MIN_TERMS - len(idfs))
        best = sum(idfs) * (K1 + 1)
        out: dict[int, float] = {}
        count = len(self.lengths)
        for term in query_terms:
            idf = self.idf(term)
            flat = self.posting(term)
            for number, freq in zip(map(int, flat[::2]), flat[1::2], strict=False):
                if not 0 <= number < count:
                    continue  # never written so; a damaged index ranks what it can
                norm = K1 * (1.0 - B + B * self.lengths[number] / avg)
                out[number] = out.get(number, 0.0) + idf * freq * (K1 + 1) / (freq + norm)
        return {n: min(1.0, s / best) for n, s in out.items()} if best else {}


def pack(flat: list[float]) -> bytes:
    """Flat postings as bytes: the document numbers (uint32) then the weights (float32)."""
    numbers = array("I", (int(n) for n in flat[::2]))
    weights = array("f", flat[1::2])
    return numbers.tobytes() + weights.tobytes()


def unpack(raw: bytes) -> list[float]:
    """The flat postings :func:`pack` wrote; [] for bytes it did not write."""
    half = len(raw) // 2
    if len(raw) % 8:
        return []
    numbers, weights = array("I"), array("f")
    numbers.frombytes(raw[:half])
    weights.frombytes(raw[half:])
    return [x for pair in zip(numbers, weights, strict=False) for x in pair]

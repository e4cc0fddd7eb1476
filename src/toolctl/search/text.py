"""Text to index terms: identifiers split into words, lower-cased, stop words out, stemmed.

``get_currentWeather``, ``get-current-weather`` and "get the current weather" all give
``get current weather``: tool names are read as the words they are made of, so a query in
plain words matches them.
"""

from __future__ import annotations

import re

# a run of letters (an upper-case run stays whole: "HTTPServer" -> "HTTP", "Server"), or digits
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_]+")

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "given",
        "using",
        "use",
        "used",
        "specific",
        "certain",
        "based",
        "provide",
        "provided",
    ]
)

# words of asking rather than of what is asked for ("can you help me find...", "I need a...",
# "tell me..."): left out of a query's lexical terms (not a tool's), where they matched tools
# named for them ("show", "help") and weighed on the query's best possible score
REQUEST_WORDS = frozenset(
    [
        "help",
        "need",
        "want",
        "like",
        "looking",
        "look",
        "suggest",
        "tell",
        "know",
        "give",
        "show",
        "able",
        "wondering",
        "interested",
        "let",
    ]
)

# longest first: the first suffix that leaves a stem of 3+ letters is stripped
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


def split_words(text: str) -> list[str]:
    """The words of ``text``, identifiers split (snake, camel, kebab, dotted), lower-cased."""
    return [w.lower() for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """A light suffix-stripping stem: enough to match "calculates" with "calculated"."""
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    # "calculate", "calculates" and "calculated" meet at "calculat"
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def terms(text: str) -> list[str]:
    """Index terms of ``text``: its words without stop words, stemmed."""
    return [stem(w) for w in split_words(text) if w not in STOP_WORDS]


def request_words_out(query: str) -> str:
    """``query``'s words without :data:`REQUEST_WORDS` (what a query is scored lexically by)."""
    return " ".join(w for w in split_words(query) if w not in REQUEST_WORDS)

"""BERT's uncased WordPiece tokenizer: what all-MiniLM-L6-v2 was trained with.

Text is cleaned (control characters out), lower-cased with accents stripped, split at white
space and around every punctuation mark and CJK character, then each word is cut into the
longest pieces of the vocabulary from the left, later pieces marked ``##``; a word that cannot
be cut, or is longer than 100 characters, is ``[UNK]``. This matches the ``tokenizers``
library's BertNormalizer + BertPreTokenizer + WordPiece on the model's ``tokenizer.json``
(tests/search/test_wordpiece.py), without importing it.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

VOCAB = Path(__file__).parent / "data" / "vocab.txt"
MAX_WORD = 100


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _normalise(text: str) -> str:
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD:
            continue
        category = unicodedata.category(char)
        if char in "\t\n\r" or category == "Zs":
            out.append(" ")
        elif category in ("Cc", "Cf"):
            continue
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    lowered = "".join(out).lower()
    decomposed = unicodedata.normalize("NFD", lowered)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")  # accents off


def words(text: str) -> list[str]:
    """``text`` normalised and split into words and single punctuation marks."""
    out: list[str] = []
    for chunk in _normalise(text).split():
        start = 0
        for at, char in enumerate(chunk):
            if _is_punctuation(char):
                if at > start:
                    out.append(chunk[start:at])
                out.append(char)
                start = at + 1
        if start < len(chunk):
            out.append(chunk[start:])
    return out


class WordPiece:
    """Text to token ids with a WordPiece vocabulary (one token a line, ids in line order)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.unknown = vocab["[UNK]"]
        self.first = vocab["[CLS]"]
        self.last = vocab["[SEP]"]
        self.pad = vocab["[PAD]"]

    @classmethod
    def read(cls, path: Path = VOCAB) -> WordPiece:
        """The tokenizer of the vocabulary file at ``path``."""
        tokens = path.read_text(encoding="utf-8").split("\n")
        if tokens and not tokens[-1]:
            tokens.pop()
        return cls(dict(zip(tokens, range(len(tokens)), strict=True)))

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD:
            return [self.unknown]
        ids: list[int] = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    start = end
                    break
            else:
                return [self.unknown]
        return ids

    def ids(self, text: str, limit: int) -> list[int]:
        """``[CLS]``, the ids of ``text``'s pieces, ``[SEP]``: at most ``limit`` ids in all."""
        body: list[int] = []
        for word in words(text):
            body.extend(self._pieces(word))
            if len(body) >= limit - 2:
                break
        return [self.first, *body[: limit - 2], self.last]

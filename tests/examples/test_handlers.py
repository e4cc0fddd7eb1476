"""The example handlers, called directly with a fake context (no toolctl runtime, no network)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from toolctl_examples import (
    calculator,
    customers,
    files,
    hooks,
    indexing,
    meetings,
    reverse,
    slugify,
    transforms,
    weather,
    word_count,
)

from toolctl.runtime.context import SuspendRequested, ToolContext

from .fakes import Aborted, FakeContext, Suspended

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample"


# --- text -------------------------------------------------------------------------------------


def test_reverse_matches_the_seed_example() -> None:
    assert reverse.reverse({"input": "hello"}) == {"output": "olleh"}


def test_reverse_keeps_combining_marks_on_their_letter() -> None:
    assert reverse.reverse({"input": "cafe\u0301!"}) == {"output": "!e\u0301fac"}


def test_word_count_counts_like_wc() -> None:
    assert word_count.word_count({"text": "It's a test.\nSecond line"}) == {
        "words": 5,
        "lines": 2,
        "characters": 24,
    }


def test_slugify_makes_ascii_slugs() -> None:
    assert slugify.slugify({"text": "Hello, Wörld!"}) == {"slug": "hello-world"}
    assert slugify.slugify({"text": "  A  B ", "separator": "_"}) == {"slug": "a_b"}


# --- calculator -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("2 + 3 * 4 ** 2", 50),
        ("(2 + 3) * 4", 20),
        ("7 // 2 + 7 % 2", 4),
        ("-2 ** 2", -4),
        ("2 ** 100", 2**100),
        ("max(1, 5, 3) - abs(-2)", 3),
        ("10 / 4", 2.5),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, result: float) -> None:
    assert calculator.calculate({"expression": expression}) == {
        "expression": expression,
        "result": result,
    }


def test_calculator_rounds_to_the_requested_precision() -> None:
    out = calculator.calculate({"expression": "sqrt(2) / 2 + cos(pi)", "precision": 4})
    assert out["result"] == -0.2929


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9 ** 99999999", "exponent 99999999 is too large"),
        ("99999 ** 999", "would exceed 4096 bits"),
        ("(9 ** 999) * (9 ** 999) * (9 ** 999)", "would exceed 4096 bits"),
        ("1 / (2 - 2)", "division by zero"),
        ("__import__('os').system('id')", "is not allowed"),
        ("open('x')", "unknown function 'open'"),
        ("x + 1", "the name 'x' is not allowed"),
        ("True + 1", "the constant True is not allowed"),
        ("'a' * 3", "the constant 'a' is not allowed"),
        ("(1).__class__", "Attribute expression is not allowed"),
        ("[1, 2]", "List expression is not allowed"),
        ("(-8) ** 0.5", "complex number"),
        ("1e308 * 10", "not a finite number"),
        ("sqrt(-1)", "sqrt(): math domain error"),
        ("2 +", "not an arithmetic expression"),
        ("1" + "+1" * 300, "longer than 500 characters"),
        ("-" * 60 + "1", "nested deeper than"),
        ("-" * 499 + "1", "nested deeper than"),
        ("(" * 240 + "1" + ")" * 240, "not an arithmetic expression"),
    ],
)
def test_calculator_refuses_with_a_clear_reason(expression: str, message: str) -> None:
    with pytest.raises(calculator.CalculationError, match=re.escape(message)):
        calculator.calculate({"expression": expression})


# --- customer_lookup --------------------------------------------------------------------------


def test_customer_lookup_returns_the_raw_record_with_its_secret() -> None:
    assert customers.lookup_customer({"customerId": "C1001"}) == {
        "id": "C1001",
        "name": "Acme Corporation",
        "email": "ops@acme.example",
        "plan": "enterprise",
        "country": "US",
        "since": "2019-03-14",
        "apiKey": "sk_live_acme_4f9a2c7e1b",
    }


def test_customer_lookup_reports_an_unknown_id() -> None:
    with pytest.raises(customers.CustomerNotFound, match="no customer with id 'C9999'"):
        customers.lookup_customer({"customerId": "C9999"})


def test_customer_database_is_built_once_in_the_state_dir(tmp_path: Path) -> None:
    path = customers.database_path()
    assert path.parent == tmp_path / "state"
    stamp = path.stat().st_mtime_ns
    assert customers.database_path() == path
    assert path.stat().st_mtime_ns == stamp
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind


def test_customer_queries_cannot_write() -> None:
    uri = f"{customers.database_path().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("UPDATE customers SET plan = 'free'")
    finally:
        conn.close()


def test_customer_card_shows_only_a_hint_of_the_key() -> None:
    record = customers.lookup_customer({"customerId": "C1005"})
    event = {
        "phase": "output",
        "target": "display",
        "toolName": "customer_lookup",
        "runId": "r1",
        "output": record,
    }
    assert transforms.customer_card(event) == {
        "customer": "Stark Industries (C1005)",
        "plan": "team",
        "contact": "tony@stark.example",
        "keyHint": "…8f3c",
    }
    assert transforms.customer_card({"output": {**record, "apiKey": "short"}})["keyHint"] == "…"


# --- write_file -------------------------------------------------------------------------------


def test_write_file_writes_inside_the_sandbox_from_context(tmp_path: Path) -> None:
    sandbox = tmp_path / "box"
    ctx = FakeContext(request_context={"sandbox": str(sandbox)})
    out = files.write_file({"path": "notes/a.txt", "content": "héllo\n", "mode": "create"}, ctx)
    assert (sandbox / "notes" / "a.txt").read_text("utf-8") == "héllo\n"
    assert out["path"] == "notes/a.txt"
    assert out["bytes"] == 7
    assert out["created"] is True
    assert len(out["sha256"]) == 64


def test_write_file_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCTL_SANDBOX", str(tmp_path))
    args = {"path": "log.txt", "content": "one\n", "mode": "create"}
    files.write_file(args)
    with pytest.raises(FileExistsError, match="use mode 'overwrite' or 'append'"):
        files.write_file(args)
    out = files.write_file({**args, "content": "two\n", "mode": "append"}, FakeContext())
    assert out["created"] is False
    assert (tmp_path / "log.txt").read_text() == "one\ntwo\n"
    files.write_file({**args, "content": "three\n", "mode": "overwrite"})
    assert (tmp_path / "log.txt").read_text() == "three\n"


def test_write_file_needs_a_sandbox() -> None:
    with pytest.raises(files.SandboxError, match="TOOLCTL_SANDBOX"):
        files.write_file({"path": "a", "content": "", "mode": "create"}, FakeContext())


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside.txt", "points outside the sandbox"),
        ("a/../../outside.txt", "points outside the sandbox"),
        (".", "points outside the sandbox"),
        ("/etc/passwd", "is absolute"),
    ],
)
def test_write_file_refuses_escapes(tmp_path: Path, path: str, message: str) -> None:
    ctx = FakeContext(request_context={"sandbox": str(tmp_path / "box")})
    with pytest.raises(files.SandboxError, match=message):
        files.write_file({"path": path, "content": "x", "mode": "create"}, ctx)
    assert not (tmp_path / "outside.txt").exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_write_file_refuses_a_symlink_out_of_the_sandbox(tmp_path: Path) -> None:
    box, outside = tmp_path / "box", tmp_path / "outside"
    box.mkdir()
    outside.mkdir()
    (box / "link").symlink_to(outside, target_is_directory=True)
    ctx = FakeContext(request_context={"sandbox": str(box)})
    with pytest.raises(files.SandboxError, match="points outside the sandbox"):
        files.write_file({"path": "link/x.txt", "content": "x", "mode": "create"}, ctx)
    assert list(outside.iterdir()) == []


# --- book_meeting -----------------------------------------------------------------------------

MEETING = {
    "title": "Design review",
    "attendees": ["ana@example.com"],
    "date": "2026-12-05",
    "durationMinutes": 60,
    "preferredTime": "10:00",  # the schema default, filled in by the pipeline before the handler
}


def test_book_meeting_suspends_with_the_proposed_slot() -> None:
    ctx = FakeContext(request_context={"timezone": "Europe/Berlin"})
    with pytest.raises(Suspended) as suspended:
        meetings.book_meeting(MEETING, ctx)
    assert suspended.value.payload == {
        "title": "Design review",
        "slot": {
            "start": "2026-12-07T10:00",
            "end": "2026-12-07T11:00",
            "timezone": "Europe/Berlin",
        },
        "attendees": ["ana@example.com"],
        "question": "Book 'Design review' on 2026-12-07T10:00–11:00 (Europe/Berlin)?",
    }


def test_book_meeting_books_after_confirmation() -> None:
    ctx = FakeContext(
        request_context={"organizer": "lead@example.com"}, resume_data={"confirm": True}
    )
    out = meetings.book_meeting({**MEETING, "title": "Sync; Q4, plan"}, ctx)
    assert out["status"] == "booked"
    assert out["slot"] == {
        "start": "2026-12-07T10:00",
        "end": "2026-12-07T11:00",
        "timezone": "UTC",
    }
    ics = out["ics"]
    assert ics.startswith("BEGIN:VCALENDAR\r\n") and ics.endswith("END:VCALENDAR\r\n")
    assert "DTSTART:20261207T100000Z\r\n" in ics
    assert "SUMMARY:Sync\\; Q4\\, plan\r\n" in ics
    assert "ORGANIZER:mailto:lead@example.com\r\n" in ics
    assert "ATTENDEE:mailto:ana@example.com\r\n" in ics


def test_book_meeting_cancels_when_refused() -> None:
    ctx = FakeContext(resume_data={"confirm": False})
    out = meetings.book_meeting(MEETING, ctx)
    assert out == {
        "status": "cancelled",
        "title": "Design review",
        "note": "declined by the user",
        "slot": {"start": "2026-12-07T10:00", "end": "2026-12-07T11:00", "timezone": "UTC"},
    }


@pytest.mark.parametrize(
    ("day", "time", "minutes", "start", "end"),
    [
        ("2026-12-07", "16:30", 60, "2026-12-08T09:00", "2026-12-08T10:00"),  # too late: next day
        ("2026-12-04", "16:30", 60, "2026-12-07T09:00", "2026-12-07T10:00"),  # Friday → Monday
        ("2026-12-07", "07:00", 30, "2026-12-07T09:00", "2026-12-07T09:30"),  # before opening
        ("2026-12-07", "16:00", 60, "2026-12-07T16:00", "2026-12-07T17:00"),  # fits exactly
    ],
)
def test_proposed_slots_stay_in_working_hours(
    day: str, time: str, minutes: int, start: str, end: str
) -> None:
    begin, finish = meetings.propose_slot(
        dt.date.fromisoformat(day), dt.time.fromisoformat(time), minutes
    )
    assert (begin.isoformat(timespec="minutes"), finish.isoformat(timespec="minutes")) == (
        start,
        end,
    )


# --- index_files ------------------------------------------------------------------------------


def test_index_files_counts_and_reports_progress() -> None:
    ctx = FakeContext()
    out = indexing.index_files({"path": str(SAMPLE)}, ctx)
    assert {k: out[k] for k in ("files", "lines", "words", "bytes", "skipped", "truncated")} == {
        "files": 3,
        "lines": 20,
        "words": 55,
        "bytes": 386,
        "skipped": 1,
        "truncated": False,
    }
    assert out["byExtension"] == {".md": {"files": 1, "lines": 4}, ".py": {"files": 2, "lines": 16}}
    assert out["largest"][0] == {"path": "src/app.py", "lines": 11}
    assert ctx.observe.spans == ["list_files"]
    assert ctx.observe.logs == [
        (
            "indexed",
            {"root": str(SAMPLE), "files": 3, "lines": 20, "words": 55, "bytes": 386, "skipped": 1},
        ),
    ]
    assert ctx.progress_calls == [
        (1, 4, "README.md"),
        (2, 4, "assets/pixel.png"),
        (3, 4, "src/app.py"),
        (4, 4, "src/util.py"),
    ]


def test_index_files_stops_when_aborted() -> None:
    ctx = FakeContext(abort_after=2)
    with pytest.raises(Aborted):
        indexing.index_files({"path": str(SAMPLE)}, ctx)
    assert len(ctx.progress_calls) == 2


def test_index_files_skips_hidden_and_cache_dirs(tmp_path: Path) -> None:
    for rel in (".git/config", "__pycache__/x.pyc", "node_modules/a.js", "keep.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("one two\n")
    out = indexing.index_files({"path": str(tmp_path)}, FakeContext())
    assert (out["files"], out["words"]) == (1, 2)


def test_index_files_filters_and_truncates() -> None:
    out = indexing.index_files(
        {"path": str(SAMPLE), "include": ["*.py"], "maxFiles": 1}, FakeContext()
    )
    assert (out["files"], out["truncated"]) == (1, True)
    assert indexing.summary({**out, "root": "sample"}) == {
        "type": "text",
        "value": "1 file, 11 lines, 20 words, 153 bytes under sample; stopped at maxFiles. "
        "Largest: src/app.py (11).",
    }


def test_index_files_wants_a_directory() -> None:
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        indexing.index_files({"path": str(SAMPLE / "README.md")}, FakeContext())


# --- weather ----------------------------------------------------------------------------------


def test_weather_reads_the_current_conditions(fake_weather: Any) -> None:
    out = weather.current_weather({"city": "Berlin"})
    assert out == {
        "city": "Berlin",
        "country": "Germany",
        "latitude": 52.52437,
        "longitude": 13.41053,
        "observedAt": "2026-11-30T03:00",
        "timezone": "Europe/Berlin",
        "temperature": 2.4,
        "apparentTemperature": -1.3,
        "humidity": 88,
        "windSpeed": 11.2,
        "weatherCode": 3,
        "condition": "overcast",
        "units": {"temperature": "°C", "windSpeed": "km/h"},
        "mapUrl": "https://tile.openstreetmap.org/10/550/335.png",
    }
    geocode, forecast = fake_weather.requests
    assert geocode == (
        "/v1/search",
        {"name": "Berlin", "count": "1", "language": "en", "format": "json"},
    )
    assert forecast[0] == "/v1/forecast"
    assert forecast[1]["latitude"] == "52.52437"
    assert forecast[1]["temperature_unit"] == "celsius"


def test_weather_asks_for_imperial_units_and_a_country(fake_weather: Any) -> None:
    out = weather.current_weather({"city": "Berlin", "countryCode": "DE", "units": "imperial"})
    # Open-Meteo's own label is "mp/h"; the tool reports the unit as people write it
    assert out["units"] == {"temperature": "°F", "windSpeed": "mph"}
    assert out["temperature"] == 36.3
    (_, geocode), (_, forecast) = fake_weather.requests
    assert geocode["countryCode"] == "DE"
    assert (forecast["temperature_unit"], forecast["wind_speed_unit"]) == ("fahrenheit", "mph")


def test_weather_reports_an_unknown_place(fake_weather: Any) -> None:
    with pytest.raises(weather.WeatherError, match="no place named 'Atlantis'"):
        weather.current_weather({"city": "Atlantis"})


def test_weather_passes_on_the_api_reason(
    fake_weather: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        weather, "_geocode", lambda city, cc: {"name": city, "latitude": 91.0, "longitude": 0.0}
    )
    with pytest.raises(weather.WeatherError, match="HTTP 400: Latitude must be in range"):
        weather.current_weather({"city": "Nowhere"})


def test_weather_rejects_an_answer_that_is_not_json(
    fake_weather: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCTL_GEOCODING_API_URL", f"{fake_weather.url}/broken/v1/search")
    with pytest.raises(weather.WeatherError, match="did not answer with JSON"):
        weather.current_weather({"city": "Berlin"})


def test_weather_says_clearly_when_the_service_is_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("TOOLCTL_GEOCODING_API_URL", f"http://127.0.0.1:{port}/v1/search")
    with pytest.raises(weather.WeatherError) as err:
        weather.current_weather({"city": "Berlin"})
    message = str(err.value)
    assert message.startswith(f"cannot reach 127.0.0.1:{port} (")
    assert "TOOLCTL_WEATHER_API_URL" in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_map_tile_covers_the_point() -> None:
    assert weather.map_tile_url(0.0, 0.0, zoom=1) == "https://tile.openstreetmap.org/1/1/1.png"
    assert weather.map_tile_url(-90.0, 179.99, zoom=2) == "https://tile.openstreetmap.org/2/3/3.png"


# --- hooks ------------------------------------------------------------------------------------


def test_hooks_log_each_phase(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolctl_examples.hooks")
    event = {"toolName": "weather", "toolCallId": "r1", "abortSignal": None}
    hooks.on_input_start(event)
    hooks.on_input_delta({**event, "inputTextDelta": '{"city": "Ber'})
    hooks.on_input_available({**event, "input": {"city": "Berlin"}})
    hooks.on_output({**event, "output": {"city": "Berlin"}})
    assert [r.getMessage() for r in caplog.records] == [
        "input started: weather#r1",
        "input delta: weather#r1 +13 chars",
        "input available: weather#r1 {'city': 'Berlin'}",
        "output: weather#r1 {'city': 'Berlin'}",
    ]


def test_hooks_shorten_big_payloads(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolctl_examples.hooks")
    hooks.on_output({"toolName": "weather", "output": "x" * 10_000})
    (record,) = caplog.records
    assert len(record.getMessage()) < 300
    assert record.getMessage().endswith("…")


def test_weather_disambiguates_with_the_country_code(fake_weather: Any) -> None:
    assert weather.current_weather({"city": "Paris"})["country"] == "France"
    texas = weather.current_weather({"city": "Paris", "countryCode": "US", "units": "imperial"})
    assert (texas["country"], texas["latitude"]) == ("United States", 33.66094)
    with pytest.raises(weather.WeatherError, match="no place named 'Berlin' in US"):
        weather.current_weather({"city": "Berlin", "countryCode": "US"})


# --- the real context -------------------------------------------------------------------------


def test_handlers_work_with_toolctls_own_context(tmp_path: Path) -> None:
    """The fake context mirrors ``toolctl.runtime.ToolContext``: check against the real one."""
    progress: list[tuple[float, float | None, str | None]] = []
    ctx = ToolContext(
        run_id="r1", tool_name="index_files", on_progress=lambda *args: progress.append(args)
    )
    assert indexing.index_files({"path": str(SAMPLE)}, ctx)["files"] == 3
    assert progress[-1] == (4, 4, "src/util.py")

    ctx = ToolContext(run_id="r2", tool_name="book_meeting", request_context={})
    with pytest.raises(SuspendRequested):
        meetings.book_meeting(MEETING, ctx)
    ctx = ToolContext(run_id="r2", tool_name="book_meeting", resume_data={"confirm": True})
    assert meetings.book_meeting(MEETING, ctx)["status"] == "booked"

    ctx = ToolContext(
        run_id="r3", tool_name="write_file", request_context={"sandbox": str(tmp_path)}
    )
    files.write_file({"path": "a.txt", "content": "x", "mode": "create"}, ctx)
    assert (tmp_path / "a.txt").read_text() == "x"

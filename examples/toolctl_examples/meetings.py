"""``book_meeting``: propose a slot, suspend for the user's confirmation, then book it.

First call: the handler picks the first working-hours slot on or after the requested date and
suspends with it (``ctx.suspend``). The run is resumed with ``{"confirm": true|false}``; the
handler is then called again with the same input, recomputes the same slot and either returns
the booking (with an iCalendar event to import) or reports it cancelled.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from toolctl_examples._context import Context, context_value

DAY_START = dt.time(9, 0)
DAY_END = dt.time(17, 0)


def book_meeting(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Suspend with a proposed slot; after resume, book or cancel it."""
    start, end = propose_slot(
        dt.date.fromisoformat(data["date"]),
        dt.time.fromisoformat(data["preferredTime"]),  # its schema default is filled in
        int(data["durationMinutes"]),
    )
    timezone = context_value(ctx, "timezone") or "UTC"
    slot = {
        "start": start.isoformat(timespec="minutes"),
        "end": end.isoformat(timespec="minutes"),
        "timezone": timezone,
    }
    decision = ctx.resume_data
    if decision is None:
        ctx.suspend(
            {
                "title": data["title"],
                "slot": slot,
                "attendees": list(data["attendees"]),
                "question": f"Book {data['title']!r} on {slot['start']}–{end:%H:%M} ({timezone})?",
            }
        )
    if not decision.get("confirm"):
        return {
            "status": "cancelled",
            "title": data["title"],
            "slot": slot,
            "note": decision.get("note", "declined by the user"),
        }
    organizer = context_value(ctx, "organizer")
    return {
        "status": "booked",
        "title": data["title"],
        "slot": slot,
        "attendees": list(data["attendees"]),
        "ics": to_ics(data["title"], start, end, timezone, data["attendees"], organizer),
    }


def propose_slot(day: dt.date, preferred: dt.time, minutes: int) -> tuple[dt.datetime, dt.datetime]:
    """First slot of ``minutes`` at ``preferred`` (clamped to working hours) on a working day."""
    length = dt.timedelta(minutes=minutes)
    latest = dt.datetime.combine(day, DAY_END) - length
    start = dt.datetime.combine(day, max(preferred, DAY_START))
    if start > latest:  # does not fit today: first thing on the next working day
        start = dt.datetime.combine(day + dt.timedelta(days=1), DAY_START)
    while start.weekday() >= 5:  # Saturday, Sunday
        start += dt.timedelta(days=1)
    return start, start + length


def to_ics(
    title: str,
    start: dt.datetime,
    end: dt.datetime,
    timezone: str,
    attendees: list[str],
    organizer: str | None,
) -> str:
    """A minimal RFC 5545 calendar with one event (CRLF line ends, escaped text)."""
    uid = hashlib.sha256(f"{title}|{start.isoformat()}".encode()).hexdigest()[:16]
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")

    def when(moment: dt.datetime) -> str:
        if timezone == "UTC":
            return f":{moment:%Y%m%dT%H%M%S}Z"
        return f";TZID={timezone}:{moment:%Y%m%dT%H%M%S}"

    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//toolctl//examples//EN",
        "BEGIN:VEVENT",
        f"UID:{uid}@toolctl.example",
        f"DTSTAMP:{stamp}",
        f"DTSTART{when(start)}",
        f"DTEND{when(end)}",
        f"SUMMARY:{_escape(title)}",
    ]
    if organizer:
        lines.append(f"ORGANIZER:mailto:{organizer}")
    lines += [f"ATTENDEE:mailto:{address}" for address in attendees]
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


def _escape(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
    )

"""Typed functions that `toolctl new --from` declares: every supported annotation and
docstring style, each function a plausible tool that really runs."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import itertools
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

from pydantic import BaseModel, Field
from typing_extensions import NotRequired


class Unit(str, enum.Enum):
    """A temperature unit."""

    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(TypedDict):
    """A postal address."""

    street: str
    city: str
    zip: NotRequired[str]


@dataclasses.dataclass
class Point:
    """A point on a plane.

    Attributes:
        x: Horizontal position in metres.
        y: Vertical position in metres.
    """

    x: float
    y: float = 0.0


class Customer(BaseModel):
    """A customer record."""

    id: Annotated[str, Field(pattern=r"^C[0-9]{4}$", max_length=5, description="Customer id.")]
    name: str = Field(description="Full name.", min_length=1, max_length=200)
    tags: list[str] = Field(default_factory=list, description="Free-form labels.")
    vip: bool = False


@dataclasses.dataclass
class TreeNode:
    """A node of a category tree."""

    label: str
    children: list[TreeNode] = dataclasses.field(default_factory=list)


class Stats(TypedDict):
    count: int
    mean: float


def search_docs(
    query: str,
    limit: Annotated[int, Field(ge=1, le=50, description="At most this many hits.")] = 10,
    sort: Literal["relevance", "date"] = "relevance",
) -> list[str]:
    """Search the documentation and return matching page titles.

    Use it when the user asks where something is documented.

    Args:
        query: Words to look for, e.g. "install extras".
        limit: Ignored here: the Field description wins.
        sort: How to order the hits.

    Returns:
        The page titles, best first.
    """
    pages = ["Install", "Install extras", "Lint rules", "Serve over MCP"]
    hits = [p for p in pages if any(w.lower() in p.lower() for w in query.split())]
    return sorted(hits) if sort == "date" else hits[:limit]


def convert_temperature(value: float, source: Unit, target: Unit = Unit.CELSIUS) -> dict[str, Any]:
    """Convert a temperature between Celsius and Fahrenheit.

    Parameters
    ----------
    value : float
        The temperature to convert.
    source : Unit
        The unit of ``value``.
    target : Unit
        The unit to convert to.

    Returns
    -------
    dict
        The converted value and its unit.
    """
    if source is target:
        return {"value": value, "unit": target.value}
    converted = value * 9 / 5 + 32 if target is Unit.FAHRENHEIT else (value - 32) * 5 / 9
    return {"value": round(converted, 2), "unit": target.value}


def format_address(address: Address, uppercase: bool = False) -> str:
    """Format a postal address on one line.

    :param address: The address to format.
    :param uppercase: Write it in capitals, as some carriers want.
    :returns: The address as one line of text.
    """
    text = ", ".join(v for v in (address["street"], address.get("zip", ""), address["city"]) if v)
    return text.upper() if uppercase else text


def distance(a: Point, b: Point) -> float:
    """Measure the straight-line distance between two points on a plane.

    Args:
        a: The first point.
        b: The second point.
    """
    return float(((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5)


def register_customer(customer: Customer, notify: bool = True) -> Customer:
    """Register a new customer record and return it as stored.

    Args:
        customer: The customer to register.
        notify: Send the welcome e-mail.
    """
    return customer.model_copy(update={"tags": [*customer.tags, "registered"]})


def find_customer(
    customer_id: str,
    region: Optional[str] = None,  # noqa: UP045 (typing.Optional is what this case is about)
) -> Optional[Customer]:  # noqa: UP045
    """Find a customer by id, optionally only in one region.

    Args:
        customer_id: The customer id, like C0001.
        region: Only look in this region (all regions when left out).
    """
    if customer_id == "C0001":
        return Customer(id="C0001", name="Ada Lovelace", tags=[region] if region else [])
    return None


def word_stats(texts: list[str], min_length: int | None = None) -> Stats:
    """Count the words in some texts and their mean length.

    Args:
        texts: The texts to count.
        min_length: Only count words at least this long.
    """
    words = [w for t in texts for w in t.split() if len(w) >= (min_length or 0)]
    return {"count": len(words), "mean": sum(map(len, words)) / len(words) if words else 0.0}


def schedule(at: datetime.datetime, attendees: set[str], room: uuid.UUID | None = None) -> str:
    """Schedule a meeting at a given time.

    Args:
        at: When it starts (ISO 8601, with a time zone).
        attendees: E-mail addresses of the people invited.
        room: The meeting room's id, if one is booked.
    """
    return f"{len(attendees)} invited for {at.date().isoformat()}" + (" (room)" if room else "")


def tag_counts(items: dict[str, list[str]]) -> dict[str, int]:
    """Count how many tags each item has.

    Args:
        items: Item name → its tags.
    """
    return {name: len(tags) for name, tags in items.items()}


def bounding_box(points: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    """Compute the bounding box of some points as (min x, min y, max x, max y).

    Args:
        points: The points, each as an (x, y) pair.
    """
    xs, ys = [p[0] for p in points] or [0.0], [p[1] for p in points] or [0.0]
    return min(xs), min(ys), max(xs), max(ys)


def count_nodes(tree: TreeNode) -> int:
    """Count the nodes of a category tree, the root included.

    Args:
        tree: The root of the tree.
    """
    return 1 + sum(count_nodes(c) for c in tree.children)


async def fetch_status(
    service: Literal["api", "web", "db"], verbose: bool = False
) -> dict[str, str]:
    """Report whether a service of the platform is up (async).

    Args:
        service: Which service to ask about.
        verbose: Include the service's version.
    """
    status = {"service": service, "status": "up"}
    return {**status, "version": "1.2.3"} if verbose else status


def set_priority(
    ticket: str, priority: Priority, /, note: Annotated[str, "Why it changed."] = ""
) -> None:
    """Change the priority of a support ticket.

    Args:
        ticket: The ticket number, like T-1234.
        priority: The new priority.
    """


def mean(
    values: Annotated[list[float], Field(min_length=1, max_length=1000)],
    weights: Union[list[float], None] = None,  # noqa: UP007 (the case: typing.Union with None)
) -> float:
    """Compute the (weighted) arithmetic mean of some numbers.

    Args:
        values: The numbers.
        weights: One weight per number (all equal when left out).
    """
    w = weights or [1.0] * len(values)
    return sum(v * x for v, x in zip(values, w, strict=False)) / sum(w)


@dataclasses.dataclass
class Route:
    """A planned route."""

    stops: list[Point]
    mode: str
    length: float


def plan_route(
    stops: Annotated[list[Point], Field(min_length=2, max_length=20)],
    *,
    mode: Literal["driving", "walking"] = "driving",
) -> Route:
    """Plan a route through some stops, in the order given.

    Args:
        stops: The stops to visit.
        mode: How to travel.
    """
    length = sum(distance(a, b) for a, b in itertools.pairwise(stops))
    return Route(stops=stops, mode=mode, length=round(length, 3))

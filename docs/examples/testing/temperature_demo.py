"""Handler of the README's `toolctl test` example (with the two bugs the README finds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TO_CELSIUS: dict[str, Callable[[float], float]] = {
    "celsius": lambda v: v,
    "fahrenheit": lambda v: (v - 32) * 5 / 9,
    "kelvin": lambda v: v - 273.15,
}
FROM_CELSIUS: dict[str, Callable[[float], float]] = {
    "celsius": lambda c: c,
    "fahrenheit": lambda c: c * 9 / 5 + 32,
}
SYMBOL = {"celsius": "°C", "fahrenheit": "°F", "kelvin": "K"}


def convert(args: dict[str, Any]) -> dict[str, Any]:
    celsius = TO_CELSIUS[args["from"]](args["value"])
    result = FROM_CELSIUS[args["to"]](celsius)
    text = f"{args['value']:g} {SYMBOL[args['from']]} is {result:g} {SYMBOL[args['to']]}"
    return {"value": result, "unit": args["to"], "text": text}

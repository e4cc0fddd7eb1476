"""``weather``: current weather for a place, from the free Open-Meteo API (no key needed).

Two requests: the geocoding API turns the place name into coordinates, the forecast API returns
the current conditions there. Both base URLs can be overridden with environment variables so tests
(and air-gapped demos) point the tool at a local server:
``TOOLCTL_WEATHER_API_URL`` and ``TOOLCTL_GEOCODING_API_URL``.
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

FORECAST_URL = "https://api.open-meteo.com/v1/forecast"
GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
FORECAST_ENV = "TOOLCTL_WEATHER_API_URL"
GEOCODING_ENV = "TOOLCTL_GEOCODING_API_URL"
REQUEST_TIMEOUT = 10.0
MAP_ZOOM = 10

_UNITS = {
    "metric": {"temperature_unit": "celsius", "wind_speed_unit": "kmh"},
    "imperial": {"temperature_unit": "fahrenheit", "wind_speed_unit": "mph"},
}
# Open-Meteo labels miles per hour "mp/h"; people (and models quoting it back) write "mph".
_UNIT_LABELS = {"mp/h": "mph"}
_CURRENT = "temperature_2m,apparent_temperature,relative_humidity_2m,weather_code,wind_speed_10m"

# WMO weather interpretation codes, as documented by Open-Meteo.
WMO_CODES = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    45: "fog",
    48: "depositing rime fog",
    51: "light drizzle",
    53: "moderate drizzle",
    55: "dense drizzle",
    56: "light freezing drizzle",
    57: "dense freezing drizzle",
    61: "slight rain",
    63: "moderate rain",
    65: "heavy rain",
    66: "light freezing rain",
    67: "heavy freezing rain",
    71: "slight snow fall",
    73: "moderate snow fall",
    75: "heavy snow fall",
    77: "snow grains",
    80: "slight rain showers",
    81: "moderate rain showers",
    82: "violent rain showers",
    85: "slight snow showers",
    86: "heavy snow showers",
    95: "thunderstorm",
    96: "thunderstorm with slight hail",
    99: "thunderstorm with heavy hail",
}


class WeatherError(RuntimeError):
    """The weather service could not answer; the message says what to check."""


def current_weather(data: dict[str, Any]) -> dict[str, Any]:
    """Current conditions for ``data["city"]`` in ``data["units"]`` (metric by default).

    Raises :class:`WeatherError` for an unknown place, an unreachable service or a bad answer.
    """
    units = data.get("units", "metric")
    place = _geocode(data["city"], data.get("countryCode"))
    forecast = _get_json(
        _base(FORECAST_ENV, FORECAST_URL),
        {
            "latitude": place["latitude"],
            "longitude": place["longitude"],
            "current": _CURRENT,
            "timezone": "auto",
            **_UNITS[units],
        },
    )
    try:
        current, labels = forecast["current"], forecast["current_units"]
        code = int(current["weather_code"])
        return {
            "city": place["name"],
            "country": place.get("country", place.get("country_code", "")),
            "latitude": place["latitude"],
            "longitude": place["longitude"],
            "observedAt": current["time"],
            "timezone": forecast.get("timezone", "GMT"),
            "temperature": current["temperature_2m"],
            "apparentTemperature": current["apparent_temperature"],
            "humidity": current["relative_humidity_2m"],
            "windSpeed": current["wind_speed_10m"],
            "weatherCode": code,
            "condition": WMO_CODES.get(code, f"WMO code {code}"),
            "units": {
                "temperature": labels["temperature_2m"],
                "windSpeed": _UNIT_LABELS.get(labels["wind_speed_10m"], labels["wind_speed_10m"]),
            },
            "mapUrl": map_tile_url(place["latitude"], place["longitude"]),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise WeatherError(f"unexpected answer from the forecast service (missing {exc})") from None


def map_tile_url(latitude: float, longitude: float, zoom: int = MAP_ZOOM) -> str:
    """The OpenStreetMap tile (a 256×256 PNG) that contains the point, at ``zoom``."""
    scale = 2**zoom
    lat = math.radians(max(min(latitude, 85.0511), -85.0511))
    x = int((longitude + 180.0) / 360.0 * scale) % scale
    y = int((1.0 - math.asinh(math.tan(lat)) / math.pi) / 2.0 * scale)
    return f"https://tile.openstreetmap.org/{zoom}/{x}/{min(y, scale - 1)}.png"


def _geocode(city: str, country_code: str | None) -> dict[str, Any]:
    query: dict[str, Any] = {"name": city, "count": 1, "language": "en", "format": "json"}
    if country_code:
        query["countryCode"] = country_code
    answer = _get_json(_base(GEOCODING_ENV, GEOCODING_URL), query)
    results = answer.get("results") or []
    if not results:
        where = f" in {country_code}" if country_code else ""
        raise WeatherError(f"no place named {city!r}{where}; check the spelling or add the country")
    place: dict[str, Any] = results[0]
    return place


def _base(env: str, default: str) -> str:
    return os.environ.get(env) or default


def _get_json(base: str, query: dict[str, Any]) -> dict[str, Any]:
    url = f"{base}?{urllib.parse.urlencode(query)}"
    host = urllib.parse.urlsplit(base).netloc or base
    request = urllib.request.Request(url, headers={"User-Agent": "toolctl-examples/1"})
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            body = response.read(1_000_000)
    except urllib.error.HTTPError as exc:
        reason = _api_reason(exc)
        raise WeatherError(f"{host} answered HTTP {exc.code}{reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        cause = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise WeatherError(
            f"cannot reach {host} ({cause}); check the network, or set "
            f"{FORECAST_ENV} / {GEOCODING_ENV} to a reachable server"
        ) from None
    try:
        answer = json.loads(body)
    except ValueError:
        raise WeatherError(f"{host} did not answer with JSON") from None
    if not isinstance(answer, dict):
        raise WeatherError(f"{host} answered with JSON that is not an object")
    return answer


def _api_reason(exc: urllib.error.HTTPError) -> str:
    """Open-Meteo explains 400s as ``{"error": true, "reason": "..."}``."""
    try:
        reason = json.loads(exc.read(10_000)).get("reason")
    except (ValueError, AttributeError, OSError):
        return ""
    return f": {reason}" if isinstance(reason, str) else ""

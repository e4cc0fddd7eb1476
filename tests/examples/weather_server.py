"""A local stand-in for the Open-Meteo APIs, serving the recorded answers in ``data/``.

Used by the unit tests (``serve()``), and by hand to run the ``weather`` example offline::

    python tests/examples/weather_server.py --port 8765
    # then, in another shell, export the two variables it prints and run toolctl

The geocoder knows Berlin and Paris (France, or Texas with ``countryCode=US``); any other name
gets Open-Meteo's empty answer. The forecast answer depends only on the units asked for. A
latitude outside -90..90 gets Open-Meteo's 400 error; paths under ``/broken`` answer with
non-JSON text.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

DATA = Path(__file__).resolve().parent / "data"
# (lowercase name, countryCode or "") -> recorded geocoding answer
_PLACES = {
    ("berlin", ""): "geocoding_berlin.json",
    ("berlin", "DE"): "geocoding_berlin.json",
    ("paris", ""): "geocoding_paris_fr.json",
    ("paris", "FR"): "geocoding_paris_fr.json",
    ("paris", "US"): "geocoding_paris_us.json",
}


@dataclass
class FixtureServer:
    """A running server: its base URL and every request it answered (path, query)."""

    url: str
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment that points the weather tool at this server."""
        return {
            "TOOLCTL_WEATHER_API_URL": f"{self.url}/v1/forecast",
            "TOOLCTL_GEOCODING_API_URL": f"{self.url}/v1/search",
        }


def _answer(path: str, query: dict[str, str]) -> tuple[int, str]:
    """Status and recorded body for a request."""
    if path.startswith("/broken/"):
        return 200, "<html>Service temporarily unavailable</html>"
    if path == "/v1/search":
        place = (query.get("name", "").strip().lower(), query.get("countryCode", ""))
        return 200, _PLACES.get(place, "geocoding_empty.json")
    if path == "/v1/forecast":
        if not -90 <= float(query.get("latitude", "0")) <= 90:
            return 400, "forecast_error.json"
        imperial = query.get("temperature_unit") == "fahrenheit"
        return 200, "forecast_berlin_imperial.json" if imperial else "forecast_berlin_metric.json"
    return 404, "not found"


class _Handler(BaseHTTPRequestHandler):
    fixture: FixtureServer

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        self.fixture.requests.append((url.path, query))
        status, body = _answer(url.path, query)
        if body.endswith(".json"):
            payload = (DATA / body).read_bytes()
            kind = "application/json; charset=utf-8"
        else:
            payload, kind = body.encode("utf-8"), "text/html; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""


@contextmanager
def serve(port: int = 0) -> Iterator[FixtureServer]:
    """Run the server on 127.0.0.1 (a free port by default) for the duration of the block."""
    fixture = FixtureServer(url="")
    handler = type("Handler", (_Handler,), {"fixture": fixture})
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    fixture.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # A short poll interval keeps shutdown() quick between tests.
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield fixture
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def main() -> None:
    """Serve until interrupted, after printing the environment to export."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    with serve(port) as fixture:
        for name, value in fixture.env.items():
            print(f"export {name}={value}", flush=True)
        with suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()

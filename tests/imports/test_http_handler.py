"""The built-in HTTP handler: where each argument goes, how credentials are sent, what a
response becomes; and (against a local server) that a credential never leaves the run."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolctl.loader import load_registry
from toolctl.runtime.execution.httpcall import HttpCallError, HttpHandler, secret_values
from toolctl.yamlsrc import dumps

BLOCK: dict[str, Any] = {
    "method": "POST",
    "path": "/orgs/{org}/items",
    "baseUrl": "https://api.invalid/v1",
    "baseUrlEnv": "API_BASE_URL",
    "parameters": [
        {"name": "org", "in": "path"},
        {"name": "tag", "in": "query"},
        {"name": "X-Trace", "in": "header", "property": "X_Trace"},
    ],
    "body": {"property": "body"},
    "auth": [{"secret": "API_TOKEN", "scheme": "bearer"}],
}


def test_each_argument_goes_where_the_block_says() -> None:
    handler = HttpHandler("t", BLOCK)
    request = handler.build(
        {"org": "a b/c", "tag": ["x", "y"], "X_Trace": 7, "body": {"n": 1}},
        {"API_TOKEN": "tok"},
    )
    assert request["method"] == "POST"
    assert request["url"] == "https://api.invalid/v1/orgs/a%20b%2Fc/items"  # one path segment
    assert request["params"] == [("tag", "x"), ("tag", "y")]
    assert request["headers"]["X-Trace"] == "7"
    assert request["headers"]["authorization"] == "Bearer tok"
    assert json.loads(request["content"]) == {"n": 1}


def test_the_base_url_variable_wins_and_a_relative_one_is_refused() -> None:
    handler = HttpHandler("t", BLOCK)
    request = handler.build({"org": "o"}, {"API_TOKEN": "t", "API_BASE_URL": "http://127.0.0.1:9/"})
    assert request["url"] == "http://127.0.0.1:9/orgs/o/items"
    relative = HttpHandler("t", {**BLOCK, "baseUrl": "/v1"})
    with pytest.raises(HttpCallError, match=r"no absolute base URL.*set API_BASE_URL"):
        relative.build({"org": "o"}, {"API_TOKEN": "t"})


@pytest.mark.parametrize(
    ("auth", "where", "expected"),
    [
        ({"secret": "K", "in": "header", "name": "X-API-Key"}, "headers", ("X-API-Key", "s3")),
        ({"secret": "K", "in": "query", "name": "api_key"}, "params", ("api_key", "s3")),
        ({"secret": "K", "scheme": "basic"}, "headers", ("authorization", "Basic s3")),
    ],
)
def test_credentials_go_where_the_security_scheme_says(
    auth: dict[str, Any], where: str, expected: tuple[str, str]
) -> None:
    handler = HttpHandler("t", {**BLOCK, "auth": [auth]})
    request = handler.build({"org": "o"}, {"K": "s3"})
    found = request[where]
    pairs = list(found.items()) if isinstance(found, dict) else found
    assert expected in pairs


def test_a_missing_credential_is_a_clear_error_unless_optional() -> None:
    with pytest.raises(HttpCallError, match="set the environment variable API_TOKEN"):
        HttpHandler("t", BLOCK).build({"org": "o"}, {})
    optional = HttpHandler("t", {**BLOCK, "auth": [{**BLOCK["auth"][0], "optional": True}]})
    assert "authorization" not in optional.build({"org": "o"}, {})["headers"]


def test_a_response_becomes_the_output_and_an_error_status_a_tool_error() -> None:
    handler = HttpHandler("t", {**BLOCK, "response": {"wrap": "result"}})
    json_type = {"content-type": "application/json"}
    assert handler.decode(200, "OK", json_type, b"[1, 2]") == {"result": [1, 2]}
    assert handler.decode(204, "No Content", {}, b"") == {"result": None}
    assert HttpHandler("t", BLOCK).decode(200, "OK", {"content-type": "text/plain"}, b"hi") == "hi"
    with pytest.raises(HttpCallError, match=r"POST /orgs/\{org\}/items answered 404 Not Found"):
        handler.decode(404, "Not Found", json_type, b'{"message": "nope"}')
    with pytest.raises(HttpCallError, match="not valid JSON"):
        handler.decode(200, "OK", json_type, b"{")


def test_secret_values_reads_only_the_named_variables() -> None:
    env = {"A": "one", "B": "", "C": "three"}
    assert secret_values(("A", "B", "Z"), env) == frozenset({"one"})


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers with what it was sent (the credential included), or fails quoting it."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        type(self).seen.append(headers)
        fail = "fail" in self.path
        body = json.dumps({"auth": headers.get("authorization", ""), "path": self.path}).encode()
        self.send_response(403 if fail else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow  # starts an HTTP server
def test_a_credential_never_reaches_the_model_the_error_or_the_history(
    tmp_path: Path, echo_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "tok-Zq81-never-shown"
    monkeypatch.setenv("ECHO_TOKEN", secret)
    tool = {
        "toolctl": 1,
        "name": "echo_call",
        "description": "Calls the echo server with a bearer token.",
        "inputSchema": {"type": "object", "properties": {"which": {"type": "string"}}},
        "http": {
            "method": "GET",
            "path": "/{which}",
            "baseUrl": echo_server,
            "parameters": [{"name": "which", "in": "path"}],
            "auth": [{"secret": "ECHO_TOKEN", "scheme": "bearer"}],
        },
        "secrets": ["ECHO_TOKEN"],
    }
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "echo.yaml").write_text(dumps(tool))
    registry = load_registry(tmp_path / "tools.d", packs=False)
    store = tmp_path / "state.db"
    ok = registry.call("echo_call", {"which": "ok"}, store=store)
    assert ok.status.value == "succeeded"
    assert _Echo.seen[-1]["authorization"] == f"Bearer {secret}"  # it was sent
    failed = registry.call("echo_call", {"which": "fail"}, store=store)
    assert failed.status.value == "failed" and failed.error is not None
    assert "answered 403 Forbidden" in failed.error.message
    for result in (ok, failed):
        shown = json.dumps([result.model_output, result.display, result.transcript])
        assert secret not in shown and secret not in json.dumps(
            result.error and result.error.message
        )
        stored = registry.get_run(result.run_id, store=store)
        assert secret not in json.dumps(stored.to_dict(), default=str)
    assert "[REDACTED]" in failed.error.message

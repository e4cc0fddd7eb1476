"""The built-in HTTP handler: a tool's ``http:`` block turned into one request (httpx).

The input's properties go where the block says (path, query, header, JSON body); credentials
come from the environment variables the tool lists in ``secrets`` and are registered as the
run's secrets before the call (:func:`secret_values`), so no output, error, log or history row
can quote them. Redirects are not followed (a credential never travels to another host); a
non-2xx answer is a tool error naming the method, path and status; the response body read is
bounded.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from toolctl.errors import UsageError

DEFAULT_TIMEOUT_S = 30.0
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_ERROR_CHARS = 500


class HttpCallError(Exception):
    """The request could not be made, or the API answered with an error status."""


def secret_values(
    names: tuple[str, ...], environ: Mapping[str, str] | None = None
) -> frozenset[str]:
    """The values of the environment variables ``names`` (the tool's ``secrets``) that are set."""
    env = os.environ if environ is None else environ
    return frozenset(v for v in (env.get(n) for n in names) if v)


class HttpHandler:
    """The handler of one tool with an ``http:`` block (an async callable taking the input)."""

    __slots__ = ("block", "tool")

    def __init__(self, tool: str, block: dict[str, Any]) -> None:
        self.tool = tool
        self.block = block

    async def __call__(self, arguments: dict[str, Any]) -> Any:
        """Send the request built from ``arguments``; the decoded response body."""
        try:
            import httpx
        except ImportError:  # pragma: no cover - httpx comes with the `http` and `mcp` extras
            from toolctl.install import install_hint

            raise UsageError(
                "the built-in HTTP handler needs httpx", hint=install_hint("http")
            ) from None
        request = self.build(arguments, os.environ)
        timeout = float(self.block.get("timeout", DEFAULT_TIMEOUT_S))
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            try:
                async with client.stream(**request) as response:
                    body = await _read_bounded(response)
            except httpx.HTTPError as exc:
                raise HttpCallError(
                    f"{self.block['method']} {request['url']} failed: {type(exc).__name__}: {exc}"
                ) from None
        return self.decode(response.status_code, response.reason_phrase, response.headers, body)

    def base_url(self, environ: Mapping[str, str]) -> str:
        """The API's base URL: the variable ``baseUrlEnv`` names, else ``baseUrl``."""
        named = self.block.get("baseUrlEnv")
        url = environ.get(named) if named else None
        url = url or self.block.get("baseUrl")
        if not url or not url.startswith(("http://", "https://")):
            where = f"set {named}" if named else "set http.baseUrl"
            raise HttpCallError(
                f"{self.tool}: no absolute base URL for the API ({where}, or import with "
                "--base-url)"
            )
        return str(url).rstrip("/")

    def build(self, arguments: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
        """The keyword arguments of ``httpx.AsyncClient.stream`` for ``arguments``."""
        path = str(self.block["path"])
        query: list[tuple[str, str]] = []
        headers: dict[str, str] = {"accept": "application/json"}
        for param in self.block.get("parameters", ()):
            value = arguments.get(param.get("property", param["name"]))
            if value is None:
                continue
            if param["in"] == "path":
                path = path.replace("{" + param["name"] + "}", quote(_text(value), safe=""))
            elif param["in"] == "query":
                query.extend(_query_pairs(param["name"], value))
            else:
                headers[param["name"]] = _text(value)
        request: dict[str, Any] = {
            "method": self.block["method"],
            "url": self.base_url(environ) + path,
        }
        body = self.block.get("body")
        if body and body["property"] in arguments:
            request["content"] = json.dumps(arguments[body["property"]]).encode()
            headers["content-type"] = body.get("contentType", "application/json")
        self._authorize(headers, query, environ)
        if query:
            request["params"] = query
        request["headers"] = headers
        return request

    def _authorize(
        self, headers: dict[str, str], query: list[tuple[str, str]], environ: Mapping[str, str]
    ) -> None:
        for auth in self.block.get("auth", ()):
            secret = environ.get(auth["secret"])
            if not secret:
                if auth.get("optional"):
                    continue
                raise HttpCallError(
                    f"{self.tool}: the API needs a credential: set the environment variable "
                    f"{auth['secret']}"
                )
            scheme = auth.get("scheme")
            if scheme == "bearer":
                headers["authorization"] = f"Bearer {secret}"
            elif scheme == "basic":
                token = secret if ":" not in secret else base64.b64encode(secret.encode()).decode()
                headers["authorization"] = f"Basic {token}"
            elif auth.get("in") == "query":
                query.append((auth["name"], secret))
            else:
                headers[auth["name"]] = secret

    def decode(self, status: int, reason: str, headers: Mapping[str, str], body: bytes) -> Any:
        """The output for a response: its JSON (or text), or :class:`HttpCallError`."""
        text = body.decode("utf-8", "replace")
        if not 200 <= status < 300:
            excerpt = text[:MAX_ERROR_CHARS] + ("..." if len(text) > MAX_ERROR_CHARS else "")
            raise HttpCallError(
                f"{self.block['method']} {self.block['path']} answered {status} {reason}"
                + (f": {excerpt}" if excerpt.strip() else "")
            )
        kind = headers.get("content-type", "")
        if not body:
            value: Any = None
        elif "json" in kind.lower():
            try:
                value = json.loads(text)
            except ValueError:
                raise HttpCallError(
                    f"{self.block['method']} {self.block['path']} answered {status} with a "
                    "body that is not valid JSON"
                ) from None
        else:
            value = text
        wrap = self.block.get("response", {}).get("wrap")
        return {wrap: value} if wrap else value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _query_pairs(name: str, value: Any) -> list[tuple[str, str]]:
    """OpenAPI's default query style (form, explode): a list repeats the key, an object's
    properties become keys of their own."""
    if isinstance(value, list):
        return [(name, _text(v)) for v in value]
    if isinstance(value, dict):
        return [(str(k), _text(v)) for k, v in value.items()]
    return [(name, _text(value))]


async def _read_bounded(response: Any) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise HttpCallError(
                f"the response is larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
            )
        chunks.append(chunk)
    return b"".join(chunks)

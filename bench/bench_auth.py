"""What OAuth costs per call: ``toolctl serve`` with ``auth:`` against the same server without.

Starts two ``toolctl serve --transport http`` processes on one registry with the trivial ``add``
tool: one plain, one checking JWT access tokens against a JWKS this script serves on loopback
(ES256 keys; every client has its own token, a different user, as in a real deployment). Each is
driven by N concurrent SDK clients (N = 50 by default; sessions opened and warmed before timing,
so the JWKS is fetched and each token checked once), rounds interleaved. Prints throughput,
p50/p99 latency and the server's CPU time per call (utime + stime from /proc), and the
overhead of token checking as a share of a call's CPU (budget: <= 10%). Then, in this process,
what one check costs: a token seen before (the cache) and a new one (signature and claims).

    .venv/bin/python bench/bench_auth.py [--calls 2000] [--rounds 4] [--clients 50] [--checks 2000]

Bounded: every loop has a fixed count, every server is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import jwt
from bench_http import Sample, ServerProcess, burst
from cryptography.hazmat.primitives.asymmetric import ec
from serve_common import registry

PLAIN, AUTH = "no auth", "auth: (JWT)"
BUDGET = 0.10


class Issuer:
    """One ES256 key, its JWKS on a loopback port, tokens for any user."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = json.dumps({"keys": [{**public, "kid": "bench", "use": "sig"}]}).encode()
        self.url = ""

    def token(self, sub: str, audience: str) -> str:
        now = int(time.time())
        claims = {"iss": self.url, "aud": audience, "sub": sub, "exp": now + 3600, "iat": now}
        claims["scope"] = "toolctl.call"
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": "bench"})

    @contextlib.contextmanager
    def serving(self) -> Iterator[str]:
        body = self.jwks

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("cache-control", "max-age=3600")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self.url
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


def _client(url: str, token: str | None) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"authorization": f"Bearer {token}"} if token else None
    http = create_mcp_http_client(headers=headers)
    return http, Client(streamable_http_client(url, http_client=http), mode="legacy")


async def measure(
    servers: dict[str, ServerProcess], tokens: dict[str, list[str | None]], calls: int, rounds: int
) -> dict[str, Sample]:
    samples = {label: Sample() for label in servers}
    async with AsyncExitStack() as stack:
        clients: dict[str, list[Any]] = {}
        for label, server in servers.items():
            clients[label] = []
            for token in tokens[label]:
                http, client = _client(server.url, token)
                await stack.enter_async_context(http)
                clients[label].append(await stack.enter_async_context(client))
            await burst(clients[label], 2 * len(clients[label]))  # warm: JWKS, every token
        order = list(servers)
        for _ in range(rounds):
            for label in order:
                sample, server = samples[label], servers[label]
                cpu, start = server.cpu(), time.perf_counter()
                latencies = await burst(clients[label], calls // rounds)
                sample.latencies += latencies
                sample.add(len(latencies), time.perf_counter() - start, server.cpu() - cpu)
            order = order[1:] + order[:1]
    return samples


def check_costs(issuer: Issuer, audience: str, count: int = 2000) -> tuple[float, float]:
    """Microseconds per check of a cached token and of a new one, in this process."""
    from toolctl.authconfig import AuthSettings
    from toolctl.server.jwks import KeySet
    from toolctl.server.tokens import TokenVerifier

    async def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
        return 200, {"cache-control": "max-age=3600"}, issuer.jwks

    settings = AuthSettings(issuer.url, audience, f"{issuer.url}/jwks")
    verifier = TokenVerifier(KeySet(settings, fetch=fetch))
    fresh = [issuer.token(f"user-{i}", audience) for i in range(count)]

    async def run() -> tuple[float, float]:
        await verifier.verify(fresh[0])
        start = time.perf_counter()
        for token in fresh[1:]:
            await verifier.verify(token)
        new = (time.perf_counter() - start) / (count - 1)
        start = time.perf_counter()
        for _ in range(count):
            await verifier.verify(fresh[0])
        cached = (time.perf_counter() - start) / count
        return cached * 1e6, new * 1e6

    return anyio.run(run)


def report(samples: dict[str, Sample], clients: int) -> None:
    count = len(samples[PLAIN].latencies)
    print(f"{clients} concurrent clients (one user each), {count} calls per server:")
    print(f"  {'server':<14} {'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'CPU ms/call':>11}")
    for label, s in samples.items():
        print(
            f"  {label:<14} {s.throughput:8.0f} {statistics.median(s.latencies) * 1e3:7.2f} "
            f"{s.p99 * 1e3:7.2f} {s.cpu_per_call * 1e3:11.3f}"
        )
    plain, auth = samples[PLAIN].cpu_per_call, samples[AUTH].cpu_per_call
    if not plain:
        print("  overhead: n/a (too few calls to measure)")
        return
    share = (auth - plain) / auth
    print(
        f"  token checking: {(auth - plain) * 1e6:+.0f} us CPU per call = {share:.1%} of a call's "
        f"CPU (budget <= {BUDGET:.0%}) {'OK' if share <= BUDGET else 'OVER'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per server")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--checks", type=int, default=2000, help="tokens checked in process")
    args = parser.parse_args()
    py = sys.executable
    issuer = Issuer()
    with tempfile.TemporaryDirectory() as tmp, issuer.serving() as base:
        root = Path(tmp)
        plain = registry(root / "plain", 1)
        guarded = registry(root / "auth", 1)
        serve = [py, "-m", "toolctl", "serve", "--transport", "http", "--port", "0"]
        servers: dict[str, ServerProcess] = {}
        try:
            servers[PLAIN] = ServerProcess(serve, plain)
            # the audience is checked, not dialled: any URL naming this resource will do
            audience = "http://127.0.0.1/mcp"
            flags = ["--auth-issuer", base, "--auth-audience", audience]
            servers[AUTH] = ServerProcess(
                [*serve, *flags, "--auth-jwks-uri", f"{base}/jwks"], guarded
            )
            tokens: dict[str, list[str | None]] = {
                PLAIN: [None] * args.clients,
                AUTH: [issuer.token(f"user-{i}", audience) for i in range(args.clients)],
            }
            print(
                f"tools/call over Streamable HTTP, loopback; {args.calls} calls per server in "
                f"{args.rounds} interleaved rounds"
            )
            report(anyio.run(measure, servers, tokens, args.calls, args.rounds), args.clients)
        finally:
            for server in servers.values():
                server.stop()
        cached, new = check_costs(issuer, "http://127.0.0.1/mcp", args.checks)
        print(
            f"one check, in process: {cached:.1f} us for a token seen before (cached), "
            f"{new:.0f} us for a new one (ES256 signature and claims)"
        )


if __name__ == "__main__":
    main()

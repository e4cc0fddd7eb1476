"""A held-out spec imported, linted and exported clean, and three of its operations run through
toolctl against the Prism mock server, which checks every request against the spec (``--errors``:
a request that breaks the spec is answered with an error, so a success means it was accepted)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl
from tests.imports.conftest import FIXTURES
from tests.prereqs import NODE_DIR

# one worker starts one Prism for both tests (the module fixture starts one per xdist worker)
pytestmark = [
    pytest.mark.requires("tests-node"),
    pytest.mark.slow,
    pytest.mark.xdist_group("prism"),
]
INVENTORY = FIXTURES / "inventory.yaml"
PRISM = NODE_DIR / "node_modules" / ".bin" / "prism"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Prism for the module (it takes seconds to start)."""
    if not PRISM.exists():
        pytest.skip("prism is not installed: run `npm ci --prefix tests/node`")
    port = _free_port()
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), "--errors", str(INVENTORY)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={"PATH": f"{Path(shutil.which('node') or 'node').parent}", "NO_COLOR": "1"},
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("prism did not start listening")
    if proc.poll() is not None:
        pytest.fail(f"prism exited: {log.read_text()[-2000:]}")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


def test_three_imported_operations_are_accepted_by_prism(
    project: Path, capsys: Capture, prism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = toolctl(capsys, "import", "openapi", str(INVENTORY), "--base-url", prism)
    assert code == 0, err
    assert toolctl(capsys, "lint")[0] == 0
    for fmt in ("openai", "anthropic", "gemini", "bedrock", "mistral", "mcp"):
        assert toolctl(capsys, "export", fmt)[0] == 0, fmt
    monkeypatch.setenv("INVENTORY_BEARER", "tok-prism-0001")
    calls = [
        ("list_items", {"page_size": 2, "tag": ["bolts", "steel"]}),
        ("get_item", {"sku": "AB-1234", "X-Trace": "trace-0001"}),
        ("create_item", {"body": {"sku": "CD-5678", "name": "Nut", "quantity": 10}}),
    ]
    for name, arguments in calls:
        code, out, err = toolctl(capsys, "run", name, "-i", json.dumps(arguments), "--raw")
        assert code == 0, (name, err)
        assert "sku" in out
    # the same tool without the credential never reaches Prism: a clear tool error
    monkeypatch.delenv("INVENTORY_BEARER")
    code, _, err = toolctl(capsys, "run", "get_item", "-i", json.dumps(calls[1][1]))
    assert code == 1 and "set the environment variable INVENTORY_BEARER" in err


def test_prism_refuses_a_request_the_spec_does_not_allow(prism: str) -> None:
    """The oracle is real: a body the spec refuses is answered with an error by Prism."""
    import httpx

    bad = httpx.post(
        f"{prism}/items",
        json={"sku": "lowercase", "name": "", "quantity": -1},
        headers={"authorization": "Bearer tok"},
    )
    assert bad.status_code == 422

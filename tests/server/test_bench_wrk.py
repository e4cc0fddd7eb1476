"""``bench/wrkload.py``: the requests wrk sends are the ``tools/call`` each revision needs.

No wrk is run here (CI has none; ``bench/bench_http.py`` skips it, saying so): the Lua script's
request text is checked as the server would read it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from tests.bench_helpers import BENCH

_SPEC = importlib.util.spec_from_file_location("bench_wrkload", BENCH / "wrkload.py")
assert _SPEC is not None and _SPEC.loader is not None
wrkload = sys.modules["bench_wrkload"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(wrkload)


def _request(script: str, request_id: int) -> tuple[dict[str, str], dict[str, object]]:
    """The headers and the JSON-RPC message of the request with ``request_id``."""
    headers = dict(re.findall(r'wrk\.headers\["([^"]+)"\] = "([^"]*)"', script))
    head, tail = re.findall(r"\[==\[(.*?)\]==\]", script, re.DOTALL)
    return headers, json.loads(f"{head}{request_id}{tail}")


@pytest.mark.parametrize("revision", [wrkload.LEGACY, wrkload.MODERN])
def test_each_request_is_a_tools_call_with_its_own_id(revision: str, tmp_path: Path) -> None:
    session = "abc123" if revision == wrkload.LEGACY else None
    script = wrkload.lua_script(tmp_path / "call.lua", revision, session).read_text()
    headers, message = _request(script, 1000000007)
    assert message["id"] == 1000000007 and message["method"] == "tools/call"
    params = message["params"]
    assert isinstance(params, dict) and params["name"] == "add"
    assert params["arguments"] == {"a": 1, "b": 2}
    assert headers["MCP-Protocol-Version"] == revision
    if revision == wrkload.LEGACY:
        assert headers["Mcp-Session-Id"] == "abc123" and "_meta" not in params
    else:  # stateless: the envelope in _meta, the routing headers matching the body
        assert "Mcp-Session-Id" not in headers
        assert headers["Mcp-Method"] == "tools/call" and headers["Mcp-Name"] == "add"
        meta = params["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == revision
        assert "io.modelcontextprotocol/clientCapabilities" in meta
    # only a successful call result counts as answered
    assert '"isError":false\'' in script and "status == 200" in script

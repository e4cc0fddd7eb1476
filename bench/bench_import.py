"""Benchmark: importing GitHub's OpenAPI description, beside FastMCP's ``from_openapi``.

Usage::

    npm ci --prefix tests/node               # @octokit/openapi (GitHub's description)
    pip install fastmcp                       # optional: the side-by-side column
    python bench/bench_import.py [--spec PATH]

In one process and one run, on the same spec (``api.github.com.json`` of ``@octokit/openapi``):

* toolctl: ``import_openapi`` into a temporary directory (import time), then a cold
  ``load_registry`` of the result (load time, no cache); whether every tool loads, whether the
  names are unique, and whether every provider export is produced and accepted by the provider
  SDK types (``tests/export/sdk.py``);
* FastMCP: ``FastMCP.from_openapi`` (build time) and ``list_tools``;
* for both: the tool count, how many input schemas are valid JSON Schema (2020-12 meta-schema,
  ``toolctl.schema.check_schema``), and the definition bytes (the MCP ``tools/list`` entries as
  compact JSON).

It prints a table and asserts nothing (timings are too noisy for tests).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "tests/node/node_modules/@octokit/openapi/generated/api.github.com.json"
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "mistral", "mcp")


def _seconds(spent: tuple[float, float]) -> str:
    """``wall/cpu`` seconds (the CPU time is what a loaded machine does not distort)."""
    return f"{spent[0]:.1f}/{spent[1]:.1f}"


def _compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def toolctl_side(spec: Path) -> dict[str, Any]:
    """Import, load, check names and exports; the figures of the toolctl column."""
    sys.path.insert(0, str(REPO))
    from tests.export.sdk import VALIDATORS, validate_mcp

    from toolctl.export import export_result
    from toolctl.imports import import_openapi
    from toolctl.loader import load_registry
    from toolctl.schema import check_schema

    with tempfile.TemporaryDirectory() as tmp:
        started, cpu = time.perf_counter(), time.process_time()
        report = import_openapi(spec, Path(tmp) / "tools.d" / "github")
        imported = (time.perf_counter() - started, time.process_time() - cpu)
        started, cpu = time.perf_counter(), time.process_time()
        registry = load_registry(Path(tmp) / "tools.d", packs=False, cache=False)
        loaded = (time.perf_counter() - started, time.process_time() - cpu)
        names = [s.name for s in registry.tools.values()]
        exports: dict[str, str] = {}
        for fmt in FORMATS:
            result = export_result(registry, fmt)
            try:
                assert result.ok and result.data is not None, "refused"
                if fmt == "mcp":
                    validate_mcp(result.data, "2025-11-25")
                else:
                    VALIDATORS[fmt](result.data)
                exports[fmt] = "ok"
            except Exception as exc:
                exports[fmt] = f"FAILED: {str(exc)[:200]}"
        mcp = export_result(registry, "mcp").data or {"tools": []}
        valid = sum(1 for s in registry.tools.values() if not check_schema(s.input_schema))
        return {
            "tools": len(registry.tools),
            "skipped": len(report.skipped),
            "files": len(report.files.written),
            "load errors": sum(1 for d in registry.diagnostics if d.severity.value == "error"),
            "unique names": len(set(names)) == len(names),
            "valid input schemas": valid,
            "definition bytes": _compact(mcp["tools"]),
            "import s": _seconds(imported),
            "load s": _seconds(loaded),
            "exports": exports,
        }


def fastmcp_side(spec: Path) -> dict[str, Any] | None:
    """FastMCP's server from the same spec: tool count, valid schemas, definition bytes."""
    try:
        from fastmcp import FastMCP
    except ImportError:
        return None
    from toolctl.schema import check_schema

    data = json.loads(spec.read_text())
    started, cpu = time.perf_counter(), time.process_time()
    server = FastMCP.from_openapi(openapi_spec=data)
    tools = asyncio.run(server.list_tools())
    built = (time.perf_counter() - started, time.process_time() - cpu)
    listed = [
        t.to_mcp_tool().model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools
    ]
    valid = sum(1 for t in listed if not check_schema(t.get("inputSchema", {})))
    names = [t["name"] for t in listed]
    return {
        "tools": len(listed),
        "unique names": len(set(names)) == len(names),
        "valid input schemas": valid,
        "definition bytes": _compact(listed),
        "build s": _seconds(built),
        "names over 64 chars": sum(1 for n in names if len(n) > 64),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=SPEC, help="the OpenAPI file")
    args = parser.parse_args()
    if not args.spec.is_file():
        sys.exit(f"{args.spec} not found: run `npm ci --prefix tests/node`")
    ours = toolctl_side(args.spec)
    theirs = fastmcp_side(args.spec)
    print(f"spec: {args.spec.name} ({args.spec.stat().st_size / 1e6:.1f} MB)")
    keys = ("tools", "unique names", "valid input schemas", "definition bytes")
    print(f"{'':24} {'toolctl':>14} {'FastMCP':>14}")
    for key in keys:
        other = theirs.get(key, "-") if theirs else "not installed"
        print(f"{key:24} {ours[key]!s:>14} {other!s:>14}")
    built = (theirs or {}).get("build s", "-")
    print(f"{'import/build s (wall/cpu)':24} {ours['import s']!s:>14} {built!s:>14}")
    print(
        f"toolctl load s (wall/cpu, cold, no cache): {ours['load s']}; "
        f"load errors: {ours['load errors']}; operations skipped: {ours['skipped']}"
    )
    if theirs:
        print(
            "FastMCP names over 64 characters (refused by OpenAI/Anthropic/Bedrock/Mistral): "
            f"{theirs['names over 64 chars']}"
        )
    for fmt, verdict in ours["exports"].items():
        print(f"export {fmt}: {verdict}")


if __name__ == "__main__":
    main()

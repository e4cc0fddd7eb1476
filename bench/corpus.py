"""A realistic benchmark registry: what real tool repositories hold, at any size.

The synthetic registry of ``bench_validate.py`` has flat, self-contained schemas. Real
registries share definitions between tools, so this generator writes what they have:

* shared schema files (``tools.d/schemas/*.schema.yaml``) whose ``$defs`` refer to each other
  (an ``Address`` holds a ``CountryCode``), named from the tools by ``$ref``, one to four per tool;
* nested objects, arrays of objects, enums, string patterns with ``maxLength``, ``format``
  (``email``, ``date-time``, ``date``, ``uri``, ``uuid``), numbers with bounds, defaults;
* one to three ``inputExamples`` per tool, valid against the tool's input schema;
* an output schema, MCP annotations, ``tags`` and a title.

Two layouts: one tool per file (``per_file=1``) or ``per_file`` tools per file. The same
``(tools, per_file, seed)`` writes the same bytes, so runs compare like with like.

    python bench/corpus.py OUT --tools 5000 --per-file 1
    python bench/corpus.py OUT --tools 10000 --per-file 100
    python bench/corpus.py OUT --corpus heldout   # bench/corpus_heldout.py's registry

or ``from corpus import write_corpus`` (``bench/`` on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

HANDLERS = "def run(payload):\n    return {'summary': 'ok', 'count': 0}\n"

_NOUNS = (
    "customer", "invoice", "order", "ticket", "shipment", "account", "project", "meeting",
    "payment", "product", "report", "employee", "contract", "lead", "asset", "incident",
    "document", "subscription", "campaign", "warehouse",
)  # fmt: skip
_VERBS = ("get", "list", "create", "update", "delete", "search", "archive", "export", "sync")
_AREAS = ("crm", "billing", "support", "logistics", "hr", "finance", "marketing", "ops")

# Shared definitions, by file. A definition may refer to another (same file or another file),
# as real ones do; every value the generator writes for a definition is valid against it.
_SHARED: dict[str, dict[str, Any]] = {
    "common": {
        "Id": {"type": "string", "pattern": "^[a-z]{2,4}_[A-Za-z0-9]{8,24}$", "maxLength": 29,
               "description": "An opaque identifier, prefixed with its kind."},
        "Email": {"type": "string", "format": "email", "maxLength": 254,
                  "description": "An e-mail address."},
        "Timestamp": {"type": "string", "format": "date-time",
                      "description": "An instant, RFC 3339 with an offset."},
        "CountryCode": {"type": "string", "pattern": "^[A-Z]{2}$", "minLength": 2,
                        "maxLength": 2, "description": "ISO 3166-1 alpha-2 country code."},
        "Locale": {"type": "string", "enum": ["en-US", "en-GB", "de-DE", "fr-FR", "ja-JP"],
                   "default": "en-US", "description": "The language of the answer."},
        "Pagination": {
            "type": "object",
            "description": "Which page of results to return.",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                "cursor": {"type": "string", "maxLength": 128,
                           "description": "The cursor from the previous page."},
            },
            "additionalProperties": False,
        },
    },
    "places": {
        "Address": {
            "type": "object",
            "description": "A postal address.",
            "properties": {
                "street": {"type": "string", "minLength": 1, "maxLength": 200},
                "city": {"type": "string", "minLength": 1, "maxLength": 100},
                "postalCode": {"type": "string", "pattern": "^[A-Z0-9 -]{3,10}$",
                               "maxLength": 10},
                "country": {"$ref": "common.schema.yaml#/$defs/CountryCode"},
            },
            "required": ["city", "country"],
            "additionalProperties": False,
        },
        "GeoPoint": {
            "type": "object",
            "properties": {
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "minimum": -180, "maximum": 180},
            },
            "required": ["lat", "lon"],
        },
    },
    "money": {
        "Currency": {"type": "string", "enum": ["USD", "EUR", "GBP", "JPY", "CHF"],
                     "description": "ISO 4217 currency code."},
        "Money": {
            "type": "object",
            "description": "An amount in a currency, in minor units.",
            "properties": {
                "amount": {"type": "integer", "minimum": 0, "maximum": 10**12},
                "currency": {"$ref": "#/$defs/Currency"},
            },
            "required": ["amount", "currency"],
            "additionalProperties": False,
        },
        "DateRange": {
            "type": "object",
            "properties": {
                "from": {"type": "string", "format": "date"},
                "to": {"type": "string", "format": "date"},
            },
            "required": ["from"],
        },
    },
    "people": {
        "Person": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 120},
                "email": {"$ref": "common.schema.yaml#/$defs/Email"},
                "address": {"$ref": "places.schema.yaml#/$defs/Address"},
            },
            "required": ["name"],
        },
        "Link": {"type": "string", "format": "uri", "maxLength": 2048},
        "RequestId": {"type": "string", "format": "uuid"},
    },
}  # fmt: skip

# A valid value for each shared definition (its examples are built from these).
_SHARED_VALUES: dict[str, Any] = {
    "Id": "cus_8fK2mQ9xLp",
    "Email": "ada@example.com",
    "Timestamp": "2026-11-30T09:15:00+01:00",
    "CountryCode": "DE",
    "Locale": "de-DE",
    "Pagination": {"limit": 20},
    "Address": {"city": "Berlin", "country": "DE", "postalCode": "10115"},
    "GeoPoint": {"lat": 52.52, "lon": 13.405},
    "Currency": "EUR",
    "Money": {"amount": 1999, "currency": "EUR"},
    "DateRange": {"from": "2026-01-01", "to": "2026-03-31"},
    "Person": {"name": "Ada Lovelace", "email": "ada@example.com"},
    "Link": "https://example.com/docs/1",
    "RequestId": "3f1c2a9e-6b7d-4e8f-9a0b-1c2d3e4f5a6b",
}
_DEF_FILE = {name: file for file, defs in _SHARED.items() for name in defs}


def _inline_property(rng: random.Random, name: str) -> tuple[dict[str, Any], Any]:
    """One property written in the tool itself, and a valid value for it."""
    kind = rng.choice(("text", "pattern", "enum", "int", "number", "bool", "tags", "nested"))
    desc = f"The {name} to use, as the user gave it."
    if kind == "text":
        return {"type": "string", "minLength": 1, "maxLength": 500, "description": desc}, "abc"
    if kind == "pattern":
        schema = {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$", "maxLength": 64}
        return {**schema, "description": desc}, "item-42"
    if kind == "enum":
        return {"type": "string", "enum": ["low", "normal", "high", "urgent"],
                "default": "normal", "description": desc}, "high"  # fmt: skip
    if kind == "int":
        return {"type": "integer", "minimum": 0, "maximum": 10000, "description": desc}, 7
    if kind == "number":
        return {"type": "number", "exclusiveMinimum": 0, "description": desc}, 2.5
    if kind == "bool":
        return {"type": "boolean", "default": False, "description": desc}, True
    if kind == "tags":
        return {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 20,
                "uniqueItems": True, "description": desc}, ["a", "b"]  # fmt: skip
    schema = {
        "type": "object",
        "description": desc,
        "properties": {
            "field": {"type": "string", "maxLength": 80},
            "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "contains"]},
            "value": {"type": ["string", "number", "boolean"]},
        },
        "required": ["field", "op"],
        "additionalProperties": False,
    }
    return {"type": "array", "items": schema, "maxItems": 10}, [{"field": "status", "op": "eq"}]


def _input_schema(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An input schema (with ``$ref``s to shared files) and one to three valid examples."""
    props: dict[str, Any] = {}
    value: dict[str, Any] = {}
    for ref_name in rng.sample(sorted(_DEF_FILE), rng.randint(1, 4)):
        prop = ref_name[0].lower() + ref_name[1:]
        props[prop] = {"$ref": f"schemas/{_DEF_FILE[ref_name]}.schema.yaml#/$defs/{ref_name}"}
        if rng.random() < 0.5:
            props[prop]["description"] = f"The {prop} this request is about."
        value[prop] = _SHARED_VALUES[ref_name]
    for word in rng.sample(("query", "status", "note", "owner", "priority", "filters", "limit",
                            "region", "labels", "dryRun", "score", "reason"),
                           rng.randint(2, 5)):  # fmt: skip
        props[word], value[word] = _inline_property(rng, word)
    required = sorted(rng.sample(sorted(props), rng.randint(1, min(3, len(props)))))
    schema = {"type": "object", "properties": props, "required": required,
              "additionalProperties": False}  # fmt: skip
    examples = [{"input": {k: value[k] for k in required}}]
    if rng.random() < 0.7:
        examples.append({"input": value, "description": "Every field given."})
    if rng.random() < 0.3:
        some = {k: value[k] for k in props if k in required or rng.random() < 0.5}
        examples.append({"input": some})
    return schema, examples


def _output_schema(rng: random.Random, noun: str) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "id": {"$ref": "schemas/common.schema.yaml#/$defs/Id"},
            "name": {"type": "string"},
            "updatedAt": {"$ref": "schemas/common.schema.yaml#/$defs/Timestamp"},
            "status": {"type": "string", "enum": ["active", "pending", "closed"]},
        },
        "required": ["id"],
    }
    props: dict[str, Any] = {
        "summary": {"type": "string", "description": f"One paragraph about the {noun}s found."},
        "count": {"type": "integer", "minimum": 0},
        "items": {"type": "array", "items": item},
    }
    if rng.random() < 0.5:
        props["nextCursor"] = {"type": ["string", "null"]}
    return {"type": "object", "properties": props, "required": ["summary", "count"]}


def tool(i: int, rng: random.Random) -> dict[str, Any]:
    """The declaration of tool ``i`` (a mapping, as its YAML file holds it)."""
    verb, noun, area = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_AREAS)
    read_only = verb in ("get", "list", "search", "export")
    input_schema, examples = _input_schema(rng)
    return {
        "name": f"{area}_{verb}_{noun}_{i:05d}",
        "title": f"{verb.capitalize()} {noun} ({area}, #{i})",
        "description": (
            f"{verb.capitalize()} a {noun} in the {area} system. Use it when the user asks to "
            f"{verb} a {noun} by its id, owner or status; it returns a short summary and the "
            f"matching records. Amounts are in minor units; times are RFC 3339."
        ),
        "handler": "corpushandlers:run",
        "tags": sorted({area, noun, "read" if read_only else "write"}),
        "inputSchema": input_schema,
        "outputSchema": _output_schema(rng, noun),
        "inputExamples": examples,
        "mcp": {
            "annotations": {
                "title": f"{verb.capitalize()} {noun}",
                "readOnlyHint": read_only,
                "destructiveHint": verb in ("delete", "archive"),
                "idempotentHint": verb != "create",
                "openWorldHint": False,
            }
        },
    }


def _dump(data: Any) -> str:
    """YAML text of ``data``: block style at the top, flow (JSON) for leaves, as people write."""
    return _block(data, 0)


def _block(data: Any, indent: int) -> str:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)) and value and indent < 6:
                lines.append(f"{pad}{key}:")
                lines.append(_block(value, indent + 2))
            else:
                lines.append(f"{pad}{key}: {_scalar(value)}")
    else:
        for item in data:
            if isinstance(item, dict) and item:
                body = _block(item, indent + 2)
                lines.append(f"{pad}- {body.lstrip()}")
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return "\n".join(lines)


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.,;()/-]*[A-Za-z0-9.)]")
_YAML_WORDS = {"yes", "no", "on", "off", "true", "false", "null", "y", "n"}


def _scalar(value: Any) -> str:
    """A leaf as people write it: plain words unquoted, the rest as JSON (valid YAML flow)."""
    if isinstance(value, str) and _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def write_corpus(root: Path, tools: int, per_file: int = 1, seed: int = 0) -> Path:
    """Write a project of ``tools`` realistic tools under ``root`` and return ``root``.

    ``root/toolctl.yaml`` names ``tools.d``; the handler module is ``root/corpushandlers.py``.
    """
    rng = random.Random(f"{seed}:{tools}:{per_file}")
    tools_dir = root / "tools.d"
    (tools_dir / "schemas").mkdir(parents=True, exist_ok=True)
    (root / "corpushandlers.py").write_text(HANDLERS, encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n", encoding="utf-8")
    for file, defs in _SHARED.items():
        text = _dump({"$defs": defs}) + "\n"
        (tools_dir / "schemas" / f"{file}.schema.yaml").write_text(text, encoding="utf-8")
    for start in range(0, tools, per_file):
        batch = [tool(i, rng) for i in range(start, min(start + per_file, tools))]
        if per_file == 1:
            text = "toolctl: 1\n" + _dump(batch[0]) + "\n"
            name = f"{batch[0]['name']}.yaml"
        else:
            text = "toolctl: 1\ntools:\n" + _dump(batch) + "\n"
            name = f"tools_{start // per_file:05d}.yaml"
        (tools_dir / name).write_text(text, encoding="utf-8")
    return root


CORPORA = ("realistic", "heldout", "synthetic")
"""What the load, lint and export benches generate (``--corpus``): this module's registry, the
held-out one of ``corpus_heldout.py`` (written apart, to check that budgets met here are not
met only on the registry they were tuned on), or the benches' own older synthetic tools (flat,
self-contained schemas, no examples)."""


def writer(corpus: str) -> Callable[..., Path]:
    """The ``write_corpus(root, tools, per_file)`` of a realistic ``corpus``."""
    if corpus == "heldout":
        from corpus_heldout import write_corpus as heldout

        return heldout
    return write_corpus


CORPUS_HELP = (
    "realistic: bench/corpus.py (shared $refs, examples, formats; the default); "
    "heldout: bench/corpus_heldout.py (another realistic shape, written apart)"
)


def add_corpus_option(parser: argparse.ArgumentParser) -> None:
    """The benches' ``--corpus realistic|heldout|synthetic`` option (realistic by default)."""
    parser.add_argument(
        "--corpus",
        choices=CORPORA,
        default="realistic",
        help=CORPUS_HELP + "; synthetic: this bench's own flat tools",
    )


def write_registry(
    corpus: str, root: Path, tools: int, per_file: int, synthetic: Callable[[], Any]
) -> Path:
    """Write the ``corpus`` registry of ``tools`` tools under ``root`` and return its tools
    directory: this module's (``per_file`` tools per file), or what ``synthetic()`` writes
    (a bench's own generator, which must write ``root/tools.d``)."""
    if corpus == "synthetic":
        synthetic()
    else:
        writer(corpus)(root, tools, per_file)
    return root / "tools.d"


def verdict(ratio: float, budget: float) -> str:
    """``ok`` or ``OVER`` a budget ratio, as the benches print it."""
    return f"{'ok' if ratio <= budget else 'OVER'} (<= {budget:.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write the project into")
    parser.add_argument("--tools", type=int, default=1000, help="number of tools")
    parser.add_argument("--per-file", type=int, default=1, help="tools per file (1: one each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--corpus", choices=("realistic", "heldout"), default="realistic", help=CORPUS_HELP
    )
    args = parser.parse_args()
    writer(args.corpus)(args.out, args.tools, args.per_file, args.seed)
    print(f"{args.tools} tools, {args.per_file} per file: {args.out}")


if __name__ == "__main__":
    main()

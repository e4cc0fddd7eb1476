"""A second realistic registry, written apart from ``corpus.py``: the held-out check of issue 27.

The load, lint, export and memory work was measured and tuned on ``corpus.py``. A budget met only
on the registry it was tuned on says little, so this generator writes registries of another
shape, closer to tools generated from an OpenAPI description or an SDK (a code host, a payments
API, a cluster manager), and the benches run the same budgets on it (``--corpus heldout``):

* one large shared file of components (``tools.d/schemas/components.schema.yaml``, ~30
  ``$defs``, references up to three deep) and a second one of filters that refers into it;
* ``allOf`` (a pull request is an issue plus fields), ``oneOf`` between references, ``anyOf``
  with ``null``, ``const``, ``items`` given by ``$ref``, maps (``additionalProperties`` with a
  schema), ``dependentRequired``, ``multipleOf``, ``examples`` and ``deprecated`` on properties,
  ``writeOnly`` secrets, formats ``ipv4``, ``hostname``, ``time``, ``uri-reference``;
* tools with their own ``$defs`` named by local ``#/$defs/...`` references;
* multi-line descriptions (block scalars), non-ASCII text, comments, PyYAML's own block style
  (``corpus.py`` writes JSON-like flow leaves);
* zero to four ``inputExamples``; a third of the tools without an output schema.

Every example is valid against its tool's input schema. The same ``(tools, per_file, seed)``
writes the same bytes.

    python bench/corpus.py OUT --corpus heldout --tools 5000 --per-file 1
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

HANDLERS = "def run(payload):\n    return {'ok': True}\n"

C = "schemas/components.schema.yaml#/$defs/"
F = "schemas/filters.schema.yaml#/$defs/"

_COMPONENTS: dict[str, Any] = {
    "Login": {"type": "string", "pattern": "^[a-z0-9](?:[a-z0-9-]{0,37}[a-z0-9])?$",
              "maxLength": 39, "description": "A user's login name."},
    "Slug": {"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]*$", "minLength": 1,
             "maxLength": 100},
    "RepoName": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
                 "maxLength": 140, "description": "owner/name of a repository."},
    "Color": {"type": "string", "pattern": "^[0-9a-fA-F]{6}$", "maxLength": 6},
    "Instant": {"type": "string", "format": "date-time"},
    "ClockTime": {"type": "string", "format": "time"},
    "Hostname": {"type": "string", "format": "hostname", "maxLength": 253},
    "IPv4": {"type": "string", "format": "ipv4"},
    "PathRef": {"type": "string", "format": "uri-reference", "maxLength": 1024},
    "WebUrl": {"type": "string", "format": "uri", "maxLength": 2048},
    "Sort": {"type": "string", "enum": ["created", "updated", "popularity", "long-running"],
             "default": "created"},
    "Direction": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
    "Visibility": {"type": "string", "enum": ["public", "private", "internal"]},
    "State": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
    "Page": {"type": "object", "additionalProperties": False, "properties": {
        "perPage": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
        "page": {"type": "integer", "minimum": 1, "default": 1}}},
    "Labels": {"type": "object", "description": "Free-form labels (key -> value).",
               "additionalProperties": {"type": "string", "maxLength": 63},
               "maxProperties": 64},
    "User": {"type": "object", "required": ["login"], "properties": {
        "login": {"$ref": "#/$defs/Login"}, "name": {"type": ["string", "null"]},
        "email": {"type": "string", "format": "email"}}},
    "Label": {"type": "object", "required": ["name"], "additionalProperties": False,
              "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 50},
                             "color": {"$ref": "#/$defs/Color"},
                             "description": {"type": "string", "maxLength": 100}}},
    "Milestone": {"type": "object", "required": ["title"], "properties": {
        "title": {"type": "string", "maxLength": 255}, "due": {"$ref": "#/$defs/Instant"},
        "state": {"$ref": "#/$defs/State"}}},
    "Issue": {"type": "object", "required": ["number", "title", "state"], "properties": {
        "number": {"type": "integer", "minimum": 1}, "title": {"type": "string"},
        "state": {"$ref": "#/$defs/State"}, "author": {"$ref": "#/$defs/User"},
        "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}},
        "milestone": {"anyOf": [{"$ref": "#/$defs/Milestone"}, {"type": "null"}]},
        "url": {"$ref": "#/$defs/WebUrl"}}},
    "PullRequest": {"allOf": [{"$ref": "#/$defs/Issue"}, {"type": "object", "properties": {
        "draft": {"type": "boolean"}, "head": {"type": "string"}, "base": {"type": "string"},
        "mergeable": {"type": ["boolean", "null"]}}}]},
    "Amount": {"type": "integer", "minimum": 0, "multipleOf": 1,
               "description": "Minor units of the currency (cents)."},
    "CurrencyCode": {"type": "string", "pattern": "^[a-z]{3}$", "maxLength": 3,
                     "examples": ["usd", "eur"]},
    "Price": {"type": "object", "required": ["amount", "currency"], "properties": {
        "amount": {"$ref": "#/$defs/Amount"}, "currency": {"$ref": "#/$defs/CurrencyCode"}},
        "additionalProperties": False},
    "CardRef": {"type": "object", "required": ["card"], "additionalProperties": False,
                "properties": {"card": {"type": "string", "pattern": "^card_[A-Za-z0-9]{14}$"}}},
    "BankRef": {"type": "object", "required": ["iban"], "additionalProperties": False,
                "properties": {"iban": {"type": "string",
                                        "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"}}},
    "PaymentMethod": {"oneOf": [{"$ref": "#/$defs/CardRef"}, {"$ref": "#/$defs/BankRef"}]},
    "ApiSecret": {"type": "string", "writeOnly": True, "minLength": 16, "maxLength": 128,
                  "description": "A secret the service was given; never shown back."},
    "Container": {"type": "object", "required": ["name", "image"], "properties": {
        "name": {"$ref": "#/$defs/Slug"}, "image": {"type": "string", "maxLength": 255},
        "env": {"$ref": "#/$defs/Labels"},
        "ports": {"type": "array", "maxItems": 16, "items": {
            "type": "integer", "minimum": 1, "maximum": 65535}}}},
    "Endpoint": {"type": "object", "required": ["host"], "properties": {
        "host": {"anyOf": [{"$ref": "#/$defs/Hostname"}, {"$ref": "#/$defs/IPv4"}]},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 443}}},
}  # fmt: skip

_FILTERS: dict[str, Any] = {
    "Since": {"$ref": "components.schema.yaml#/$defs/Instant",
              "description": "Only what changed after this instant."},
    "IssueQuery": {"type": "object", "additionalProperties": False, "properties": {
        "state": {"$ref": "components.schema.yaml#/$defs/State"},
        "labels": {"type": "array", "minItems": 1, "uniqueItems": True,
                   "items": {"type": "string", "maxLength": 50}},
        "author": {"$ref": "components.schema.yaml#/$defs/Login"},
        "since": {"$ref": "#/$defs/Since"},
        "sort": {"$ref": "components.schema.yaml#/$defs/Sort"},
        "direction": {"$ref": "components.schema.yaml#/$defs/Direction"}}},
    "Window": {"type": "object", "required": ["start"], "properties": {
        "start": {"$ref": "components.schema.yaml#/$defs/ClockTime"},
        "end": {"$ref": "components.schema.yaml#/$defs/ClockTime"},
        "days": {"type": "array", "items": {"type": "string", "enum": [
            "mon", "tue", "wed", "thu", "fri", "sat", "sun"]}, "uniqueItems": True}}},
}  # fmt: skip

# A valid value for each shared definition a tool may name.
_VALUES: dict[str, Any] = {
    "Login": "octo-cat", "Slug": "web-frontend", "RepoName": "acme/api", "Color": "d73a4a",
    "Instant": "2026-12-01T08:30:00Z", "ClockTime": "09:00:00Z", "Hostname": "db.internal",
    "IPv4": "10.0.3.7", "PathRef": "../docs/readme.md#usage", "WebUrl": "https://acme.test/x",
    "Sort": "updated", "Direction": "asc", "Visibility": "private", "State": "closed",
    "Page": {"perPage": 50}, "Labels": {"team": "payments", "tier": "1"},
    "User": {"login": "octo-cat", "name": None}, "Label": {"name": "bug", "color": "d73a4a"},
    "Milestone": {"title": "v2.0", "state": "open"},
    "Issue": {"number": 42, "title": "Crash on start", "state": "open"},
    "PullRequest": {"number": 7, "title": "Fix the crash", "state": "open", "draft": True},
    "Amount": 2500, "CurrencyCode": "eur", "Price": {"amount": 2500, "currency": "eur"},
    "PaymentMethod": {"iban": "DE89370400440532013000"},
    "ApiSecret": "sk_live_0123456789abcdef",
    "Container": {"name": "web", "image": "nginx:1.27", "ports": [80, 443]},
    "Endpoint": {"host": "10.0.3.7", "port": 5432},
    "IssueQuery": {"state": "open", "labels": ["bug"], "since": "2026-11-01T00:00:00Z"},
    "Window": {"start": "22:00:00Z", "days": ["sat", "sun"]},
}  # fmt: skip

_NAMED = sorted(set(_VALUES) - {"Since"})
_FILTER_NAMES = set(_FILTERS)
_SERVICES = (
    ("gh", "code host", ("issue", "pull_request", "label", "milestone", "repository", "webhook")),
    ("pay", "payments API", ("charge", "refund", "customer", "price", "payout", "dispute")),
    ("kube", "cluster", ("deployment", "pod", "service", "secret", "ingress", "job")),
)
_ACTIONS = ("list", "get", "create", "update", "delete", "search", "close", "reopen", "rotate")
_NOTES = (
    "Ratelimited: 5,000 requests per hour per token.",
    "Runs against the staging environment unless `live` is set.",
    "Times are UTC; a naïve time is refused — write the offset.",
    "Returns at most one page; follow `nextPage` for more (größere Mengen: paginate).",
)


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": (F if name in _FILTER_NAMES else C) + name}


def _own_field(rng: random.Random, name: str) -> tuple[dict[str, Any], Any]:
    """A property written in the tool itself, and a valid value for it."""
    kind = rng.randrange(9)
    if kind == 0:
        return {"type": "string", "description": f"The {name}.", "maxLength": 256,
                "examples": ["first", "second"]}, "first"  # fmt: skip
    if kind == 1:
        return {"type": ["string", "null"], "maxLength": 64}, None
    if kind == 2:
        return {"const": "v1", "description": "The only version there is."}, "v1"
    if kind == 3:
        return {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 0.05}, 0.25
    if kind == 4:
        return {"type": "boolean", "deprecated": True, "default": False,
                "description": "Kept for old clients; ignored."}, False  # fmt: skip
    if kind == 5:
        return {"type": "array", "minItems": 1, "maxItems": 5, "items": _ref("Label")}, [
            {"name": "p1"}
        ]
    if kind == 6:
        return {"type": "integer", "enum": [1, 2, 4, 8, 16]}, 4
    if kind == 7:
        return {"$ref": "#/$defs/Own"}, {"key": "k-1", "weight": 3}
    return _ref(rng.choice(("Page", "Labels", "Window"))) | {
        "description": f"The {name} settings."
    }, None


_OWN_DEFS = {
    "Own": {"type": "object", "required": ["key"], "additionalProperties": False,
            "properties": {"key": {"type": "string", "pattern": "^[a-z]-[0-9]+$"},
                           "weight": {"type": "integer", "minimum": 0},
                           "next": {"$ref": "#/$defs/Own"}}},
}  # fmt: skip


def _input(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    props: dict[str, Any] = {}
    value: dict[str, Any] = {}
    for name in rng.sample(_NAMED, rng.randint(1, 5)):
        prop = name[0].lower() + name[1:]
        props[prop] = _ref(name)
        value[prop] = _VALUES[name]
    own = False
    for word in rng.sample(("note", "mode", "ratio", "legacy", "extraLabels", "size", "rule",
                            "options", "comment", "reason"), rng.randint(1, 4)):  # fmt: skip
        schema, val = _own_field(rng, word)
        own = own or schema.get("$ref") == "#/$defs/Own"
        props[word] = schema
        if val is not None or schema.get("type") == ["string", "null"]:
            value[word] = val
    required = sorted(rng.sample(sorted(value), rng.randint(1, min(3, len(value)))))
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if rng.random() < 0.6:
        schema["additionalProperties"] = False
    if len(required) < len(value) and rng.random() < 0.3:
        optional = sorted(set(value) - set(required))
        # every example holds the required fields, so naming optional[0] is always allowed
        schema["dependentRequired"] = {optional[0]: required[:1]}
    if own:
        schema["$defs"] = _OWN_DEFS
    examples: list[dict[str, Any]] = []
    for i in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
        if i == 0:
            examples.append({"input": {k: value[k] for k in required}})
        else:
            keep = {k: value[k] for k in value if k in required or rng.random() < 0.6}
            examples.append({"input": keep, "description": f"Example {i + 1}."})
    return schema, examples


def _output(rng: random.Random, thing: str) -> dict[str, Any] | None:
    if rng.random() < 0.33:
        return None
    item = rng.choice(("Issue", "PullRequest", "Price", "Container", "User", "Endpoint"))
    return {
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "items": _ref(item)},
            "nextPage": {"anyOf": [{"type": "integer", "minimum": 2}, {"type": "null"}]},
            "summary": {"type": "string", "description": f"What was done to the {thing}."},
        },
    }


def tool(i: int, rng: random.Random) -> dict[str, Any]:
    """The declaration of tool ``i``, in the key order of generated registries."""
    prefix, service, things = rng.choice(_SERVICES)
    thing, action = rng.choice(things), rng.choice(_ACTIONS)
    read_only = action in ("list", "get", "search")
    schema, examples = _input(rng)
    description = (
        f"{action.capitalize()} {thing.replace('_', ' ')}s on the {service}.\n\n"
        f"Use this when the user wants to {action} a {thing.replace('_', ' ')}; "
        f"prefer `{prefix}_search_{thing}` to find one first.\n{rng.choice(_NOTES)}\n"
    )
    declared: dict[str, Any] = {
        "toolctl": 1,
        "name": f"{prefix}_{thing}_{action}_{i}",
        "description": description,
        "handler": "heldouthandlers:run",
        "inputSchema": schema,
    }
    output = _output(rng, thing)
    if output is not None:
        declared["outputSchema"] = output
    if examples:
        declared["inputExamples"] = examples
    if rng.random() < 0.7:
        declared["tags"] = [prefix, thing]
    declared["mcp"] = {
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": action in ("delete", "close", "rotate"),
            "openWorldHint": prefix != "kube",
        }
    }
    return declared


class _Dumper(yaml.SafeDumper):
    """PyYAML's block style, every shared value written out (toolctl refuses anchors)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None  # descriptions as block scalars, as people write
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def _text(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def write_corpus(root: Path, tools: int, per_file: int = 1, seed: int = 0) -> Path:
    """Write a project of ``tools`` held-out tools under ``root`` and return ``root``."""
    rng = random.Random(f"heldout:{seed}:{tools}:{per_file}")
    tools_dir = root / "tools.d"
    (tools_dir / "schemas").mkdir(parents=True, exist_ok=True)
    (root / "heldouthandlers.py").write_text(HANDLERS, encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n", encoding="utf-8")
    for name, defs in (("components", _COMPONENTS), ("filters", _FILTERS)):
        text = f"# Shared {name}; tools name them by $ref.\n" + _text({"$defs": defs})
        (tools_dir / "schemas" / f"{name}.schema.yaml").write_text(text, encoding="utf-8")
    for start in range(0, tools, per_file):
        batch = [tool(i, rng) for i in range(start, min(start + per_file, tools))]
        if per_file == 1:
            text = "# generated from the service's API description\n" + _text(batch[0])
            name = f"{batch[0]['name']}.yaml"
        else:
            for declared in batch:
                del declared["toolctl"]
            text = _text({"toolctl": 1, "tools": batch})
            name = f"group_{start // per_file:05d}.yaml"
        (tools_dir / name).write_text(text, encoding="utf-8")
    return root

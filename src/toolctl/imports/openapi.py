"""OpenAPI 3.0/3.1 operations as tool declarations with a built-in ``http:`` block.

:func:`read_spec` reads the file (strict JSON or YAML, bounded); :func:`operations` turns each
selected operation into an :class:`Imported` (its declaration, notes) or a skipped one with the
reason. Nothing here touches the network: the calls happen at run time
(:mod:`toolctl.runtime.execution.httpcall`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolctl.errors import UsageError
from toolctl.imports.naming import Names, env_name, operation_name, slug
from toolctl.imports.oaschema import ImportRefused, SchemaConverter, deref

MAX_SPEC_BYTES = 64 * 1024 * 1024
MAX_DESCRIPTION = 1024  # the tightest provider limit (OpenAI), so every export takes it
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PROPERTY = re.compile(r"[^A-Za-z0-9_.-]")
_JSON_MEDIA = re.compile(r"^application/([a-z0-9.+-]*\+)?json(\s*;.*)?$", re.IGNORECASE)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (a spec is untrusted: shapes vary)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str:
    """``value`` stripped when it is a string, else ``""``."""
    return value.strip() if isinstance(value, str) else ""


@dataclass
class Imported:
    """One operation: its tool declaration, or ``skipped`` saying why there is none."""

    method: str
    path: str
    name: str = ""
    declaration: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    @property
    def label(self) -> str:
        """``GET /pets/{id}`` (or ``tool echo`` for an MCP tool): how reports name it."""
        if self.method == "mcp":
            return f"tool {self.path!r}"
        return f"{self.method.upper()} {self.path}"


@dataclass
class Selection:
    """Which operations to import (empty: all) and the base URL to write."""

    tags: tuple[str, ...] = ()
    operation_ids: tuple[str, ...] = ()
    base_url: str | None = None


def read_spec(path: Path) -> dict[str, Any]:
    """The spec at ``path`` (JSON or YAML): :class:`UsageError` when it is not one."""
    from toolctl.yamlsrc import decode_text, read_bytes

    try:
        raw = read_bytes(path, max_bytes=MAX_SPEC_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    text = decode_text(raw)
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"{path}: not valid JSON (or nested too deep): {exc}") from None
    else:
        data = _string_keys(_load_yaml(text, path), 0)
    if not isinstance(data, dict) or not isinstance(data.get("openapi"), str):
        raise UsageError(
            f"{path}: not an OpenAPI document (no `openapi:` version key)",
            hint="toolctl imports OpenAPI 3.0 and 3.1; convert a Swagger 2.0 file first",
        )
    if not data["openapi"].startswith(("3.0", "3.1")):
        raise UsageError(f"{path}: OpenAPI {data['openapi']} is not supported (3.0 or 3.1)")
    if not isinstance(data.get("paths", {}), dict):
        raise UsageError(f"{path}: `paths` is not a mapping")
    return data


def _load_yaml(text: str, path: Path) -> Any:
    """A YAML spec. Not the tool files' strict loader: specs key responses by number
    (``200:``), which it refuses. Anchors and aliases are refused first (no alias bomb);
    timestamps stay strings (JSON has no dates)."""
    import yaml

    loader = _spec_loader()
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark: Any = event.start_mark
                where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
                raise UsageError(
                    f"{where}: anchors and aliases are not allowed in a spec",
                    hint="write the value out in full",
                )
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise UsageError(f"{where}: not valid YAML: {problem}") from None


@functools.cache
def _spec_loader() -> Any:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class SpecLoader(base):  # type: ignore[misc,valid-type]
        pass

    SpecLoader.yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return SpecLoader


def _string_keys(value: Any, depth: int) -> Any:
    """``value`` with every mapping key a string (``200`` → ``"200"``), at most 200 deep."""
    if depth > 200:
        raise UsageError("the spec nests deeper than 200 levels")
    if isinstance(value, dict):
        return {str(k): _string_keys(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v, depth + 1) for v in value]
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def title_of(spec: dict[str, Any]) -> str:
    """The spec's ``info.title`` (``api`` when it has none)."""
    info = spec.get("info")
    title = info.get("title") if isinstance(info, dict) else None
    return title if isinstance(title, str) and title.strip() else "api"


def default_dir(spec: dict[str, Any]) -> Path:
    """``tools.d/<slug of info.title>``."""
    return Path("tools.d") / slug(title_of(spec))


def operations(spec: dict[str, Any], selection: Selection) -> list[Imported]:
    """Every selected operation of ``spec``, in the spec's order (names claimed in it)."""
    names = Names()
    prefix = env_name(slug(title_of(spec)))
    found: list[Imported] = []
    for path, method, item, op in walk(spec):
        if not _selected(op, selection):
            continue
        one = Imported(method, path)
        one.name = names.claim(operation_name(op.get("operationId"), method, path))
        try:
            one.declaration = _declaration(spec, path, method, item, op, one, prefix, selection)
        except ImportRefused as exc:
            one.skipped = exc.message
        found.append(one)
    if selection.operation_ids:
        missing = set(selection.operation_ids) - {
            op.get("operationId") for _, _, _, op in walk(spec)
        }
        if missing:
            raise UsageError(
                f"no operation with operationId {', '.join(sorted(map(str, missing)))}",
                hint="list the spec's operation ids, or select by --tag",
            )
    return found


def walk(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """Every operation: ``(path, method, path item, operation)``, in the spec's order."""
    for path, item in spec.get("paths", {}).items():
        item = deref(spec, item)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                yield str(path), method, item, op


def _selected(op: dict[str, Any], selection: Selection) -> bool:
    """No filter: every operation; else those named by --operation plus those with a --tag."""
    if not selection.operation_ids and not selection.tags:
        return True
    if op.get("operationId") in selection.operation_ids:
        return True
    return any(t in selection.tags for t in as_list(op.get("tags")))


def _declaration(
    spec: dict[str, Any],
    path: str,
    method: str,
    item: dict[str, Any],
    op: dict[str, Any],
    one: Imported,
    prefix: str,
    selection: Selection,
) -> dict[str, Any]:
    conv = SchemaConverter(spec, openapi30=spec["openapi"].startswith("3.0"))
    props: dict[str, Any] = {}
    required: list[str] = []
    wire: list[dict[str, Any]] = []
    for param in _parameters(spec, item, op):
        _add_parameter(conv, param, props, required, wire, one)
    body = _body(spec, conv, op, props, required, one)
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    http: dict[str, Any] = {"method": method.upper(), "path": path}
    base = selection.base_url or _server_url(spec, item, op)
    if base:
        http["baseUrl"] = base
    http["baseUrlEnv"] = f"{prefix}_BASE_URL"
    if wire:
        http["parameters"] = wire
    if body:
        http["body"] = body
    declaration: dict[str, Any] = {"toolctl": 1, "name": one.name}
    summary, text = _texts(op, method, path)
    declaration["title"] = (summary or one.name.replace("_", " ").capitalize())[:200]
    declaration["description"] = text
    declaration["inputSchema"] = conv.finish(input_schema)
    one.notes.extend(conv.notes)
    conv = SchemaConverter(spec, openapi30=conv.openapi30)  # the output's own $defs
    output, wrap = _output(spec, conv, op)
    if output is not None:
        declaration["outputSchema"] = conv.finish(output)
        declaration["outputValidation"] = "warn"  # the API, not its description, has the last word
    if wrap:
        http["response"] = {"wrap": wrap}
    auth, secrets = _auth(spec, op, prefix, one)
    if auth:
        http["auth"] = auth
    declaration["http"] = http
    if secrets:
        declaration["secrets"] = secrets
    annotations = _annotations(method)
    if annotations.get("destructiveHint"):
        declaration["requireApproval"] = True  # safe by default; a hand edit survives
    declaration["mcp"] = {"annotations": annotations}
    declaration["tags"] = [t for t in op.get("tags", []) if isinstance(t, str) and t][:20] or [
        "imported"
    ]
    declaration["x-import"] = {"kind": "openapi", "operation": one.label}
    if isinstance(op.get("operationId"), str):
        declaration["x-import"]["operationId"] = op["operationId"]
    one.notes.extend(conv.notes)
    return declaration


def _texts(op: dict[str, Any], method: str, path: str) -> tuple[str, str]:
    summary, text = as_text(op.get("summary")), as_text(op.get("description"))
    if summary and text and not text.startswith(summary):
        text = f"{summary}\n\n{text}"
    text = text or summary
    call = f"(HTTP {method.upper()} {path})"
    room = MAX_DESCRIPTION - len(call) - 2
    if len(text) > room:  # OpenAI refuses a longer description; cut at a word, say so
        text = text[: room - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return summary, f"{text}\n\n{call}" if text else call


def _annotations(method: str) -> dict[str, Any]:
    """From the method: reads are read-only; DELETE, PUT and PATCH change or remove what is
    there (destructive), POST adds; PUT and DELETE are idempotent (RFC 9110)."""
    read_only = method in ("get", "head", "options")
    out: dict[str, Any] = {"readOnlyHint": read_only}
    if not read_only:
        out["destructiveHint"] = method in ("delete", "put", "patch")
    out["idempotentHint"] = read_only or method in ("put", "delete")
    out["openWorldHint"] = True
    return out


def _parameters(
    spec: dict[str, Any], item: dict[str, Any], op: dict[str, Any]
) -> list[dict[str, Any]]:
    """The path item's parameters, overridden by the operation's (by name and location)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for source in (item.get("parameters"), op.get("parameters")):
        for param in source if isinstance(source, list) else []:
            param = deref(spec, param)
            if isinstance(param, dict) and isinstance(param.get("name"), str):
                merged[(param["name"], str(param.get("in")))] = param
    return list(merged.values())


def _add_parameter(
    conv: SchemaConverter,
    param: dict[str, Any],
    props: dict[str, Any],
    required: list[str],
    wire: list[dict[str, Any]],
    one: Imported,
) -> None:
    name, where = param["name"], param.get("in")
    if where not in ("path", "query", "header"):
        if param.get("required"):
            raise ImportRefused(f"required {where} parameter {name!r} is not supported")
        one.notes.append(f"{where} parameter {name!r} left out (only path, query, header)")
        return
    if where == "header" and name.lower() in ("accept", "content-type", "authorization"):
        return  # set by the handler (OpenAPI says these are ignored as parameters)
    schema = param.get("schema")
    if schema is None and isinstance(param.get("content"), dict):
        schema = as_dict(next(iter(param["content"].values()), {})).get("schema")
    prop = _PROPERTY.sub("_", name)[:64] or "param"
    if prop in props:
        prop = f"{prop}_{where}"
    converted = conv.convert(schema if schema is not None else {}, f"parameter {name}")
    if isinstance(converted, dict):
        if "$ref" in converted:
            converted = {"allOf": [converted]}
        about = param.get("description")
        about = about.strip() if isinstance(about, str) and about.strip() else ""
        converted.setdefault("description", about or f"The {name} {where} parameter.")
    if param.get("deprecated") is True and isinstance(converted, dict):
        converted["deprecated"] = True
    props[prop] = converted
    if param.get("required") or where == "path":
        required.append(prop)
    entry: dict[str, Any] = {"name": name, "in": where}
    if prop != name:
        entry["property"] = prop
    wire.append(entry)


def _body(
    spec: dict[str, Any],
    conv: SchemaConverter,
    op: dict[str, Any],
    props: dict[str, Any],
    required: list[str],
    one: Imported,
) -> dict[str, Any] | None:
    body = deref(spec, op.get("requestBody"))
    if not isinstance(body, dict) or not isinstance(body.get("content"), dict):
        return None
    media = next((m for m in body["content"] if _JSON_MEDIA.match(str(m))), None)
    if media is None:
        kinds = ", ".join(sorted(map(str, body["content"])))[:200]
        if body.get("required"):
            raise ImportRefused(f"request body is {kinds}: only JSON bodies are imported")
        one.notes.append(f"optional {kinds} request body left out (only JSON bodies)")
        return None
    prop = "body" if "body" not in props else "request_body"
    content = body["content"][media] if isinstance(body["content"][media], dict) else {}
    schema = conv.convert(content.get("schema", {}), "request body")
    if isinstance(body.get("description"), str) and isinstance(schema, dict):
        if "$ref" in schema:
            schema = {"allOf": [schema]}
        schema.setdefault("description", body["description"].strip())
    props[prop] = schema
    if body.get("required"):
        required.append(prop)
    return {"property": prop, "contentType": str(media)}


def _output(
    spec: dict[str, Any], conv: SchemaConverter, op: dict[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    # a YAML spec may key responses by number (200:) rather than by string ("200":)
    responses = {str(k): v for k, v in as_dict(op.get("responses")).items()}
    for code in sorted(c for c in responses if c.startswith("2")):
        response = deref(spec, responses[code])
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict):
            continue
        media = next((m for m in content if _JSON_MEDIA.match(str(m))), None)
        if media is None or not isinstance(content[media], dict):
            return None, None
        schema = conv.convert(content[media].get("schema", {}), f"response {code}")
        if _is_object(spec, conv, schema):  # MCP wants `type: object` at the root itself
            return (
                schema if schema.get("type") == "object" else {"type": "object", "allOf": [schema]}
            ), None
        return {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
        }, "result"
    return None, None


def _is_object(spec: dict[str, Any], conv: SchemaConverter, schema: Any) -> bool:
    """True when ``schema`` (or the ``$defs`` entry it names) says ``type: object``."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return False
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = conv.defs.get(ref[len("#/$defs/") :])
            continue
        if schema.get("type") == "object" or "properties" in schema:
            return True
        branches = schema.get("allOf")
        return isinstance(branches, list) and any(_is_object(spec, conv, b) for b in branches)
    return False


def _server_url(spec: dict[str, Any], item: dict[str, Any], op: dict[str, Any]) -> str | None:
    for holder in (op, item, spec):
        servers = holder.get("servers")
        if isinstance(servers, list) and servers and isinstance(servers[0], dict):
            return _expand_server(servers[0])
    return None


def _expand_server(server: dict[str, Any]) -> str | None:
    url = server.get("url")
    if not isinstance(url, str):
        return None
    variables = as_dict(server.get("variables"))
    for name, var in variables.items():
        if isinstance(var, dict) and isinstance(var.get("default"), str):
            url = url.replace("{" + str(name) + "}", var["default"])
    return url.rstrip("/") or None


def _auth(
    spec: dict[str, Any], op: dict[str, Any], prefix: str, one: Imported
) -> tuple[list[dict[str, Any]], list[str]]:
    """How credentials are sent (the first alternative toolctl can send), and the env names."""
    needs = op.get("security", spec.get("security"))
    if not isinstance(needs, list) or not needs:
        return [], []
    optional = any(isinstance(alt, dict) and not alt for alt in needs)
    schemes = spec.get("components", {}).get("securitySchemes", {})
    for alt in needs:
        if not isinstance(alt, dict) or not alt:
            continue
        entries = [_scheme_entry(deref(spec, schemes.get(n)), n, prefix) for n in alt]
        if all(e is not None for e in entries):
            out = [e for e in entries if e is not None]
            if optional:
                for e in out:
                    e["optional"] = True
            return out, sorted({e["secret"] for e in out})
    one.notes.append("no security scheme toolctl can send (apiKey, http bearer/basic, oauth2)")
    return [], []


def _scheme_entry(scheme: Any, name: str, prefix: str) -> dict[str, Any] | None:
    if not isinstance(scheme, dict):
        return None
    secret = env_name(prefix, name) if not name.upper().startswith(prefix) else env_name(name)
    kind = scheme.get("type")
    if kind == "apiKey" and scheme.get("in") in ("header", "query"):
        return {"secret": secret, "in": scheme["in"], "name": str(scheme.get("name"))}
    if kind == "http" and str(scheme.get("scheme", "")).lower() in ("bearer", "basic"):
        return {"secret": secret, "scheme": str(scheme["scheme"]).lower()}
    if kind in ("oauth2", "openIdConnect"):
        return {"secret": secret, "scheme": "bearer"}
    return None

"""Lint settings: the ``lint:`` section of ``toolctl.yaml`` (or ``[tool.toolctl.lint]``).

```yaml
lint:
  select: [ALL]                 # codes (TL204), prefixes (TL2), rule names or families
  ignore: [TL208]
  severity: {TL205: error, descriptions: info, TL502: off}
  per-file-ignores: {"tools.d/legacy/*.yaml": [schemas]}
  providers: [openai, anthropic]
  budget: {tool: 1500, registry: 30000}     # estimated tokens
  description: {min-length: 20, max-length: 1024}
  fail-on: error
```

Keys may be written kebab-case or snake_case. Anything unknown is a :class:`ConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.errors import ConfigError
from toolctl.export.formats import BUILTIN as BUILTIN_FORMATS
from toolctl.export.formats import installed
from toolctl.export.names import OPENAI_DESCRIPTION_LIMIT

PROVIDERS = tuple(BUILTIN_FORMATS)
"""Providers checked by default: toolctl's built-in export formats."""
_KEYS = (
    "select",
    "ignore",
    "severity",
    "per_file_ignores",
    "providers",
    "budget",
    "description",
    "fail_on",
    "resolve",
)

_NUMBERS = {
    "budget": {"tool": "tool_budget", "registry": "registry_budget"},
    "description": {"min_length": "description_min", "max_length": "description_max"},
}


@dataclass(frozen=True)
class LintConfig:
    """Everything that changes what lint reports. Build with :meth:`from_settings`."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity | None] = field(default_factory=dict)
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    providers: tuple[str, ...] = PROVIDERS
    tool_budget: int = 1500
    registry_budget: int = 30000
    description_min: int = 20
    description_max: int = OPENAI_DESCRIPTION_LIMIT  # the strictest provider's limit
    fail_on: Severity = Severity.ERROR
    resolve: bool = False

    @classmethod
    def from_settings(
        cls, section: Mapping[str, Any] | None, where: str = "toolctl.yaml"
    ) -> LintConfig:
        """Parse a ``lint`` settings mapping; :class:`ConfigError` names the bad key."""
        data = {k.replace("-", "_"): v for k, v in (section or {}).items()}
        unknown = sorted(k for k in data if k not in _KEYS)
        if unknown:
            raise ConfigError(
                f"{where}: unknown lint setting(s) {', '.join(unknown)}",
                hint="known: " + ", ".join(k.replace("_", "-") for k in _KEYS),
            )
        out = cls()
        if "select" in data:
            out = replace(out, select=_names(data["select"], "select", where))
        if "ignore" in data:
            out = replace(out, ignore=_names(data["ignore"], "ignore", where))
        if "severity" in data:
            out = replace(out, severity=_severities(data["severity"], where))
        if "per_file_ignores" in data:
            out = replace(out, per_file_ignores=_per_file(data["per_file_ignores"], where))
        if "providers" in data:
            out = replace(out, providers=parse_providers(data["providers"], where))
        numbers: dict[str, Any] = {}
        for group, fields in _NUMBERS.items():
            if group in data:
                values = _mapping(data[group], group, where, tuple(fields))
                for key, attr in fields.items():
                    numbers[attr] = _count(values, key, getattr(out, attr), where)
        out = replace(out, **numbers)
        if "fail_on" in data:
            out = replace(out, fail_on=parse_severity(data["fail_on"], where, "fail-on"))
        if "resolve" in data:
            if not isinstance(data["resolve"], bool):
                raise ConfigError(f"{where}: lint resolve must be true or false")
            out = replace(out, resolve=data["resolve"])
        return out


def parse_severity(value: Any, where: str, key: str) -> Severity:
    """``error`` / ``warning`` / ``info`` → :class:`Severity`."""
    try:
        return Severity(value)
    except ValueError:
        raise ConfigError(f"{where}: {key} must be error, warning or info, not {value!r}") from None


def parse_providers(value: Any, where: str = "--provider") -> tuple[str, ...]:
    """A list (or comma-separated string) of provider names: installed export formats."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{where}: providers must be a list of names")
    names = tuple(v.strip() for v in items if v.strip())
    known = list(installed())  # built-in and third-party export formats
    bad = [n for n in names if n not in known]
    if bad:
        raise ConfigError(
            f"{where}: unknown provider(s) {', '.join(bad)}",
            hint="known providers: " + ", ".join(known),
        )
    return names


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{where}: lint {key} must be a list of rule codes or families")
    return tuple(v.strip() for v in items if v.strip())


def _severities(value: Any, where: str) -> dict[str, Severity | None]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: lint severity must map codes or families to a severity")
    out: dict[str, Severity | None] = {}
    for sel, level in value.items():
        out[sel] = (
            None if level in ("off", False) else parse_severity(level, where, f"severity of {sel}")
        )
    return out


def _per_file(value: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: lint per-file-ignores must map file globs to rule lists")
    return {
        str(glob): _names(codes, f"per-file-ignores[{glob!r}]", where)
        for glob, codes in value.items()
    }


def _mapping(value: Any, key: str, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: lint {key} must be a mapping")
    data = {k.replace("-", "_"): v for k, v in value.items()}
    unknown = sorted(k for k in data if k not in allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown lint {key} setting(s) {', '.join(unknown)}",
            hint="known: " + ", ".join(a.replace("_", "-") for a in allowed),
        )
    return data


def _count(data: dict[str, Any], key: str, default: int, where: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: lint {key.replace('_', '-')} must be a whole number >= 0")
    return value

"""``toolctl lint``: a catalogue of rules for what makes tools fail with real models and clients.

``validate`` says whether a registry is well-formed; ``lint`` says whether it is good. Each rule
is a small function with a stable code (``TL###``), a family, a default severity and an
explanation (``toolctl lint --explain CODE``); rules come from the ``toolctl.lint_rules``
entry-point group, built-ins included.

>>> import toolctl
>>> from toolctl.lint import lint
>>> findings = lint(toolctl.load(strict=False), providers=["openai"])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from toolctl.diagnostics import Diagnostic, sorted_unique
from toolctl.errors import ConfigError
from toolctl.lint.config import PROVIDERS, LintConfig, parse_providers
from toolctl.lint.context import LintContext
from toolctl.lint.model import FAMILIES, Hit, Rule, RuleSet
from toolctl.lint.packs import Catalogue, catalogue

if TYPE_CHECKING:
    from toolctl.catalog import Toolset
    from toolctl.registry import Registry
    from toolctl.spec import ToolSpec

__all__ = [
    "FAMILIES",
    "PROVIDERS",
    "Catalogue",
    "Hit",
    "LintConfig",
    "LintContext",
    "Rule",
    "RuleSet",
    "catalogue",
    "config_for",
    "lint",
    "lint_tools",
]


def config_for(registry: Registry) -> LintConfig:
    """The registry project's ``lint`` settings as a :class:`LintConfig`."""
    project = registry.project
    if project is None:
        return LintConfig()
    where = str(project.config_file or "toolctl.yaml")
    section = project.settings.get("lint")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(
            f"{where}: lint settings must be a mapping, not {section!r}",
            hint="write them under `lint:` as key: value pairs",
        )
    config = LintConfig.from_settings(section, where)
    from toolctl.lint.engine import check_selectors

    try:  # here, where the file is known; the engine checks again for configs built in Python
        check_selectors(config, catalogue())
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    return config


def lint_tools(
    tools: Sequence[ToolSpec],
    config: LintConfig | None = None,
    *,
    python_path: Sequence[Path] = (),
    root: Path | None = None,
    directive_files: Mapping[str, bool] | None = None,
    toolsets: Mapping[str, Toolset] | None = None,
) -> list[Diagnostic]:
    """Lint findings for ``tools`` (e.g. built with ``ToolSpec.from_validated``).

    ``directive_files``: which files hold a ``toolctl:`` comment, when known (see
    :attr:`Registry.directive_files`); files it says hold none are not read for ignores.
    ``toolsets``: the declared toolsets (:attr:`Registry.toolsets`), which say what is deferred.
    """
    from toolctl.lint.engine import run

    return run(
        tools,
        config or LintConfig(),
        catalogue(),
        python_path=python_path,
        root=root,
        directive_files=directive_files,
        toolsets=toolsets,
    )


def lint(
    registry: Registry,
    *,
    config: LintConfig | None = None,
    providers: Iterable[str] | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    resolve: bool | None = None,
    include_load: bool = True,
) -> list[Diagnostic]:
    """Lint a loaded registry with its project's settings, plus any overrides given here.

    Returns the load diagnostics (``include_load``) and the lint findings, sorted by location.
    ``resolve=True`` imports handlers to check them: only for trusted code.
    """
    config = config or config_for(registry)
    if providers is not None:
        config = replace(config, providers=parse_providers(list(providers)))
    if select is not None:
        config = replace(config, select=tuple(select))
    if ignore is not None:
        config = replace(config, ignore=(*config.ignore, *ignore))
    if resolve is not None:
        config = replace(config, resolve=resolve)
    project = registry.project
    findings = lint_tools(
        list(registry.tools.values()),
        config,
        python_path=project.python_path if project else (),
        directive_files=registry.directive_files,
        toolsets=registry.toolsets,
    )
    return sorted_unique([*registry.diagnostics, *findings] if include_load else findings)

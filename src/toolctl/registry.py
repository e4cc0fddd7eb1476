"""The registry: the loaded, validated tools by name, plus everything found wrong on the way."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.diagnostics import Diagnostic, has_errors
from toolctl.errors import UnknownToolError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.catalog import Toolset
    from toolctl.config import Project
    from toolctl.runtime.options import CallKeywords, CallOptions, ContinueKeywords, StoreChoice
    from toolctl.runtime.result import RunResult
    from toolctl.runtime.streaming import InputStream
    from toolctl.spec import ToolSpec


@dataclass
class Registry:
    """Tools by name (sorted), the diagnostics of loading them, and the project they belong to.

    The registry itself never imports user code; ``call``/``acall`` (runtime), ``export`` and
    ``lint`` forward to their modules, which are imported on first use.
    """

    tools: dict[str, ToolSpec]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    project: Project | None = None
    # Tool file (as named in diagnostics) -> whether loading saw a "# toolctl:" comment in it
    # (yamlsrc.may_hold_directive): lint need not read a file again to look for ignore comments
    # it cannot hold. None: not known.
    directive_files: dict[str, bool] | None = field(default=None, repr=False, compare=False)
    # Whether installed registry packs were loaded with it: a reload loads the same sources.
    packs: bool = field(default=True, compare=False)
    # The lock entries (by tool name) set by --locked (contract.verify_locked): tools calling an
    # upstream MCP server compare its live definition with them before each call. None: unlocked.
    locked: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    @functools.cached_property
    def toolsets(self) -> dict[str, Toolset]:
        """The toolsets the project declares (``toolsets:`` in toolctl.yaml), by name."""
        from toolctl.catalog import parse_toolsets

        settings = self.project.settings if self.project is not None else {}
        # checked when the project was read: a bad setting never gets this far
        return parse_toolsets(settings, lambda: "toolsets")

    @property
    def ok(self) -> bool:
        """True when loading found no errors."""
        return not has_errors(self.diagnostics)

    def get(self, name: str) -> ToolSpec:
        """The tool called ``name``; :class:`UnknownToolError` (with suggestions) otherwise."""
        try:
            return self.tools[name]
        except KeyError:
            import difflib  # only for a wrong name: every command reads this module

            near = difflib.get_close_matches(name, list(self.tools), n=3)
            hint = f"did you mean {', '.join(near)}?" if near else "run `toolctl list`"
            raise UnknownToolError(f"no tool named {name!r}", hint=hint) from None

    def select(
        self,
        names: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        *,
        include_disabled: bool = False,
    ) -> list[ToolSpec]:
        """Tools by name and/or tag (any of the tags), in name order; disabled ones left out.

        Unknown names raise :class:`UnknownToolError`. Naming a disabled tool selects it.
        """
        wanted = list(names or [])
        tagset = set(tags or [])
        if wanted:
            specs = [self.get(n) for n in dict.fromkeys(wanted)]
            specs.sort(key=lambda s: s.name)
        else:
            specs = [s for s in self.tools.values() if include_disabled or s.enabled]
        if tagset:
            specs = [s for s in specs if tagset.intersection(s.tags)]
        return specs

    # -- forwarding to the layers above (imported lazily) ---------------------------------

    def call(
        self,
        name: str,
        input: Any = None,
        options: CallOptions | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> RunResult:
        """Run a tool through the call pipeline (see :func:`toolctl.runtime.api.call`).

        ``input`` is arbitrary JSON (a dict or its text); ``options`` a
        :class:`~toolctl.runtime.options.CallOptions`, or its fields as keywords.
        """
        from toolctl.runtime import api

        return api.call(self, name, input, options, **keywords)

    async def acall(
        self,
        name: str,
        input: Any = None,
        options: CallOptions | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> RunResult:
        """Async form of :meth:`call`."""
        from toolctl.runtime import api

        return await api.acall(self, name, input, options, **keywords)

    def resume(
        self,
        run_id: str,
        data: Any = None,
        options: CallOptions | None = None,
        **keywords: Unpack[ContinueKeywords],
    ) -> RunResult:
        """Continue a suspended run with resume data (see :func:`toolctl.runtime.api.resume`)."""
        from toolctl.runtime import api

        return api.resume(self, run_id, data, options, **keywords)

    def approve(
        self,
        run_id: str,
        options: CallOptions | None = None,
        *,
        by: str = "user",
        **keywords: Unpack[ContinueKeywords],
    ) -> RunResult:
        """Approve a run awaiting approval and run it (see :func:`toolctl.runtime.api.approve`)."""
        from toolctl.runtime import api

        return api.approve(self, run_id, options, by=by, **keywords)

    def decline(
        self, run_id: str, reason: str | None = None, *, store: StoreChoice = None
    ) -> RunResult:
        """Decline a run awaiting approval (see :func:`toolctl.runtime.api.decline`)."""
        from toolctl.runtime import api

        return api.decline(self, run_id, reason, store=store)

    def get_run(self, run_id: str, *, store: StoreChoice = None) -> RunResult:
        """A recorded run as a result (see :func:`toolctl.runtime.api.get_run`)."""
        from toolctl.runtime import api

        return api.get_run(self, run_id, store=store)

    def wait(
        self, run_id: str, timeout: float | None = None, *, store: StoreChoice = None
    ) -> RunResult:
        """Wait for a background run to end; its result (see :func:`toolctl.runtime.api.wait`)."""
        from toolctl.runtime import api

        return api.wait(self, run_id, timeout, store=store)

    def stream(
        self, name: str, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]
    ) -> InputStream:
        """A call whose arguments arrive as text deltas (:class:`toolctl.runtime.InputStream`)."""
        from toolctl.runtime.streaming import InputStream

        return InputStream(self, name, options, **keywords)

    def export(self, format: str, **options: Any) -> Any:
        """The registry in a provider's tool format (see :mod:`toolctl.export`)."""
        from toolctl import export

        return export.export(self, format, **options)

    def lint(self, **options: Any) -> list[Diagnostic]:
        """Lint findings for the registry (see :mod:`toolctl.lint`)."""
        from toolctl import lint

        found: list[Diagnostic] = lint.lint(self, **options)
        return found

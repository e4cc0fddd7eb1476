"""``--reload``: watch the registry's files and swap the tool set when a valid change lands.

Polling (no extra dependency): file sizes and modification times under the tool paths and the
config file. A change is loaded once the files have been still for one interval; an invalid
registry keeps the previous tools and logs every diagnostic, and so does a reload that fails
for any other reason: no change to the files ends the server.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from toolctl.errors import ToolctlError
from toolctl.server.toolset import Selection, build_toolset, describe_change, listing_changed

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolctl.config import Project
    from toolctl.registry import Registry
    from toolctl.server.app import ToolServer

log = logging.getLogger("toolctl.server")
Stamp = dict[str, tuple[int, int]]
# Settings that shape the registry itself: a reload reads them again. The others (state, auth,
# serve, run) were applied when serving started; a change to them needs a restart.
_RELOADED = ("toolsets", "limits", "schemas")


def refreshed(project: Project) -> Project:
    """``project`` with the registry-shaping settings of its config file read again (raises
    :class:`~toolctl.errors.ConfigError` for a config that no longer reads). The tool paths,
    Python path and state stay as serving started."""
    if project.config_file is None:
        return project
    from toolctl.config import project_at

    fresh = project_at(project.root)
    ignored = sorted(
        k
        for k in (set(fresh.settings) | set(project.settings)) - set(_RELOADED)
        if fresh.settings.get(k) != project.settings.get(k)
    )
    if ignored:
        log.warning("reload: %s changed in the config; restart the server to apply it",
                    ", ".join(ignored))  # fmt: skip
    settings = {k: v for k, v in project.settings.items() if k not in _RELOADED}
    settings.update({k: fresh.settings[k] for k in _RELOADED if k in fresh.settings})
    return dataclasses.replace(project, settings=settings, schema_dirs=fresh.schema_dirs)


def _stamp_file(path: Path, out: Stamp) -> None:
    try:
        st = path.stat()
    except OSError:
        return
    out[str(path)] = (st.st_mtime_ns, st.st_size)


def stamp(project: Project) -> Stamp:
    """Size and mtime of every file the registry is loaded from."""
    out: Stamp = {}
    if project.config_file is not None:
        _stamp_file(project.config_file, out)
    for root in project.tool_paths:
        if root.is_file():
            _stamp_file(root, out)
            continue
        _stamp_tree(root, out)
    return out


def _stamp_tree(root: Path, out: Stamp) -> None:
    """Stamp every file below ``root`` (hidden directories skipped; unlistable ones too).

    An explicit stack, not ``os.walk`` (recursive before Python 3.12): a tools tree nested
    thousands of levels deep must not end the server with a RecursionError.
    """
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue  # what cannot be listed cannot be loaded either: the load says why
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    pending.append(Path(entry.path))
            else:
                _stamp_file(Path(entry.path), out)


class RegistryWatcher:
    """Reloads ``project`` into ``server`` whenever its files change."""

    def __init__(
        self,
        server: ToolServer,
        project: Project,
        selection: Selection,
        interval: float = 0.5,
        verify: Callable[[Registry], None] | None = None,
        *,
        packs: bool = True,
    ) -> None:
        self.server = server
        self.verify = verify  # --locked: raises for a registry that differs from the lock
        self.project = project
        self.packs = packs  # --no-packs holds for every reload too
        self.selection = selection
        self.interval = interval
        # The baseline is taken now, before serving starts: taken later (in run()), a change a
        # client makes right after connecting could land in the baseline and never be seen.
        self.baseline = stamp(project)

    async def run(self) -> None:
        """Watch until cancelled."""
        last = self.baseline
        while True:
            await anyio.sleep(self.interval)
            current = await anyio.to_thread.run_sync(stamp, self.project)
            if current == last:
                continue
            while True:  # wait until the editor has finished writing
                await anyio.sleep(self.interval)
                settled = await anyio.to_thread.run_sync(stamp, self.project)
                if settled == current:
                    break
                current = settled
            last = current
            await self.reload()

    async def reload(self) -> bool:
        """Load the registry again; swap it in when valid. Returns whether it was swapped."""
        from toolctl.loader import load_registry

        try:
            project = await anyio.to_thread.run_sync(refreshed, self.project)
            registry = await anyio.to_thread.run_sync(
                lambda: load_registry(project=project, packs=self.packs)
            )
            if not registry.ok:
                for d in registry.diagnostics:
                    log.error("%s", d.format())
                log.error(
                    "reload: the registry has errors; still serving the previous %d tool(s)",
                    len(self.server.toolset.specs),
                )
                return False
            if self.verify is not None:
                self.verify(registry)
            toolset = build_toolset(registry, self.selection)
        except ToolctlError as exc:
            for d in exc.diagnostics:
                log.error("%s", d.format())
            log.error("reload: %s; still serving the previous tools", exc)
            return False
        except Exception:  # no change to the files, however broken, may end the server
            log.exception(
                "reload: loading the changed registry failed (a toolctl bug: please report it); "
                "still serving the previous %d tool(s)",
                len(self.server.toolset.specs),
            )
            return False
        self.project = project
        old = self.server.toolset
        change = describe_change(old, toolset)
        await self.server.swap(toolset, notify=listing_changed(old, toolset))
        log.warning("reload: now serving %d tool(s) (%s)", len(toolset.specs), change)
        return True

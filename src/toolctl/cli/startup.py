"""Start-up work that builds objects living as long as the process, without collector cost."""

from __future__ import annotations

import gc


class _LongLived:
    def __enter__(self) -> None:
        self._collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._collecting:
            # Out of the young generation unscanned (as gcpause._age_young_objects does): else
            # the first allocation after enabling starts a collection that walks every object
            # the block made, to free nothing (about 3 ms of every command).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def long_lived() -> _LongLived:
    """``with long_lived():`` around work whose objects live until the process ends (imports,
    Typer building the commands): collecting while they are built frees nothing and costs a
    small command ~10 %. A plain class, not ``contextlib``: it runs before Typer is imported.
    """
    return _LongLived()

"""Pausing the cyclic garbage collector around building large acyclic trees (a YAML load, a
registry, an export), and freezing what a long-lived process keeps."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (nestable).

    Building large acyclic trees of dicts triggers repeated full collections that free nothing:
    that is most of the time of a plain YAML load, so loading pauses it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _age_young_objects()
            gc.enable()


_frozen_for_good = False  # see freeze_for_good()


def freeze_for_good() -> None:
    """``gc.freeze()``: every object alive now is left out of later collections (a command's
    registry, a server's start-up heap); later pauses freeze what they let pile up too."""
    global _frozen_for_good
    _frozen_for_good = True
    gc.freeze()


def unfreeze() -> None:
    """Undo :func:`freeze_for_good` (in-process callers that run commands one after another)."""
    global _frozen_for_good
    _frozen_for_good = False
    gc.unfreeze()


def _age_young_objects() -> None:
    """Move every object out of the young generation without scanning it.

    Otherwise the first allocation after a pause starts a young collection that walks every
    object the pause let pile up (about a second at 10,000 tools) to free nothing. They go to
    the oldest generation (collected rarely); when the program already keeps objects frozen
    (``gc.freeze``, as the CLI does with a loaded registry), they are frozen with them, since
    unfreezing would undo that. ``get_freeze_count`` walks the frozen objects (a millisecond
    with a registry frozen): asked only when toolctl has not frozen any itself.
    """
    program_freezes = _frozen_for_good or gc.get_freeze_count() > 0
    gc.freeze()
    if not program_freezes:
        gc.unfreeze()

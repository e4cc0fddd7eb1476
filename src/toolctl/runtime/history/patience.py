"""Waiting out a database outage: a history step tried again while the database is unavailable.

One mechanism for the writes that must not be lost to a restart or a short outage: a worker's
claim of a run before its handler starts (:func:`toolctl.runtime.pipeline.handoff.run_job`) and
a call's final write (:class:`toolctl.runtime.pipeline.recording.Recorder`). Any other error
is not retried.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, TypeVar

from toolctl.runtime.errors import DatabaseUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

# Seconds between attempts: doubled after each failure up to the second.
PAUSE = (0.25, 5.0)


def while_unavailable(
    step: Callable[[], T],
    give_up: Callable[[], bool],
    *,
    what: str,
    first_failure: Callable[[], object] | None = None,
    pause: tuple[float, float] = PAUSE,
) -> T:
    """``step()``, again after a pause each time it raises :class:`DatabaseUnavailableError`,
    until it returns; the error is raised again once ``give_up()`` is true after a failure.
    ``first_failure`` runs once, at the first failure (e.g. to hold the run's lease);
    ``what`` names the step in the log."""
    wait, failed = pause[0], False
    while True:
        try:
            return step()
        except DatabaseUnavailableError as exc:
            if give_up():
                raise
            if not failed and first_failure is not None:
                first_failure()
            failed = True
            log.warning("%s: %s; trying again in %g s", what, exc, wait)
        time.sleep(wait)
        wait = min(wait * 2, pause[1])

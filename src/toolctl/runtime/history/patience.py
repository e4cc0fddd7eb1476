"""Waiting out a database outage: a history step tried again while the database is unavailable.

One mechanism for the writes that must not be lost to a restart or a short outage: a worker's
claim of a run before its handler starts (:func:`toolctl.runtime.pipeline.handoff.run_job`) and
a call's final write (:class:`toolctl.runtime.pipeline.recording.Recorder`). Any other error
is not retried. A final write that outlasts its patience goes on in the background
(:func:`keep_trying`) while the process lives.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, TypeVar

from toolctl.runtime.errors import DatabaseUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

# Seconds between attempts: doubled after each failure up to the second.
PAUSE = (0.25, 5.0)
# Final writes kept trying in the background at once, in this process. A long outage under load
# fails a call every so often; each would otherwise leave a thread of its own behind (a
# thousand in a ten-minute outage of a busy replica). Past the bound a run is left to the
# sweeps, as it was before the background retries.
MAX_KEPT_TRYING = 32
_kept_trying = threading.BoundedSemaphore(MAX_KEPT_TRYING)


def while_unavailable(
    step: Callable[[], T],
    give_up: Callable[[], bool],
    *,
    what: str,
    first_failure: Callable[[], object] | None = None,
    pause: tuple[float, float] | None = None,
) -> T:
    """``step()``, again after a pause each time it raises :class:`DatabaseUnavailableError`,
    until it returns; the error is raised again once ``give_up()`` is true after a failure.
    ``first_failure`` runs once, at the first failure (e.g. to hold the run's lease);
    ``what`` names the step in the log; ``pause``: the first and the longest pause (default
    :data:`PAUSE`, read at each call)."""
    pause = pause or PAUSE
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


def keep_trying(
    step: Callable[[], object],
    give_up: Callable[[], bool],
    *,
    what: str,
    then: Callable[[], object],
    pause: tuple[float, float] | None = None,
) -> threading.Thread | None:
    """:func:`while_unavailable` of ``step`` on a daemon thread of its own, started now: tried
    until it is done, ``give_up()`` is true after a failure, or the process exits (a daemon
    thread does not keep it alive). ``then`` runs after it in every case. Another error is
    logged, not raised: nobody is left to tell. None, nothing started and ``then`` not run,
    when :data:`MAX_KEPT_TRYING` writes are being tried already."""
    if not _kept_trying.acquire(blocking=False):
        log.warning("%s: not kept trying (%d writes are already)", what, MAX_KEPT_TRYING)
        return None

    def run() -> None:
        try:
            while_unavailable(step, give_up, what=what, pause=pause)
            log.warning("%s: done after the database came back", what)
        except DatabaseUnavailableError as exc:
            log.warning("%s: given up: %s", what, exc)
        except Exception as exc:  # the thread's last word: a traceback would reach stderr
            log.warning("%s: failed: %s", what, exc)
        finally:
            _kept_trying.release()
            then()

    thread = threading.Thread(target=run, name="toolctl-final-write", daemon=True)
    thread.start()
    return thread

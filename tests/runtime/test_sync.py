"""The synchronous API's private event loop (toolctl.runtime.sync)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from toolctl.runtime import sync


async def _woken_by(events: list[str]) -> list[str]:
    """Wait until another thread wakes this loop (``call_soon_threadsafe``); a loop timer far
    beyond is the fallback. A loop that no longer hears such wake-ups runs both at once."""
    loop = sync.running_loop()  # the private loop (its first step runs before the loop does)
    woken = loop.create_future()
    fallback = loop.call_later(10, events.append, "timer")

    def from_thread() -> None:
        time.sleep(0.2)  # the loop is waiting in its selector by then
        loop.call_soon_threadsafe(lambda: (events.append("thread"), woken.set_result(None)))

    threading.Thread(target=from_thread).start()
    await woken
    await asyncio.sleep(0)
    fallback.cancel()
    return events


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_leaves_the_parents_private_loop_awake() -> None:
    # The child drops its copy of the loop; closing it there would unregister the parent's
    # self-pipe from the epoll instance they share, and the parent would stop hearing threads.
    assert sync.run_sync(_woken_by([])) == ["thread"]  # the private loop exists
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert sync.run_sync(_woken_by([])) == ["thread"]

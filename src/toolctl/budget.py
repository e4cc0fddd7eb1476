"""The validation budget: how much CPU time the validation of one call may take, in total.

Input and output validation of one call share one :class:`ValidationBudget`. The validator
factory (:mod:`toolctl.schema`) charges it as it works: every keyword it evaluates calls
:func:`tick`, and a pattern search on the bounded fallback engine gets the time that is left
as its timeout. Past the budget, validation raises :class:`BudgetExceeded`: the value is
*refused*, never accepted, and the refusal escapes every ``not``/``anyOf``/``oneOf`` around it
(a timeout that counted as "no match" would let ``not: {pattern: ...}`` accept what it forbids).

The budget is measured in CPU time of the validating thread (``time.thread_time``), so a busy
machine running many calls at once does not refuse a call that would fit on an idle one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_BUDGET_MS = 1000
"""Default ``run.validationBudgetMs``: one second of CPU for input and output validation."""
SETTING = "run.validationBudgetMs"
_CHECK_EVERY = 32  # keyword evaluations between two looks at the clock (a system call)


class ValidationRefused(Exception):
    """Validation could not decide whether a value is valid: the value is refused."""


class BudgetExceeded(ValidationRefused):
    """The validation of one call used up its budget."""

    def __init__(self, budget: ValidationBudget) -> None:
        super().__init__(
            f"validation exceeded its budget of {budget.limit * 1000:g} ms of CPU time; "
            f"the value is refused (raise {SETTING} in toolctl.yaml if such values are expected)"
        )
        self.limit = budget.limit


class ValidationBudget:
    """CPU time left for the validation of one call (shared by its input and output)."""

    __slots__ = ("_count", "_start", "limit", "spent")

    def __init__(self, milliseconds: float = DEFAULT_BUDGET_MS) -> None:
        self.limit = milliseconds / 1000
        self.spent = 0.0
        self._start = 0.0
        self._count = 0

    def remaining(self) -> float:
        """Seconds of CPU time left (only meaningful while the budget is active)."""
        return self.limit - self.spent - (time.thread_time() - self._start)

    def check(self) -> None:
        """:class:`BudgetExceeded` when the budget is used up."""
        if self.remaining() <= 0:
            raise BudgetExceeded(self)

    @contextmanager
    def active(self) -> Iterator[ValidationBudget]:
        """Charge the validation work done on this thread inside the block to this budget."""
        previous = getattr(_local, "budget", None)
        _local.budget = self
        self._start = time.thread_time()
        try:
            yield self
        finally:
            self.spent += time.thread_time() - self._start
            _local.budget = previous


class _Local(threading.local):
    budget: ValidationBudget | None = None


_local = _Local()


def current() -> ValidationBudget | None:
    """The budget validation on this thread is charged to (None outside validation)."""
    return _local.budget


def tick() -> None:
    """Called once per evaluated keyword: looks at the clock every few calls."""
    budget = _local.budget
    if budget is None:
        return
    budget._count += 1
    if budget._count % _CHECK_EVERY == 0:
        budget.check()

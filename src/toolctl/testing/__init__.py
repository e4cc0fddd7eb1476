"""``toolctl test``: run the ``tests:`` cases of tools, check their examples, fuzz their inputs.

Cases go through the same call pipeline as ``toolctl run`` (see :mod:`toolctl.runtime`) with a
temporary state store. Use :func:`run_tests` (or :func:`arun_tests`) and read the
:class:`TestReport`; :func:`junit_xml` renders it for CI systems.
"""

from __future__ import annotations

from toolctl.testing.cases import TestCase, collect
from toolctl.testing.expect import Mismatch
from toolctl.testing.fuzz import FuzzFinding
from toolctl.testing.report import CaseResult, Outcome, TestReport, junit_xml
from toolctl.testing.runner import TestOptions, arun_tests, run_tests

__all__ = [
    "CaseResult",
    "FuzzFinding",
    "Mismatch",
    "Outcome",
    "TestCase",
    "TestOptions",
    "TestReport",
    "arun_tests",
    "collect",
    "junit_xml",
    "run_tests",
]

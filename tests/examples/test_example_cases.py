"""The ``tests:`` cases of tools.d, checked against the handlers directly.

This covers what the handler decides (raw output, suspension, handler errors) for every case;
approval, transforms and model output are the runtime's part and are checked by ``toolctl test``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from toolctl import ToolSpec
from toolctl.schema import make_validator

from .fakes import FakeContext, Suspended
from .test_example_registry import ROOT, specs

RUNTIME_ONLY = {"awaiting_approval", "declined"}


def _cases() -> list[Any]:
    params = []
    for spec in specs():
        for case in spec.tests:
            marks = []
            if case.get("skip"):
                marks.append(pytest.mark.skip(reason=str(case["skip"])))
            elif case.get("status") in RUNTIME_ONLY:
                marks.append(pytest.mark.skip(reason="approval is decided by the runtime"))
            params.append(pytest.param(spec, case, id=f"{spec.name}-{case['name']}", marks=marks))
    return params


def contains(actual: Any, expected: Any) -> bool:
    """The subset match of ``outputContains``: objects on the given keys, arrays by items."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and all(
            any(contains(item, want) for item in actual) for want in expected
        )
    return bool(actual == expected)


def _call(spec: ToolSpec, case: dict[str, Any], ctx: Any) -> Any:
    assert spec.handler is not None
    module, _, attr = spec.handler.partition(":")
    handler = getattr(importlib.import_module(module), attr)
    if handler.__code__.co_argcount == 1:
        return handler(dict(case.get("input", {})))
    return handler(dict(case.get("input", {})), ctx)


@pytest.mark.parametrize(("spec", "case"), _cases())
def test_case_against_handler(
    spec: ToolSpec,
    case: dict[str, Any],
    fake_weather: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # cases use paths relative to the project, like `toolctl test`
    context = dict(case.get("context", {}))
    if "sandbox" in context:
        context["sandbox"] = str(tmp_path / context["sandbox"])  # keep the checkout clean
    ctx = FakeContext(request_context=context, resume_data=case.get("resume"))
    status = case.get("status", "succeeded")
    if status == "suspended":
        with pytest.raises(Suspended) as suspended:
            _call(spec, case, ctx)
        assert make_validator(spec.suspend_schema).errors(suspended.value.payload) == []
        return
    if status == "failed":
        with pytest.raises(Exception) as failure:
            _call(spec, case, ctx)
        assert case["error"]["message"] in str(failure.value)
        return
    output = _call(spec, case, ctx)
    assert make_validator(spec.output_schema).errors(output) == []
    if "output" in case:
        assert output == case["output"]
    if "outputContains" in case:
        assert contains(output, case["outputContains"]), output

"""Transforms: declarative forms, callables, toModelOutput, and every phase in the pipeline."""

from __future__ import annotations

import json

import pytest

from toolctl.registry import Registry
from toolctl.runtime import api
from toolctl.runtime.pipeline import transforms
from toolctl.runtime.pipeline.transforms import (
    SUPPRESSED,
    apply_declarative,
    render,
    to_model_output,
)

DATA = {"a": {"b": 1, "c": [1, 2]}, "items": [{"n": "x", "s": 1}, {"n": "y", "s": 2}], "k": "v"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"pick": ["k"]}, {"k": "v"}),
        ({"pick": ["a.b", "k"]}, {"a": {"b": 1}, "k": "v"}),
        ({"pick": ["a", "a.b"]}, {"a": {"b": 1, "c": [1, 2]}}),
        ({"pick": ["items.n"]}, {"items": [{"n": "x"}, {"n": "y"}]}),
        ({"pick": ["missing"]}, {}),
        ({"omit": ["a"]}, {"items": DATA["items"], "k": "v"}),
        (
            {"omit": ["items.s", "a.c"]},
            {"a": {"b": 1}, "items": [{"n": "x"}, {"n": "y"}], "k": "v"},
        ),
        ({"omit": ["items.0"]}, {"a": DATA["a"], "items": [{"n": "y", "s": 2}], "k": "v"}),
        (
            {"redact": ["k", "a.b"]},
            {"a": {"b": "[REDACTED]", "c": [1, 2]}, "items": DATA["items"], "k": "[REDACTED]"},
        ),
        ({"template": "{k}-{a.b}-{items.1.n}-{a.c}-{nope}-{{x}}"}, "v-1-y-[1,2]--{x}"),
        ({"pick": ["k"], "template": "K={k}"}, "K=v"),
        ({"suppress": True}, SUPPRESSED),
    ],
)
def test_declarative_forms(spec: dict, expected: object) -> None:
    before = json.dumps(DATA, sort_keys=True)
    assert apply_declarative(spec, DATA) == expected
    assert json.dumps(DATA, sort_keys=True) == before  # never modifies the payload


def test_templates_cannot_reach_attributes() -> None:
    assert render("{__class__}{k.__class__}{k.upper}", {"k": "v"}) == ""
    assert render("{value}", "plain") == "plain"
    assert render("{x}", {"x": None}) + render("{x}", {"x": True}) == "true"


def test_model_output_forms() -> None:
    out = {"city": "Paris", "t": 20, "img": "https://x/p.png"}
    assert to_model_output(None, "hi") == {"type": "text", "value": "hi"}
    assert to_model_output(None, out) == {"type": "json", "value": out}
    assert to_model_output({"type": "text"}, out)["value"] == json.dumps(out, separators=(",", ":"))
    assert to_model_output({"type": "json", "omit": ["img"]}, out) == {
        "type": "json",
        "value": {"city": "Paris", "t": 20},
    }
    parts = to_model_output(
        {
            "type": "content",
            "parts": [
                {"type": "text", "text": "{city} {t}"},
                {"type": "image-data", "data": "{b64}", "mediaType": "image/png"},
                {"type": "file-id", "fileId": "f-{t}"},
            ],
        },
        out,
    )
    assert parts == {
        "type": "content",
        "value": [{"type": "text", "text": "Paris 20"}, {"type": "file-id", "fileId": "f-20"}],
    }


def test_every_phase_in_the_pipeline(reg: Registry) -> None:
    result = reg.call("customer", {"customerId": "c1", "internalPath": "/srv/x"})
    assert result.output["apiKey"] == "secret-value"  # the caller gets raw data
    assert result.display == {"input": {"customerId": "c1"}, "output": {"displayName": "Acme"}}
    assert result.transcript["input"] == {"customerId": "c1"}
    assert result.transcript["output"]["debugScore"] == "[REDACTED]"
    assert result.transcript["output"]["apiKey"] == "[REDACTED]"  # key-name redaction on top
    assert result.transcript["output"]["url"] == "https://u:[REDACTED]@example.com/x"
    rec = api.resolve_store(reg).get(result.run_id)
    assert rec.input == {"customerId": "c1"} and "secret-value" not in json.dumps(rec.output)


def test_callable_transforms_and_a_failing_one(reg: Registry) -> None:
    result = reg.call("customer_callable", {"customerId": "c1"})
    assert result.ok
    assert result.display["input"] == {"customerId": "c1", "phase": "input", "target": "display"}
    assert "output" not in result.display  # suppress: true
    assert "input" not in result.transcript  # a callable returning None suppresses
    assert result.transcript["output"] == {
        "transformError": "transform rt_handlers:raising_transform raised RuntimeError: "
        "transform broke"
    }
    assert any("transcript transform for output failed" in n for n in result.notes)


def test_error_phase(reg: Registry) -> None:
    result = reg.call("fail_transformed", {})
    assert result.display["error"] == "lookup failed (handler_error)"
    assert result.transcript["error"] == {"code": "handler_error"}
    assert api.resolve_store(reg).get(result.run_id).error == {"code": "handler_error"}


def test_model_output_in_the_pipeline(reg: Registry) -> None:
    assert reg.call("weather_json", {"city": "Paris"}).model_output == {
        "type": "json",
        "value": {"city": "Paris", "temperature": 72},
    }
    content = reg.call("weather_content", {"city": "Paris"}).model_output
    assert content == {
        "type": "content",
        "value": [
            {"type": "text", "text": "Paris: 72F and sunny"},
            {
                "type": "image-url",
                "url": "https://example.com/radar/paris.png",
                "mediaType": "image/png",
            },
            {"type": "custom", "value": {"kind": "radar"}},
        ],
    }
    assert reg.call("weather_callable", {"city": "Oslo"}).model_output == {
        "type": "content",
        "value": [
            {"type": "text", "text": "Oslo: 72F"},
            {"type": "image-url", "url": "https://example.com/radar/oslo.png"},
        ],
    }
    assert reg.call("weather_plain", {"city": "Oslo"}).model_output == {
        "type": "text",
        "value": "plain",
    }


def test_bad_model_output_callable_fails_the_run() -> None:
    with pytest.raises(transforms.TransformError, match="not a string"):
        transforms._coerce_model_output({"type": "text", "value": 3}, "m:f")

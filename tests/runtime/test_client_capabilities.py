"""What the calling client declared reaches the handler (``ctx.client_capabilities``,
``ctx.can_ask``) on every path a run takes: a call, its resumption, an isolated handler."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolctl.registry import Registry
from toolctl.runtime import clientask
from toolctl.runtime.context import ToolContext

ASKING = """\
toolctl: 1
tools:
  - name: what_can_i_ask
    description: Says which requests its caller can answer.
    handler: rt_asking:what_can_i_ask
  - name: what_can_i_ask_isolated
    description: The same, in a subprocess.
    handler: rt_asking:what_can_i_ask
    isolation: subprocess
  - name: ask_what_it_can
    description: Asks the model only if the caller can answer.
    handler: rt_asking:ask_what_it_can
"""
ALL = ["elicitation/create", "sampling/createMessage", "roots/list"]


@pytest.fixture
def reg(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry({"asking.yaml": ASKING})


def test_a_handler_sees_the_capabilities_its_client_declared(reg: Registry) -> None:
    declared = reg.call("what_can_i_ask", {}, client_capabilities={"sampling": {}})
    assert declared.output == {"declared": {"sampling": {}}, "can": ["sampling/createMessage"]}
    nothing = reg.call("what_can_i_ask", {}, client_capabilities={})
    assert nothing.output == {"declared": {}, "can": []}


def test_a_caller_that_does_not_say_can_be_asked_anything(reg: Registry) -> None:
    # the CLI prompts or takes --answer, the API resumes the run: every request can be answered
    assert reg.call("what_can_i_ask", {}).output == {"declared": None, "can": ALL}


@pytest.mark.slow  # an isolated handler runs in a subprocess
def test_an_isolated_handler_sees_them_too(reg: Registry) -> None:
    result = reg.call("what_can_i_ask_isolated", {}, client_capabilities={"roots": {}})
    assert result.output == {"declared": {"roots": {}}, "can": ["roots/list"]}


def test_a_resumed_run_sees_the_capabilities_of_the_client_that_answered(reg: Registry) -> None:
    from toolctl.runtime.api import resume

    first = reg.call("ask_what_it_can", {}, store=False, client_capabilities={"sampling": {}})
    assert first.status.value == "suspended"
    answer = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}
    data = {clientask.ANSWERS_KEY: {"sampling": answer}}
    done = resume(reg, first.run_id, data, store=False, client_capabilities={"sampling": {}})
    assert done.output == "the model said hello"
    # the resumed handler judges by the answering client: one that cannot sample (here, one
    # that answered an older round) gets the fallback, never a question it cannot answer
    again = reg.call("ask_what_it_can", {}, store=False, client_capabilities={"sampling": {}})
    other = resume(reg, again.run_id, data, store=False, client_capabilities={})
    assert other.output == "no model to ask"
    assert reg.call("ask_what_it_can", {}, client_capabilities={}).output == "no model to ask"


def test_can_answer_reads_each_method_s_capability() -> None:
    assert clientask.can_answer({"elicitation": {}}, "elicitation/create")
    assert not clientask.can_answer({"elicitation": {}}, "roots/list")
    assert not clientask.can_answer(None, "tools/call")  # not a request a handler can make
    assert ToolContext(run_id="r", tool_name="t").can_ask("roots/list")

"""Mistral ``tools``: the OpenAI Chat shape, with ``parameters`` always present.

Mistral does not publish its strict-mode schema subset; strict tools follow OpenAI's rules.
"""

from __future__ import annotations

import dataclasses

from toolctl.export.names import MISTRAL_NAME
from toolctl.export.openai import OpenAIChatExporter
from toolctl.export.strict import OPENAI_STRICT


class MistralExporter(OpenAIChatExporter):
    """Mistral function tools (the Chat exporter with Mistral's name and provider options)."""

    name = "mistral"
    description = "Mistral tools ({type: function, function: {...}})"
    label = "Mistral"
    provider_keys = ("mistral",)
    name_rule = MISTRAL_NAME
    strict_profile = dataclasses.replace(OPENAI_STRICT, target="Mistral strict mode (OpenAI rules)")
    description_limit = None  # Mistral documents no limit
    max_tools = None
    allows_names = False  # Mistral's tool_choice names one function at most


EXPORTER = MistralExporter()
export = EXPORTER.export
check = EXPORTER.check

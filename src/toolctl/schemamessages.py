"""JSON Schema error messages in JSON's words, and with the fix where one is known.

python-jsonschema writes values with Python's ``repr``: ``None is not of type 'array'``,
``True is not one of [...]``. A model (and a user who writes YAML or JSON) reads ``null``,
``true`` and ``false``. :func:`message_of` rewrites the values in a validation error's message
in JSON's words (strings keep their quotes, so messages stay familiar) and, for a schema whose
``type`` names no JSON type, lists the valid ones.
"""

from __future__ import annotations

import difflib
from typing import Any

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_MAX_SHOWN = 200  # characters of a value quoted in a message


def json_words(value: Any) -> str:
    """``value`` written as in a message: JSON literals (null, true, false), strings quoted."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, list):
        return "[" + ", ".join(json_words(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {json_words(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _shown(value: Any) -> str:
    text = json_words(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _bad_type(err: Any) -> str | None:
    """``type: integr`` in a schema: say which types exist (and the likely one)."""
    path = list(err.absolute_path)
    if err.validator != "anyOf" or not path or path[-1] != "type":
        return None
    names = err.instance if isinstance(err.instance, list) else [err.instance]
    wrong = [n for n in names if not (isinstance(n, str) and n in JSON_TYPES)]
    if not wrong:
        return None  # a list of valid names that breaks another rule (duplicates, empty)
    text = f"{_shown(wrong[0])} is not a JSON Schema type; use one of {', '.join(JSON_TYPES)}"
    close = difflib.get_close_matches(str(wrong[0]), JSON_TYPES, n=1)
    return text + (f" (did you mean {close[0]!r}?)" if close else "")


def message_of(err: Any) -> str:
    """The message of a jsonschema ``ValidationError`` in JSON's words."""
    fixed = _bad_type(err)
    if fixed is not None:
        return fixed
    message = str(err.message)
    for value in (err.instance, err.validator_value):
        if isinstance(value, str):
            continue
        try:
            python = repr(value)
        except Exception:  # a repr that fails: leave the message as it is
            continue
        if python in message and python != json_words(value):
            message = message.replace(python, _shown(value), 1)
    return message


def json_type(value: Any) -> str:
    """The JSON type of ``value`` (``null``, ``array`` ...), for messages; its Python type's
    name for something JSON has no word for."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__

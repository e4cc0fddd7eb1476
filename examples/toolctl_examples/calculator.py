"""A safe arithmetic evaluator: the expression is parsed with :mod:`ast` and walked, never eval'd.

Only numbers, ``+ - * / // % **``, parentheses, a few math functions and constants are allowed.
Limits keep a hostile expression from eating the machine: the text length, the exponent size, the
size of integer results and the nesting depth are all capped.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

MAX_LENGTH = 500
MAX_EXPONENT = 1000
MAX_INT_BITS = 4096
MAX_DEPTH = 50

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


class CalculationError(ValueError):
    """The expression is not allowed or cannot be computed; the message says why."""


def calculate(data: dict[str, Any]) -> dict[str, Any]:
    """Evaluate ``data["expression"]`` and return ``{expression, result}``.

    Raises :class:`CalculationError` with a message a model can act on (what is not allowed, or
    which limit was hit).
    """
    expression: str = data["expression"].strip()
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"not an arithmetic expression: {exc.msg}") from None
    except (RecursionError, MemoryError):  # the parser's own nesting limits
        raise CalculationError(f"expression is nested deeper than {MAX_DEPTH} levels") from None
    result = _evaluate(tree.body, 0)
    if isinstance(result, float) and not math.isfinite(result):
        raise CalculationError("the result is not a finite number")
    precision = data.get("precision")
    if precision is not None and isinstance(result, float):
        result = round(result, precision)
    return {"expression": expression, "result": result}


def _evaluate(node: ast.expr, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise CalculationError(f"expression is nested deeper than {MAX_DEPTH} levels")
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, depth + 1))  # type: ignore[no-any-return]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, depth + 1)
        right = _evaluate(node.right, depth + 1)
        return _apply(node.op, left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        function = _FUNCTIONS.get(node.func.id)
        if function is None:
            raise CalculationError(
                f"unknown function {node.func.id!r}; known: {', '.join(sorted(_FUNCTIONS))}"
            )
        return _call(node.func.id, function, [_evaluate(arg, depth + 1) for arg in node.args])
    raise CalculationError(
        f"{_describe(node)} is not allowed; use numbers, + - * / // % ** and "
        f"the functions {', '.join(sorted(_FUNCTIONS))}"
    )


def _apply(op: ast.operator, left: Number, right: Number) -> Number:
    if isinstance(op, ast.Pow) and abs(right) > MAX_EXPONENT:
        raise CalculationError(f"exponent {right} is too large (the limit is {MAX_EXPONENT})")
    if _int_bits(op, left, right) > MAX_INT_BITS:
        raise CalculationError(f"the result would exceed {MAX_INT_BITS} bits")
    try:
        result: Number = _BINARY[type(op)](left, right)
    except ZeroDivisionError:
        raise CalculationError("division by zero") from None
    except OverflowError:
        raise CalculationError("the result is too large") from None
    if isinstance(result, complex):
        raise CalculationError("the result is a complex number")
    return result


def _int_bits(op: ast.operator, left: Number, right: Number) -> int:
    """Upper bound of the bits of an integer product or power, estimated before computing it.

    ``10 ** 1000`` is fine, ``999999 ** 1000`` is not; floats overflow on their own.
    """
    if not (isinstance(left, int) and isinstance(right, int)):
        return 0
    if isinstance(op, ast.Pow) and right > 0:
        return left.bit_length() * right
    if isinstance(op, ast.Mult):
        return left.bit_length() + right.bit_length()
    return 0


def _call(name: str, function: Callable[..., Number], args: list[Number]) -> Number:
    try:
        return function(*args)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CalculationError(f"{name}(): {exc}") from None


def _describe(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return f"the name {node.id!r}"
    if isinstance(node, ast.Constant):
        return f"the constant {node.value!r}"
    return f"a {type(node).__name__} expression"

"""Helpers of the sample project."""


def greet(name: str) -> str:
    return f"Hello, {name}!"

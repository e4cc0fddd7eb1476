"""cli/fastparams.py converts common option types without pydantic: the values a command
receives, and the errors for bad values, are the ones Typer's own path gives."""

from __future__ import annotations

import enum
import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from toolctl.cli import fastparams


class Color(str, enum.Enum):
    red = "red"
    blue = "blue"


def _app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def main(
        name: Annotated[str, typer.Option()] = "x",
        count: Annotated[int, typer.Option(min=0)] = 1,
        ratio: Annotated[float, typer.Option()] = 0.5,
        color: Annotated[Color, typer.Option(case_sensitive=False)] = Color.red,
        src: Annotated[list[Path] | None, typer.Option(exists=True)] = None,
        flag: Annotated[bool, typer.Option("--flag/--no-flag")] = False,
    ) -> None:
        seen.update(name=name, count=count, ratio=ratio, color=color, src=src, flag=flag)

    return app


ARGS = [
    ["--name", "1e3", "--count", "007", "--ratio", "1e-3", "--color", "BLUE", "--flag"],
    ["--count", "+3", "--ratio", ".5", "--src", "."],
    ["--count", "1_000", "--ratio", "inf", "--no-flag"],  # not plain: Typer's own path
]
BAD = [
    ["--count", "-1"],
    ["--count", "abc"],
    ["--color", "green"],
    ["--src", "missing/"],
    ["--src", "./missing"],
]


def _invoke(args: list[str]) -> tuple[int, str, dict[str, Any]]:
    seen: dict[str, Any] = {}
    result = CliRunner().invoke(_app(seen), args)
    return result.exit_code, result.output, seen


@pytest.fixture(scope="module")
def typers_own() -> dict[str, tuple[int, str, dict[str, Any]]]:
    """What Typer gives without the fast path (a fresh interpreter: install() is global)."""
    code = (
        "import json, sys; sys.path.insert(0, '.');"
        "from tests.cli.test_fastparams import ARGS, BAD, _invoke;"
        "print(json.dumps({' '.join(a): repr(_invoke(a)) for a in ARGS + BAD}))"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    )
    return dict(json.loads(out.stdout))


@pytest.mark.slow
@pytest.mark.xdist_group("fastparams")  # one worker asks a fresh interpreter, once
@pytest.mark.parametrize("args", ARGS + BAD, ids=" ".join)
def test_the_fast_path_gives_what_typer_gives(args: list[str], typers_own: dict[str, str]) -> None:
    fastparams.install()
    assert repr(_invoke(args)) == typers_own[" ".join(args)]


def test_the_fast_path_is_installed_and_converts() -> None:
    fastparams.install()
    code, _, seen = _invoke(["--name", "1e3", "--count", "007", "--color", "BLUE"])
    assert code == 0
    assert seen["name"] == "1e3" and seen["count"] == 7 and seen["color"] is Color.blue
    code, output, _ = _invoke(["--count", "-1"])
    assert code == 2 and "greater than or equal to 0" in output
    from typer import core

    assert core._TyperParameter.get_runtime_param.__module__ == fastparams.__name__


def test_number_defaults_take_the_fast_path() -> None:
    """An int or float option left at its default arrives as the number itself: converted
    here, not by Typer's pydantic adapter (whose import is a third of a warm `search`)."""
    count = fastparams._number(int, fastparams._INT, 1, 1000)
    ratio = fastparams._number(float, fastparams._FLOAT, None, None)
    assert count(5, None, None) == 5 and type(count(5, None, None)) is int
    assert ratio(2, None, None) == 2.0 and type(ratio(2, None, None)) is float
    for bad in (0, 1001, True, 2.5):  # out of range, or not of the kind: Typer's own path
        with pytest.raises(fastparams._Slow):
            count(bad, None, None)


PROBE = """
import atexit, sys
atexit.register(lambda: print("pydantic" in sys.modules, file=sys.stderr))
sys.argv = ["toolctl", *sys.argv[1:]]
from toolctl.cli.app import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--indent", "0", "-o", "out.json"]])
def test_export_options_never_import_pydantic(tmp_path: Path, extra: list[str]) -> None:
    """`export`'s options (its --indent default included) take the fast path: pydantic's
    import was a third of a small export's CPU time."""
    fixtures = Path(__file__).resolve().parents[1] / "export" / "fixtures" / "tools.d"
    argv = ["export", "openai", "-p", str(fixtures), "-t", "ping", *extra]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "TOOLCTL_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"

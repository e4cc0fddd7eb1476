"""An inline ignore naming no rule (``ignore[TL999]``) or a misspelt directive is reported."""

from __future__ import annotations

from tests.lint.lintkit import CLEAN, Project

TL999 = "# toolctl: ignore[TL999]"


def _messages(project: Project, **options: object) -> list[str]:
    return [d.format() for d in project.lint(**options) if d.code == "TL003"]


def test_unknown_code_is_reported_with_its_place(project: Project) -> None:
    project.write(
        CLEAN.replace("title: Get weather", "title: Get weather  # toolctl: ignore[TL999]")
    )
    assert _messages(project) == [
        "tools.d/tool.yaml:3:21: warning TL003 ignore[TL999] names no lint rule "
        "(hint: see `toolctl lint --list-rules`)"
    ]


def test_misspelt_family_and_directive_get_a_suggestion(project: Project) -> None:
    text = CLEAN.replace("title: Get weather", "title: Get weather  # toolctl: ignore[secuirty]")
    text = text.replace("name: get_weather", "name: get_weather  # toolctl: ingore[TL101]")
    project.write(text)
    assert _messages(project) == [
        "tools.d/tool.yaml:2:20: warning TL003 'ingore' is not a toolctl directive "
        "(hint: did you mean 'ignore'?)",
        "tools.d/tool.yaml:3:21: warning TL003 ignore[secuirty] names no lint rule "
        "(hint: did you mean 'security'?)",
    ]


def test_known_selectors_are_not_reported(project: Project) -> None:
    project.write(
        CLEAN.replace("title: Get weather", "title: Get weather  # toolctl: ignore[TL6, security]")
    )
    assert _messages(project) == []


def test_follows_the_selection_of_the_engine_family(project: Project) -> None:
    project.write(
        CLEAN.replace("title: Get weather", "title: Get weather  # toolctl: ignore[TL999]")
    )
    assert len(_messages(project, select=["descriptions"])) == 0  # engine rules not selected
    assert len(_messages(project, select=["descriptions", "engine"])) == 1


def test_only_files_loading_saw_a_directive_in_are_read_again(project: Project) -> None:
    from toolctl.config import project_for
    from toolctl.loader import load_registry

    project.write(CLEAN.replace("title: Get weather", f"title: Get weather  {TL999}"))
    project.write(CLEAN.replace("get_weather", "get_other"), name="other.yaml")
    assert len(_messages(project)) == 1
    registry = load_registry(project=project_for(project.root / "tools.d"), packs=False)
    assert registry.directive_files == {"tools.d/other.yaml": False, "tools.d/tool.yaml": True}


def test_what_may_hold_a_directive() -> None:
    from toolctl.yamlsrc import may_hold_directive

    assert not may_hold_directive(b"toolctl: 1\nname: a\n")
    assert not may_hold_directive(b"\xef\xbb\xbftoolctl: 1\n")
    assert not may_hold_directive(b"# a comment\ntoolctl: 1\n")
    assert not may_hold_directive(b"name: a\n")
    assert may_hold_directive(b"toolctl: 1\nname: a  # toolctl: ignore[TL101]\n")
    assert may_hold_directive(b"name: a  #toolctl: ingore[TL101]\n")


def test_an_ignore_without_brackets_is_told_how_to_write_it(project: Project) -> None:
    # `# toolctl: ignore` alone suppresses nothing: the codes go in brackets
    project.write(
        CLEAN.replace("title: Get weather", "title: Get weather  # toolctl: ignore TL101")
    )
    assert _messages(project) == [
        "tools.d/tool.yaml:3:21: warning TL003 'ignore' without [CODES] suppresses nothing "
        "(hint: write `# toolctl: ignore[CODE,...]`)"
    ]

"""Security: tool-poisoning signs in any text a model reads, and look-alike names.

Descriptions, titles, parameter names and descriptions, enum values and examples all reach the
model, and none of them reach the user who approved the tool. Hidden or model-directed text in
them is an attack (tool poisoning, OWASP MCP03), so these rules are errors by default.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("security")

_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
)


class _Phrases:
    """Lower-case patterns, each with literals that every one of its matches contains.

    A plain substring test on a key decides whether a part's regex runs at all, so most texts cost
    a few ``in`` tests (a test checks each part's keys against its alternatives). ``fast``
    patterns are case-sensitive, for case-folded text (IGNORECASE is much slower in ``re``);
    ``exact`` ones report the original text. A part whose every match *starts* with one of its
    keys (``leads``) is tried only where a key occurs, instead of searched for from every
    position (a ``\\b``-first pattern defeats ``re``'s literal-prefix scan).
    """

    def __init__(self, *parts: tuple[tuple[str, ...], str] | tuple[tuple[str, ...], str, bool]):
        self.parts = [(p[0], p[1]) for p in parts]
        self._leads = [len(p) > 2 and bool(p[2]) for p in parts]

    # Compiled on first use, not at import: a warm lint that remembers what these rules found
    # (toolctl.lint.memory) runs none of them, and compiling was a tenth of its time.
    @functools.cached_property
    def fast(self) -> list[tuple[tuple[str, ...], re.Pattern[str], bool]]:
        return [
            (k, re.compile(p), lead) for (k, p), lead in zip(self.parts, self._leads, strict=True)
        ]

    @functools.cached_property
    def exact(self) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for _, p in self.parts]

    def may_match(self, folded: str) -> bool:
        """False when ``folded`` (case-folded text) certainly has no match."""
        for keys, regex, leads in self.fast:  # plain loops: no generator per part
            for k in keys:
                if k in folded:
                    if _match_at_keys(regex, keys, folded) if leads else regex.search(folded):
                        return True
                    break
        return False

    def search(self, text: str) -> re.Match[str] | None:
        """The first match in ``text`` (original case), or None."""
        found = [m for m in (regex.search(text) for regex in self.exact) if m is not None]
        return min(found, key=lambda m: m.start()) if found else None


def _match_at_keys(regex: re.Pattern[str], keys: tuple[str, ...], folded: str) -> bool:
    """Whether ``regex`` matches at an occurrence of one of ``keys`` (each match starts at one).

    ``\\b`` still sees the character before the position, so this is ``regex.search`` for a
    pattern whose matches start with a key.
    """
    for k in keys:
        at = folded.find(k)
        while at >= 0:
            if regex.match(folded, at):
                return True
            at = folded.find(k, at + 1)
    return False


def _leads(keys: tuple[str, ...], pattern: str) -> tuple[tuple[str, ...], str, bool]:
    """A part whose every match starts with one of ``keys``."""
    return keys, pattern, True


_INSTRUCTIONS = _Phrases(
    _leads(
        ("ignore", "disregard", "forget", "override"),
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?"
        r"(previous|prior|above|earlier|preceding|other|system)\s+"
        r"(instructions?|prompts?|messages?|rules|directions)",
    ),
    (
        ("not", "don", "never"),
        r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|notify|alert)\s+"
        r"(this\s+|it\s+|anything\s+)?(to\s+)?(the\s+)?user"
        r"|\b(do\s+not|don'?t|never)\s+(use|call)\s+(any\s+)?other\s+tools?",
    ),
    _leads(("without",), r"\bwithout\s+(telling|informing|notifying|alerting|asking)\s+the\s+user"),
    _leads(("hide", "conceal"), r"\b(hide|conceal)\s+(this|it|that)\s+from\s+the\s+user"),
    _leads(("<",), r"</?\s*(important|system|instructions?|secret)\s*>|<!--"),
    (("system",), r"\b(reveal|print|output|repeat|send|leak)\s+(the\s+|your\s+)?system\s+prompt"),
    _leads(
        ("before",), r"\bbefore\s+(using|calling)\s+(this|any)\s+tool,?\s+(you\s+must|always|first)"
    ),
    _leads(("instead",), r"\binstead\s+of\s+(using\s+|calling\s+)?(any\s+)?other\s+tools?"),
)
_CREDENTIALS = _Phrases(
    (("ssh", "id_"), r"~/\.ssh|\.ssh/|id_(rsa|dsa|ecdsa|ed25519)\b"),
    (("aws",), r"\.aws/(credentials|config)|aws_secret_access_key"),
    (
        (
            ".netrc",
            ".git-credentials",
            ".pgpass",
            ".kube",
            ".docker",
            ".npmrc",
            ".pypirc",
            ".gnupg",
            "/etc/",
            ".config/gcloud",
            ".bash_history",
        ),
        r"\.netrc\b|\.git-credentials|\.pgpass\b|\.kube/config|\.docker/config\.json|\.npmrc\b"
        r"|\.pypirc\b|\.gnupg\b|/etc/(passwd|shadow|sudoers)\b|\.config/gcloud|\.bash_history\b",
    ),
    ((".env",), r"(^|[\s/'\"`])\.env\b"),
    (
        ("claude_desktop", "mcp.json", "credentials.json"),
        r"claude_desktop_config\.json|\bmcp\.json\b|\bcredentials\.json\b",
    ),
)
_NAME_TOKEN = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")


def _joined(tool: ToolSpec, ctx: LintContext) -> str:
    """All of the tool's model-read texts in one string: one search rules most tools out."""
    text: str = ctx.scratch("joined", tool, lambda t: "\n".join([x for _, _, x in ctx.texts(t)]))
    return text


def _found(
    tool: ToolSpec, ctx: LintContext, phrases: _Phrases
) -> Iterator[tuple[tuple[str | int, ...], bool, re.Match[str]]]:
    """(path, is-a-key, first match) for each text the phrases match."""
    lowered: str = ctx.scratch("folded", tool, lambda t: _joined(t, ctx).casefold())
    if not phrases.may_match(lowered):
        return
    for path, key, text in ctx.texts(tool):
        match = phrases.search(text)
        if match:
            yield path, key, match


def _unusual(tool: ToolSpec, ctx: LintContext) -> Iterator[tuple[tuple[str | int, ...], bool, str]]:
    # Hidden characters are never ASCII: skip the common all-ASCII texts cheaply, and a tool
    # whose texts are all ASCII (most) with one test on the joined text.
    if _joined(tool, ctx).isascii():
        return iter(())
    return ((p, k, t) for p, k, t in ctx.texts(tool) if not t.isascii())


_EMOJI_GLUE = frozenset("\u200d\ufe0e\ufe0f")


def _in_emoji(text: str, at: int) -> bool:
    """A joiner or variation selector that follows a symbol (👨\u200d👩, ❤\ufe0f) is emoji."""
    return text[at] in _EMOJI_GLUE and at > 0 and unicodedata.category(text[at - 1]) == "So"


def _show(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'format character')}"


@RULES.tool(
    "TL601",
    "invisible-characters",
    Severity.ERROR,
    "invisible or bidirectional-control characters in text a model reads",
)
def invisible_characters(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Zero-width, bidi-control or other invisible characters in text a model reads.

    They hide text from reviewers (zero-width joiners between letters, right-to-left overrides
    that reorder what is displayed) while the model reads every code point. Remove them. A
    zero-width joiner or variation selector right after a symbol is part of an emoji and allowed.
    """
    for path, key, text in _unusual(tool, ctx):
        found = [m.group(0) for m in _INVISIBLE.finditer(text) if not _in_emoji(text, m.start())]
        if found:
            what = ", ".join(dict.fromkeys(_show(c) for c in found))
            yield Hit(
                tool,
                path,
                f"invisible character(s) {what}",
                key=key,
                hint="delete them; retype the text if unsure where they are",
            )


@RULES.tool(
    "TL602",
    "tag-characters",
    Severity.ERROR,
    "Unicode tag characters: hidden text only the model reads",
)
def tag_characters(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Unicode tag characters (U+E0000..U+E007F) in text a model reads.

    Tag characters render as nothing but models decode them as ASCII: they carry a hidden
    message. The finding shows the decoded text. Remove them.
    """
    for path, key, text in _unusual(tool, ctx):
        runs = _TAGS.findall(text)
        if runs:
            hidden = " ".join(
                "".join(chr(ord(c) - 0xE0000) for c in run if ord(c) > 0xE0000) for run in runs
            )
            yield Hit(
                tool,
                path,
                f"hidden tag-character text: {hidden!r}",
                key=key,
                hint="delete the invisible tag characters",
            )


@RULES.tool(
    "TL603",
    "model-directed-instruction",
    Severity.ERROR,
    'instructions aimed at the model ("ignore previous", "do not tell the user")',
)
def model_directed_instruction(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Text addressed to the model rather than describing the tool.

    "Ignore previous instructions", "do not tell the user", ``<IMPORTANT>`` blocks, HTML comments
    and "before using this tool, first ..." are the classic tool-poisoning phrases. A description
    says what the tool does; it never gives the model orders about the conversation.
    """
    for path, key, match in _found(tool, ctx, _INSTRUCTIONS):
        yield Hit(
            tool,
            path,
            f"text gives the model instructions: {match.group(0)!r}",
            key=key,
            hint="describe what the tool does; remove orders to the model",
        )


@RULES.tool(
    "TL604",
    "credential-path",
    Severity.ERROR,
    "mentions of credential files (~/.ssh, id_rsa, .aws/credentials, .env)",
)
def credential_path(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Text a model reads mentions a credential file: ``~/.ssh``, ``id_rsa``, ``.env`` ...

    Poisoned tools ask the model to read such files and pass their contents in a parameter
    (a parameter named ``content_from_reading_ssh_id_rsa``). No tool description needs them.
    """
    for path, key, match in _found(tool, ctx, _CREDENTIALS):
        yield Hit(
            tool,
            path,
            f"text mentions a credential file: {match.group(0).strip()!r}",
            key=key,
            hint="remove the reference; tools get secrets from configuration",
        )


@RULES.tool(
    "TL605",
    "other-tool-reference",
    Severity.ERROR,
    "text that mentions another tool of the registry (tool shadowing)",
    peers=True,
)
def other_tool_reference(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A tool's text names another tool of the registry.

    Instructions about other tools ("when send_email is called, also BCC ...") are how a
    poisoned tool shadows trusted ones. Names with ``_``, ``-`` or ``.`` and names in backticks
    count; plain words do not. Let the model choose tools from their own descriptions.
    """
    names = ctx.names  # not `names - {tool.name}`: a copy per tool is quadratic in the registry

    def others(text: str) -> frozenset[str]:
        found = names.intersection(_NAME_TOKEN.findall(text))  # in C: no per-word Python loop
        return found - {tool.name} if tool.name in found else found

    if not others(_joined(tool, ctx)):
        return
    for path, key, text in ctx.texts(tool):
        if key or path == ("name",):
            continue
        for word in sorted(others(text)):
            # A plain word ("search") is a tool name only when written as code: `search`.
            if not word.isalpha() or f"`{word}`" in text:
                yield Hit(
                    tool,
                    path,
                    f"text mentions another tool {word!r}",
                    hint="describe this tool only; do not steer the use of other tools",
                )
                break


def _fold(text: str) -> str:
    if text.isascii():  # NFKC leaves ASCII as it is (most names)
        return text.casefold()
    return unicodedata.normalize("NFKC", text).casefold()


@RULES.registry(
    "TL606",
    "lookalike-tool-names",
    Severity.ERROR,
    "tool names or titles that differ only by case or Unicode look-alikes",
)
def lookalike_tool_names(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """Two tools whose names (or titles) are equal after NFKC normalisation and case folding.

    ``get_user`` and ``Get_User``, or a title in full-width letters, look the same to a person
    and sometimes to a client; a malicious tool can shadow a trusted one this way. Rename one.
    """
    seen: dict[tuple[str, str], ToolSpec] = {}
    for tool in tools:
        for kind, value in (("name", tool.name), ("title", tool.title)):
            if not value:
                continue
            first = seen.setdefault((kind, _fold(value)), tool)
            if first is not tool:
                path = ("name",) if kind == "name" else ("title",)
                yield Hit(
                    tool,
                    path,
                    f"{kind} {value!r} looks the same as {first.name!r}'s "
                    f"{kind} at {first.location}",
                    hint="rename one of them",
                )


def _scripts(text: str) -> set[str]:
    return {unicodedata.name(c, "?").split()[0] for c in text if c.isalpha()}


@RULES.tool(
    "TL607",
    "lookalike-parameters",
    Severity.ERROR,
    "parameter names that collide after NFKC/case folding or mix scripts",
)
def lookalike_parameters(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Parameter names in one object that collide after NFKC and case folding, or mix scripts.

    ``path`` and ``Path``, or ``pаth`` with a Cyrillic ``а``, look identical to a reviewer but are
    different parameters; the look-alike can carry data the handler never checks. Use plain
    ASCII names that differ visibly.
    """
    for _key, path, node in ctx.having(tool, "properties"):
        props = node.get("properties")
        if not isinstance(props, dict):
            continue
        seen: dict[str, str] = {}
        for name in props:
            at = (*path, "properties", name)
            first = seen.setdefault(_fold(name), name)
            if first != name:
                yield Hit(
                    tool,
                    at,
                    f"parameter {name!r} looks the same as {first!r}",
                    hint="rename one of them",
                    key=True,
                )
            elif not name.isascii() and (
                len(_scripts(name)) > 1 or unicodedata.normalize("NFKC", name) != name
            ):
                yield Hit(
                    tool,
                    at,
                    f"parameter name {name!r} mixes scripts or uses look-alike characters",
                    hint="use ASCII letters only",
                    key=True,
                )

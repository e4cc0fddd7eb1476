"""A small project of tools to search, each test with its own load cache."""

from __future__ import annotations

from pathlib import Path

import pytest

TOOLS = {
    "weather.yaml": """\
toolctl: 1
tools:
  - name: get_current_weather
    description: Current weather conditions and the forecast for a city.
    inputSchema:
      type: object
      properties:
        city: {type: string, description: City name, e.g. Paris.}
        units: {type: string, enum: [celsius, fahrenheit], description: Temperature units.}
""",
    "mail.yaml": """\
toolctl: 1
tools:
  - name: sendEmail
    description: Send an email message to one recipient.
    inputSchema:
      type: object
      properties:
        to: {type: string, description: Recipient address.}
        subject: {type: string, description: Subject line.}
        body: {type: string, description: Message text.}
  - name: delete-email
    description: Delete an email message from the mailbox.
    enabled: false
    inputSchema:
      type: object
      properties:
        message_id: {type: string, description: Identifier of the message.}
""",
    "finance.yaml": """\
toolctl: 1
tools:
  - name: convert_currency
    description: Convert an amount of money from one currency to another at today's rate.
    inputSchema:
      type: object
      properties:
        amount: {type: number, description: How much money.}
        from_currency: {type: string, description: ISO code, e.g. USD.}
        to_currency: {type: string, description: ISO code, e.g. EUR.}
  - name: stock_price
    description: Latest trading price of a company's shares on the stock exchange.
    inputSchema:
      type: object
      properties:
        ticker: {type: string, description: Stock ticker symbol.}
""",
    "files.yaml": """\
toolctl: 1
tools:
  - name: read_file
    description: Read a text file from disk and return its contents.
    inputSchema:
      type: object
      properties:
        path: {type: string, description: File path.}
""",
}


@pytest.fixture
def search_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root with a toolctl.yaml and the tools above; its own load cache."""
    root = tmp_path / "proj"
    (root / "tools.d").mkdir(parents=True)
    (root / "toolctl.yaml").write_text("tools: tools.d\n", encoding="utf-8")
    for name, text in TOOLS.items():
        (root / "tools.d" / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(root)
    return root

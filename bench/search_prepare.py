"""Derive the search benchmark's catalog and queries from the Berkeley Function Calling
Leaderboard (BFCL) data, and write them under bench/data/search/.

    python bench/search_prepare.py GORILLA_CHECKOUT [METATOOL_CHECKOUT]

GORILLA_CHECKOUT is a clone of github.com/ShishirPatil/gorilla (a bare clone works: files are
read with ``git show HEAD:PATH``). Only the non-live categories are used: simple_python,
simple_java, simple_javascript, multiple, parallel, parallel_multiple, and the functions (not
the questions) of irrelevance. The ``live_*`` categories are never read: the held-out check of
the engine draws on data of that kind.

Output (small, committed, so bench/bench_search.py needs no network):

* ``catalog.jsonl``: one function per line, ``{"name", "description", "parameters"}``, the
  first declaration of each name (BFCL repeats some functions across categories);
* ``queries.jsonl``: ``{"id", "query", "expected": [names], "split": "tune"|"heldout"}``; the
  split is a hash of the BFCL id, so it never moves; the engine was tuned on ``tune`` only.

The no-answer queries (``bench/data/search/noanswer.jsonl``) are written by hand, not derived.

METATOOL_CHECKOUT (a clone of github.com/HowieHwong/MetaTool), when given, adds a second,
smaller benchmark whose queries paraphrase rather than repeat the tool descriptions:
``metatool_catalog.jsonl`` (its 199 plugins: name and description) and
``metatool_queries.jsonl`` (2,000 of its 20,615 single-tool queries, a fixed sample by hash;
all ``heldout``: nothing was tuned on MetaTool).

It also adds the realistic benchmark, ``metatool1k`` (bench/bench_search.py ``--dataset
metatool1k``): MetaTool's 199 plugins among BFCL's 1,132 functions as distractors (1,331
functions), MetaTool's paraphrased queries, and real user prompts no tool serves. Its
held-out answerable queries are the 2,000 of ``metatool_queries.jsonl``;
``metatool1k_queries.jsonl`` adds the next 2,000 of the same hash order as its ``tune`` split,
and the 520 prompts MetaTool's tool-awareness task labels as needing no tool (human-written
requests: advice, writing, reasoning, general knowledge; often long), split by a hash of their
text. MetaTool is MIT-licensed (see bench/data/search/NOTICE).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = "berkeley-function-call-leaderboard/bfcl_eval/data"
CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
)
OUT = Path(__file__).parent / "data" / "search"


def _lines(repo: Path, rel: str) -> list[dict[str, Any]]:
    path = repo / rel
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{rel}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def split_of(ident: str) -> str:
    """Half the queries to tune on, half never looked at while tuning (stable by id)."""
    return "tune" if hashlib.sha256(ident.encode()).digest()[0] % 2 == 0 else "heldout"


def _expected(answer: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for call in answer["ground_truth"]:
        names.extend(n for n in call if n not in names)
    return names


def main(repo: Path) -> None:
    catalog: dict[str, dict[str, Any]] = {}
    queries: list[dict[str, Any]] = []
    for category in (*CATEGORIES, "irrelevance"):
        entries = _lines(repo, f"{DATA}/BFCL_v4_{category}.json")
        for entry in entries:
            for fn in entry["function"]:
                catalog.setdefault(fn["name"], fn)
        if category == "irrelevance":
            continue
        answers = {
            a["id"]: a for a in _lines(repo, f"{DATA}/possible_answer/BFCL_v4_{category}.json")
        }
        for entry in entries:
            turns = entry["question"][0]
            query = " ".join(t["content"] for t in turns if t["role"] == "user")
            ident = entry["id"]
            queries.append(
                {
                    "id": ident,
                    "query": query,
                    "expected": _expected(answers[ident]),
                    "split": split_of(ident),
                }
            )
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "catalog.jsonl").open("w", encoding="utf-8") as f:
        for fn in catalog.values():
            row = {k: fn.get(k) for k in ("name", "description", "parameters")}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (OUT / "queries.jsonl").open("w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(catalog)} functions, {len(queries)} queries -> {OUT}")


def metatool(repo: Path, sample: int = 2000) -> None:
    import csv
    import io

    def text(rel: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{rel}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    plugins = json.loads(text("dataset/plugin_des.json"))
    rows = list(csv.DictReader(io.StringIO(text("dataset/data/all_clean_data.csv"))))
    rows.sort(key=lambda r: hashlib.sha256(r["Query"].encode()).hexdigest())
    with (OUT / "metatool_catalog.jsonl").open("w", encoding="utf-8") as f:
        for name, description in plugins.items():
            f.write(
                json.dumps({"name": name, "description": description, "parameters": None}) + "\n"
            )
    with (OUT / "metatool_queries.jsonl").open("w", encoding="utf-8") as f:
        for i, row in enumerate(rows[:sample]):
            q = {
                "id": f"metatool_{i}",
                "query": row["Query"],
                "expected": [row["Tool"]],
                "split": "heldout",
            }
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(plugins)} MetaTool plugins, {min(sample, len(rows))} queries -> {OUT}")
    metatool1k(rows[sample : 2 * sample], json.loads(text("dataset/tmp_dataset/Task1.json")))


def metatool1k(tune: list[dict[str, str]], awareness: list[dict[str, Any]]) -> None:
    """The tune split of the realistic benchmark and its no-answer prompts (see the module
    docstring); its held-out split is metatool_queries.jsonl, its catalog both catalogs."""
    out = [
        {"id": f"metatool_{i}", "query": r["Query"], "expected": [r["Tool"]], "split": "tune"}
        for i, r in enumerate(tune, start=len(tune))
    ]
    prompts = [a["query"] for a in awareness if a["label"] == "negative"]
    out += [
        {"id": f"awareness_{i}", "query": q, "expected": [], "split": split_of(q)}
        for i, q in enumerate(prompts)
    ]
    with (OUT / "metatool1k_queries.jsonl").open("w", encoding="utf-8") as f:
        for q in out:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(tune)} tune queries, {len(prompts)} no-answer prompts -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        metatool(Path(sys.argv[2]))

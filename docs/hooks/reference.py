"""MkDocs hook: the reference pages generated from the code at build time.

- reference/cli.md: the commands, through mkdocs-click, from the app's own Click group (`memconsole_docs.cli`,
  a module this hook registers: the app built with an in-memory database, nothing written to instance/).
- reference/configuration.md: every setting `infra/config.py` reads, with its default taken from the code; the
  page holds one meaning per setting, and a setting the code reads without a meaning on the page (or a
  meaning for a setting the code no longer reads) is a warning, which `mkdocs build --strict` makes an error.
- reference/api.md: the endpoints from the OpenAPI document the app serves (`console/api/spec.py`), and the
  document itself, added to the site as reference/openapi.json.
"""

from __future__ import annotations

import ast
import json
import logging
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("mkdocs.hooks.reference")
SETTINGS_TABLE = re.compile(r"<!-- settings -->\n(.*?)\n<!-- /settings -->", re.S)


def on_config(config):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from console import create_app

    app = create_app(
        {"DATABASE_URL": "sqlite://", "SECRET_KEY": "docs", "REDIS_URL": "redis://127.0.0.1:1/0"}
    )
    module = types.ModuleType("memconsole_docs")
    module.cli = app.cli
    sys.modules["memconsole_docs"] = module
    return config


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "reference/configuration.md":
        return SETTINGS_TABLE.sub(lambda m: settings_table(m.group(1)), markdown)
    if page.file.src_uri == "reference/api.md":
        return markdown.replace("<!-- endpoints -->", endpoints_table())
    return markdown


def on_files(files, config):
    from mkdocs.structure.files import File

    from console.api import api

    document = json.dumps(api.document(), indent=2) + "\n"
    files.append(File.generated(config, "reference/openapi.json", content=document))
    return files


# ----- configuration -----


def settings_in_code() -> dict[str, str]:
    """Every environment variable infra/config.py reads, with its default as the code spells it."""
    source = (ROOT / "infra" / "config.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "env"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            default = ast.get_source_segment(source, node.args[1]) if len(node.args) > 1 else None
            found[node.args[0].value] = _shown(default)
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "SCHEDULE_DEFAULTS":
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                found[key.value] = _shown(ast.get_source_segment(source, value))
    found.pop("", None)
    return dict(sorted(found.items()))


def _shown(default: str | None) -> str:
    if default is None:
        return "unset"
    if default.startswith('"') and default.endswith('"'):
        return f"`{default[1:-1]}`"
    return f"`{default}`"


def settings_table(meanings_table: str) -> str:
    """The page's table (variable | when unset | meaning) with each default the code gives put in its place."""
    described: dict[str, tuple[str, str]] = {}
    for row in meanings_table.splitlines()[2:]:
        names_cell, unset_cell, meaning = (c.strip() for c in row.strip().strip("|").split(" | ", 2))
        names = re.findall(r"`([A-Z][A-Z0-9_]+)`", names_cell)
        unset = [u.strip() for u in unset_cell.split(", ")]
        for i, name in enumerate(names):
            described[name] = (unset[i] if len(unset) == len(names) else unset_cell, meaning)
    code = settings_in_code()
    for name in sorted(set(code) - set(described)):
        log.warning(
            "configuration: infra/config.py reads %s, which reference/configuration.md does not describe",
            name,
        )
    for name in sorted(set(described) - set(code)):
        log.warning(
            "configuration: reference/configuration.md describes %s, which infra/config.py does not read",
            name,
        )
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, default in code.items():
        unset, meaning = described.get(name, ("", ""))
        rows.append(f"| `{name}` | {unset if default == 'unset' else default} | {meaning} |")
    return "\n".join(rows)


# ----- the agent API -----


def endpoints_table() -> str:
    from console.api import api

    document = api.document()
    schemas = document["components"]["schemas"]
    rows = ["| method | path | what | takes | answers |", "| --- | --- | --- | --- | --- |"]
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            what = op.get("summary", "")
            if op.get("description"):
                what += ". " + " ".join(op["description"].split())
            takes = [f"`{p['name']}`" for p in op.get("parameters", []) if p.get("in") == "query"]
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            fields = schemas.get(body.get("$ref", "").rsplit("/", 1)[-1], {}).get("properties", {})
            takes += [f"body `{name}`" for name in fields]
            answers = ", ".join(sorted(op.get("responses", {})))
            cells = (what.replace("|", "\\|"), ", ".join(takes).replace("|", "\\|"))
            rows.append(f"| {method.upper()} | `/api/v1{path}` | {cells[0]} | {cells[1]} | {answers} |")
    count = sum(len(ops) for ops in document["paths"].values())
    return (
        f"{count} operations, generated at build time from the OpenAPI document the app serves "
        "(`GET /api/v1/openapi.json`; this site's copy: [openapi.json](openapi.json), with every field's type "
        "and limits).\n\n" + "\n".join(rows)
    )

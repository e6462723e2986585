"""The layout the README's "Layout" section promises: imports go one way between apps, none hides in a function,
and there is one engine per mechanism (no SQLite, local-memory cache or file-system broker branch)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lower ranks are imported by higher ones, never the other way; apps of one rank do not import each other.
# audit sits under every app that records (all of them), over the core only.
RANKS = {"voiceagent": 0, "audit": 0.5, "orgs": 1, "knowledge": 2, "contacts": 2, "notifications": 3, "webhooks": 4,
         "calls": 5, "meetings": 5, "dashboard": 6, "devtools": 6}
TOP = 7
# The project's wiring and the interfaces' shared plumbing live in voiceagent/ but sit above every app (the
# authenticators look keys up in orgs); the rest of voiceagent/ is the core every app may import.
PLUMBING = ("voiceagent.api", "core.runtime", "voiceagent.middleware", "voiceagent.browser_middleware",
            "voiceagent.urls", "voiceagent.settings",
            "voiceagent.test_settings", "voiceagent.wsgi", "voiceagent.apps", "voiceagent.celery", "core.metrics")
INTERFACE_PARTS = {"api", "runtime", "hooks", "management", "admin"}


def product_modules():
    for app in RANKS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                yield module, path


def imported_modules(tree: ast.AST, module: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level] if not module.endswith("__init__") else module.split(".")
                yield ".".join([*base, node.module] if node.module else base)
            elif node.module:
                yield node.module


def rank_of(module: str) -> int:
    return TOP if module.startswith(PLUMBING) else RANKS[module.split(".")[0]]


def is_interface(module: str) -> bool:
    app = module.split(".")[0]
    return app in ("dashboard", "devtools") or module.startswith(PLUMBING) or bool(
        INTERFACE_PARTS & set(module.split(".")[1:]))


MODULES = list(product_modules())


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_imports_go_one_way_between_apps(module, path):
    tree = ast.parse(path.read_text())
    wrong = []
    for target in imported_modules(tree, module):
        app = target.split(".")[0]
        if app not in RANKS or app == module.split(".")[0] and not target.startswith(PLUMBING):
            continue
        if target.startswith(PLUMBING) and not is_interface(module):
            wrong.append(f"{target} (a domain module importing interface plumbing)")
        elif not target.startswith(PLUMBING) and rank_of(target) >= rank_of(module) and app != module.split(".")[0]:
            wrong.append(target)
    assert wrong == [], f"{module} imports upwards: {wrong}"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_no_import_hides_inside_a_function(module, path):
    tree = ast.parse(path.read_text())
    hidden = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name != "ready":
            hidden += [f"line {node.lineno}" for node in ast.walk(function) if isinstance(node, (ast.Import,
                                                                                               ast.ImportFrom))]
    assert hidden == [], f"{module} imports inside a function at {hidden}"


def test_one_engine_per_mechanism():
    pattern = re.compile(r"sqlite|vendor ==|vendor !=|LocMemCache|filesystem://", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{n}" for app in RANKS for path in (ROOT / app).rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []

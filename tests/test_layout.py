"""The layout of docs/architecture (README "Layout"): imports point down, with no exception list.

- `core/` imports no app (and not the project);
- no app imports `voiceagent/`: only the project's own modules do;
- an app imports only apps of a lower rank (apps of one rank do not import each other);
- the domain never imports an interface (`api/`, `runtime/`, `hooks/`, `management/`, `admin`, the dashboard);
- no import hides inside a function, except in an `AppConfig.ready()`;
- one engine per mechanism (no SQLite, local-memory cache or file-system broker branch).
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# core <- audit <- orgs <- knowledge, contacts <- notifications <- webhooks <- calls, meetings <- privacy (retention and
# erasure reach every call and caller), alerts (evaluated from every app's figures) <- dashboard, devtools <- the
# project (voiceagent: settings, root URLs, Celery, the key authenticator, idempotency, middleware). The audit trail
# sits under orgs because the services of every app above it write to it.
RANKS = {"core": 0, "audit": 1, "orgs": 2, "knowledge": 3, "contacts": 3, "notifications": 4, "webhooks": 5,
         "calls": 6, "meetings": 6, "privacy": 7, "alerts": 7, "dashboard": 8, "devtools": 8, "voiceagent": 9}
PROJECT = "voiceagent"
# Top-level directories that hold no product code: the tests, benchmarks, scripts and examples are clients of it.
NOT_PRODUCT = {"tests", "bench", "scripts", "examples", "docs", "var"}
INTERFACE_PARTS = {"api", "runtime", "hooks", "management", "admin"}
INTERFACE_APPS = {"dashboard", "devtools", PROJECT}


def product_modules():
    for app in RANKS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"), path


def imported_modules(tree: ast.AST, module: str, path: Path):
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                yield ".".join([*base, node.module] if node.module else base)
            else:
                yield node.module


def app_of(module: str) -> str:
    return module.split(".")[0]


def is_interface(module: str) -> bool:
    return app_of(module) in INTERFACE_APPS or bool(INTERFACE_PARTS & set(module.split(".")[1:]))


MODULES = list(product_modules())
IDS = [m for m, _ in MODULES]


def imports_of(module: str, path: Path) -> list[str]:
    """The product modules `module` imports (its own app's included)."""
    return [t for t in imported_modules(ast.parse(path.read_text()), module, path) if app_of(t) in RANKS]


def test_every_top_level_package_is_ranked():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} | {p.parent.name for p in ROOT.glob("*/apps.py")}
    assert packages - NOT_PRODUCT - set(RANKS) == set()


def test_the_imports_are_read():
    """The checks below see real imports (a parser that yields nothing would pass them all)."""
    found = {t for module, path in MODULES for t in imports_of(module, path)}
    assert {"core.errors", "core.api.views", "orgs.models", "webhooks.models", "dashboard.urls"} <= found


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if app_of(m) == "core"],
                         ids=[m for m in IDS if app_of(m) == "core"])
def test_core_imports_no_app(module, path):
    assert [t for t in imports_of(module, path) if app_of(t) != "core"] == []


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if app_of(m) != PROJECT],
                         ids=[m for m in IDS if app_of(m) != PROJECT])
def test_no_app_imports_the_project(module, path):
    assert [t for t in imports_of(module, path) if app_of(t) == PROJECT] == []


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_imports_point_down(module, path):
    app = app_of(module)
    upward = [t for t in imports_of(module, path) if app_of(t) != app and RANKS[app_of(t)] >= RANKS[app]]
    assert upward == [], f"{module} imports its own rank or higher"


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if not is_interface(m)],
                         ids=[m for m in IDS if not is_interface(m)])
def test_the_domain_imports_no_interface(module, path):
    assert [t for t in imports_of(module, path) if is_interface(t)] == []


def is_app_config_ready(function: ast.AST, parents: dict) -> bool:
    owner = parents.get(function)
    return (function.name == "ready" and isinstance(owner, ast.ClassDef)
            and any(getattr(base, "id", getattr(base, "attr", None)) == "AppConfig" for base in owner.bases))


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_no_import_hides_inside_a_function(module, path):
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    hidden = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and not is_app_config_ready(function,
                                                                                                      parents):
            hidden += [f"line {node.lineno}" for node in ast.walk(function)
                       if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert hidden == [], f"{module} imports inside a function at {hidden}"


def test_one_engine_per_mechanism():
    pattern = re.compile(r"sqlite|vendor ==|vendor !=|LocMemCache|filesystem://", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{n}" for app in RANKS for path in (ROOT / app).rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []

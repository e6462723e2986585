"""The layout of docs/architecture (README "Layout"): every dependency points down, with no exception list.

- `core/` imports no app (and not the project);
- no app imports `voiceagent/`: only the project's own modules do;
- the interfaces rank above every domain app: the `/v1` pipeline (`api/`), then each app's `api/`, `runtime/`,
  `hooks/` and `management/`, then the dashboard and devtools, then the project; a module imports only lower ranks
  (apps of one rank do not import each other), so the domain never imports an interface;
- model relations point to the same app or a lower rank; no setting read by a product module names a module that
  module could not import;
- no import hides inside a function, except in an `AppConfig.ready()`;
- one engine per mechanism (no SQLite, local-memory cache or file-system broker branch).
"""

import ast
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
# The domain: core <- audit <- orgs <- knowledge, contacts <- notifications <- webhooks <- calls, meetings <- privacy
# (retention and erasure reach every call and caller), alerts (evaluated from every app's figures). Then the
# interfaces: the /v1 pipeline (api) <- each app's api/runtime/hooks/management <- dashboard, devtools <- the project
# (voiceagent: settings, root URLs, Celery, WSGI, middleware). The audit trail sits under orgs because the services
# of every app above it write to it.
RANKS = {"core": 0, "audit": 1, "orgs": 2, "knowledge": 3, "contacts": 3, "notifications": 4, "webhooks": 5,
         "calls": 6, "meetings": 6, "privacy": 7, "alerts": 7, "api": 10, "dashboard": 12, "devtools": 12,
         "voiceagent": 13}
PROJECT = "voiceagent"
PIPELINE = "api"
# Top-level directories that hold no product code: the tests, benchmarks, scripts and examples are clients of it.
NOT_PRODUCT = {"tests", "bench", "scripts", "examples", "docs", "var"}
INTERFACE_PARTS = {"api", "runtime", "hooks", "management", "admin"}
INTERFACE_APPS = {PIPELINE, "dashboard", "devtools", PROJECT}
# An app's own interface modules (`calls.api`, `meetings.runtime`, ...) sit between the pipeline and the dashboard,
# in their apps' order.
APP_INTERFACES = 11


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


def rank(module: str) -> tuple[int, int]:
    app = app_of(module)
    if is_interface(module) and app not in INTERFACE_APPS:
        return APP_INTERFACES, RANKS[app]
    return RANKS[app], 0


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
    assert {"core.errors", "api.views", "orgs.models", "webhooks.models", "dashboard.urls"} <= found


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
    upward = [t for t in imports_of(module, path) if app_of(t) != app and rank(t) >= rank(module)]
    assert upward == [], f"{module} imports its own rank or higher"


def test_ranks_order_the_interfaces_above_the_domain():
    domain = max(rank(f"{app}.models") for app in RANKS if app not in INTERFACE_APPS)
    assert domain < rank("api.views") < rank("calls.api.views") == rank("calls.runtime.views") < rank("dashboard.urls")
    assert rank("contacts.api.views") < rank("calls.api.views") < rank("privacy.management.commands.x")


PRODUCT_MODELS = [m for m in apps.get_models() if m._meta.app_label in RANKS]


def test_the_models_are_read():
    assert {"orgs.Organization", "calls.Call", "webhooks.Delivery"} <= {m._meta.label for m in PRODUCT_MODELS}


@pytest.mark.parametrize("model", PRODUCT_MODELS, ids=[m._meta.label for m in PRODUCT_MODELS])
def test_model_relations_point_down(model):
    """A relation is a dependency the imports do not show (a lazy "app.Model" string): it may name its own app or a
    lower rank only."""
    app = model._meta.app_label
    upward = [f"{field.name} -> {field.related_model._meta.label}" for field in model._meta.get_fields()
              if field.is_relation and not field.auto_created and field.related_model is not None
              and field.related_model._meta.app_label != app
              and field.related_model._meta.app_label in RANKS
              and RANKS[field.related_model._meta.app_label] > RANKS[app]]
    assert upward == []


def product_paths_named(value) -> list[str]:
    """The product modules a setting's value names (dotted paths, also in lists and dicts)."""
    if isinstance(value, str):
        return [value] if re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", value) and app_of(value) in RANKS else []
    if isinstance(value, dict):
        return [path for item in value.values() for path in product_paths_named(item)]
    if isinstance(value, (list, tuple)):
        return [path for item in value for path in product_paths_named(item)]
    return []


def settings_read_by(tree: ast.AST) -> set[str]:
    named = {node.attr for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "settings"}
    return named | {node.args[1].value for node in ast.walk(tree)
                    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) > 1
                    and getattr(node.args[0], "id", None) == "settings" and isinstance(node.args[1], ast.Constant)}


def test_settings_name_product_modules():
    """The check below reads real values (DRF's hooks name the pipeline's classes)."""
    assert "api.authentication.ApiKeyAuthentication" in product_paths_named(settings.REST_FRAMEWORK)


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_no_setting_names_a_module_its_reader_may_not_import(module, path):
    """A module that reads a setting naming a product module depends on that module as much as an import would."""
    app = app_of(module)
    named = [f"{name} -> {target}" for name in sorted(settings_read_by(ast.parse(path.read_text())))
             for target in product_paths_named(getattr(settings, name, None))
             if app_of(target) != app and rank(target) >= rank(module)]
    assert named == []


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

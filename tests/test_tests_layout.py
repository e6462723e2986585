"""The tests are a library too: helpers live in `tests/support/` (and the model factories in `tests/factories.py`),
fixtures in conftest files, rules in test modules.

- no file under `tests/` imports a conftest or a test module: a helper one test file wrote is moved to
  `tests/support/` before a second one uses it, and a fixture reaches another directory through a conftest above
  both (pytest finds it there), never through an import;
- a test module or a conftest imports from `tests/` only `tests.support` and `tests.factories`, so a helper has one
  home a reader can find.

`tests/test_layout.py` holds the product's layout; this file holds the tests' own.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
LIBRARY = ("tests.support", "tests.factories")


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def is_rule_module(module: str) -> bool:
    """A conftest or a test module: what pytest collects, never a library."""
    name = module.rsplit(".", 1)[-1]
    return name == "conftest" or name.startswith("test_")


def test_imports(path: Path) -> list[str]:
    """The `tests.*` modules `path` imports, wherever the import statement sits; `pytest_plugins` counts too."""
    module = module_of(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                if node.level else node.module
            # `from tests.calls import conftest` imports the conftest module, not a name of the package.
            found += [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytest_plugins" for t in node.targets):
            found += [e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return sorted({m for m in found if m == "tests" or m.startswith("tests.")})


test_imports.__test__ = False  # a helper of this module, not a test

FILES = sorted(TESTS.rglob("*.py"))
EXISTING = {module_of(p) for p in FILES}


def existing(module: str) -> bool:
    """`module` names a file (`from tests.x import helper` also yields `tests.x.helper`, which is no module)."""
    return module in EXISTING


def test_the_imports_are_read():
    """The checks below see real imports (a parser that yields nothing would pass them all)."""
    found = {m for p in FILES for m in test_imports(p)}
    assert {"tests.factories", "tests.support.waiting", "tests.support.runtime"} <= found


def test_nothing_imports_a_conftest_or_a_test_module():
    found = {str(p.relative_to(TESTS)): [m for m in test_imports(p) if existing(m) and is_rule_module(m)]
             for p in FILES}
    assert {path: modules for path, modules in found.items() if modules} == {}


def test_tests_and_conftests_import_helpers_from_the_library_only():
    found = {str(p.relative_to(TESTS)): [m for m in test_imports(p) if existing(m) and m != "tests"
                                           and not m.startswith(LIBRARY)]
             for p in FILES if is_rule_module(module_of(p))}
    assert {path: modules for path, modules in found.items() if modules} == {}, "move them into tests/support/"

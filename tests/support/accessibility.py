"""axe-core in the browser tests: `assert_accessible(page)` runs axe's WCAG 2 A and AA rules (tags wcag2a, wcag2aa,
wcag21a, wcag21aa) on the page as it is, and fails with each violation's rule, impact, help and the elements. The
engine is vendored (tests/support/vendor/axe-core, from npm), so nothing is downloaded at test time."""

from pathlib import Path

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_violations(page, *, tags=WCAG_AA) -> list[dict]:
    """The page's violations of axe's rules with `tags`: [{id, impact, help, nodes: [selector, ...]}]."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())  # through DevTools: the pages' CSP refuses an injected <script>
    result = page.evaluate(
        "async (tags) => await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        tags,
    )
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [" ".join(node["target"]) if isinstance(node["target"], list) else node["target"]
                       for node in v["nodes"]]}
            for v in result["violations"]]


def assert_accessible(page) -> None:
    violations = axe_violations(page)
    assert violations == [], "\n".join(f"{v['id']} ({v['impact']}): {v['help']}: {v['nodes']}" for v in violations)

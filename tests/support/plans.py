"""Reading PostgreSQL's query plans."""


def plan_nodes(plan):
    """Every node of an EXPLAIN (FORMAT JSON) plan."""
    stack = [entry["Plan"] for entry in plan]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.get("Plans", []))

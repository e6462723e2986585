"""Where the contract reports a problem found at a dotted path (`outcome.tickets.0.title`): `fieldErrors` maps the
top-level field name (Zod's `flatten()`), and the rest of the path leads the message (`tickets: Item 0: title: `)."""


def named(path: str) -> tuple[str, str]:
    """(the field name, the lead of its message) for a problem at `path`."""
    top, _, rest = path.partition(".")
    return top, "".join(f"Item {part}: " if part.isdigit() else f"{part}: " for part in rest.split(".")) if rest else ""


def reported_at(details: dict, path: str) -> bool:
    """Whether `details` (a 400's) reports a problem at `path` under its field name, with the path in the message."""
    top, lead = named(path)
    return any(message.startswith(lead) for message in details["fieldErrors"].get(top, []))

"""The lock is what `make` installs: every package pinned with hashes, and in step with requirements.in."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s\\]+)")


def _normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path):
    return {
        _normalized(m.group(1)): m.group(2)
        for line in path.read_text().splitlines()
        if (m := PIN.match(line))
    }


def _blocks(path):
    """The lock's requirement blocks: a pin line with its continuation lines (hashes, `# via` notes)."""
    blocks, current = [], None
    for line in path.read_text().splitlines():
        if PIN.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None and line.startswith("    "):
            current.append(line)
        else:
            current = None
    return blocks


def test_every_locked_package_is_pinned_with_a_sha256():
    blocks = _blocks(ROOT / "requirements.txt")
    assert len(blocks) > 40
    unhashed = [b[0] for b in blocks if not any("--hash=sha256:" in line for line in b)]
    assert unhashed == []


def test_every_chosen_package_is_locked_at_its_chosen_version():
    chosen = _pins(ROOT / "requirements.in")
    locked = _pins(ROOT / "requirements.txt")
    assert chosen, "requirements.in lists no pinned packages"
    assert {name: locked.get(name) for name in chosen} == chosen


def test_nothing_in_the_lock_is_unpinned_or_from_elsewhere():
    text = (ROOT / "requirements.txt").read_text()
    assert "--index-url" not in text and "--find-links" not in text
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            assert PIN.match(line), line


def test_make_installs_the_lock_with_hash_checking():
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements.txt" in makefile

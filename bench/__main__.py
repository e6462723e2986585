"""`python -m bench [NAME ...]`: runs each named bench module's `main()` (all of bench.MODULES by default).

To add a bench, write `bench/<name>.py` with a `main()` and append `<name>` to `bench.MODULES`.
"""

import subprocess
import sys

from bench import MODULES


def run(names: list[str]) -> int:
    unknown = [name for name in names if name not in MODULES]
    if unknown:
        print(f"unknown bench module(s): {', '.join(unknown)}; known: {', '.join(MODULES)}", file=sys.stderr)
        return 2
    for name in names or MODULES:
        print(f"== bench.{name}", flush=True)
        # Each bench in its own process: each configures Django for its own database and settings.
        done = subprocess.run([sys.executable, "-c", f"import bench.{name} as bench; bench.main()"])  # noqa: S603
        if done.returncode:
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

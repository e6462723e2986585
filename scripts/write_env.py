"""Writes `.env` once, with generated secrets, so `make run` needs nothing but Python and make."""

import base64
import secrets
from pathlib import Path

ENV_FILE = Path(__file__).resolve().parent.parent / ".env"


def main() -> None:
    if ENV_FILE.exists():
        return
    lines = [
        "# Written once by `make run` (scripts/write_env.py). Secrets: keep this file out of git.",
        "DEBUG=true",
        f"SECRET_KEY={secrets.token_urlsafe(50)}",
        f"FIELD_ENCRYPTION_KEY={base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()}",
        f"AGENT_RUNTIME_TOKEN={secrets.token_urlsafe(32)}",
        "# To rotate it with overlap, list the other accepted tokens here (comma-separated, 32+ characters each):",
        "# AGENT_RUNTIME_TOKENS=",
        "BASE_URL=http://127.0.0.1:8000",
        "WEBHOOK_ALLOW_LOCAL_URLS=true",
        "# Unset: `make run` starts embedded PostgreSQL and Redis. Set them to use your own servers:",
        "# DATABASE_URL=postgres://postgres@127.0.0.1:5432/voiceagent",
        "# REDIS_URL=redis://127.0.0.1:6379/0",
    ]
    ENV_FILE.write_text("\n".join(lines) + "\n")
    ENV_FILE.chmod(0o600)
    print(f"Wrote {ENV_FILE.name} with generated secrets.")


if __name__ == "__main__":
    main()

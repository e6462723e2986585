# The two commands: `make run` serves everything; `make test` runs the whole suite.
# Without DATABASE_URL / REDIS_URL both start embedded PostgreSQL and Redis (scripts/embedded.py) and stop them after.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PYTEST_WORKERS ?= 2
WITH_SERVICES := $(BIN)/python scripts/embedded.py --

.PHONY: run serve test lint bench venv fmt clean lock audit cluster-drill

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes -r requirements.txt
	touch $@

venv: $(BIN)/.installed

.env:
	$(BIN)/python scripts/write_env.py

run: venv .env
	$(WITH_SERVICES) $(MAKE) --no-print-directory serve

# What `make run` does once PostgreSQL and Redis answer (DATABASE_URL and REDIS_URL are set).
serve:
	mkdir -p var/media
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py seed_demo
	$(BIN)/honcho start -f Procfile -p $(PORT)

test: venv
	mkdir -p var
	$(WITH_SERVICES) $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not cluster" $(PYTEST_ARGS)

# The tests marked `cluster`, which `make test` leaves out (minutes each; CI runs them once): several processes of each
# kind on this machine (tests/cluster/test_drill.py: haproxy, two web nodes, two workers, one 30 s ahead, two beats,
# PgBouncer, Redis with Sentinel failed over mid-run, a worker killed; it prints its figures) and the Sentinel failovers.
cluster-drill: venv
	mkdir -p var
	$(WITH_SERVICES) $(BIN)/pytest -n 0 -s -m cluster tests $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .

fmt: venv
	$(BIN)/ruff check --fix .

bench: venv .env
	$(WITH_SERVICES) $(BIN)/python -m bench $(BENCH_ARGS)

# requirements.txt is generated: every package pinned with its hashes, from the choices in requirements.in.
lock: venv
	$(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
		--no-emit-find-links --output-file requirements.txt requirements.in

# Known vulnerabilities in the locked packages; scripts/audit.sh says so instead when the advisory database is out of reach.
audit: venv
	scripts/audit.sh $(BIN)/pip-audit

clean:
	rm -rf $(VENV) var staticfiles

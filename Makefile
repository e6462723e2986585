# The two commands: `make run` serves everything; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PYTEST_WORKERS ?= 2

.PHONY: run test lint bench venv migrate seed fmt clean

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

venv: $(BIN)/.installed

.env:
	$(BIN)/python scripts/write_env.py

run: venv .env
	mkdir -p var/broker/out var/broker/processed var/broker/control var/media
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py seed_demo
	$(BIN)/honcho start -f Procfile -p $(PORT)

test: venv
	mkdir -p var
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .

fmt: venv
	$(BIN)/ruff check --fix .

bench: venv .env
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var staticfiles

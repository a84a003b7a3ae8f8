# Quickstart: `make run` serves the API on the embedded backend; `make test` runs every test.
# Both create .venv and install what is needed first (again only when requirements change).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
PYTEST_ARGS ?= -n 4

.PHONY: install run run-azure test clean openapi

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing Python packages into $(VENV) ..."
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $(STAMP)

# The Cosmos DB and Storage emulators the tests run against come from the npm registry.
$(NODE_STAMP): package.json package-lock.json
	@echo "Installing the Cosmos DB and Azurite emulators into node_modules ..."
	@npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

run: $(STAMP)
	$(PY) -m devhost

# The same app on the Azure adapters: Cosmos DB and Storage Queue emulators, started and stopped here.
run-azure: install
	$(PY) -m devhost --emulators

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) node_modules .data .pytest_cache

# Regenerate the checked-in OpenAPI document from the app (a test fails when it drifts).
openapi: $(STAMP)
	$(PY) -m api.openapi > docs/openapi.json

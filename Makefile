# Quickstart: `make run` serves the API on the embedded backend; `make test` runs the static checks and
# every test (`make fix` repairs what the lint and format checks can).
# Both create .venv and install what is needed first (again only when requirements change).

# The interpreter: the Python production runs (PRODUCTION_PYTHON, as infra/modules/functionapp.bicep
# deploys it; decision 0112) where it is installed, as pythonX.Y on PATH or one of pyenv's versions; else
# python3, with a line saying so (the app runs on 3.11 and 3.12 too). PYTHON=... picks one by hand. CI sets
# REQUIRE_PRODUCTION_PYTHON=1 (.ci/run): there the fallback is an error. .venv is made again when the
# interpreter changes.
PRODUCTION_PYTHON := 3.13
PYTHON_ORIGIN := $(origin PYTHON)
ifeq ($(PYTHON_ORIGIN),undefined)
PYTHON := $(shell for candidate in python$(PRODUCTION_PYTHON) \
	"$$(pyenv root 2>/dev/null)"/versions/$(PRODUCTION_PYTHON).*/bin/python$(PRODUCTION_PYTHON); do \
	"$$candidate" -c "" 2>/dev/null && { command -v "$$candidate"; exit; }; done; echo python3)
endif
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
PYTEST_ARGS ?= -n 4

.PHONY: FORCE install browser run run-azure emulators check fix test clean openapi fuzz bench capacity load chaos screenshots

# Which interpreter .venv was made with (rewritten, and .venv made again, only when it changes).
INTERPRETER := $(VENV)/.interpreter
$(INTERPRETER): FORCE
	@version=$$($(PYTHON) -c 'import sys; print(".".join(map(str, sys.version_info[:3])))') || { \
		echo "make: no Python found ($(PYTHON)): install Python $(PRODUCTION_PYTHON) (or 3.11)"; exit 1; }; \
	case "$$version" in \
	$(PRODUCTION_PYTHON).*) echo "Python $$version ($(PYTHON)), the version production runs";; \
	*) if [ -n "$(REQUIRE_PRODUCTION_PYTHON)" ]; then \
		echo "make: Python $(PRODUCTION_PYTHON), the version production runs, is not installed" \
			"(REQUIRE_PRODUCTION_PYTHON is set)"; exit 1; fi; \
	   if [ "$(PYTHON_ORIGIN)" = undefined ]; then \
		echo "Python $(PRODUCTION_PYTHON) (production's) is not installed: falling back to Python $$version" \
			"($(PYTHON)); install $(PRODUCTION_PYTHON) to run what Azure runs"; \
	   else echo "Python $$version (PYTHON=$(PYTHON)), not $(PRODUCTION_PYTHON), the version production runs"; fi;; \
	esac; \
	if [ "$$(cat $@ 2>/dev/null)" != "$$version $(PYTHON)" ]; then \
		if [ -d $(VENV) ]; then echo "The interpreter changed: making $(VENV) again"; rm -rf $(VENV); fi; \
		mkdir -p $(VENV) && echo "$$version $(PYTHON)" > $@; \
	fi

# requirements.txt brings the Functions Python worker's core (azure-functions-runtime) on Python 3.13, as
# Azure installs it; the worker-loading test (tests/toolchain/test_worker_index.py) needs it on an older
# Python too, where it is missing: tests/requirements-worker.txt installs the same pins past their
# Python >= 3.13.
# client/ (the partner client, pos-partner) is installed editable: examples/push_day.py and the tests use it.
$(STAMP): $(INTERPRETER) requirements.txt requirements-dev.txt tests/requirements-worker.txt client/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing Python packages into $(VENV) ..."
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@$(PY) -c 'import azure_functions_runtime' 2>/dev/null || \
		$(PY) -m pip install --quiet --disable-pip-version-check --ignore-requires-python --no-deps \
		-r tests/requirements-worker.txt
	@$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e client
	@touch $(STAMP)

# The Cosmos DB and Storage emulators the tests run against come from the npm registry.
$(NODE_STAMP): package.json package-lock.json
	@echo "Installing the Cosmos DB and Azurite emulators into node_modules ..."
	@npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

# `hq`, HQ's command line, on the venv's PATH as the guides write it (`.venv/bin/hq`, or `hq` once the venv is
# activated): a console script that runs this checkout's `python -m hq` from any folder. The app is not a
# distribution of its own (its folders are the Functions app's layout), so make writes the script pip would.
HQ_COMMAND := $(VENV)/bin/hq
$(HQ_COMMAND): $(STAMP) Makefile
	@printf '#!/bin/sh\n# HQ operations of %s (python -m hq), written by make install\nPYTHONPATH="%s$${PYTHONPATH:+:$$PYTHONPATH}" exec "%s" -m hq "$$@"\n' \
		"$(CURDIR)" "$(CURDIR)" "$(CURDIR)/$(PY)" > $@
	@chmod +x $@

install: $(STAMP) $(NODE_STAMP) $(HQ_COMMAND)

# The browser tests (tests/browser/) and `make screenshots` drive Debian's chromium with Playwright
# (requirements-dev.txt), which never downloads a browser of its own: apt-get installs chromium and
# chromium-driver when /usr/bin/chromium or /usr/bin/chromedriver is missing (as root, else with sudo),
# and does nothing otherwise.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@test -x /usr/bin/chromium && test -x /usr/bin/chromedriver || { \
		echo "Installing Debian's chromium and chromium-driver ..." && \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
			-o DPkg::Lock::Timeout=600 chromium chromium-driver >/dev/null; }

run: $(STAMP) $(HQ_COMMAND)
	$(PY) -m devhost

# The same app on the Azure adapters: Cosmos DB and Storage Queue emulators, started and stopped here.
# Their data lives in the emulators' memory (not in .data) and is gone when the host stops.
run-azure: install
	$(PY) -m devhost --emulators

# Azurite (blob, queue, table on 10000-10002) and the Cosmos DB emulator (https://127.0.0.1:8081) in the
# foreground, on the addresses local.settings.json.example names: for `func start` in another terminal.
emulators: install
	$(PY) -m devhost.emulators

# Lint, format and types (ruff.toml, mypy.ini): mypy fails when an adapter no longer satisfies its port.
check: $(STAMP)
	@$(PY) -m ruff check . && $(PY) -m ruff format --check . && $(PY) -m mypy \
		|| { echo "make check failed: run make fix for lint and format (type errors are fixed by hand)"; exit 1; }

fix: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

test: install browser check
	$(PY) -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) node_modules .data .pytest_cache .mypy_cache .ruff_cache

# Regenerate the checked-in OpenAPI document from the app (a test fails when it drifts).
openapi: $(STAMP)
	$(PY) -m triggers.openapi > docs/openapi.json

# Benchmarks against the floor of the same work (docs/performance.md): prints a table and writes
# bench/results/latest.json. BENCH_REPEAT=N sets the repetitions (default 15); BENCH_ARGS="--quick",
# "--profile" or "--only accept,reconcile" (or azure) pass options to bench/run.py. "azure" (bench/azure_accept.py) runs
# on the Cosmos DB and Azurite emulators, hence `install`.
bench: install
	$(PY) -m bench.run $(BENCH_ARGS)

# docs/dashboard-overview.png and docs/dashboard-store-day.png (shown in docs/operator-guide.md): the HQ dashboard on
# seeded data (tests/browser/screenshots.py), photographed in headless chromium.
screenshots: $(STAMP) browser
	$(PY) -m tests.browser.screenshots

# The capacity model (bench/capacity.py, docs/performance.md "What a 10,000-store chain needs"): measures
# per-request costs on SQLite and the Cosmos DB emulator, prints what a 10,000-store chain needs.
# CAPACITY_ARGS="--quick" or "--markdown --json FILE" pass options.
capacity: install
	$(PY) -m bench.capacity $(CAPACITY_ARGS)

# A longer fuzz than make test's: FUZZ_EXAMPLES per operation and generation mode (default 300), fixed
# FUZZ_SEED, request arrays capped at FUZZ_MAX_ITEMS (0: as documented); prints a summary at the end.
fuzz: $(STAMP)
	@summary=$$(mktemp); \
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-300} FUZZ_SUMMARY=$$summary $(PY) -m pytest tests/e2e/test_fuzz.py -n 4 -q; \
	status=$$?; $(PY) -m tests.fuzz_summary $$summary || status=1; rm -f $$summary; exit $$status

# A bounded load on loopback (loadtest/run.py): its own local host, 8 clients of 4 partners, mixed endpoints
# for LOAD_SECONDS (default 60); reports throughput, p50/p99, errors and the server's memory over time, and
# fails on any error, any daily close not MATCHED, or memory growth after warm-up (LOAD_MAX_RSS_GROWTH_MB).
# LOAD_BACKEND=azure runs it on the Cosmos DB and Azurite emulators.
load: install
	$(PY) -m loadtest

# kill -9 under load (loadtest/chaos.py, docs/reliability.md): clients push business days to a local host of
# its own, which is killed with SIGKILL at named steps of its writes and at random moments, CHAOS_SECONDS
# (default 120, 180 on azure) long, and restarted on the same data; unanswered requests are resent with the same batch_id.
# Fails on any record lost or doubled, any close not MATCHED with the clients' own totals, or fewer than
# CHAOS_MIN_KILLS (30) kills. CHAOS_BACKEND=azure runs it on the Cosmos DB and Azurite emulators.
chaos: install
	$(PY) -m loadtest.chaos

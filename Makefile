# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv on first use, with the exact versions CI last passed with
# (.ci/constraints.txt), and reinstall when pyproject.toml or the constraints change.
# `make test-latest` runs the suite on the newest versions pyproject.toml allows, in .venv-latest;
# `make constraints` then pins what it installed (README: "Upgrading the pinned versions").
PYTHON      ?= python3
VENV        ?= .venv
CONSTRAINTS ?= .ci/constraints.txt
BIN         := $(VENV)/bin
STAMP       := $(VENV)/.installed
LATEST      := .venv-latest
PIP         := -m pip install --quiet --disable-pip-version-check

.PHONY: demo test install latest test-latest constraints clean samples

install: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python $(PIP) -c $(CONSTRAINTS) --upgrade pip
	$(BIN)/python $(PIP) -c $(CONSTRAINTS) -e '.[dev]'
	-$(BIN)/forensics warm-up
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/forensics report sample_logs -o out/sample_logs/report.html --title "Sample incidents (sample_logs/)"

test: $(STAMP)
	$(BIN)/python -m pytest

latest:
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python $(PIP) --upgrade pip
	$(LATEST)/bin/python $(PIP) --upgrade --upgrade-strategy eager -e '.[dev]'
	$(LATEST)/bin/python -m pip list --format=freeze --disable-pip-version-check | grep -iE '^(pyspark|py4j|pandas|pyarrow)=='

test-latest: latest
	$(LATEST)/bin/python -m pytest

constraints:
	{ echo "# Exact versions the suite last passed with; make and .ci/run install with them."; \
	  echo "# Regenerate with 'make test-latest constraints' (README: Upgrading the pinned versions)."; \
	  $(LATEST)/bin/python -m pip freeze --all --exclude-editable --disable-pip-version-check; } > $(CONSTRAINTS)

clean:
	rm -rf $(VENV) $(LATEST) out test-artifacts .pytest_cache

samples: $(STAMP)
	$(BIN)/python -m forensics.simulate sample_logs

# The Kafka lab (lab/, docs/lab.md): real brokers and clients on 127.0.0.1 regenerate the runs
# under lab/runs/ and compare the toolkit's analysis with each run's truth.json.
# `make lab` runs every scenario, `make lab SCENARIO=name` one; `make lab-check` compares the
# committed runs without regenerating them.
.PHONY: lab lab-check

lab: $(STAMP)
	$(BIN)/python -m lab.run $(SCENARIO)
	$(BIN)/python -m lab.run --check $(SCENARIO)

lab-check: $(STAMP)
	$(BIN)/python -m lab.run --check $(SCENARIO)

# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv on first use and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	-$(BIN)/forensics warm-up
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/forensics report sample_logs -o out/sample_logs/report.html --title "Sample incidents (sample_logs/)"

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) out test-artifacts .pytest_cache

samples: $(STAMP)
	$(BIN)/python -m forensics.simulate sample_logs

"""The code base stays as ruff's configuration in pyproject.toml asks (issue 83, item 8)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_to_fix():
    checked = ruff("check", "--output-format", "concise", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_ruff_format_leaves_every_file_as_it_is():
    checked = ruff("format", "--check", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr

"""The README and the docs site: short README, links that resolve, a site that builds strictly."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT

README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_stays_short():
    assert len(README.read_bytes()) < 8 * 1024


def test_every_relative_link_of_the_readme_and_the_docs_names_a_file():
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if target.startswith("reference/") and page.parent.name == "docs":
                continue  # generated at build time (docs/hooks.py)
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken


def test_the_license_file_is_the_license_pyproject_names():
    assert "Apache-2.0" in (ROOT / "pyproject.toml").read_text()
    head = (ROOT / "LICENSE").read_text(encoding="utf-8")[:300]
    assert "Apache License" in head and "Version 2.0" in head


def test_the_docs_site_builds_strictly_with_the_generated_reference_pages(tmp_path):
    """``mkdocs build --strict``: every page in the navigation, no broken link or anchor, and the
    catalogue and detector pages generated from the code (``docs/hooks.py``)."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    catalogue = (tmp_path / "site" / "reference" / "catalogue" / "index.html").read_text(encoding="utf-8")
    detectors = (tmp_path / "site" / "reference" / "detectors" / "index.html").read_text(encoding="utf-8")
    assert "consumer:group:join_started" in catalogue and "reset_to_latest_gap" in detectors

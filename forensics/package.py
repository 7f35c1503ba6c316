"""What the installed package is and carries: its version and the notebooks shipped with it.

A leaf (it imports nothing of ``forensics``), so any module may read the version without
importing the package's ``__init__``.

The notebooks live at the top of the repository (``notebooks/``); ``pyproject.toml`` maps that
directory to ``forensics/notebooks`` in a built wheel, so an installed package carries them. A
source tree (or an editable install of it) has them beside the package instead.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent


def notebooks_dir(package_dir: Path = PACKAGE_DIR) -> Path:
    """``forensics/notebooks`` when the package was installed from a wheel, else the source
    tree's ``notebooks/`` next to the package directory."""
    shipped = package_dir / "notebooks"
    return shipped if shipped.is_dir() else package_dir.parent / "notebooks"


NOTEBOOKS = notebooks_dir()

"""Scenario registry: each module here registers its scenarios with `@scenario(name, clients)`.

A scenario function takes `(run_dir, client, version)`, runs a real broker and clients, leaves the
logs, CLI dumps and journals in `run_dir` and returns the truth it wrote (`lab.truth.write_truth`).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["Scenario", "REGISTRY", "scenario", "load_all"]


@dataclass(frozen=True)
class Scenario:
    name: str
    clients: tuple[tuple[str, str], ...]
    """(client, version) pairs it runs for, e.g. ("java-consumer", "4.4.0")."""
    function: Callable[[Path, str, str], dict]


REGISTRY: dict[str, Scenario] = {}


def scenario(name: str, clients: list[tuple[str, str]]):
    """Register `function(run_dir, client, version) -> truth` under `name` for those clients."""

    def register(function):
        if name in REGISTRY and REGISTRY[name].function is not function:
            raise ValueError(f"scenario {name!r} registered twice")
        REGISTRY[name] = Scenario(name, tuple(clients), function)
        return function

    return register


def load_all() -> dict[str, Scenario]:
    """Import every module of this package (each registers its scenarios) and return the registry."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    return REGISTRY

"""What the readers of exports share: a null cell, a local file's size."""

from __future__ import annotations

import os

from pyspark.sql import Column
from pyspark.sql import functions as F


def null_column() -> Column:
    return F.lit(None).cast("string")


def local_size(path: str) -> int | None:
    return os.path.getsize(path) if os.path.isfile(path) else None

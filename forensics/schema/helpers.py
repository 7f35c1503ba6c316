"""How the stages use the schemas: a type as DDL text for a cast, and the check of the columns a
stage needs on entry."""

from __future__ import annotations

from pyspark.sql.types import DataType


def as_ddl(data_type: DataType) -> str:
    """``data_type`` as DDL text, for ``Column.cast``: PySpark sends a type object to the JVM as
    JSON to be parsed over many py4j calls, and a DDL text in one (a detector's ``findings``
    casts every finding field)."""
    return data_type.simpleString()


class SchemaError(ValueError):
    """A DataFrame handed to a stage lacks columns that stage needs."""


def validate_columns(df, required, stage: str) -> None:
    """Raise ``SchemaError`` naming the missing columns when ``df`` lacks any of ``required``."""
    missing = [name for name in required if name not in df.columns]
    if missing:
        raise SchemaError(f"{stage} needs columns {missing}; got {df.columns}")

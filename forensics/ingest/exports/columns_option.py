"""``--columns``: the user's names for an export's columns, by role."""

from __future__ import annotations

from ...errors import ForensicsError
from .json_fields import split_outside_quotes
from .shape import ROLES


def parse_columns_option(text: str) -> dict[str, str]:
    """``'time=@timestamp,host=host.name,message=_raw'`` -> ``{role: column}``.

    A column may be double-quoted (``host=labels."k8s-pod/name"`` keeps its quotes, a JSON
    path). Unknown roles, a pair without ``=``, an empty side or a repeated role raise a
    ``ForensicsError`` with the fix.
    """
    example = "Write ROLE=COLUMN pairs separated by commas, e.g. --columns time=@timestamp,host=host.name,message=_raw."
    pairs = [p.strip() for p in split_outside_quotes(text or "", ",") if p.strip()]
    if not pairs:
        raise ForensicsError("--columns is empty.", example)
    mapping: dict[str, str] = {}
    for pair in pairs:
        role, sep, column = (part.strip() for part in pair.partition("="))
        role = role.lower()
        if not sep or not role or not column:
            raise ForensicsError(f"--columns: {pair!r} is not ROLE=COLUMN.", example)
        if role not in ROLES:
            raise ForensicsError(f"--columns: unknown role {role!r}.", f"Roles are {', '.join(ROLES)}.")
        if role in mapping:
            raise ForensicsError(f"--columns names the role {role!r} twice.", "Give each role once.")
        mapping[role] = column
    return mapping

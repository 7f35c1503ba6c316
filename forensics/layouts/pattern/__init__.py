"""Compile a layout pattern the user names (``--layout PATTERN``) into a layout object.

``compile_layout(pattern)`` returns a ``PatternLayout`` with the same attributes and functions
as the layout modules of this package (``NAME``, ``DESCRIPTION``, ``EXAMPLE``, ``FIRST_CHARS``,
``HEAD``, ``START``, ``TEMPLATE``, ``sniff``, ``split``, ``to_utc``). Two families are read:

- logback / log4j2 / log4j 1 ``PatternLayout``: ``%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level
  %logger{36} - %msg%n``, with format modifiers (``%-5p``, ``%.-1p``, ``%-40.40logger{39}``),
  composite words (``%highlight(..)``, ``%style{..}{..}``, ``%replace(..){..}``, ``%-30(..)``),
  named dates (``ISO8601``, ``DEFAULT``, ``ABSOLUTE``, ``DATE``, ``COMPACT``, ``UNIX_MILLIS``..),
  a date's time zone option (``%d{.., UTC}``, ``%d{..}{UTC}``) and ``${NAME:-default}``;
- Python ``logging`` formats: ``%(asctime)s %(levelname)-8s %(name)s: %(message)s``
  (``asctime`` as logging's default ``2021-03-01 10:00:00,515``, or ``datefmt`` if given).

Only the first physical line of a record is described: whatever follows the first ``%n``
(stack traces, ``%ex``) continues the record. Fields after the message are optional, because
a multi-line message puts them on its last line, not its first (Kafka's ``[%d] %p %m (%c)%n``).

``FIRST_CHARS`` is ``""`` when the pattern's first characters cannot be told (a thread, MDC
value or message first): the caller must then skip the first-character gate. A date with no
year or no day (``%d{ABSOLUTE}``, ``%d{HH:mm:ss.SSS}``) gives null timestamps: it names no day.
Epoch dates (``UNIX``, ``UNIX_MILLIS``, ``%(created)f``) and dates with an offset are read as
written; zone-less dates are read in the source's zone ``tz`` unless the pattern names a zone.
"""

from .dates import compile_date
from .layout import PatternLayout, compile_layout, family, looks_like_layout_pattern

__all__ = ["PatternLayout", "compile_layout", "compile_date", "looks_like_layout_pattern", "family"]

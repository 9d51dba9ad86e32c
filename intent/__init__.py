"""Text → `Intent` (SPEC §5): `parse(text, now=…, tz=…, pending=…)`, `parse_all` (one intent per request of a
message, SPEC §3 rule 16) and `to_json(intent)`."""

from intent.model import AnyIntent, Intent, to_json
from intent.multi import parse_all
from intent.pipeline import parse

__all__ = ["AnyIntent", "Intent", "parse", "parse_all", "to_json"]

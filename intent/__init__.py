"""Text → `Intent` (intent contract): `parse(text, now=…, tz=…, pending=…)`, `parse_all` (one intent per request of a
message, docs/conversation.md#several-requests) and `to_json(intent)`."""

from intent.model import AnyIntent, Intent, to_json
from intent.multi import parse_all
from intent.pipeline import parse

__all__ = ["AnyIntent", "Intent", "parse", "parse_all", "to_json"]

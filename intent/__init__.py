"""Text → `Intent` (SPEC §5): `parse(text, now=…, tz=…, pending=…)` and `to_json(intent)`."""

from intent.model import AnyIntent, Intent, to_json
from intent.pipeline import parse

__all__ = ["AnyIntent", "Intent", "parse", "to_json"]

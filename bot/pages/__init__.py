"""Itinerary pages, share links and the calendar feed (SPEC §10)."""

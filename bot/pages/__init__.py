"""Itinerary pages, share links and the calendar feed (docs/web.md)."""

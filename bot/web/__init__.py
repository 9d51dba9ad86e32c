"""The web surface: the FastAPI app, its middleware, health, metrics and the REST API."""

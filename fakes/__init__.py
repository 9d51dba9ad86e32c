"""Test-only servers on real loopback HTTP (a fake WeChat API, a fake LLM); not shipped."""

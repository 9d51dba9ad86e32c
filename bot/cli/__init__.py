"""The `schedbot` command line and the commands it runs."""

"""Helpers for the analyzer tests (CPU only): ``run_cli`` lives in the top-level conftest."""

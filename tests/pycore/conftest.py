"""Shared test helpers for pycore: where the recorded vendor fixtures live.

Only the stdlib and pytest here: these helpers are imported by tests that also run inside Pyodide.
"""

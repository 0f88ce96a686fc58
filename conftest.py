"""Registers the case-table pytest plugin, so `pytest cases/csymm_test.csv` runs a table row by row."""
pytest_plugins = ["harness.plugin"]

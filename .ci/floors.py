"""Prints the oldest release series pyproject.toml admits for each dependency (`numpy>=1.24` -> `numpy==1.24.*`),
so CI can run the tests under the floors the project claims, not only under whatever is newest today."""
import re
import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
pins = []
for requirement in project["dependencies"]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9.]*)\s*", requirement)
    if match is None:
        sys.exit(f"pyproject.toml: dependency {requirement!r} has no plain '>=' floor to test")
    pins.append(f"{match[1]}=={match[2]}.*")
print(" ".join(pins))

"""Sphinx configuration of the documentation site: Markdown pages (MyST), the command reference generated from
the argparse parser (sphinx-argparse, harness.cli.build_parser), the furo theme. Built with warnings as errors by
tests/docs/test_docs.py (python3 -m sphinx -W --keep-going -b html docs docs/_build/html)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's harness, installed or not

project = "ops-blas acceptance harness"
extensions = ["myst_parser", "sphinxarg.ext"]
source_suffix = {".md": "markdown"}
# incoming/: per-feature notes other engineers drop for the lead to fold into these pages
exclude_patterns = ["_build", "incoming"]
html_theme = "furo"
html_title = project
smartquotes = False  # an option's "--" must stay two hyphens, never an en dash
myst_heading_anchors = 3


def _escaped_parser():
    """harness.cli.build_parser() with its texts escaped for reStructuredText, which sphinx-argparse reads them as
    (`*_test.csv` would open emphasis); `harness --help` keeps the plain texts."""
    import argparse
    import re

    from harness.cli import build_parser

    def esc(text):
        return text if not isinstance(text, str) else re.sub(r"(\w)_\b", r"\1\\_", re.sub(r"([\\*|])", r"\\\1", text))

    def walk(parser):
        parser.description, parser.epilog = esc(parser.description), esc(parser.epilog)
        for action in parser._actions:
            action.help = esc(action.help)
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    choice.help = esc(choice.help)
                for sub in action.choices.values():
                    walk(sub)
        return parser

    return walk(build_parser())


_module = type(sys)("harness_docs_parser")
_module.parser = _escaped_parser
sys.modules[_module.__name__] = _module

"""What `pytest` needs at the top of a checkout, so that it holds for `pytest cases/...` as for the test suite: the
case-table plugin (harness.plugin), registered from the checkout when the package is not installed (a fresh clone,
or PYTEST_DISABLE_PLUGIN_AUTOLOAD=1): pytest imports this file with the checkout's root first on sys.path, so
`import harness` works there without `pip install`.

Installed, the package's `pytest11` entry point has registered the plugin already, under the same name
`harness.plugin`; pytest skips a `pytest_plugins` entry registered under its name, so the plugin is never loaded
twice (tests/test_checkout_conftest.py runs both ways).
"""
pytest_plugins = ["harness.plugin"]

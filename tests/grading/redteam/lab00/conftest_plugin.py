"""Attack: ship a conftest.py, a pytest plugin, pytest.ini and pyproject.toml next to lab.py (the
test plants them), and ask for the plugin from the module too."""

pytest_plugins = ["redteam_plugin"]


def count_view(r, post_id):
    return -1


def reset(r, post_id):
    return -1

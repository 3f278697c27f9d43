"""The `course` command passes options through to pytest and JupyterLab."""
from __future__ import annotations

from redis_course import cli


def test_test_passes_every_option_to_pytest(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "cmd_test", lambda args: seen.setdefault("args", args.pytest_args) and 0)
    assert cli.main(["test", "-q", "-k", "notebooks", "-x"]) == 0
    assert seen["args"] == ["-q", "-k", "notebooks", "-x"]


def test_jupyter_keeps_lang_and_passes_the_rest(monkeypatch):
    seen = {}

    def fake(args):
        seen["lang"], seen["rest"] = args.lang, args.jupyter_args
        return 0

    monkeypatch.setattr(cli, "cmd_jupyter", fake)
    assert cli.main(["jupyter", "--lang", "zh", "--no-browser", "--port", "8899"]) == 0
    assert seen == {"lang": "zh", "rest": ["--no-browser", "--port", "8899"]}

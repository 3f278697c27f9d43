"""run.py installs with pip when uv fails (a proxy that re-signs TLS with a certificate uv does not
trust, for instance), instead of stopping."""

from __future__ import annotations

import importlib.util

import pytest

from redis_course import paths


def _run_py():
    spec = importlib.util.spec_from_file_location("course_run_py", paths.ROOT / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_failing_uv_gives_way_to_pip(monkeypatch, capsys):
    run = _run_py()
    calls = []

    def fake_run(cmd, what):
        calls.append([str(x) for x in cmd])
        return str(cmd[0]) != "uv"  # uv fails, pip works

    monkeypatch.setattr(run, "_run", fake_run)
    monkeypatch.setattr(run, "_venv_pip", lambda: ["python", "-m", "pip"])
    run._install_set("site", "uv")
    assert calls[0][:3] == ["uv", "pip", "sync"]
    assert ["python", "-m", "pip", "install", "--compile", "-r"] == calls[-2][:6] and calls[-1][-2:] == ["-e", "."]
    assert "pip tries instead" in capsys.readouterr().out


def test_when_pip_fails_too_the_install_stops(monkeypatch):
    run = _run_py()
    monkeypatch.setattr(run, "_run", lambda cmd, what: False)
    monkeypatch.setattr(run, "_venv_pip", lambda: ["python", "-m", "pip"])
    with pytest.raises(SystemExit):
        run._install_set("site", "uv")

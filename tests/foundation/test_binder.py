"""Binder / JupyterHub: the start script gives the session a private Redis and REDIS_URL, and a kernel
speaks the language of the notebook it runs."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course import paths

BINDER = paths.ROOT / "binder"


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed")
def test_start_runs_a_private_redis_and_sets_redis_url(tmp_path):
    probe = (
        "import os, redis_course as c; url = os.environ['REDIS_URL']; r = c.connect(url); "
        "k = r.key('binder'); print(url); print(r.incr(k), r.incr(k)); print(r.describe())"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [str(BINDER / "start"), sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    pidfiles = list(tmp_path.glob("course-redis.*/redis.pid"))
    try:
        assert done.returncode == 0, done.stderr
        url, counts, described = done.stdout.splitlines()[:3]
        assert re.fullmatch(rf"unix://{re.escape(str(tmp_path))}/course-redis\.\w+/redis\.sock", url)
        assert counts == "1 2" and described.startswith("backend: Redis ")
    finally:
        for pidfile in pidfiles:
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed")
@pytest.mark.parametrize("lang, locale", [("ru", "ru_RU"), ("zh", "zh_CN"), ("", None), ("xx", None)])
def test_a_hub_of_one_language_opens_jupyterlab_in_it(tmp_path, lang, locale):
    import json

    lab = tmp_path / "lab"
    env = dict(
        os.environ,
        TMPDIR=str(tmp_path),
        JUPYTERLAB_DIR=str(lab),
        COURSE_LANG=lang,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    done = subprocess.run([str(BINDER / "start"), "true"], env=env, capture_output=True, text=True, timeout=60)
    for pidfile in tmp_path.glob("course-redis.*/redis.pid"):
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
    assert done.returncode == 0, done.stderr
    written = lab / "settings" / "overrides.d" / "redis-course-language.json"
    if locale is None:
        assert not written.exists()
    else:
        settings = json.loads(written.read_text(encoding="utf-8"))
        assert settings["@jupyterlab/translation-extension:plugin"] == {"locale": locale}
        assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_a_kernel_speaks_the_language_of_its_notebook(tmp_path):
    post_build = (BINDER / "postBuild").read_text(encoding="utf-8")
    snippet = re.search(r"<<'PY'\n(.*?)\nPY\n", post_build, re.S).group(1)
    for session, expected in (
        ("notebooks/ru/01-incr.ipynb", "ru"),
        ("work/notebooks/zh/04-rate-limiting.ipynb", "zh"),
        ("Untitled.ipynb", None),
    ):
        env = {"JPY_SESSION_NAME": session}
        code = snippet + "\nprint(_os.environ.get('COURSE_LANG'))"
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, **env, "COURSE_LANG": ""},
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        assert out == (expected or ""), (session, out)


def test_binder_files_are_executable_and_name_redis_server():
    assert "redis-server" in (BINDER / "apt.txt").read_text(encoding="utf-8").split()
    for name in ("start", "postBuild"):
        assert os.access(BINDER / name, os.X_OK), name
    assert Path(BINDER / "requirements.txt").exists()

"""Tool messages in the reader's language: course doctor, connection errors, cluster and CLI lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from redis_course import CourseError, connect, l10n
from redis_course.l10n.messages import MESSAGES, msg
from redis_course.core.servers import free_port

COURSE = Path(sys.executable).with_name("course")
_CODE = re.compile(r"`[^`]*`|\S+://\S*|\S*[/_.=:<>]\S*|\b[A-Z][A-Z_\-]+\b")
_WORDS = re.compile(r"[A-Za-z]+(?:'[a-z]+)?(?:[\s(),;.!?\-]+[A-Za-z]+(?:'[a-z]+)?){2,}")


def english_runs(text: str) -> list[str]:
    """Runs of three or more English words, once code, URLs, paths and COMMAND NAMES are set aside."""
    return _WORDS.findall(_CODE.sub(" § ", text))


def test_english_runs_sees_english_and_ignores_identifiers():
    assert english_runs("на fakeredis нет several processes sharing one server") == [
        "several processes sharing one server"
    ]
    assert english_runs("по адресу 127.0.0.1:1: nothing listens there (connection refused). Запустите")[0].startswith(
        "nothing listens there (connection"
    )
    assert english_runs("Запустите `python3 run.py doctor` или redis://127.0.0.1:6379/0, OBJECT ENCODING") == []


def _doctor(*args: str, lang: str | None = None, redis_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "COURSE_LANG", "LANG", "LC_ALL")}
    if lang:
        env["COURSE_LANG"] = lang
    if redis_url:
        env["REDIS_URL"] = redis_url
    return subprocess.run([str(COURSE), "doctor", *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["COURSE_LANG", "--lang"])
@pytest.mark.parametrize("lang,title", [("ru", "что работает на этой машине"), ("zh", "这台机器上哪些功能可用")])
def test_doctor_speaks_the_readers_language(how, lang, title):
    proc = _doctor(
        *(["--lang", lang] if how == "--lang" else []),
        lang=lang if how == "COURSE_LANG" else None,
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
    )
    out = proc.stdout
    assert proc.returncode == 1 and title in out.splitlines()[0]
    assert english_runs(out) == [], out
    last = out.strip().splitlines()[-1]
    assert ("Выше 1 проблема" in last) if lang == "ru" else ("上面有 1 个问题" in last)


def test_doctor_in_english_by_default():
    proc = _doctor()
    assert proc.stdout.startswith("course doctor: what works on this machine")


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_connection_errors_have_no_english_inside(lang, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", lang)
    for url in (
        f"redis://127.0.0.1:{free_port()}/0",
        "foo://x",
        "redis://127.0.0.1:notaport/0",
        "redis://no-such-host.invalid:6379/0",
        "unix:///nonexistent/redis.sock",
    ):
        with pytest.raises(CourseError) as err:
            connect(url)
        text = str(err.value)
        assert english_runs(text) == [], text
        assert text.count("\n") == 0


def test_every_message_by_id_is_translated():
    for key in MESSAGES:
        fields = {"url": "x", "detail": "d", "where": "w", "seconds": 1, "command": "FLUSHALL", "port": 1, "what": "w"}
        en, ru, zh = (msg(key, lang=lang, **fields) for lang in ("en", "ru", "zh"))
        assert en != ru and en != zh and re.search("[а-яё]", ru) and re.search("[\u4e00-\u9fff]", zh), key


def test_a_language_can_be_forced_and_falls_back_to_english():
    assert l10n._("not set", lang="ru") == "не задан"
    assert l10n._("not set", lang="zh") == "未设置"
    assert l10n._("not set", lang="en") == "not set"


def test_cluster_status_without_a_cluster_in_chinese(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "COURSE_LANG"}
    env["COURSE_LANG"] = "zh"
    code = (
        "import pathlib\nfrom redis_course import cluster\n"
        f"raise SystemExit(cluster.cli_status(pathlib.Path({str(tmp_path / 'none.json')!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stdout.strip() == "课程的集群没有在运行；请用 `python3 run.py cluster start` 启动。"

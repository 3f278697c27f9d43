"""The course site: one mkdocs-material site per language, built from the one ``mkdocs.yml``.

Each language gets ``build/mkdocs.<lang>.yml`` (``INHERIT: ../mkdocs.yml`` plus its docs dir, site
dir, theme language, search language and a navigation whose titles come from the pages' own H1s),
and is built into ``site/<lang>/``.  ``site/index.html`` sends the reader to their language.
Building one site per language (as FastAPI's docs do) gives every language its own search index:
a Russian stemmer for Russian, jieba-segmented Chinese for Chinese, and results never mixed.
"""
from __future__ import annotations

import functools
import http.server
import re
import socketserver
import subprocess
import sys
from pathlib import Path

import yaml

from . import paths
from .paths import LANGS

# Chinese is segmented with zero-width spaces by the search plugin (jieba): split on them too.
SEARCH = {
    "en": {"lang": "en"},
    "ru": {"lang": "ru"},
    "zh": {"lang": "zh", "separator": r"[\s\u200b\-_,:!=\[\]()\"`/]+|\.(?!\d)|&[lg]t;|(?!\b)(?=[A-Z][a-z])"},
}
SITE_NAME = {
    "en": "Redis counters, atomicity and rate limiting",
    "ru": "Счётчики Redis, атомарность и ограничение частоты",
    "zh": "Redis 计数器、原子性与限流",
}
PAGE_NAMES = {  # nav titles for the generated and lab pages (their H1s are used when present)
    "notebook": {"en": "Notebook", "ru": "Блокнот", "zh": "笔记本"},
}
_H1 = re.compile(r"^#\s+(.+?)(?:\s*\{[^}]*\})?\s*$", re.MULTILINE)
_FM_TITLE = re.compile(r"^---\n(?:.*\n)*?title:\s*(.+)\n(?:.*\n)*?---", re.MULTILINE)


def page_title(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    fm = _FM_TITLE.match(text)
    if fm:
        return yaml.safe_load(fm.group(1))
    m = _H1.search(text)
    return m.group(1).strip() if m else path.stem


def nav(lang: str) -> list:
    """Home, then one section per lesson: its page, its notebook, its lab (whatever exists)."""
    docs = paths.DOCS / lang
    items: list = [{page_title(docs / "index.md"): "index.md"}]
    for lesson in paths.lesson_ids():
        folder = docs / lesson
        if not (folder / "index.md").exists():
            continue
        section = [f"{lesson}/index.md"]
        if (folder / "notebook.md").exists():
            section.append({PAGE_NAMES["notebook"][lang]: f"{lesson}/notebook.md"})
        if (folder / "lab.md").exists():
            section.append({page_title(folder / "lab.md"): f"{lesson}/lab.md"})
        items.append({page_title(folder / "index.md"): section})
    return items


def write_config(lang: str) -> Path:
    paths.BUILD.mkdir(exist_ok=True)
    cfg = {
        "INHERIT": "../mkdocs.yml",
        "site_name": SITE_NAME[lang],
        "site_url": f"http://127.0.0.1:8000/{lang}/",
        "docs_dir": f"../docs/{lang}",
        "site_dir": f"../site/{lang}",
        "theme": {"language": lang, "custom_dir": "../overrides"},
        "plugins": [{"search": SEARCH[lang]}],
        "nav": nav(lang),
    }
    out = paths.BUILD / f"mkdocs.{lang}.yml"
    out.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


ROOT_INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Redis counters, atomicity and rate limiting</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<script>
  var l = (navigator.language || "en").toLowerCase();
  var to = l.indexOf("ru") === 0 ? "ru/" : l.indexOf("zh") === 0 ? "zh/" : "en/";
  location.replace(to);
</script>
<noscript><meta http-equiv="refresh" content="0; url=en/"></noscript>
</head><body>
<p><a href="en/">English</a> · <a href="ru/">Русский</a> · <a href="zh/">简体中文</a></p>
</body></html>
"""


def build(langs=LANGS, strict: bool = True, log=print) -> Path:
    """Build ``site/<lang>/`` for each language with ``mkdocs build`` (``--strict``: warnings fail)."""
    paths.SITE.mkdir(exist_ok=True)
    for lang in langs:
        cfg = write_config(lang)
        cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg)] + (["--strict"] if strict else [])
        proc = subprocess.run(cmd, cwd=paths.ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SiteBuildError(f"mkdocs build failed for docs/{lang}:\n{proc.stdout}{proc.stderr}")
        log(f"  site/{lang}/ built")
    (paths.SITE / "index.html").write_text(ROOT_INDEX, encoding="utf-8")
    return paths.SITE


class SiteBuildError(RuntimeError):
    pass


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt: str, *args) -> None:  # keep the terminal readable
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(host: str = "127.0.0.1", port: int = 8000, directory: Path | None = None) -> _Server:
    handler = functools.partial(_QuietHandler, directory=str(directory or paths.SITE))
    return _Server((host, port), handler)


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    try:
        server = make_server(host, port)
    except OSError as exc:
        raise SystemExit(f"Port {port} on {host} is busy ({exc.strerror}); stop the other server or pass --port.")
    print(f"Serving the course at http://{host}:{port}/  (English /en/, Русский /ru/, 简体中文 /zh/). Ctrl+C stops.",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

"""The course site: one mkdocs-material site per language, built from the one ``mkdocs.yml``.

Each language gets ``build/mkdocs.<lang>.yml`` (``INHERIT: ../mkdocs.yml`` plus its docs dir, site
dir, theme language, search language and a navigation whose titles come from the pages' own H1s),
and is built into ``site/<lang>/``.  ``site/index.html`` sends the reader to their language.
Building one site per language (as FastAPI's docs do) gives every language its own search index:
a Russian stemmer for Russian, jieba-segmented Chinese for Chinese, and results never mixed.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import yaml

from .. import paths
from ..l10n import N_, _
from ..paths import LANGS

# Search (each setting is checked in a browser by tests/site/test_browser.py):
# - Material appends a wildcard to every query word ("счётчик" → "счётчик*") and lunr does not stem
#   wildcard terms, so stemming the index would only hide words: keep Material's default pipeline
#   (stop words, no stemmer).  Prefix search finds "счётчика", "счётчики" from "счётчик".
# - zh: the search plugin segments Chinese with jieba at build time and joins the words with
#   zero-width spaces (U+200B); the separator must split on them (and on Chinese punctuation), or a
#   whole sentence becomes one token.  `lang: zh` works in the browser: Material indexes with its own
#   tokenizer (not lunr.zh's, which needs jieba in Node) and segments Chinese queries by the index.
SEARCH = {
    "en": {"lang": "en"},
    "ru": {"lang": "ru"},
    "zh": {
        "lang": "zh",
        "separator": r"[\s\u200b\u3000、。，．？！；：（）\-_,:!=\[\]()\"`/]+|\.(?!\d)|&[lg]t;|(?!\b)(?=[A-Z][a-z])",
    },
}
SITE_NAME = {
    "en": "Redis counters, atomicity and rate limiting",
    "ru": "Счётчики Redis, атомарность и ограничение частоты",
    "zh": "Redis 计数器、原子性与限流",
}
SITE_DESCRIPTION = {  # the pages' <meta name="description"> (a page's own front matter `description` wins)
    "en": "A hands-on course on counting correctly with Redis: INCR, atomicity, counters with TTL, "
    "rate limiters, durable counters and Redis Cluster, with runnable notebooks and graded labs.",
    "ru": "Практический курс о том, как правильно считать в Redis: INCR, атомарность, счётчики с TTL, "
    "ограничители частоты, надёжные счётчики и Redis Cluster — с блокнотами и проверяемыми работами.",
    "zh": "一门动手实践的课程，讲解如何用 Redis 正确计数：INCR、原子性、带 TTL 的计数器、限流器、"
    "持久可靠的计数器和 Redis Cluster，配有可运行的笔记本和可评分的实验。",
}
PAGE_NAMES = {  # nav titles for the generated and lab pages (their H1s are used when present)
    "notebook": {"en": "Notebook", "ru": "Блокнот", "zh": "笔记本"},
}
# Interface words that mkdocs.yml writes in English: the colour-scheme toggle's labels and the title of
# the heading anchors ("Permanent link", from Python-Markdown's toc, which Material does not translate).
PALETTE_TOGGLE = {"default": N_("Dark mode"), "slate": N_("Light mode")}
PERMALINK_TITLE = N_("Permanent link")
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
    if (docs / "glossary.md").exists():
        items.append({page_title(docs / "glossary.md"): "glossary.md"})
    return items


PACKAGE = Path(__file__).resolve().parents[1]  # src/redis_course: the quiz and the console add their hooks from there
LOCAL_URL = "http://127.0.0.1:8000/"


def base_url(site_url: str | None = None) -> str:
    """Where the site is published, ending in ``/``: ``site_url``, else ``COURSE_SITE_URL``, else the local server."""
    url = (site_url or os.environ.get("COURSE_SITE_URL") or LOCAL_URL).strip()
    if not re.match(r"^https?://[^/\s]+", url):
        raise SiteBuildError(f"The site URL {url!r} is not an http(s) address such as https://example.org/course/.")
    return url.rstrip("/") + "/"


def write_config(
    lang: str,
    site_dir: Path | None = None,
    config_dir: Path | None = None,
    site_url: str | None = None,
    console: dict | None = None,
) -> Path:
    """Write ``mkdocs.<lang>.yml`` into ``config_dir`` (default ``build/``); paths in it are relative
    to that folder.  The site goes to ``site_dir`` (default ``site/<lang>``), published at
    ``base_url(site_url) + lang + "/"`` (canonical links, sitemap, hreflang alternates).  ``console`` is the
    browser console's manifest (:func:`redis_course.webconsole.assets.prepare`); without it, no console."""
    config_dir = Path(config_dir or paths.BUILD)
    config_dir.mkdir(parents=True, exist_ok=True)

    def rel(target: Path) -> str:
        return Path(os.path.relpath(target, config_dir)).as_posix()

    cfg = {
        "INHERIT": rel(paths.ROOT / "mkdocs.yml"),
        "site_name": SITE_NAME[lang],
        "site_description": SITE_DESCRIPTION[lang],
        "site_url": f"{base_url(site_url)}{lang}/",
        "docs_dir": rel(paths.DOCS / lang),
        "site_dir": rel(Path(site_dir) if site_dir else paths.SITE / lang),
        "theme": {"language": lang, "custom_dir": rel(paths.ROOT / "overrides"), "palette": _palette(lang)},
        "markdown_extensions": _markdown_extensions(lang),
        "plugins": [{"search": _search(lang, config_dir)}],
        "nav": nav(lang),
        "hooks": [
            rel(Path(__file__).with_name("hreflang.py")),
            rel(Path(__file__).with_name("hooks.py")),
            rel(PACKAGE / "webconsole" / "hook.py"),
            rel(PACKAGE / "quiz" / "hook.py"),
        ],
    }
    if console:
        cfg["extra"] = {"console": console}
    out = config_dir / f"mkdocs.{lang}.yml"
    out.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def _root_config() -> dict:
    return yaml.safe_load((paths.ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _palette(lang: str) -> list[dict]:
    """mkdocs.yml's colour schemes with the toggle's label in ``lang`` (a list: INHERIT replaces it whole)."""
    palette = []
    for scheme in _root_config()["theme"]["palette"]:
        scheme = {**scheme, "toggle": {**scheme["toggle"], "name": _(PALETTE_TOGGLE[scheme["scheme"]], lang=lang)}}
        palette.append(scheme)
    return palette


def _markdown_extensions(lang: str) -> list:
    """mkdocs.yml's Markdown extensions, the heading anchors titled in ``lang`` (the list is replaced whole),
    and the snippets a page includes (``--8<-- "src/..."``) found from the repository's root, whatever
    the folder mkdocs runs in."""
    out = []
    for ext in _root_config()["markdown_extensions"]:
        if isinstance(ext, dict) and "toc" in ext:
            ext = {"toc": {**(ext["toc"] or {}), "permalink_title": _(PERMALINK_TITLE, lang=lang)}}
        if isinstance(ext, dict) and "pymdownx.snippets" in ext:
            ext = {"pymdownx.snippets": {**(ext["pymdownx.snippets"] or {}), "base_path": [str(paths.ROOT)]}}
        out.append(ext)
    return out


def _search(lang: str, config_dir: Path) -> dict:
    """The search plugin's settings; Chinese also gets the glossary's terms as jieba words."""
    settings = dict(SEARCH[lang])
    if lang == "zh":
        from ..i18n.glossary import write_jieba_dictionary

        settings["jieba_dict_user"] = str(write_jieba_dictionary(config_dir / "jieba_user_dict.txt").resolve())
    return settings


ROOT_INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Redis counters, atomicity and rate limiting</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<script>
  // The first of the reader's preferred languages that the course has; English otherwise.
  var prefs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
  var to = "en/";
  for (var i = 0; i < prefs.length; i++) {
    var l = String(prefs[i]).toLowerCase();
    if (l.indexOf("en") === 0) { to = "en/"; break; }
    if (l.indexOf("ru") === 0) { to = "ru/"; break; }
    if (l.indexOf("zh") === 0) { to = "zh/"; break; }
  }
  location.replace(to);
</script>
<noscript><meta http-equiv="refresh" content="0; url=en/"></noscript>
</head><body>
<p><a href="en/">English</a> · <a href="ru/">Русский</a> · <a href="zh/">简体中文</a></p>
</body></html>
"""


_NOISE = re.compile(r"INFO\b|Building prefix dict|Loading model|Prefix dict|Dumping model")


def build(
    langs=LANGS, strict: bool = True, log=print, site_dir: Path | None = None, site_url: str | None = None
) -> Path:
    """Build ``<site_dir>/<lang>/`` for each language with ``mkdocs build`` (``--strict``: warnings
    fail) and the root ``index.html`` that sends readers to their language.  ``site_dir`` defaults to
    ``site/``; another folder (tests build into a temporary one) leaves ``site/`` and ``build/`` alone."""
    from ..webconsole import assets

    out = Path(site_dir) if site_dir else paths.SITE
    out.mkdir(parents=True, exist_ok=True)
    console = assets.prepare(log=log)  # the browser console's runtime (None: built without consoles)
    with tempfile.TemporaryDirectory(prefix="course-mkdocs-") as tmp:
        procs = {}
        for lang in langs:  # the languages are independent: build them side by side
            if site_dir:
                cfg = write_config(lang, site_dir=out / lang, config_dir=Path(tmp), site_url=site_url, console=console)
            else:
                cfg = write_config(lang, site_url=site_url, console=console)
            # No -q: it raises mkdocs' log level to ERROR, and --strict then never sees a warning.
            cmd = [sys.executable, "-m", "mkdocs", "build", "-f", str(cfg)] + (["--strict"] if strict else [])
            procs[lang] = subprocess.Popen(
                cmd,
                cwd=paths.ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            )
        failed = []
        for lang, proc in procs.items():
            output = proc.communicate()[0]
            if proc.returncode != 0:
                problems = [line for line in output.splitlines() if not _NOISE.match(line)]
                failed.append(f"mkdocs build failed for docs/{lang}:\n" + "\n".join(problems))
            else:
                log(f"  {out.name}/{lang}/ built")
        if failed:
            raise SiteBuildError("\n".join(failed))
    if "ru" in langs:
        fold_yo(out / "ru" / "search" / "search_index.json")
    from ..paths import CJK_FONT  # not from charts: serve and build do without matplotlib
    from .webfont import write_page_fonts, write_web_font

    for lang in langs:  # Chinese glyphs for a machine without a CJK font (course.css, @font-face)
        drop_source_maps(out / lang)
        fix_query_segmenter(out / lang)
        write_web_font(CJK_FONT, out / lang)
        write_page_fonts(CJK_FONT, out / lang, preload=lang == "zh")
    if console:
        assets.install(out, console)
    else:
        shutil.rmtree(out / assets.SITE_FOLDER, ignore_errors=True)
    (out / "index.html").write_text(ROOT_INDEX, encoding="utf-8")
    (out / "sitemap.xml").write_text(sitemap_index(base_url(site_url), langs), encoding="utf-8")
    return out


_SOURCE_MAP_COMMENT = re.compile(rb"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^*]*\*/)\s*$")


def drop_source_maps(site_lang_dir: Path) -> None:
    """Delete Material's ``*.map`` files (3.9 MB over three languages, for debugging its own bundle)
    and the comments that point to them, so a published site ships only what readers load."""
    for path in site_lang_dir.rglob("*.map"):
        path.unlink()
    for path in list(site_lang_dir.rglob("*.js")) + list(site_lang_dir.rglob("*.css")):
        data = path.read_bytes()
        stripped = _SOURCE_MAP_COMMENT.sub(b"\n", data)
        if stripped != data:
            path.write_bytes(stripped)


# Material's search worker cuts a Chinese query into the words of the index (query/segment/index.ts,
# ``segment``) with two off-by-one bounds: the whole query is never tried as a word (``j < query.length``)
# and a word ending at the query's end is never continued from (``q < query.length - 1``).  So 过期 is
# searched as 过, 令牌桶 as 令牌, 分布式锁 as 分布, and the page a result opens highlights single
# characters.  Present in mkdocs-material 9.8.2 (the version in requirements/); the built worker's
# function is replaced by a longest-match segmentation over the same index: at each position the
# longest indexed word, else the characters up to the next place a word starts.
_SEGMENT = re.compile(
    r"function (\w+)\((\w+),(\w+)\)\{let (\w+)=new Set,(\w+)=new Uint16Array\(\2\.length\);"
    r'.*?return \4\.has\(""\)\?new Set\(\[\2\]\):\4\}'
)
_SEGMENT_FIXED = (
    "function {name}(t,e){{let r=new Set,n=t.length,w=i=>{{for(let j=n;j>i;j--)if(t.slice(i,j)in e)return j-i;"
    "return 0}};for(let i=0;i<n;){{let l=w(i);if(!l){{l=1;while(i+l<n&&!w(i+l))l++}}"
    "r.add(t.slice(i,i+l));i+=l}}return r.size?r:new Set([t])}}"
)


def fix_query_segmenter(site_lang_dir: Path) -> None:
    """Replace the Chinese query segmenter of Material's search worker (see ``_SEGMENT``); a worker
    without that function (another Material version) fails the build rather than search silently."""
    workers = sorted((site_lang_dir / "assets" / "javascripts" / "workers").glob("search.*.js"))
    if not workers:
        return
    for worker in workers:
        text = worker.read_text(encoding="utf-8")
        fixed, count = _SEGMENT.subn(lambda m: _SEGMENT_FIXED.format(name=m.group(1)), text, count=1)
        if count != 1:
            raise SiteBuildError(
                f"{worker.name}: Material's Chinese query segmenter was not found; check "
                "site.py's _SEGMENT against this version of mkdocs-material."
            )
        worker.write_text(fixed, encoding="utf-8")


def sitemap_index(base: str, langs=LANGS) -> str:
    """``sitemap.xml`` at the root: an index of each language's own sitemap (absolute addresses)."""
    items = "".join(f"  <sitemap><loc>{base}{lang}/sitemap.xml</loc></sitemap>\n" for lang in langs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + items + "</sitemapindex>\n"
    )


def fold_yo(index: Path) -> None:
    """Write the Russian search index with е for ё, so "счетчик" and "счётчик" find the same pages
    (overrides/assets/javascripts/search-yo.js folds the query the same way, shows the results' titles
    with ё from ``titles_yo.json`` and their excerpts' words from ``words_yo.json``, and highlights
    ё-spelled words on the page a result opens)."""
    import json

    data = json.loads(index.read_text(encoding="utf-8"))
    titles = {}  # the titles as written, so that search results show them with ё (search-yo.js)
    spellings: dict[str, set[str]] = {}  # a word folded → how the pages write it
    for doc in data.get("docs", []):
        if "ё" in doc.get("title", "").lower():
            titles[doc["location"]] = doc["title"]
        for field in ("title", "text"):
            if isinstance(doc.get(field), str):
                for word in re.findall(r"[а-яё]+", re.sub(r"<[^>]*>", " ", doc[field]).lower()):
                    spellings.setdefault(word.replace("ё", "е"), set()).add(word)
                doc[field] = doc[field].replace("ё", "е").replace("Ё", "Е")
    # The excerpts of results are cut from the folded text: their words get ё back from this list, which
    # holds the words the pages always write with ё (not все/всё, which both occur: those stay as they are).
    words = {
        folded: written.pop()
        for folded, written in sorted(spellings.items())
        if len(written) == 1 and "ё" in next(iter(written))
    }
    index.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    index.with_name("titles_yo.json").write_text(json.dumps(titles, ensure_ascii=False), encoding="utf-8")
    index.with_name("words_yo.json").write_text(json.dumps(words, ensure_ascii=False), encoding="utf-8")


class SiteBuildError(RuntimeError):
    pass


# Text a browser loads (pages, styles, scripts, the search index, SVG icons): sent gzip-compressed when
# the browser accepts it, a third to a sixth of its size (a static host such as GitHub Pages does the same).
COMPRESSIBLE = {".html", ".css", ".js", ".mjs", ".json", ".svg", ".xml", ".txt", ".ipynb", ".py", ".wasm"}
_GZIP_CACHE: dict[tuple[str, int, int], bytes] = {}  # (path, mtime_ns, size) → gzip body; each file compressed once
_GZIP_LOCK = threading.Lock()


def gzipped(path: Path) -> bytes:
    """``path`` gzip-compressed (level 6), from the cache while the file is unchanged: O(file size) once."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _GZIP_LOCK:
        body = _GZIP_CACHE.get(key)
    if body is None:
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        with _GZIP_LOCK:
            for old in [k for k in _GZIP_CACHE if k[0] == key[0]]:
                del _GZIP_CACHE[old]
            _GZIP_CACHE[key] = body
    return body


CONSOLE_FOLDER = "console"  # webconsole.assets.SITE_FOLDER (not imported: serving needs no console code)
# Material's bundles and stylesheets carry a hash of their content in their names (bundle.a5f9d56c.min.js)
_HASHED = re.compile(r"\.[0-9a-f]{8,}\.min\.(?:js|css)$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"  # kept by the browser, asked for again each time: a 304 without a body while unchanged


def cache_control(url_path: str) -> str:
    """Files whose names change with their content (the console's runtime, Material's hashed assets) are
    kept for a year; everything else (pages, the search index, the CJK font, course.css) has a fixed
    name and a new content after a build, so it is revalidated (ETag) rather than downloaded again."""
    return IMMUTABLE if url_path.startswith(f"/{CONSOLE_FOLDER}/") or _HASHED.search(url_path) else REVALIDATE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt: str, *args) -> None:  # keep the terminal readable
        pass

    def send_head(self):
        """Material's pages, scripts and search index gzip-compressed when the browser accepts gzip."""
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        target = Path(self.translate_path(self.path))
        if target.is_dir() and url_path.endswith("/"):
            target = target / "index.html"
        self._etag = None
        if target.is_file():  # unchanged since the browser's copy: 304 and no body (pages, index, fonts)
            st = target.stat()
            self._etag = f'W/"{st.st_mtime_ns:x}-{st.st_size:x}"'
            if self._etag in self.headers.get("If-None-Match", ""):
                self.send_response(304)
                self.end_headers()
                return None
        if not accepts or target.suffix not in COMPRESSIBLE or not target.is_file():
            return super().send_head()
        try:
            body = gzipped(target)
        except OSError:
            return super().send_head()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(target)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".whl": "application/zip",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", cache_control(self.path.split("?", 1)[0]))
        if getattr(self, "_etag", None):
            self.send_header("ETag", self._etag)
        super().end_headers()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A missing page gets the 404 page of its language (``/ru/...`` → ``ru/404.html``), English otherwise."""
        page = not_found_page(Path(self.directory), self.path) if code == 404 else None
        if page is None:
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def not_found_page(root: Path, url_path: str) -> Path | None:
    first = url_path.lstrip("/").split("/", 1)[0]
    for lang in ([first] if first in LANGS else []) + ["en"]:
        page = root / lang / "404.html"
        if page.is_file():
            return page
    return None


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
        raise SystemExit(
            _(
                "Port {port} on {host} is busy ({detail}); stop the other server or pass --port.",
                port=port,
                host=host,
                detail=exc.strerror,
            )
        ) from None
    url = f"http://{host}:{port}/"
    print(
        _("Serving the course at {url}  (English /en/, Русский /ru/, 简体中文 /zh/). Ctrl+C stops.", url=url),
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

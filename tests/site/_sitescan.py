"""Reading built HTML: every reference a page makes (with the tag that makes it) and every id."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

# tag → attribute holding a URL the page refers to
URL_ATTRS = {
    "a": "href",
    "img": "src",
    "link": "href",
    "script": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
    "track": "src",
}
# <link rel=...> values that a browser does not fetch by itself
NOT_FETCHED_RELS = {"canonical", "alternate", "prev", "next", "search", "author", "license", "help"}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass(frozen=True)
class Ref:
    page: Path  # the HTML file
    tag: str
    url: str
    rel: str = ""

    @property
    def loads_automatically(self) -> bool:
        """True when a browser fetches the target on its own (not a link the reader clicks)."""
        if self.tag == "a":
            return False
        if self.tag == "link":
            rels = set(self.rel.lower().split())
            return not rels or not rels <= NOT_FETCHED_RELS
        return True


class _Scanner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        attr = URL_ATTRS.get(tag)
        if attr and a.get(attr) is not None:
            self.refs.append((tag, a[attr].strip(), a.get("rel") or ""))
        if tag == "img" and a.get("srcset"):
            for part in a["srcset"].split(","):
                if part.strip():
                    self.refs.append(("img", part.split()[0], ""))

    handle_startendtag = handle_starttag


@functools.lru_cache(maxsize=None)
def scan(page: Path) -> tuple[tuple[Ref, ...], frozenset[str]]:
    s = _Scanner()
    s.feed(page.read_text(encoding="utf-8"))
    return tuple(Ref(page, t, u, r) for t, u, r in s.refs), frozenset(s.ids)


def page_url(root: Path, page: Path) -> str:
    """The URL path of a built file: site/en/00-start/index.html → /en/00-start/index.html."""
    return "/" + page.relative_to(root).as_posix()


def resolve(root: Path, page: Path, url: str) -> tuple[Path, str] | None:
    """The local file a relative or root-absolute URL points to, and its #fragment (unquoted);
    None for URLs with a scheme or host (http:, mailto:, data:, //host/...)."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    absolute = urlsplit(urljoin("http://site" + page_url(root, page), url))
    target = root / unquote(absolute.path).lstrip("/")
    if absolute.path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target, unquote(absolute.fragment)


def host_of(url: str) -> str | None:
    parts = urlsplit(url if not url.startswith("//") else "http:" + url)
    return parts.hostname if parts.scheme in ("http", "https") else None

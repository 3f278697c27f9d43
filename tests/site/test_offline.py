"""The sites work offline: nothing a page loads by itself comes from another host (no web fonts,
CDNs or analytics).  Links the reader clicks may point anywhere."""

from __future__ import annotations

import re

from _sitescan import LOCAL_HOSTS, host_of, scan

# A reference a browser fetches by itself, in HTML, CSS or JS text, to an http(s) URL.
AUTO_LOAD = re.compile(
    r"""(?:<(?:link|script|img|iframe|source|embed|video|audio)\b[^>]*?\b(?:href|src)\s*=\s*["']?"""
    r"""|@import\s+(?:url\()?\s*["']?|url\(\s*["']?)(?P<url>(?:https?:)?//[^\s"')>]+)""",
    re.IGNORECASE,
)
THIRD_PARTY = re.compile(
    r"fonts\.googleapis|fonts\.gstatic|cdn\.jsdelivr|unpkg\.com|cdnjs|google-analytics"
    r"|googletagmanager|gravatar|polyfill\.io|use\.fontawesome|kit\.fontawesome"
)
# Material's bundle can fetch two scripts from unpkg.com, each only under a condition this course never
# meets: a polyfill when the browser lacks ResizeObserver (every supported browser has it), and
# mermaid when a page has a mermaid diagram (test below: none has).  The browser test records every
# request a page really makes.
# Pyodide (console/pyodide-*/pyodide.mjs) names its CDN as the default place of packages asked for by name;
# the console passes packageBaseUrl (its own folder) and loads its wheels by URL, so the CDN is never
# asked: tests/site/test_console.py records every request of pages that run consoles.
BUNDLE_CONDITIONAL = {
    "https://unpkg.com/resize-observer-polyfill",
    "https://unpkg.com/mermaid@",
    "https://cdn.jsdelivr.net/pyodide/v",
}


def _text_files(root):
    return sorted(p for p in root.rglob("*") if p.suffix in (".html", ".css", ".js", ".mjs") and p.is_file())


def test_no_page_tag_loads_from_another_host(built_site):
    root = built_site.require()
    bad = [
        f"{p.relative_to(root)}: <{r.tag}> {r.url}"
        for p in built_site.html_files()
        for r in scan(p)[0]
        if r.loads_automatically and host_of(r.url) and host_of(r.url) not in LOCAL_HOSTS
    ]
    assert not bad, "pages load resources from other hosts:\n" + "\n".join(bad)


def test_no_html_css_or_js_references_a_remote_resource(built_site):
    root = built_site.require()
    files = _text_files(root)
    assert any(p.suffix == ".css" for p in files) and any(p.suffix == ".js" for p in files)
    bad = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in AUTO_LOAD.finditer(text):
            host = host_of(m.group("url"))
            if host not in LOCAL_HOSTS:
                bad.append(f"{path.relative_to(root)}: …{m.group(0)[:120]}")
        for m in THIRD_PARTY.finditer(text):
            around = text[max(0, m.start() - 20) : m.end() + 40]
            if path.suffix in (".js", ".mjs") and any(c in around for c in BUNDLE_CONDITIONAL):
                continue
            bad.append(f"{path.relative_to(root)}: …{around!r}")
    assert not bad, "remote resources referenced:\n" + "\n".join(sorted(set(bad))[:50])


def test_no_page_triggers_a_conditional_remote_load(built_site):
    """Material loads mermaid from unpkg.com for ``pre.mermaid`` blocks: the course has none."""
    pages = [p for p in built_site.html_files() if re.search(r'class="[^"]*\bmermaid\b', p.read_text("utf-8"))]
    assert not pages, f"pages with mermaid diagrams would load mermaid from unpkg.com: {pages}"


def test_the_grep_finds_remote_loads():
    samples = [
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">',
        '<script src="//cdn.jsdelivr.net/npm/x.js"></script>',
        "@import url('https://fonts.googleapis.com/css2');",
        "src: url(https://fonts.gstatic.com/a.woff2)",
    ]
    assert [host_of(AUTO_LOAD.search(s).group("url")) for s in samples] == [
        "fonts.googleapis.com",
        "cdn.jsdelivr.net",
        "fonts.googleapis.com",
        "fonts.gstatic.com",
    ]
    assert AUTO_LOAD.search('<a href="https://redis.io/docs/">Redis docs</a>') is None

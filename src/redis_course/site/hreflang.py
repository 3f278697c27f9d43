"""MkDocs hooks for every language's site (``hooks:`` in ``build/mkdocs.<lang>.yml``).

Each page's ``<link rel="alternate" hreflang>`` names the same page in every language, absolute under
the published address, plus ``x-default`` (English): search engines then offer a reader the page in
their language.  Material's own alternates point at each language's home page, relatively.
"""

from __future__ import annotations

import re

from redis_course.paths import LANGS

_MATERIAL_ALTERNATE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


def alternates(site_url: str, lang: str, page_url: str) -> str:
    """The ``<link rel="alternate">`` lines for ``page_url`` (relative to one language's root)."""
    root = site_url.rstrip("/")
    if root.endswith("/" + lang):
        root = root[: -len(lang) - 1]
    links = [f'<link rel="alternate" hreflang="{code}" href="{root}/{code}/{page_url}">' for code in LANGS]
    links.append(f'<link rel="alternate" hreflang="x-default" href="{root}/en/{page_url}">')
    return "\n    ".join(links)


def on_post_page(output: str, page, config) -> str:
    if not config.get("site_url") or page.url is None or page.file.src_uri == "404.md":
        return output
    lang = config["theme"]["language"]
    output = _MATERIAL_ALTERNATE.sub("", output)
    return output.replace("</head>", "  " + alternates(config["site_url"], lang, page.url) + "\n  </head>", 1)

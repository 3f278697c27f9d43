"""mkdocs hook: a page with redis-cli transcripts gets the console's loader and its settings.

``extra.console`` in the generated ``build/mkdocs.<lang>.yml`` is the manifest of
:func:`redis_course.webconsole.assets.prepare` (absent when the site is built without consoles).
A page whose Markdown holds a transcript (:func:`redis_course.core.transcripts.find_blocks`, the tests'
own finder) gets, before ``</body>``, a JSON block with where the runtime is (relative to the page,
so the site works from any folder), the first load's size, the lesson's notebook and the strings
in the page's language, and ``assets/javascripts/console.js`` (a few KB; it loads nothing before a click).
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from redis_course.core.transcripts import find_blocks
from redis_course.webconsole.strings import strings


def settings(info: dict, lang: str, page_url: str, src_uri: str, has_notebook: bool) -> dict:
    depth = page_url.count("/")  # "01-incr/" → 1: the language's root is "../", the site's "../../"
    up = "../" * (depth + 1)
    public = {k: v for k, v in info.items() if not k.startswith("_")}
    notebook = None
    if has_notebook:  # the lesson's notebook page, relative to this page of the same lesson
        notebook = "notebook/" if PurePosixPath(src_uri).name == "index.md" else "../notebook/"
    return {
        **public,
        "root": up + info["folder"],
        "lang": lang,
        "notebook": notebook,
        "strings": strings(lang),
        "source": src_uri,
    }


def on_post_page(output: str, page, config) -> str:
    info = (config.get("extra") or {}).get("console")
    if not info or page.url is None or not page.markdown or not find_blocks(page.markdown):
        return output
    lang = config["theme"]["language"]
    folder = PurePosixPath(page.file.src_uri).parent
    has_notebook = (Path(config["docs_dir"]) / folder / "notebook.md").is_file()
    data = json.dumps(settings(info, lang, page.url, page.file.src_uri, has_notebook), ensure_ascii=False)
    data = data.replace("</", "<\\/")
    depth = page.url.count("/")
    script = ("../" * depth) + "assets/javascripts/console.js"
    tags = (
        f'<script id="redis-console-settings" type="application/json">{data}</script>\n'
        f'<script src="{script}" defer></script>\n'
    )
    return output.replace("</body>", tags + "</body>", 1)

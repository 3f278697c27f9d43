"""One site per language: the language menu keeps the reader on the same page, the root page sends
readers to their language, and each site's search index holds its own language only."""

from __future__ import annotations

import json
import re

from redis_course.paths import LANGS

from _sitescan import resolve

CYRILLIC = re.compile(r"[\u0400-\u04ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _switcher(page) -> dict[str, str]:
    """hreflang → href of the language menu's links on a built page."""
    text = page.read_text(encoding="utf-8")
    return {
        lang: href for href, lang in re.findall(r'<a href="([^"]*)" hreflang="(\w+)" class="md-select__link"', text)
    }


def test_language_menu_of_the_start_page(built_site):
    root = built_site.require()
    page = root / "en" / "00-start" / "index.html"
    links = _switcher(page)
    assert set(links) == set(LANGS), links
    for lang in LANGS:
        target, _ = resolve(root, page, links[lang])
        assert target == root / lang / "00-start" / "index.html", (lang, links[lang])


def test_language_menu_keeps_every_page(built_site):
    root = built_site.require()
    checked = 0
    for lang in LANGS:
        for page in (root / lang).rglob("index.html"):
            if "search" in page.relative_to(root / lang).parts[:1]:
                continue
            rel = page.relative_to(root / lang)
            links = _switcher(page)
            assert set(links) == set(LANGS), f"{lang}/{rel}: language menu {links}"
            for other in LANGS:
                target, _ = resolve(root, page, links[other])
                assert target == root / other / rel, f"{lang}/{rel}: {other} link {links[other]} → {target}"
                assert target.is_file(), f"{lang}/{rel} has no {other} version"
                checked += 1
    assert checked >= 3 * 3 * 3


def test_language_menu_of_404_pages_leads_home(built_site):
    root = built_site.require()
    for lang in LANGS:
        page = root / lang / "404.html"
        for other, href in _switcher(page).items():
            assert resolve(root, page, href)[0] == root / other / "index.html", (lang, other, href)


def test_root_page_links_every_language(built_site):
    root = built_site.require()
    text = (root / "index.html").read_text(encoding="utf-8")
    for lang in LANGS:
        assert f'href="{lang}/"' in text
    assert "navigator.languages" in text and "location.replace" in text


def _index(root, lang) -> dict:
    return json.loads((root / lang / "search" / "search_index.json").read_text(encoding="utf-8"))


def test_search_index_languages(built_site):
    root = built_site.require()
    en, ru, zh = (_index(root, lang) for lang in LANGS)
    assert en["config"]["lang"] == ["en"]
    assert ru["config"]["lang"] == ["ru"]
    assert zh["config"]["lang"] == ["zh"]
    assert "\\u200b" in zh["config"]["separator"], "the zh separator must split on U+200B (jieba's word breaks)"


def test_chinese_index_is_segmented_into_words(built_site):
    docs = _index(built_site.require(), "zh")["docs"]
    text = "\n".join(d["title"] + "\n" + d["text"] for d in docs)
    assert text.count("\u200b") > 100, "Chinese text is not segmented by jieba (pip install jieba)"
    words = set(re.split(r"[\s\u200b]+", text))
    # 计数器 (counter) and 前缀 (prefix) appear only inside longer sentences on the zh pages
    assert {"计数器", "前缀"} <= words, "jieba did not separate 计数器 / 前缀 from their sentences"


def test_each_search_index_holds_its_own_language_only(built_site):
    root = built_site.require()
    for lang in LANGS:
        docs = _index(root, lang)["docs"]
        assert docs, f"empty search index for {lang}"
        for doc in docs:
            page = doc["location"].split("#")[0]
            assert not page.startswith(("/", "http", "../")), f"{lang} index points outside its site: {page}"
            assert (root / lang / page / "index.html").is_file() or (root / lang / page).is_file(), page
        # the glossary is the one page that holds every language's terms: a reader of any language finds them there
        text = " ".join(d["title"] + " " + d["text"] for d in docs if not d["location"].startswith("glossary/"))
        if lang != "ru":
            assert not CYRILLIC.search(text), f"Russian text in the {lang} index: {CYRILLIC.search(text)}"
        if lang != "zh":
            assert not HAN.search(text), f"Chinese text in the {lang} index"
        if lang != "en":
            assert (CYRILLIC if lang == "ru" else HAN).search(text)


def test_russian_index_folds_yo(built_site):
    """Readers type е for ё: the ru index is written with е, and search-yo.js folds the query too."""
    root = built_site.require()
    text = json.dumps(_index(root, "ru"), ensure_ascii=False)
    assert "ё" not in text and "Ё" not in text
    assert "счетчик" in text.lower()
    assert "search-yo.js" in (root / "ru" / "index.html").read_text(encoding="utf-8")

"""Every link, image, stylesheet and script in the three built sites points at a file that exists,
and every #fragment at an id on the target page.  mkdocs checks Markdown links; this checks the HTML
as the reader gets it (theme, navigation, language menu, generated notebook pages)."""

from __future__ import annotations

from _sitescan import LOCAL_HOSTS, host_of, resolve, scan


def test_every_local_reference_and_anchor_exists(built_site):
    root = built_site.require()
    pages = built_site.html_files()
    assert len(pages) >= 3 * 4, f"only {len(pages)} HTML files were built"
    broken: list[str] = []
    checked = 0
    for page in pages:
        refs, _ = scan(page)
        for ref in refs:
            if not ref.url or ref.url.startswith(("mailto:", "tel:", "javascript:", "data:")):
                continue
            if host_of(ref.url):
                continue  # external: see test_offline for what may point off-site
            where = f"{page.relative_to(root)}: <{ref.tag}> {ref.url}"
            resolved = resolve(root, page, ref.url)
            if resolved is None:
                broken.append(f"{where} (unexpected URL form)")
                continue
            target, fragment = resolved
            checked += 1
            if not target.is_file():
                broken.append(f"{where} → {target.relative_to(root)} does not exist")
            elif fragment and target.suffix == ".html" and fragment not in scan(target)[1]:
                broken.append(f"{where} → no id {fragment!r} in {target.relative_to(root)}")
    assert checked > 100, f"only {checked} local references found: is the crawler reading the pages?"
    assert not broken, "broken references:\n" + "\n".join(broken)


def test_resources_are_not_fetched_from_a_fixed_port(built_site):
    """The sites work on any port: what a page loads is relative, never http://127.0.0.1:8000/..."""
    root = built_site.require()
    bad = [
        f"{p.relative_to(root)}: <{r.tag}> {r.url}"
        for p in built_site.html_files()
        for r in scan(p)[0]
        if host_of(r.url) in LOCAL_HOSTS and r.loads_automatically
    ]
    assert not bad, "absolute URLs to this machine (break on another port):\n" + "\n".join(bad)


def test_checker_reports_a_missing_anchor(tmp_path):
    """The crawler itself: a fragment that is not an id is detected."""
    (tmp_path / "en" / "a").mkdir(parents=True)
    page = tmp_path / "en" / "index.html"
    page.write_text('<a href="a/#nope">x</a><a href="a/#yes">y</a>', encoding="utf-8")
    (tmp_path / "en" / "a" / "index.html").write_text('<h2 id="yes">Y</h2>', encoding="utf-8")
    found = []
    for ref in scan(page)[0]:
        target, fragment = resolve(tmp_path, page, ref.url)
        found.append((target.relative_to(tmp_path).as_posix(), fragment, fragment in scan(target)[1]))
    assert found == [("en/a/index.html", "nope", False), ("en/a/index.html", "yes", True)]

"""The browser console's Python and build steps, in CPython (tests/site/test_console.py drives it in Chromium).

The session module is the one the browser runs: every transcript of every page replayed through it
prints what the page shows, except the Lua examples, which get a note instead of a reply."""

from __future__ import annotations

import http.server
import io
import os
import threading
import zipfile
from pathlib import Path

import pytest

from redis_course import downloads
from redis_course.core import transcripts
from redis_course.webconsole import assets, hook, strings
from redis_course.webconsole.session import Session


def _blocks():
    for page in transcripts.pages():
        yield from transcripts.find_blocks(page.read_text(encoding="utf-8"), str(page))


def test_every_transcript_replays_as_the_page_shows_it():
    replayed = 0
    for block in _blocks():
        results = Session().run_many([s.command for s in block.steps])
        if any(r["note"] == "lua" for r in results):
            continue
        assert [r["lines"] for r in results] == [s.expected for s in block.steps], f"{block.path}:{block.line}"
        replayed += 1
    assert replayed > 90


def test_lua_blocking_and_server_commands_get_a_note_not_a_reply():
    s = Session()
    for line, note in [
        ('EVAL "return 1" 0', "lua"),
        ("EVALSHA abc 0", "lua"),
        ("SCRIPT LOAD x", "lua"),
        ("FCALL f 0", "lua"),
        ("BLPOP q 0", "blocking"),
        ("XREAD BLOCK 0 STREAMS s $", "blocking"),
        ("INFO", "server"),
        ("OBJECT ENCODING k", "server"),
        ("WAIT 1 0", "server"),
    ]:
        r = s.run(line)
        assert (r["note"], r["lines"]) == (note, []), line
    assert s.run("XREAD COUNT 1 STREAMS s 0")["note"] is None


def test_two_clients_share_one_server_and_watch_fails_exec():
    s = Session()
    assert s.run("SET balance 100")["lines"] == ["OK"]
    assert s.run("WATCH balance", 0)["lines"] == ["OK"]
    assert s.run("DECRBY balance 30", 1)["lines"] == ["(integer) 70"]
    assert s.run("MULTI", 0)["next"] == "redis(TX)> "
    assert s.run("DECRBY balance 30", 0)["lines"] == ["QUEUED"]
    r = s.run("EXEC", 0)
    assert (r["prompt"], r["lines"], r["next"]) == ("redis(TX)> ", ["(nil)"], "redis> ")
    assert s.run("GET balance", 1)["lines"] == ['"70"']
    s.reset()
    assert s.run("GET balance")["lines"] == ["(nil)"]


def test_errors_keep_their_prefix_and_bad_quotes_are_one_line():
    s = Session()
    s.run("SET name alice")
    assert s.run("INCR name")["lines"] == ["(error) ERR value is not an integer or out of range"]
    r = s.run('SET k "open')
    assert (r["lines"], r["note"]) == (["Invalid argument(s)"], "syntax")  # redis-cli's words; the note is translated
    assert s.run("   ")["lines"] == []


def test_unknown_commands_are_answered_as_redis_7_answers():
    """Redis 7.0's text (server.c): the name as typed, its arguments, each part cut at 128 characters."""
    s = Session()
    assert s.run("FOObar a b")["lines"] == ["(error) ERR unknown command 'FOObar', with args beginning with: 'a' 'b' "]
    assert s.run("nope")["lines"] == ["(error) ERR unknown command 'nope', with args beginning with: "]
    long = s.run("Y" * 10_000 + " " + "a" * 100 + " " + "b" * 100)["lines"]
    assert long == [
        "(error) ERR unknown command '"
        + "Y" * 128
        + "', with args beginning with: '"
        + "a" * 100
        + "' '"
        + "b" * 25
        + "' "
    ]


def test_strings_are_translated_and_keep_their_fields():
    en, ru, zh = (strings.strings(lang) for lang in ("en", "ru", "zh"))
    assert en.keys() == ru.keys() == zh.keys()
    for key in en:
        assert ru[key] != en[key] and zh[key] != en[key], key
        for field in ("{name}", "{n}", "{mb}", "{seconds}", "{detail}"):
            assert (field in en[key]) == (field in ru[key]) == (field in zh[key]), (key, field)


def test_pages_get_the_runtime_relative_to_themselves():
    info = {"folder": "console/", "worker": "worker-x.mjs", "_runtime": "/cache"}
    s = hook.settings(info, "ru", "01-incr/", "01-incr/index.md", True)
    assert (s["root"], s["notebook"], s["lang"]) == ("../../console/", "notebook/", "ru")
    assert "_runtime" not in s and s["strings"]["run"] == "Запустить в браузере"
    assert hook.settings(info, "en", "", "index.md", False)["root"] == "../console/"


def test_course_zip_is_deterministic_and_holds_the_formatter():
    data = assets.course_zip()
    assert data == assets.course_zip()
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert {
        "redis_course/core/transcripts.py",
        "redis_course/core/compat.py",
        "redis_course/webconsole/session.py",
    } <= set(names)


def test_checksums_are_checked():
    art = assets.WHEELS[0]
    assert not art.matches(b"not a wheel")
    assert assets.Artifact("x", "u", "sha256", "a" * 64).matches(b"") is False


def _no_network(monkeypatch):
    """Every HTTPS request goes to a proxy on a closed loopback port: what a machine without network sees."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")


def test_without_network_the_site_builds_without_consoles_in_one_line(tmp_path, monkeypatch):
    _no_network(monkeypatch)
    lines: list[str] = []
    assert assets.prepare(log=lines.append, cache=tmp_path) is None
    assert len(lines) == 1 and "without in-browser consoles" in lines[0] and "registry.npmjs.org" in lines[0]
    assert "\n" not in lines[0] and len(lines[0]) < 200, lines[0]  # one sentence, not a traceback


def test_a_cached_file_needs_no_network_and_an_old_cache_is_adopted(tmp_path, monkeypatch):
    _no_network(monkeypatch)
    art = downloads.Artifact(
        "a.bin",
        "https://registry.npmjs.org/a.bin",
        "sha256",
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    )  # sha256("hello")
    old = tmp_path / "console" / "a.bin"  # where the console kept its downloads before
    old.parent.mkdir()
    old.write_bytes(b"hello")
    assert not downloads.cached(art, tmp_path)
    assert downloads.fetch(art, tmp_path).read_bytes() == b"hello"
    assert downloads.cached(art, tmp_path) and art.path(tmp_path).parent.name == "downloads"


def _serve(body: bytes, gets: list | None = None):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            if gets is not None:
                gets.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_corrupt_download_is_refused_and_not_kept(tmp_path, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = _serve(b"tampered")
    try:
        wheel = assets.WHEELS[1]
        art = assets.Artifact(
            wheel.name, f"http://127.0.0.1:{server.server_port}/{wheel.name}", wheel.algo, wheel.digest
        )
        with pytest.raises(assets.Unavailable, match="checksum"):
            assets.fetch(art, cache=tmp_path)
    finally:
        server.shutdown()
    folder = tmp_path / "downloads"
    assert not (folder / wheel.name).exists()
    assert [p.name for p in folder.iterdir() if not p.name.endswith(".lock")] == [], "a partial file was left"


def test_workers_sharing_the_cache_download_a_file_once(tmp_path, monkeypatch):
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    body, gets = os.urandom(200_000), []
    server = _serve(body, gets)
    try:
        art = downloads.Artifact(
            "shared.bin",
            f"http://127.0.0.1:{server.server_port}/shared.bin",
            "sha256",
            hashlib.sha256(body).hexdigest(),
        )
        with ThreadPoolExecutor(4) as pool:
            paths = list(pool.map(lambda _i: downloads.fetch(art, tmp_path), range(4)))
    finally:
        server.shutdown()
    assert gets == ["/shared.bin"] and {p.read_bytes() for p in paths} == {body}


def test_both_checksum_spellings_give_pooch_one_hash():
    npm = downloads.npm_artifact("pyodide", assets.PYODIDE_VERSION, "sha512-" + assets.PYODIDE.digest)
    assert npm.known_hash == assets.PYODIDE.known_hash and npm.url == assets.PYODIDE.url
    assert npm.known_hash.startswith("sha512:") and len(npm.known_hash) == len("sha512:") + 128
    assert assets.WHEELS[0].known_hash == "sha256:" + assets.WHEELS[0].digest


def test_consoles_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("COURSE_CONSOLE", "0")
    lines: list[str] = []
    assert assets.prepare(log=lines.append) is None and len(lines) == 1


def test_without_node_the_wheels_are_shipped(tmp_path, monkeypatch):
    from redis_course.webconsole import precompile

    monkeypatch.setattr(precompile.shutil, "which", lambda _name: None)
    runtime = tmp_path / "pyodide-x"
    runtime.mkdir()
    for name in assets.RUNTIME_FILES:
        (runtime / name).write_bytes(b"x")
    wheel = tmp_path / "w-1-py3-none-any.whl"
    wheel.write_bytes(b"w")
    assert precompile.bundle(runtime, [wheel], "digest") is None
    info = assets.manifest(runtime, [wheel], None)
    assert info["wheels"] == ["wheels/w-1-py3-none-any.whl"] and info["packages"] is None
    bundle = tmp_path / "packages-k.zip"
    bundle.write_bytes(b"zz")
    info = assets.manifest(runtime, [wheel], bundle)
    assert info["wheels"] == [] and info["packages"] == "wheels/packages-k.zip"


def test_without_node_or_the_bundle_there_is_no_snapshot(tmp_path, monkeypatch):
    from redis_course.webconsole import precompile

    runtime = tmp_path / "pyodide-x"
    runtime.mkdir()
    bundle = tmp_path / "packages-k.zip"
    bundle.write_bytes(b"zz")
    assert precompile.snapshot(runtime, None, b"course", "digest") is None
    monkeypatch.setattr(precompile.shutil, "which", lambda _name: None)
    assert precompile.snapshot(runtime, bundle, b"course", "digest") is None
    # the key follows everything a snapshot is made of
    key = precompile.snapshot_key("digest", bundle, b"course")
    assert (
        key
        != precompile.snapshot_key("digest", bundle, b"course 2")
        != precompile.snapshot_key("d2", bundle, b"course")
    )


def test_a_snapshot_that_fails_its_check_is_not_kept(tmp_path, monkeypatch):
    """snapshot.mjs exits non-zero when a restored snapshot answers differently: no file, one line logged."""
    import subprocess

    from redis_course.webconsole import precompile

    runtime = tmp_path / "pyodide-x"
    runtime.mkdir()
    bundle = tmp_path / "packages-k.zip"
    bundle.write_bytes(b"zz")
    monkeypatch.setattr(precompile.shutil, "which", lambda _name: "/usr/bin/node")

    def fails(cmd, **kw):
        Path(cmd[-1]).write_bytes(b"half")
        raise subprocess.CalledProcessError(1, cmd, stderr=b"noise\na restored snapshot answers [] to PING")

    monkeypatch.setattr(precompile.subprocess, "run", fails)
    lines: list[str] = []
    assert precompile.snapshot(runtime, bundle, b"course", "digest", log=lines.append) is None
    assert not list(tmp_path.glob("snapshot-*")) and lines[-1].endswith("a restored snapshot answers [] to PING")


def test_with_a_snapshot_a_first_click_loads_it_instead_of_the_packages(tmp_path):
    """The status line's bytes are those of the files the worker fetches: the snapshot, not the bundle
    and the course zip it replaces (they stay on the site for the fallback); its parts join to it."""
    runtime = tmp_path / "pyodide-x"
    runtime.mkdir()
    for name in assets.RUNTIME_FILES:
        (runtime / name).write_bytes(b"x" * 1000)
    bundle = tmp_path / "packages-k.zip"
    bundle.write_bytes(os.urandom(50_000))
    snap = tmp_path / "snapshot-k.gz"
    snap.write_bytes(os.urandom(2 * assets.SNAPSHOT_PART + 10))
    without = assets.manifest(runtime, [], bundle)
    info = assets.manifest(runtime, [], bundle, snap)
    assert without["snapshot"] is None and len(info["snapshot"]) == 3 and info["snapshot_bytes"] == snap.stat().st_size
    assert info["transfer"] - without["transfer"] == snap.stat().st_size - 50_000 - len(assets.course_zip())
    out = assets.install(tmp_path / "site", info)
    assert b"".join((out / name).read_bytes() for name in info["snapshot"]) == snap.read_bytes()
    assert (out / info["packages"]).is_file() and (out / info["course"]).is_file()
    assert max((out / name).stat().st_size for name in info["snapshot"]) <= assets.SNAPSHOT_PART


def test_the_first_click_is_announced_with_the_bytes_that_cross_the_network(tmp_path):
    """The status line says how much a first click downloads: WebAssembly and scripts travel gzip-compressed."""
    from redis_course.site import build as site

    assert assets.COMPRESSED_IN_TRANSIT <= site.COMPRESSIBLE
    runtime = tmp_path / "pyodide-x"
    runtime.mkdir()
    for name in assets.RUNTIME_FILES:
        (runtime / name).write_bytes(b"\0asm" + bytes(200_000) if name.endswith(".wasm") else b"x" * 1000)
    bundle = tmp_path / "packages-k.zip"
    bundle.write_bytes(os.urandom(50_000))
    info = assets.manifest(runtime, [], bundle)
    assert info["bytes"] > 250_000 and 50_000 < info["transfer"] < 60_000 + len(assets.course_zip()), info


def test_serve_lets_browsers_keep_the_runtime_and_types_it(tmp_path):
    import threading
    import urllib.request

    from redis_course.site import build as site

    (tmp_path / "console" / "pyodide-x").mkdir(parents=True)
    (tmp_path / "console" / "pyodide-x" / "pyodide.asm.wasm").write_bytes(b"\0asm" + bytes(100))
    (tmp_path / "console" / "worker-1.mjs").write_text("export {};\n")
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "index.html").write_text("<p>hi</p>")
    server = site.make_server(port=0, directory=tmp_path)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:

        def head(path):
            with urllib.request.urlopen(urllib.request.Request(base + path, method="HEAD"), timeout=10) as resp:
                return resp.headers

        wasm, worker, page = head("/console/pyodide-x/pyodide.asm.wasm"), head("/console/worker-1.mjs"), head("/en/")
        assert wasm["Content-Type"] == "application/wasm" and "immutable" in wasm["Cache-Control"]
        assert worker["Content-Type"].startswith("text/javascript") and "immutable" in worker["Cache-Control"]
        assert page["Cache-Control"] == "no-cache"  # kept, but revalidated: a page is fresh after a build
    finally:
        server.shutdown()
        server.server_close()

"""The Redis console in the browser: a Run button on every redis-cli transcript of a page.

A click opens a console seeded with the transcript's commands; they run on fakeredis inside the
browser (CPython compiled to WebAssembly by Pyodide), with no server and no request to another host.

* :mod:`.assets` — the runtime and wheels: fetched once from npm and PyPI at build time, pinned by
  version and checksum, cached, copied into the built site;
* :mod:`.session` — the Python that runs in the browser: one fakeredis server, two clients, replies
  formatted by :mod:`redis_course.core.transcripts` exactly as the page's transcripts are checked;
* :mod:`.strings` — what the console says, in the page's language, from the course's catalogs;
* :mod:`.hook` — the mkdocs hook that gives pages with transcripts the console's small loader.

The loader (``overrides/assets/javascripts/console.js``) loads nothing until the first click; the
runtime runs in a Web Worker (``worker.mjs``) shared by every console of the page.
"""

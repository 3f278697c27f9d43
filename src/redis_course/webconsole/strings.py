"""What the browser console says, in the page's language: the catalogs' messages, per language at build time.

The English text is the message id (``N_``); :func:`strings` translates every message for one
language, and the hook writes the result into the pages of that language (the loader has no
catalog of its own).  ``{name}`` in a message is filled in the browser with the command's name,
``{mb}`` with megabytes (of the first load, or downloaded), ``{loaded}`` with the megabytes of the
snapshot read so far, ``{seconds}`` with a duration.
"""

from __future__ import annotations

from ..l10n import N_, _

MESSAGES = {
    "run": N_("Run in the browser"),
    "run_title": N_("Open a Redis console in this page, seeded with this example (fakeredis in your browser)"),
    "title": N_("Redis console in the browser: fakeredis on Python compiled to WebAssembly; nothing leaves this page"),
    "client": N_("Client {n}"),
    "client_help": N_("Two clients share one server: WATCH a key in one, change it in the other, then EXEC."),
    "reset": N_("Reset"),
    "reset_help": N_("Empty the server and forget both clients' state"),
    "close": N_("Close"),
    "edit": N_("Edit the example"),
    "run_all": N_("Run these commands"),
    "input": N_("A command, for example INCR visits; Enter runs it, the up arrow recalls the last one"),
    "runtime": N_("Loading Python in the browser (first time {mb} MB, cached afterwards)…"),
    "loading": N_("Loading the snapshot of Python's memory: {loaded} of {mb} MB…"),
    "snapshot": N_("Starting Python and fakeredis…"),
    "packages": N_("Loading fakeredis…"),
    "import": N_("Starting fakeredis…"),
    "ready": N_("Ready in {seconds} s."),
    "ready_bytes": N_("Ready in {seconds} s ({mb} MB downloaded)."),
    "failed": N_("The console could not start: {detail}"),
    "file": N_(
        "The console needs the site served over HTTP (python3 run.py serve): a page opened as a file "
        "cannot load WebAssembly."
    ),
    "lua": N_(
        "{name}: Lua scripts cannot run in the browser console (fakeredis runs Lua through lupa, which has "
        "no WebAssembly build). Run this example in the lesson's notebook."
    ),
    "lua_link": N_("Open the notebook"),
    "blocking": N_(
        "{name} blocks until data arrives, which would freeze the browser console: run it with "
        "redis-cli or in the notebook."
    ),
    "server": N_(
        "{name} is a server command that fakeredis does not emulate: run it with redis-cli against a real Redis."
    ),
    "syntax": N_(
        "redis-cli cannot read this line: a quote is not closed, or a closing quote is not followed by a space."
    ),
    "internal": N_("The browser console failed on this command:"),
}


def strings(lang: str) -> dict[str, str]:
    """Every message of the console in ``lang`` (English where a translation is missing)."""
    return {key: _(text, lang=lang) for key, text in MESSAGES.items()}

"""The limiters convert now_ms with int() and fail when it is None instead of reading the server's clock."""


def _decide(r, script: str, key: str, limits, cost: int, now_ms) -> dict:
    """Run ``_PRELUDE + script`` on ``key``; the script returns {allowed, remaining, retry}.

    Checks the arguments first: at least one ``[limit, window_ms]`` pair, all at least 1, and
    1 <= cost <= every limit (a bigger request could never be allowed).  Sends EVALSHA (the
    server runs its cached copy; the script's SHA1 is computed once per script) and loads the
    script with SCRIPT LOAD the first time a server does not know it.
    """
    pairs = [(int(limit), int(window_ms)) for limit, window_ms in limits]
    if not pairs or any(limit < 1 or window_ms < 1 for limit, window_ms in pairs):
        raise ValueError("limits must be a non-empty list of [limit, window_ms] pairs, all at least 1")
    if not 1 <= int(cost) <= min(limit for limit, _ in pairs):
        raise ValueError("cost must be at least 1 and at most the smallest limit")
    now = int(now_ms)
    args = [now, int(cost), secrets.token_hex(8)] + [n for pair in pairs for n in pair]
    sha = _SHA.get(script)
    if sha is None:
        sha = _SHA[script] = hashlib.sha1((_PRELUDE + script).encode()).hexdigest()
    try:
        allowed, remaining, retry = r.evalsha(sha, 1, key, *args)
    except NoScriptError:
        r.script_load(_PRELUDE + script)
        allowed, remaining, retry = r.evalsha(sha, 1, key, *args)
    return {"allowed": allowed == 1, "remaining": remaining, "retry_after_ms": retry}

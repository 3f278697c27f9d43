"""Lesson 07: what a client does with a 429, shadow mode, and the retry storm jitter prevents.

* :func:`retry_delay_ms`: ``Retry-After`` plus exponential backoff with full jitter (a random wait
  between 0 and ``base * 2^attempt``, capped).  ``Retry-After`` says when the limit has room for
  *one* request, not for everybody who was denied: a floor, never the moment to come back.
* :func:`storm`: many clients denied at the same moment retry through a limiter in simulated time
  (a controlled clock); without jitter they come back together, again and again.
* :func:`shadow`: run a limiter without enforcing it, counting who *would* have been denied.
"""

from __future__ import annotations

import heapq
import random
from typing import Callable

from . import ratelimit as rl


def retry_delay_ms(
    attempt: int,
    retry_after_ms: int | None,
    rng: random.Random,
    base_ms: int = 100,
    cap_ms: int = 10_000,
    jitter: bool = True,
) -> int:
    """How long to wait before retry number ``attempt`` (0 for the first retry).  Without ``jitter``:
    exactly ``Retry-After`` when given (what many clients do), else ``base * 2^attempt``."""
    ceiling = min(cap_ms, base_ms * 2**attempt)
    if not jitter:
        return retry_after_ms if retry_after_ms is not None else ceiling
    return (retry_after_ms or 0) + rng.randrange(ceiling + 1)


def storm(
    r,
    clients: int = 50,
    limit: int = 10,
    window_ms: int = 1000,
    jitter: bool = True,
    use_retry_after: bool = True,
    seed: int = 7,
    start_ms: int = 1_700_000_000_000,
    max_attempts: int = 20,
) -> dict:
    """``clients`` clients each send one request at the same moment to one GCRA limit (``limit`` per
    ``window_ms`` for the whole service) and retry until allowed (at most ``max_attempts`` times).

    Returns ``{"requests": total sent, "largest_wave": the most retries sent within the same 10 ms,
    "last_ms": when the last client got through, "gave_up": clients never let through,
    "attempts": per client}``.  One EVALSHA per request.
    """
    rng = random.Random(seed)
    events = [(start_ms, i, 0) for i in range(clients)]
    heapq.heapify(events)
    sent: list[int] = []
    attempts = [0] * clients
    done_at, gave_up = start_ms, 0
    key = f"storm:{jitter}:{use_retry_after}:{seed}"
    while events:
        now, client, attempt = heapq.heappop(events)
        sent.append(now)
        attempts[client] += 1
        d = rl.gcra(r, key, limit=limit, window_ms=window_ms, now_ms=now)
        if d.allowed:
            done_at = max(done_at, now)
            continue
        if attempt + 1 >= max_attempts:
            gave_up += 1
            continue
        wait = retry_delay_ms(attempt, d.retry_after_ms if use_retry_after else None, rng, jitter=jitter)
        heapq.heappush(events, (now + max(1, wait), client, attempt + 1))
    waves: dict[int, int] = {}
    for t in sent[clients:]:  # the retries: the first requests all came at start_ms by design
        waves[(t - start_ms) // 10] = waves.get((t - start_ms) // 10, 0) + 1
    return {
        "requests": len(sent),
        "largest_wave": max(waves.values(), default=0),
        "last_ms": done_at - start_ms,
        "gave_up": gave_up,
        "attempts": attempts,
    }


def shadow(r, decide: Callable[..., rl.Decision], client_id: str, day: str, **kwargs) -> bool:
    """Shadow mode: ask the limiter, always allow, and count a would-be denial per client in the
    hash ``shadow:<day>`` (HINCRBY + EXPIRE 8 days in one MULTI, O(1)).  Returns what the limiter said."""
    d = decide(r, client_id, **kwargs)
    if not d.allowed:
        key = r.key("shadow", day)
        pipe = r.pipeline(transaction=True)
        pipe.hincrby(key, client_id, 1)
        pipe.expire(key, 8 * 86400)
        pipe.execute()
    return d.allowed

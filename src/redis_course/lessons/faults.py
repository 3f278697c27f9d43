"""Faults that a test injects into the process that runs the code under test.

Two kinds of crash, both armed from outside the code under test:

* :func:`arm_crash` makes the process "die" after a number of successful round trips that touch
  this run's keys: every later round trip dies before anything is sent, until the crash is
  disarmed.  A counter that takes two round trips (``INCR``, then ``EXPIRE``) is stopped between
  them, exactly where a deploy or an OOM kill can stop it in production; a MULTI/EXEC block or a
  Lua script is one round trip and is never cut in half.  A pipeline without MULTI/EXEC
  (``pipeline(transaction=False)``) is, while a crash is armed, sent one command per round trip:
  Redis promises nothing about running its commands together (other clients' commands may run
  between them, and a server that dies between them keeps the first ones), so the fault model
  gives it no more than that.
* :func:`arm_step` makes the process die at a named step (``claimed``, ``applied``, ``committed``)
  that the code reports with :func:`crash_point` once it has done that step.

In a lesson or a test, "dying" raises :class:`SimulatedCrash`.  The grader arms neither kind inside
the student's process: its crashes are made outside it (the box's fault proxy cuts the connection at
the chosen round trip and the grader kills the process), and :func:`crash_point` only reports the
step to the grader (:func:`on_step`, installed before the student's module is imported), which
alone decides whether the process dies there and kills it from outside (see
``redis_course.labs.sandbox``): a submission can neither disarm nor fake either kind.

Round trips are counted where redis-py sends them: ``Redis.execute_command`` (a plain command,
EVAL/EVALSHA) and ``Pipeline.execute`` (a pipeline or a MULTI/EXEC transaction).  Round trips that
name no key under the client's prefix (PING, SCRIPT LOAD) and round trips answered with an error
(a NOSCRIPT that redis-py retries) do not count.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

import redis
from redis.client import Pipeline

__all__ = ["SimulatedCrash", "STEPS", "arm_crash", "arm_step", "crash_point", "on_step", "set_machine_timezone"]

STEPS = ("claimed", "applied", "committed")


class SimulatedCrash(redis.exceptions.ConnectionError):
    """The process died here: this round trip and every later one never reach the server."""


_state: dict = {"budget": None, "prefix": None, "step": None}
_lock = threading.Lock()
_installed = False
_reporter: list[Callable[[str], None]] = []


def on_step(reporter: Callable[[str], None] | None) -> None:
    """Send every :func:`crash_point` to ``reporter(step)`` instead of the local arming (None: back)."""
    _reporter[:] = [reporter] if reporter else []


def _die(why: str) -> None:
    raise SimulatedCrash(why)


def _touches_prefix(args) -> bool:
    prefix = _state["prefix"]
    for a in args:
        if isinstance(a, bytes):
            a = a.decode("utf-8", "replace")
        if isinstance(a, str) and a.startswith(prefix):
            return True
    return False


def _guarded(send, args_of):
    def wrapper(self, *args, **kwargs):
        with _lock:
            armed = _state["budget"] is not None and _touches_prefix(args_of(self, args))
            dead = armed and _state["budget"] <= 0
        if dead:
            _die("simulated crash: the process died before this round trip")
        result = send(self, *args, **kwargs)
        if armed:
            with _lock:
                if _state["budget"] is not None:
                    _state["budget"] -= 1
        return result

    wrapper.__wrapped__ = send
    return wrapper


def _pipeline_args(pipe, _args):
    return [a for cmd in pipe.command_stack for a in cmd[0]]


def _split_unless_transaction(execute):
    """While a crash is armed, a pipeline without MULTI/EXEC runs one command per round trip."""

    def wrapper(self, raise_on_error=True):
        with _lock:
            armed = _state["budget"] is not None
        stack = list(self.command_stack)
        if not armed or self.transaction or self.explicit_transaction or self.watching or len(stack) < 2:
            return execute(self, raise_on_error)
        results = []
        try:
            for command in stack:
                self.command_stack = [command]  # execute() resets the pipeline after each round trip
                results.extend(execute(self, False))
        finally:
            self.reset()
        if raise_on_error:
            for res in results:
                if isinstance(res, Exception):
                    raise res
        return results

    wrapper.__wrapped__ = execute
    return wrapper


def _install() -> None:
    global _installed
    if _installed:
        return
    redis.Redis.execute_command = _guarded(redis.Redis.execute_command, lambda self, args: args)
    Pipeline.execute = _split_unless_transaction(_guarded(Pipeline.execute, _pipeline_args))
    # A pipeline in WATCH mode sends each command at once: that is a round trip too.
    Pipeline.immediate_execute_command = _guarded(Pipeline.immediate_execute_command, lambda self, args: args)
    _installed = True


def arm_crash(r, round_trips: int | None) -> bool:
    """Let ``round_trips`` more round trips on this run's keys succeed, then crash every later one.

    ``None`` disarms.  Returns True when armed.  No Redis command is sent.
    """
    _install()
    with _lock:
        _state["prefix"] = r.prefix
        _state["budget"] = None if round_trips is None else int(round_trips)
    return _state["budget"] is not None


def arm_step(step: str | None) -> str | None:
    """Die when the code reports ``step`` with :func:`crash_point` (once); None disarms."""
    if step is not None and step not in STEPS:
        raise ValueError(f"step must be one of {STEPS} or None")
    with _lock:
        _state["step"] = step
    return step


def crash_point(step: str) -> None:
    """Report that ``step`` is done; the process dies here if a test armed that step.  No Redis command."""
    if step not in STEPS:
        raise ValueError(f"crash_point(step): step must be one of {STEPS}")
    if _reporter:  # under the grader: it decides, and kills this process from outside if it armed the step
        _reporter[0](step)
        return
    with _lock:
        fire = _state["step"] == step
        if fire:
            _state["step"] = None
    if fire:
        _die(f"simulated crash after step {step!r}")


def set_machine_timezone(r, name: str | None) -> str:
    """Make this process's local time zone ``name`` (an IANA name such as ``Asia/Tokyo``); None: UTC
    (a lesson's fault; the grader gives the time zone to a fresh process instead).  Returns the local
    date of the Unix epoch's first second, to show the change took effect."""
    os.environ["TZ"] = name or "UTC"
    time.tzset()
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(0))

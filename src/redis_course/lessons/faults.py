"""Faults that a lab's tests inject into the process that runs the student's code.

Lab 03 imports these two functions into its module, so the grader can call them through the lab
proxy like any other function (``lab.arm_crash(1)``); they run in the student's child process.

* :func:`arm_crash` makes the process "die" after a number of successful round trips that touch
  this run's keys: every later round trip raises :class:`SimulatedCrash` before anything is sent,
  until the crash is disarmed.  A counter that takes two round trips (``INCR``, then ``EXPIRE``)
  is stopped between them, exactly where a deploy or an OOM kill can stop it in production; a
  MULTI/EXEC block, a pipeline or a Lua script is one round trip and is never cut in half.
* :func:`set_machine_timezone` pretends the machine runs in another time zone (``TZ`` +
  ``time.tzset()``), so code that uses the machine's local day instead of UTC shows itself.

Round trips are counted where redis-py sends them: ``Redis.execute_command`` (a plain command,
EVAL/EVALSHA) and ``Pipeline.execute`` (a pipeline or a MULTI/EXEC transaction).  Round trips that
name no key under the client's prefix (PING, SCRIPT LOAD) and round trips answered with an error
(a NOSCRIPT that redis-py retries) do not count.
"""
from __future__ import annotations

import os
import threading
import time

import redis
from redis.client import Pipeline

__all__ = ["SimulatedCrash", "arm_crash", "set_machine_timezone"]


class SimulatedCrash(redis.exceptions.ConnectionError):
    """The process died here: this round trip and every later one never reach the server."""


_state = {"budget": None, "prefix": None}
_lock = threading.Lock()
_installed = False


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
            if armed and _state["budget"] <= 0:
                raise SimulatedCrash("simulated crash: the process died before this round trip")
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


def _install() -> None:
    global _installed
    if _installed:
        return
    redis.Redis.execute_command = _guarded(redis.Redis.execute_command, lambda self, args: args)
    Pipeline.execute = _guarded(Pipeline.execute, _pipeline_args)
    # A pipeline in WATCH mode sends each command at once: that is a round trip too.
    Pipeline.immediate_execute_command = _guarded(Pipeline.immediate_execute_command,
                                                  lambda self, args: args)
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


def set_machine_timezone(r, name: str | None) -> str:
    """Make this process's local time zone ``name`` (an IANA name such as ``Asia/Tokyo``); None: UTC.

    Returns the local date of the Unix epoch's first second, to show the change took effect.
    """
    os.environ["TZ"] = name or "UTC"
    time.tzset()
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(0))

"""Messages for people, in the reader's language.

The language comes from ``COURSE_LANG`` (set by ``course jupyter --lang`` and ``course check --lang``),
then from the locale, and falls back to English.  Each message is one sentence that says what is
wrong and what to do.
"""
from __future__ import annotations

import locale
import os

LANGS = ("en", "ru", "zh")

MESSAGES: dict[str, dict[str, str]] = {
    "bad_url": {
        "en": "REDIS_URL={url!r} is not a Redis URL ({detail}); use redis://HOST:PORT/DB, rediss://... or unix:///path/to/redis.sock, or unset REDIS_URL to use the built-in fakeredis.",
        "ru": "REDIS_URL={url!r} — не адрес Redis ({detail}); укажите redis://ХОСТ:ПОРТ/БАЗА, rediss://... или unix:///путь/к/redis.sock либо уберите REDIS_URL, чтобы работать со встроенным fakeredis.",
        "zh": "REDIS_URL={url!r} 不是有效的 Redis 地址（{detail}）；请使用 redis://主机:端口/库号、rediss://... 或 unix:///路径/redis.sock，或者取消 REDIS_URL 以使用内置的 fakeredis。",
    },
    "refused": {
        "en": "Cannot connect to Redis at {where}: {detail}. Start the server or fix REDIS_URL, or unset REDIS_URL to use the built-in fakeredis.",
        "ru": "Не удаётся подключиться к Redis по адресу {where}: {detail}. Запустите сервер или исправьте REDIS_URL либо уберите REDIS_URL, чтобы работать со встроенным fakeredis.",
        "zh": "无法连接到 {where} 上的 Redis：{detail}。请启动服务器或修正 REDIS_URL，或者取消 REDIS_URL 以使用内置的 fakeredis。",
    },
    "timeout": {
        "en": "Redis at {where} did not answer within {seconds} s; check the host and port in REDIS_URL (a firewall may be dropping packets).",
        "ru": "Redis по адресу {where} не ответил за {seconds} с; проверьте хост и порт в REDIS_URL (пакеты может отбрасывать файрвол).",
        "zh": "{where} 上的 Redis 在 {seconds} 秒内没有响应；请检查 REDIS_URL 中的主机和端口（可能被防火墙丢弃了数据包）。",
    },
    "auth": {
        "en": "Redis at {where} refused the credentials: {detail}. Put the right user and password in REDIS_URL (redis://user:password@host:port/0).",
        "ru": "Redis по адресу {where} не принял учётные данные: {detail}. Укажите верные пользователя и пароль в REDIS_URL (redis://user:password@host:port/0).",
        "zh": "{where} 上的 Redis 拒绝了凭据：{detail}。请在 REDIS_URL 中填写正确的用户名和密码（redis://user:password@host:port/0）。",
    },
    "refused_command": {
        "en": "The course refuses to run {command} on a Redis server it did not start ({where}): it could destroy data that is not the course's. Use a private server (redis_course.servers.private_redis) for this demo.",
        "ru": "Курс не выполняет {command} на сервере Redis, который он не запускал сам ({where}): это может уничтожить чужие данные. Для такой демонстрации используйте собственный сервер курса (redis_course.servers.private_redis).",
        "zh": "课程不会在并非由它启动的 Redis 服务器（{where}）上执行 {command}：这可能破坏不属于课程的数据。这个演示请使用私有服务器（redis_course.servers.private_redis）。",
    },
    "no_lua": {
        "en": "fakeredis cannot run Lua scripts because the `lupa` package is missing; run `python3 run.py doctor` or reinstall with `pip install 'fakeredis[lua]'`.",
        "ru": "fakeredis не может выполнять Lua-скрипты: нет пакета `lupa`; запустите `python3 run.py doctor` или установите его командой `pip install 'fakeredis[lua]'`.",
        "zh": "fakeredis 无法运行 Lua 脚本，因为缺少 `lupa` 包；请运行 `python3 run.py doctor`，或执行 `pip install 'fakeredis[lua]'` 重新安装。",
    },
    "no_redis_server": {
        "en": "This needs the `redis-server` program to start a private Redis, and it is not installed; on Debian or Ubuntu run `sudo apt install redis-server` (on macOS `brew install redis`). The rest of the lesson works without it.",
        "ru": "Для этого нужна программа `redis-server`, чтобы запустить собственный Redis, а она не установлена; в Debian или Ubuntu выполните `sudo apt install redis-server` (в macOS — `brew install redis`). Остальная часть урока работает и без неё.",
        "zh": "这里需要用 `redis-server` 程序启动一个私有的 Redis，但系统中没有安装它；在 Debian 或 Ubuntu 上请运行 `sudo apt install redis-server`（macOS 上运行 `brew install redis`）。本课的其余部分不需要它。",
    },
    "server_start_failed": {
        "en": "The private redis-server on port {port} did not start: {detail}",
        "ru": "Собственный redis-server на порту {port} не запустился: {detail}",
        "zh": "端口 {port} 上的私有 redis-server 启动失败：{detail}",
    },
    "needs_real_redis": {
        "en": "⏭ This cell needs a real Redis server: {what} is not available on fakeredis. Set REDIS_URL (for example redis://127.0.0.1:6379/0) and run it again to see the output.",
        "ru": "⏭ Этой ячейке нужен настоящий сервер Redis: на fakeredis нет {what}. Задайте REDIS_URL (например, redis://127.0.0.1:6379/0) и выполните ячейку снова, чтобы увидеть результат.",
        "zh": "⏭ 这个单元格需要真正的 Redis 服务器：fakeredis 不支持 {what}。请设置 REDIS_URL（例如 redis://127.0.0.1:6379/0）后重新运行，即可看到输出。",
    },
}


def current_lang() -> str:
    lang = os.environ.get("COURSE_LANG", "").strip().lower()
    if not lang:
        try:
            lang = (locale.getlocale()[0] or "").lower()
        except ValueError:
            lang = ""
    for code in LANGS:
        if lang.startswith(code):
            return code
    return "en"


def msg(msg_id: str, lang: str | None = None, **fields: object) -> str:
    """Return message ``msg_id`` in ``lang`` (default: the reader's language), filled with ``fields``."""
    texts = MESSAGES[msg_id]
    return texts.get(lang or current_lang(), texts["en"]).format(**fields)

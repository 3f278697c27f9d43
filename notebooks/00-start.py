# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# # Your first counter
#
# Every notebook in this course starts the same way: `connect()` gives you a Redis client.
# Without `REDIS_URL` it is **fakeredis**, a Redis that lives inside this Python process;
# with `REDIS_URL` set it is your real server. The first line it prints tells you which.

# %% [markdown] lang="ru" translated="bee698588d81"
# # Ваш первый счётчик
#
# Каждый блокнот курса начинается одинаково: `connect()` возвращает клиент Redis.
# Без `REDIS_URL` это **fakeredis** — Redis, который живёт прямо в процессе Python;
# если `REDIS_URL` задан, это ваш настоящий сервер. Первая строка вывода говорит, какой именно.

# %% [markdown] lang="zh" translated="bee698588d81"
# # 你的第一个计数器
#
# 本课程的每个笔记本都以同样的方式开始：`connect()` 返回一个 Redis 客户端。没有设置 `REDIS_URL` 时，它连接的是 **fakeredis**——一个运行在当前 Python 进程内部的 Redis；设置了 `REDIS_URL` 时，连接的就是你真正的服务器。输出的第一行会告诉你用的是哪一个。

# %% tags=["varies"]
from redis_course import connect, needs_real_redis

r = connect(verbose=True)

# %% [markdown] lang="en"
# Every key the course writes starts with this run's prefix, so on a shared server it never
# touches your own keys. `r.key("views")` builds the full name; lessons print the short one.

# %% [markdown] lang="ru" translated="1bcfa17cbfd0"
# Все ключи, которые записывает курс, начинаются с префикса текущего запуска, поэтому на общем сервере
# он никогда не трогает ваши ключи. `r.key("views")` строит полное имя; уроки печатают короткое.

# %% [markdown] lang="zh" translated="1bcfa17cbfd0"
# 课程写入的每个键都以本次运行的前缀开头，所以在共享服务器上绝不会碰到你自己的键。`r.key("views")` 生成完整的键名；各课打印的是去掉前缀的短名。

# %%
views = r.key("views")
print(r.unprefixed(views))
print(r.incr(views))
print(r.incr(views))
print(r.get(views))

# %% [markdown] lang="en"
# `INCR` returns the new value as an integer; `GET` returns it as a string, because a counter's
# value is a Redis string. Inside, a real server keeps such a string as a machine integer, and
# `OBJECT ENCODING` shows it (`int`). Some commands exist only on a real server; such cells say so
# on fakeredis instead of failing:

# %% [markdown] lang="ru" translated="54381a7f341f"
# `INCR` возвращает новое значение целым числом, а `GET` — строкой: значение счётчика в Redis —
# это строка. Внутри настоящий сервер хранит такую строку как машинное целое, и `OBJECT ENCODING`
# это показывает (`int`). Некоторые команды есть только у настоящего сервера; на fakeredis такие
# ячейки сообщают об этом, а не падают:

# %% [markdown] lang="zh" translated="54381a7f341f"
# `INCR` 以整数返回自增后的新值，`GET` 则返回字符串：计数器的值在 Redis 中是字符串类型。真正的服务器在内部把这样的字符串存成机器整数，`OBJECT ENCODING` 会显示这一点（`int`）。有些命令只有真正的服务器才支持；在 fakeredis 上，这类单元格会给出说明，而不是报错：

# %% tags=["varies"]
if needs_real_redis(r, "OBJECT ENCODING"):
    print(r.object("encoding", views))

# %% [markdown] lang="en"
# When you are done, `r.cleanup()` deletes this run's keys and nothing else.

# %% [markdown] lang="ru" translated="99a28ae1f1a6"
# В конце `r.cleanup()` удаляет ключи этого запуска — и только их.

# %% [markdown] lang="zh" translated="99a28ae1f1a6"
# 用完之后，`r.cleanup()` 会删除本次运行写入的键，且只删除这些键。

# %%
print(r.cleanup())

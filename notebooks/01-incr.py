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
# # INCR and its family
#
# Every claim of the lesson, executed. The notebook runs on fakeredis by default and on your server
# when `REDIS_URL` is set. Where the two really answer differently, the text says so and the next
# cell shows a form that agrees on both.

# %% [markdown] lang="ru" translated="a050810d2d07"
# # INCR и его семейство
#
# Все утверждения урока — в виде выполняемого кода. По умолчанию блокнот работает на fakeredis,
# а если задан `REDIS_URL` — на вашем сервере. Там, где ответы действительно различаются, текст
# об этом предупреждает, а следующая ячейка показывает вариант, который даёт одинаковый результат на обоих.

# %% [markdown] lang="zh" translated="a050810d2d07"
# # INCR 及其同族命令
#
# 本课的每个结论都在这里实际运行一遍。笔记本默认运行在 fakeredis 上，设置了 `REDIS_URL` 时则运行在你的服务器上。两者的回复确实不同的地方，文字会明确指出，紧随其后的单元格会给出在两边结果一致的写法。

# %% tags=["varies"]
from redis_course import connect, needs_real_redis
from redis_course.l10n import _, say
from redis_course.tables import print_table

r = connect(verbose=True)

# %% [markdown] lang="en"
# A small helper prints what a call returned, or the exception redis-py raised for an error reply.

# %% [markdown] lang="ru" translated="13ac915e3525"
# Небольшая вспомогательная функция печатает результат вызова или исключение, которое redis-py
# выбросил в ответ на ошибку сервера.

# %% [markdown] lang="zh" translated="13ac915e3525"
# 一个小辅助函数：打印调用的返回值，或者 redis-py 针对错误回复抛出的异常。

# %%
import math
import threading

import redis


def attempt(fn, *args, **kwargs):
    """Call fn; print its result, or the class and message of the exception it raised."""
    try:
        result = fn(*args, **kwargs)
    except (redis.exceptions.RedisError, ValueError) as e:
        print(f"{type(e).__name__}: {e}")
    else:
        print(repr(result))


# %% [markdown] lang="en"
# ## INCR returns the new value
#
# A missing key counts as 0, so the first `INCR` returns 1. `GET` returns the value as a string: it is
# a Redis string (a real server keeps it as a machine integer inside, shown further down).

# %% [markdown] lang="ru" translated="342c168d95ad"
# ## INCR возвращает новое значение
#
# Отсутствующий ключ считается нулём, поэтому первый `INCR` возвращает 1. `GET` возвращает значение
# строкой: это строка Redis (внутри настоящий сервер хранит её как машинное целое, это показано ниже).

# %% [markdown] lang="zh" translated="342c168d95ad"
# ## INCR 返回新值
#
# 不存在的键按 0 计算，所以第一次 `INCR` 返回 1。`GET` 以字符串返回这个值：它是 Redis 字符串（真正的服务器在内部把它存成机器整数，后面会展示）。

# %%
visits = r.key("visits")
print(r.exists(visits))
print(r.incr(visits))
print(r.incr(visits))
print(repr(r.get(visits)), r.type(visits))

# %% [markdown] lang="en"
# The reply is the value *your* increment produced, so it can serve as a unique id.
# Compare that with reading, adding in Python and writing back: two clients that read before
# either writes both write the same number, and one increment is lost.

# %% [markdown] lang="ru" translated="b023a91644bb"
# Ответ — это значение, которое дал именно *ваш* инкремент, поэтому он годится как
# уникальный идентификатор. Сравните с «прочитать, прибавить в Python, записать»: если два клиента
# прочитали значение до того, как кто-то из них записал, оба запишут одно и то же число, и один
# инкремент потеряется.

# %% [markdown] lang="zh" translated="b023a91644bb"
# 回复是*你这一次*自增得到的值，因此可以直接用作唯一 ID。对比“先读、在 Python 里加一、再写回”：如果两个客户端都在对方写入之前读取了值，它们会写入同一个数字，其中一次自增就丢失了。

# %%
ids = r.key("ids", "order")
print([r.incr(ids) for _ in range(3)])

lost = r.key("lost")
r.set(lost, 0)
seen_by_a = int(r.get(lost))   # client A reads 0
seen_by_b = int(r.get(lost))   # client B reads 0 before A writes
r.set(lost, seen_by_a + 1)     # A writes 1
r.set(lost, seen_by_b + 1)     # B writes 1 as well
print(r.get(lost))             # two increments, one counted

# %% [markdown] lang="en"
# The same with real concurrency: four threads, 300 increments each. With `GET` + `SET` the total
# depends on how the threads interleave (it changes from run to run); with `INCR` it is always 1200.

# %% [markdown] lang="ru" translated="5d38acbe86ea"
# То же самое при настоящем конкурентном доступе: четыре потока по 300 инкрементов. С `GET` + `SET` итог
# зависит от того, как чередуются потоки (и меняется от запуска к запуску); с `INCR` он всегда 1200.

# %% [markdown] lang="zh" translated="5d38acbe86ea"
# 换成真正的并发：四个线程，每个自增 300 次。用 `GET` + `SET` 时，结果取决于线程的交错执行顺序（每次运行都可能不同）；用 `INCR` 时总是 1200。

# %% tags=["varies"]
def race(step, key, threads=4, times=300):
    r.delete(key)
    workers = [threading.Thread(target=lambda: [step(key) for _ in range(times)]) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return int(r.get(key))


def get_then_set(key):
    r.set(key, int(r.get(key) or 0) + 1)


print("GET + SET:", race(get_then_set, r.key("race", "getset")))
print("INCR:     ", race(r.incr, r.key("race", "incr")))

# %%
print(race(r.incr, r.key("race", "incr")) == 1200)

# %% [markdown] lang="en"
# ### Unique while the server remembers
#
# "No two clients get the same reply" holds while the server keeps every increment it
# acknowledged. A restart that reloads an older state hands the same ids out again. A private
# `redis-server` with its default persistence (snapshots only) hands out ids 1 to 150; a snapshot
# is taken after 100 (as the save rules would, some time), then the server is killed with SIGKILL
# and started again. The same with AOF:

# %% [markdown] lang="ru" translated="1b6b40ec8df9"
# ### Уникальны, пока сервер помнит
#
# «Двум клиентам не достанется один и тот же ответ» — это верно, пока сервер хранит каждый
# подтверждённый инкремент. Перезапуск, который загружает более старое состояние, раздаёт те же
# идентификаторы ещё раз. Приватный `redis-server` с настройками сохранения по умолчанию (только
# снимки) раздаёт идентификаторы с 1 по 150; после сотого делается снимок (как сделали бы правила
# `save` — когда-нибудь), затем сервер убивают SIGKILL и запускают снова. То же самое с AOF:

# %% [markdown] lang="zh" translated="1b6b40ec8df9"
# ### 只在服务器记得的时候唯一
#
# “不会有两个客户端拿到同一个回复”，前提是服务器保留了它确认过的每一次自增。一旦重启后加载的是更早的状态，同样的 ID 就会再发一次。一个使用默认持久化配置（只有快照）的私有 `redis-server` 发出 ID 1 到 150；在第 100 个之后做一次快照（就像 save 规则迟早会做的那样），然后用 SIGKILL 杀掉服务器再重新启动。再用 AOF 做同样的实验：

# %%
from redis_course.lessons import ids as idgen
from redis_course.lessons import show
from redis_course import redis_server_binary

if redis_server_binary() is None:
    print(_("redis-server is not installed here: see the lesson page for the results."))
else:
    id_rows = []
    for mode in ("default", "aof-everysec", "aof-always"):
        run = idgen.reissued_after_restart(mode)
        id_rows.append((mode, run["handed_out"], run["survived"], run["next_id"], run["reissued"]))
    print_table([_("persistence"), _("handed out"), _("survived"), _("next INCR"), _("handed out twice")], id_rows)

# %% [markdown] lang="en"
# With snapshots only, ids 101 to 150 are handed out a second time. AOF kept them here, because
# SIGKILL stops the process, not the kernel: a power cut can still take the last second with
# `everysec` (lesson 05), so can a SIGKILL while the disk lags behind (Redis then holds the log back
# in its own memory for up to two seconds), and a failover can lose acknowledged writes whatever
# `appendfsync` says (lesson 06). Durable ids come from a database sequence, or from an **epoch
# prefix**: every Redis process (its `run_id`, read in the same `MULTI` as the `INCR`) gets a new
# epoch number from a database, so a number handed out twice carries two different prefixes:

# %% [markdown] lang="ru" translated="d2874684cbc4"
# Только со снимками идентификаторы со 101 по 150 раздаются второй раз. AOF их здесь сохранил,
# потому что SIGKILL останавливает процесс, а не ядро: при отключении питания `everysec` всё ещё
# может потерять последнюю секунду (урок 05), как и SIGKILL, пока диск не успевает (тогда Redis
# до двух секунд держит журнал у себя в памяти), а переключение на реплику может потерять
# подтверждённые записи при любом `appendfsync` (урок 06). Надёжные идентификаторы дают
# последовательность в базе данных или **префикс эпохи**: каждый процесс Redis (его `run_id`,
# прочитанный в том же `MULTI`, что и `INCR`) получает из базы данных новый номер эпохи, и число,
# выданное дважды, оказывается с двумя разными префиксами:

# %% [markdown] lang="zh" translated="d2874684cbc4"
# 只有快照时，ID 101 到 150 被第二次发出。这里 AOF 保住了它们，因为 SIGKILL 停掉的是进程而不是内核：遇到断电时，`everysec` 仍可能丢掉最后一秒（第 05 课）；磁盘跟不上时，SIGKILL 同样会丢（此时 Redis 会把日志在自己的内存里最多压住两秒）；而故障转移无论 `appendfsync` 怎么设置，都可能丢掉已确认的写入（第 06 课）。持久可靠的 ID 来自数据库序列，或者来自**纪元前缀**（epoch prefix）：每个 Redis 进程（它的 `run_id`，与 `INCR` 在同一个 `MULTI` 中读取）都从数据库领取一个新的纪元编号，于是被发了两次的数字带着两个不同的前缀：

# %%
import tempfile
from pathlib import Path

show(idgen.EpochIds)
if redis_server_binary() is not None:
    with tempfile.TemporaryDirectory() as tmp:
        print(idgen.epoch_ids_across_restart(str(Path(tmp) / "epochs.db")))
        say(_("database sequence:"), [idgen.sequence_id(str(Path(tmp) / "ids.db")) for _ in range(3)])

# %% [markdown] lang="en"
# ## A signed 64-bit integer
#
# The range is −2⁶³ … 2⁶³ − 1. An increment past either end is refused and the value stays.

# %% [markdown] lang="ru" translated="b3c270479d7d"
# ## Знаковое 64-битное целое
#
# Диапазон — от −2⁶³ до 2⁶³ − 1. Инкремент за его границу отклоняется, а значение не меняется.

# %% [markdown] lang="zh" translated="b3c270479d7d"
# ## 有符号 64 位整数
#
# 取值范围是 −2⁶³ … 2⁶³ − 1。越过任意一端的自增都会被拒绝，值保持不变。

# %%
big = r.key("big")
r.set(big, 2**63 - 2)
attempt(r.incr, big)
attempt(r.incr, big)
print(r.get(big))

low = r.key("low")
r.set(low, -(2**63))
attempt(r.decr, low)
print(r.get(low))

# %% [markdown] lang="en"
# Only canonical base-10 integers are accepted: no spaces, no leading zeros, no plus sign, no
# decimal point or exponent, nothing out of range. All get the same reply.

# %% [markdown] lang="ru" translated="9738e8e05ade"
# Принимаются только целые числа в канонической десятичной записи: без пробелов, ведущих нулей,
# знака плюс, десятичной точки и экспоненты, и только в пределах диапазона. Всё остальное получает
# один и тот же ответ.

# %% [markdown] lang="zh" translated="9738e8e05ade"
# 只接受规范的十进制整数：不能有空格、前导零、加号、小数点或指数，也不能超出范围。所有这些情况得到的都是同一个错误回复。

# %%
n = r.key("n")
for text in ["41", "-7", "abc", "", " 1", "1 ", "007", "+1", "-0", "1.5", "1e3", "9223372036854775808"]:
    r.set(n, text)
    print(f"{text!r:24}", end=" ")
    attempt(r.incr, n)

# %% [markdown] lang="en"
# The argument of `INCRBY` follows the same rule. A value of another type gets `WRONGTYPE`.
# All of these are `redis.exceptions.ResponseError`; redis-py drops the `ERR ` prefix.
# `None` or `True` as an increment never reach the server: redis-py raises `DataError` itself.

# %% [markdown] lang="ru" translated="334900596823"
# Аргумент `INCRBY` подчиняется тому же правилу. Значение другого типа даёт `WRONGTYPE`.
# Всё это — `redis.exceptions.ResponseError`; префикс `ERR ` redis-py отбрасывает.
# `None` или `True` в качестве приращения до сервера не доходят: redis-py сам выбрасывает `DataError`.

# %% [markdown] lang="zh" translated="334900596823"
# `INCRBY` 的参数遵循同样的规则。其他类型的值会得到 `WRONGTYPE`。这些都是 `redis.exceptions.ResponseError`；redis-py 会去掉 `ERR ` 前缀。把 `None` 或 `True` 作为增量时，请求根本不会发到服务器：redis-py 自己就会抛出 `DataError`。

# %%
r.set(n, 10)
attempt(r.incrby, n, 1.5)
attempt(r.incrby, n, "2")
queue = r.key("queue")
r.rpush(queue, "job1")
attempt(r.incr, queue)
attempt(r.incrby, n, None)
attempt(r.incrby, n, True)
print(r.get(n), r.lrange(queue, 0, -1))

# %% [markdown] lang="en"
# ## Integer encoding (real server only)
#
# The server keeps a canonical 64-bit integer as a machine integer. `OBJECT ENCODING` shows it;
# fakeredis does not implement `OBJECT`, so on fakeredis this cell only explains itself.

# %% [markdown] lang="ru" translated="2e61454f5e8e"
# ## Целочисленная кодировка (только настоящий сервер)
#
# Каноническое 64-битное целое сервер хранит как машинное целое. Это видно в `OBJECT ENCODING`;
# в fakeredis команды `OBJECT` нет, поэтому на fakeredis ячейка лишь объясняет, почему она пропущена.

# %% [markdown] lang="zh" translated="2e61454f5e8e"
# ## 整数编码（仅真实服务器）
#
# 服务器把规范的 64 位整数直接存成机器整数，`OBJECT ENCODING` 可以看到这一点；fakeredis 没有实现 `OBJECT`，所以在 fakeredis 上这个单元格只会说明跳过的原因。

# %% tags=["varies"]
if needs_real_redis(r, "OBJECT ENCODING"):
    e = r.key("e")
    for value in ["10", "-5", "9223372036854775807", "007", "10.5", "123456789012345678901"]:
        r.set(e, value)
        print(f"{value!r:24} {r.object('encoding', e)}")
    r.delete(e)
    r.incr(e)
    say(_("INCR on a missing key:"), r.object("encoding", e))
    r.append(e, "2")
    say(_("after APPEND:"), r.object("encoding", e))
    r.incr(e)
    say(_("after the next INCR:"), r.object("encoding", e))

# %% [markdown] lang="en"
# ## DECR, INCRBY, DECRBY
#
# Same rules; `DECR` has no floor.

# %% [markdown] lang="ru" translated="bd30a913a2b7"
# ## DECR, INCRBY, DECRBY
#
# Правила те же; у `DECR` нет нижней границы.

# %% [markdown] lang="zh" translated="bd30a913a2b7"
# ## DECR、INCRBY、DECRBY
#
# 规则相同；`DECR` 没有下限。

# %%
stock = r.key("stock")
print(r.decr(stock), r.incrby(stock, 10), r.decrby(stock, 3), r.incrby(stock, -6))

# %% [markdown] lang="en"
# A common answer when a limit matters: check the returned value and undo your own step. It never
# sells a unit twice, but it has a crash window and refuses valid requests under contention, so
# for money the course uses one script instead (see "Money: check and take in one step" below):

# %% [markdown] lang="ru" translated="74ded9a16aff"
# Распространённый ответ, когда граница важна: проверять возвращённое значение и откатывать
# собственный шаг. Одну единицу дважды так не продать, но у этого способа есть окно для сбоя, и при
# конкуренции он отказывает в законных запросах, поэтому для денег курс берёт один скрипт (см. ниже
# «Деньги: проверить и списать за один шаг»):

# %% [markdown] lang="zh" translated="74ded9a16aff"
# 需要下限时，常见的做法是：检查返回值，必要时撤销自己这一步。这样不会把同一件商品卖两次，但它有崩溃窗口，在竞争下还会拒绝本该通过的请求，所以涉及金钱时，本课程改用一个脚本（见下文“金钱：一步完成检查和扣减”）：

# %%
r.set(stock, 2)
for order in range(3):
    left = r.decr(stock)
    if left < 0:
        r.incr(stock)  # undo our own step, refuse the order
        print(_("order {order}: sold out", order=order))
    else:
        print(_("order {order}: ok, {left} left", order=order, left=left))
print(r.get(stock))

# %% [markdown] lang="en"
# **Redis and fakeredis differ here.** `DECRBY key -9223372036854775808`: Redis 7.0 replies
# "decrement would overflow"; fakeredis replies "increment or decrement would overflow", and on a
# key holding −2⁶³ it accepts the command and stores 0.

# %% [markdown] lang="ru" translated="7b9266fa0e93"
# **Здесь Redis и fakeredis расходятся.** `DECRBY key -9223372036854775808`: Redis 7.0 отвечает
# «decrement would overflow»; fakeredis — «increment or decrement would overflow», а на ключе со
# значением −2⁶³ и вовсе принимает команду и записывает 0.

# %% [markdown] lang="zh" translated="7b9266fa0e93"
# **这里 Redis 与 fakeredis 不一致。** `DECRBY key -9223372036854775808`：Redis 7.0 回复“decrement would overflow”；fakeredis 回复“increment or decrement would overflow”，而且当键的值为 −2⁶³ 时，它甚至会接受这条命令并存入 0。

# %% tags=["backend-differs"]
m = r.key("m")
attempt(r.decrby, m, -(2**63))
r.set(m, -(2**63))
attempt(r.decrby, m, -(2**63))

# %% [markdown] lang="en"
# What both agree on: on a missing key it is an overflow error. Use `INCRBY` with a signed amount instead.

# %% [markdown] lang="ru" translated="b5787cc4829c"
# В чём они сходятся: на отсутствующем ключе это ошибка переполнения. Вместо такого вызова используйте
# `INCRBY` со знаковым приращением.

# %% [markdown] lang="zh" translated="b5787cc4829c"
# 两者一致的地方：在不存在的键上，这是一个溢出错误。需要加减有符号的数量时，请改用 `INCRBY`。

# %%
r.delete(m)
try:
    r.decrby(m, -(2**63))
except redis.exceptions.ResponseError as e:
    print(type(e).__name__, "would overflow" in str(e))
print(r.incrby(m, -(2**63)))

# %% [markdown] lang="en"
# ## INCRBYFLOAT
#
# With values that are exact in binary both backends print the same. The reply is a string,
# which redis-py converts to a `float`; exponents are accepted, infinity and NaN are not.

# %% [markdown] lang="ru" translated="4faa10d4d7fd"
# ## INCRBYFLOAT
#
# Для значений, точно представимых в двоичном виде, оба бэкенда печатают одно и то же. Ответ —
# строка, которую redis-py превращает во `float`; экспонента допускается, бесконечность и NaN — нет.

# %% [markdown] lang="zh" translated="4faa10d4d7fd"
# ## INCRBYFLOAT
#
# 对于能用二进制精确表示的值，两个后端输出完全相同。回复是字符串，redis-py 会把它转换成 `float`；输入可以带指数，但不接受无穷大和 NaN。

# %%
price = r.key("price")
r.set(price, "10.50")
print(r.incrbyfloat(price, 0.25), r.incrbyfloat(price, -5))
x = r.key("x")
r.set(x, "5.0e3")
print(r.incrbyfloat(x, 200), r.get(x), r.incrbyfloat(x, "1.5e2"), r.incr(x))
attempt(r.incrbyfloat, x, "inf")
attempt(r.incrbyfloat, x, "nan")
attempt(r.incrbyfloat, x, "abc")

# %% [markdown] lang="en"
# **Redis and fakeredis differ here.** Redis adds in C `long double` (80-bit on x86-64) and prints
# 17 digits after the decimal point, trailing zeros dropped; fakeredis adds in a Python `float`. Neither is exact.

# %% [markdown] lang="ru" translated="cfcb2aba97d3"
# **Здесь Redis и fakeredis расходятся.** Redis складывает в C `long double` (80 бит на x86-64)
# и печатает 17 знаков после запятой, отбрасывая нули в конце; fakeredis складывает в Python `float`. Ни тот, ни другой результат не точен.

# %% [markdown] lang="zh" translated="cfcb2aba97d3"
# **这里 Redis 与 fakeredis 不一致。** Redis 用 C 的 `long double`（在 x86-64 上为 80 位）做加法，输出小数点后 17 位，再去掉末尾的 0；fakeredis 用 Python 的 `float` 做加法。两者都不精确。

# %% tags=["backend-differs"]
f = r.key("f")
r.incrbyfloat(f, 0.1)
r.incrbyfloat(f, 0.2)
print(r.get(f))
r.set(f, 1000)
r.incrbyfloat(f, 0.1)
print(r.get(f))
r.delete(f)
for i in range(10):
    r.incrbyfloat(f, 0.1)
print(r.get(f))

# %% [markdown] lang="en"
# Compared as numbers, both are close to what you meant, and that is all you can rely on:

# %% [markdown] lang="ru" translated="69aa448141c6"
# Если сравнивать как числа, оба близки к задуманному — и это всё, на что можно полагаться:

# %% [markdown] lang="zh" translated="69aa448141c6"
# 按数值比较时，两者都接近你期望的结果——这也是你唯一能依赖的一点：

# %%
r.delete(f)
r.incrbyfloat(f, 0.1)
r.incrbyfloat(f, 0.2)
print(math.isclose(float(r.get(f)), 0.3))
r.set(f, 1000)
r.incrbyfloat(f, 0.1)
print(math.isclose(float(r.get(f)), 1000.1))

# %% [markdown] lang="en"
# **Redis and fakeredis differ here too.** Redis parses the increment with `strtold`: it accepts
# `1e400` (beyond a double, but within `long double`) and even hexadecimal `0x10`; fakeredis refuses both.
# `HINCRBYFLOAT` with `inf` is refused by both, with different texts.

# %% [markdown] lang="ru" translated="bf3ddb3b84c0"
# **И здесь Redis и fakeredis расходятся.** Redis разбирает приращение функцией `strtold`: принимает
# `1e400` (за пределами double, но в пределах `long double`) и даже шестнадцатеричное `0x10`;
# fakeredis отклоняет и то и другое. `HINCRBYFLOAT` с `inf` отклоняют оба, но с разным текстом.

# %% [markdown] lang="zh" translated="bf3ddb3b84c0"
# **这里两者同样不一致。** Redis 用 `strtold` 解析增量：它接受 `1e400`（超出 double 但在 `long double` 范围内），甚至接受十六进制的 `0x10`；fakeredis 两者都拒绝。对 `HINCRBYFLOAT` 传入 `inf`，两边都会拒绝，但错误文本不同。

# %% tags=["backend-differs"]
huge = r.key("huge")
attempt(r.incrbyfloat, huge, "1e400")
print(len(r.get(huge) or ""))
hexa = r.key("hexa")
attempt(r.incrbyfloat, hexa, "0x10")
attempt(r.hincrbyfloat, r.key("h"), "f", "inf")

# %% [markdown] lang="en"
# What both agree on: infinity itself is refused, and so is a value that is not a number.

# %% [markdown] lang="ru" translated="a19bc7169b48"
# В чём они сходятся: сама бесконечность отклоняется, как и значение, которое не является числом.

# %% [markdown] lang="zh" translated="a19bc7169b48"
# 两者一致的地方：无穷大本身会被拒绝，不是数字的值也会被拒绝。

# %%
for bad in ["inf", "-inf", "nan", "ten"]:
    try:
        r.incrbyfloat(r.key("g"), bad)
    except redis.exceptions.ResponseError as e:
        print(bad, type(e).__name__)
print(r.exists(r.key("g")))

# %% [markdown] lang="en"
# ## Money in integer cents
#
# Integers are exact on every backend and every CPU. Parse user input with `Decimal`.

# %% [markdown] lang="ru" translated="56ec69cff9d2"
# ## Деньги — в целых копейках
#
# Целые числа точны на любом бэкенде и любом процессоре. Пользовательский ввод разбирайте через `Decimal`.

# %% [markdown] lang="zh" translated="56ec69cff9d2"
# ## 用整数“分”记账
#
# 整数在任何后端、任何 CPU 上都是精确的。解析用户输入时请使用 `Decimal`。

# %%
from decimal import Decimal


def to_cents(text: str) -> int:
    cents = Decimal(text) * 100
    if cents != cents.to_integral_value():
        raise ValueError(_("{text!r} has more than two decimal places", text=text))
    return int(cents)


balance = r.key("balance", 42)
for amount in ["19.99", "0.10", "0.20"] * 10:
    r.incrby(balance, to_cents(amount))
cents = int(r.get(balance))
print(cents, f"{cents // 100}.{cents % 100:02d}")
attempt(to_cents, "0.001")

# %% [markdown] lang="en"
# ## Money: check and take in one step
#
# "`DECRBY`, and `INCRBY` it back if the balance went negative" is two commands. A process that
# dies between them (a deploy, an OOM kill, a lost connection) leaves the money taken, although the
# withdrawal was refused. Here the balance is 100.00 and a withdrawal of 150.00 stops after its
# first step:

# %% [markdown] lang="ru" translated="4d4205059e72"
# ## Деньги: проверить и списать за один шаг
#
# «`DECRBY`, а если баланс ушёл в минус — вернуть через `INCRBY`» — это две команды. Процесс,
# который умирает между ними (выкладка, OOM killer, оборванное соединение), оставляет деньги
# списанными, хотя в списании было отказано. Здесь на балансе 100.00, а списание 150.00
# останавливается после первого шага:

# %% [markdown] lang="zh" translated="4d4205059e72"
# ## 金钱：一步完成检查和扣减
#
# “先 `DECRBY`，如果余额变成负数再用 `INCRBY` 加回去”是两条命令。进程如果在两条命令之间挂掉（发布新版本、被 OOM 杀掉、连接断开），钱就被扣走了，尽管这次取款其实被拒绝了。这里余额是 100.00，一笔 150.00 的取款在第一步之后就停了：

# %%
from redis_course.lessons import money
from redis_course.lessons import ratelimit as rl

account = r.key("account", 7)
r.set(account, 10000)
steps = money.withdraw_decr_first(r, account, 15000)
print(next(steps))
steps.close()                      # the process dies before its INCRBY
say(_("balance:"), r.get(account))

# %% [markdown] lang="en"
# Under contention it refuses valid withdrawals. Balance 100.00: A asks for 120.00 (too much),
# B for 50.00 (covered). A's `DECRBY` lands first, so B sees −70.00 and is refused; then both give
# back:

# %% [markdown] lang="ru" translated="e99ee4925377"
# При конкуренции он отказывает в законных списаниях. Баланс 100.00: A просит 120.00 (слишком
# много), B — 50.00 (хватает). `DECRBY` клиента A приходит первым, поэтому B видит −70.00 и получает
# отказ; потом оба возвращают свои суммы:

# %% [markdown] lang="zh" translated="e99ee4925377"
# 在竞争下，它会拒绝本该通过的取款。余额 100.00：A 要取 120.00（超出余额），B 要取 50.00（余额足够）。A 的 `DECRBY` 先到，于是 B 看到的是 −70.00 并被拒绝；随后两人都把钱加回去：

# %%
r.set(account, 10000)
print(rl.interleave({"A": money.withdraw_decr_first(r, account, 12000),
                     "B": money.withdraw_decr_first(r, account, 5000)}, "ABABAB"))
say(_("balance:"), r.get(account))

# %% [markdown] lang="en"
# One Lua script reads, checks and decrements with nothing in between (lesson 02 explains scripts):
# no second step to skip, nothing written on a refusal, B's withdrawal goes through:

# %% [markdown] lang="ru" translated="0e200fab3f67"
# Один Lua-скрипт читает, проверяет и уменьшает, и между этими шагами ничего не происходит (про
# скрипты — урок 02): нет второго шага, который можно пропустить, при отказе ничего не пишется, и
# списание B проходит:

# %% [markdown] lang="zh" translated="0e200fab3f67"
# 一个 Lua 脚本完成读取、检查和扣减，中间不会插入任何东西（脚本的细节见第 02 课）：没有可以被跳过的第二步，拒绝时什么都不写，B 的取款顺利通过：

# %%
show(money.WITHDRAW)
r.set(account, 10000)
print(money.withdraw(r, account, 12000), money.withdraw(r, account, 5000), r.get(account))

# %% [markdown] lang="en"
# A retry is the last trap: after a timeout, redis-py (6.0 and later, by default) sends the command
# again by itself (lesson 06 measures it), and a `DECRBY` that had already run takes the money
# twice. A request id makes the withdrawal happen once; the retry gets the first answer:

# %% [markdown] lang="ru" translated="cea603708a2f"
# Последняя ловушка — повтор: после тайм-аута redis-py (начиная с 6.0, по умолчанию) сам отправляет
# команду ещё раз (урок 06 это измеряет), и `DECRBY`, который уже выполнился, списывает деньги дважды. Идентификатор запроса
# делает списание однократным; повтор получает первый ответ:

# %% [markdown] lang="zh" translated="cea603708a2f"
# 最后一个陷阱是重试：超时之后，redis-py（6.0 及以后版本默认如此）会自行再次发送命令（第 06 课做了测量），而已经执行过的 `DECRBY` 就会把钱扣两次。给请求一个 ID，取款就只会发生一次；重试拿到的是第一次的结果：

# %%
show(money.WITHDRAW_ONCE)
r.set(account, 10000)
print([money.withdraw(r, account, 3000) for _ in range(2)], r.get(account))
r.set(account, 10000)
print([money.withdraw_once(r, account, 3000, "req-81f2") for _ in range(2)], r.get(account))

# %% [markdown] lang="en"
# ## Counters in a hash

# %% [markdown] lang="ru" translated="7346192d4408"
# ## Счётчики в хеше

# %% [markdown] lang="zh" translated="7346192d4408"
# ## 哈希中的计数器

# %%
post = r.key("post", 17)
print(r.hincrby(post, "views", 1), r.hincrby(post, "views", 1), r.hincrby(post, "likes", 1))
print(r.hgetall(post))
r.hset(post, "rating", "4.5")
attempt(r.hincrby, post, "rating", 1)
print(r.hincrbyfloat(post, "rating", 0.25))
r.hset(post, "max", 2**63 - 1)
attempt(r.hincrby, post, "max", 1)

# %% [markdown] lang="en"
# ## Take the value and reset it
#
# `GETSET` (deprecated since 6.2), `SET ... GET` and `GETDEL` read and replace in one step.
# `GETSET` and a plain `SET ... GET` drop the key's TTL; `KEEPTTL` keeps it.

# %% [markdown] lang="ru" translated="c2de2f034ef6"
# ## Забрать значение и обнулить
#
# `GETSET` (устарела с 6.2), `SET ... GET` и `GETDEL` читают и заменяют за один шаг.
# `GETSET` и обычный `SET ... GET` снимают TTL ключа; `KEEPTTL` его сохраняет.

# %% [markdown] lang="zh" translated="c2de2f034ef6"
# ## 取走值并清零
#
# `GETSET`（自 6.2 起已弃用）、`SET ... GET` 和 `GETDEL` 都在一步之内完成读取和替换。`GETSET` 和普通的 `SET ... GET` 会清除键的 TTL；加上 `KEEPTTL` 则会保留。

# %%
hits = r.key("hits")
r.incrby(hits, 3)
print(r.getset(hits, 0), r.get(hits))
r.incr(hits)
print(r.set(hits, 0, get=True), r.get(hits))
r.incr(hits)
print(r.getdel(hits), r.get(hits), r.getdel(hits))

r.set(hits, 5, ex=100)
print(r.getset(hits, 0), r.ttl(hits))
r.set(hits, 5, ex=100)
print(r.set(hits, 0, get=True, keepttl=True), r.ttl(hits) > 0)
attempt(r.getdel, queue)

# %% [markdown] lang="en"
# Why not `GET` then `DEL`? Increments that land between the two commands vanish. Here another
# client's increment arrives in the gap:

# %% [markdown] lang="ru" translated="33f07429f8f0"
# Почему не `GET`, а потом `DEL`? Инкременты, пришедшие между двумя командами, пропадают. Здесь
# инкремент другого клиента попадает в этот промежуток:

# %% [markdown] lang="zh" translated="33f07429f8f0"
# 为什么不能先 `GET` 再 `DEL`？落在两条命令之间的自增会凭空消失。下面另一个客户端的自增恰好落在这个间隙里：

# %%
r.set(hits, 7)
taken = int(r.get(hits))   # we read 7
r.incr(hits)               # another client counts one more view
r.delete(hits)             # and we delete it with ours
print(taken, r.get(hits))  # 7 moved, 1 view lost

r.set(hits, 7)
taken = int(r.getdel(hits))
r.incr(hits)               # arrives after GETDEL: starts the next period
print(taken, r.get(hits))  # 7 moved, 1 kept

# %% [markdown] lang="en"
# Clean up this run's keys.

# %% [markdown] lang="ru" translated="c1216626d975"
# Удаляем ключи этого запуска.

# %% [markdown] lang="zh" translated="c1216626d975"
# 清理本次运行写入的键。

# %%
print(r.cleanup() > 0)

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
# # Atomicity: lost updates, transactions and scripts
#
# In this notebook several clients update the same counter at once. First the naive way,
# `GET` then `SET`, which loses updates; then `INCR`, which never does. Then the tools for
# operations that no single command covers: `MULTI`/`EXEC`, `WATCH` and Lua scripts.

# %% [markdown] lang="ru" translated="db9a9ff2f165"
# # Атомарность: потерянные обновления, транзакции и скрипты
#
# В этом блокноте несколько клиентов одновременно меняют один и тот же счётчик. Сначала наивно —
# `GET`, потом `SET`, и обновления теряются; затем через `INCR`, который не теряет ничего.
# Дальше — инструменты для операций, которые не укладываются в одну команду: `MULTI`/`EXEC`,
# `WATCH` и Lua-скрипты.

# %% [markdown] lang="zh" translated="db9a9ff2f165"
# # 原子性：丢失更新、事务与脚本
#
# 在这个笔记本里，多个客户端同时修改同一个计数器。先用最朴素的方式——先 `GET` 再 `SET`，结果会丢失更新；再用 `INCR`，一次都不会丢。然后介绍单条命令无法覆盖的操作该用什么：`MULTI`/`EXEC`、`WATCH` 和 Lua 脚本。

# %% tags=["varies"]
# %matplotlib inline
import threading
import time

import matplotlib.pyplot as plt
import redis

from redis_course import charts, connect, needs_real_redis
from redis_course.l10n import _, say
from redis_course.tables import print_table

r = connect(verbose=True)

# %% [markdown] lang="en"
# ## N clients, one counter
#
# Each client is a thread with its own connection (`connect()` again gives a new client on the
# same data). Every client adds 1 to the counter `K` times. `get_then_set` reads the value, adds 1
# in Python and writes it back. Between the read and the write it sleeps for a millisecond: that
# stands for the work an application does in between (a template, a database query, a GC pause)
# and makes the window visible on every machine and on fakeredis. `with_incr` sends one `INCR`.

# %% [markdown] lang="ru" translated="3ef0e3e62208"
# ## N клиентов, один счётчик
#
# Каждый клиент — поток со своим соединением (повторный `connect()` даёт новый клиент к тем же
# данным). Каждый клиент `K` раз прибавляет к счётчику 1. `get_then_set` читает значение,
# прибавляет 1 в Python и записывает обратно. Между чтением и записью функция делает паузу в одну миллисекунду:
# так изображается работа, которую приложение делает в промежутке (рендеринг шаблона, запрос в базу,
# пауза GC), и окно гонки становится заметным на любой машине и на fakeredis. `with_incr` отправляет один `INCR`.

# %% [markdown] lang="zh" translated="3ef0e3e62208"
# ## N 个客户端，一个计数器
#
# 每个客户端是一个线程，拥有自己的连接（再次调用 `connect()` 会得到访问同一份数据的新客户端）。每个客户端把计数器加 1，各加 `K` 次。`get_then_set` 先读出值，在 Python 里加 1，再写回去；读和写之间 sleep 1 毫秒，代表应用在这中间做的事情（渲染模板、查数据库、GC 停顿），这样竞态窗口在任何机器上、在 fakeredis 上都清晰可见。`with_incr` 只发送一条 `INCR`。

# %%
K = 25                       # increments per client
CLIENTS = [1, 2, 4, 8, 16]   # values of N
WINDOW = 0.001               # seconds between GET and SET: the application's work


def get_then_set(key, times, window=WINDOW):
    c = connect()                          # a client of its own
    for _ in range(times):
        value = int(c.get(key) or 0)       # 1 round trip
        time.sleep(window)                 # ...the application works...
        c.set(key, value + 1)              # 1 round trip: may overwrite a newer value


def with_incr(key, times):
    c = connect()
    for _ in range(times):
        c.incr(key)                        # 1 round trip, read-add-write inside Redis


def run_clients(worker, key, n, *args, start=0):
    """Set key to start, run worker(key, *args) in n threads, wait for all, return the value."""
    r.set(key, start)
    threads = [threading.Thread(target=worker, args=(key, *args)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return int(r.get(key))

# %% tags=["varies"]
rows = []
for n in CLIENTS:
    expected = n * K
    got_get_set = run_clients(get_then_set, r.key("counter", "get-set"), n, K)
    got_incr = run_clients(with_incr, r.key("counter", "incr"), n, K)
    rows.append((n, expected, got_get_set, expected - got_get_set, got_incr))

print_table(["N", _("expected"), "GET+SET", _("lost"), "INCR"], rows)

# %% [markdown] lang="en"
# The numbers in the `lost` column change from run to run. What does not change:

# %% [markdown] lang="ru" translated="b3a05c82a769"
# Числа в столбце «потеряно» меняются от запуска к запуску. Что не меняется:

# %% [markdown] lang="zh" translated="b3a05c82a769"
#「丢失」一列的数字每次运行都不一样。不变的是：

# %%
print(all(inc == expected for n, expected, gs, lost, inc in rows))   # INCR never loses
print(all(lost >= 0 for n, expected, gs, lost, inc in rows))         # GET+SET never gains
print(rows[0][3] == 0)                                                # one client alone loses nothing

# %% tags=["varies"]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(CLIENTS, [row[3] for row in rows], "o-", label="GET + SET")
ax.plot(CLIENTS, [row[1] - row[4] for row in rows], "s-", label="INCR")
ax.set_xscale("log", base=2)
ax.set_xticks(CLIENTS, [str(n) for n in CLIENTS])
ax.set_xlabel(_("concurrent clients N"))
ax.set_ylabel(_("lost updates (of N × {k})", k=K))
ax.legend()
ax.grid(alpha=0.3)
charts.show(fig, alt=_("Line chart of lost updates against the number of clients, 1 to 16: GET + SET loses "
                       "{lost} of {total} updates with 16 clients, INCR loses none.", lost=rows[-1][3],
                       total=rows[-1][1]))

# %% [markdown] lang="en"
# With N clients, roughly N−1 of every N updates are lost: while one client sleeps between
# its `GET` and its `SET`, the others read the same old value, and the last `SET` wins.
#
# Without the sleep the window is only the time between two round trips. It is smaller, not
# zero: 16 clients with no pause at all still lose updates.

# %% [markdown] lang="ru" translated="10e162e65f83"
# При N клиентах теряется примерно N−1 обновление из каждых N: пока один клиент спит между
# своими `GET` и `SET`, остальные читают то же старое значение, и побеждает последний `SET`.
#
# Без паузы окно — это лишь время между двумя сетевыми обменами. Оно меньше, но не нулевое: 16 клиентов
# вообще без пауз всё равно теряют обновления.

# %% [markdown] lang="zh" translated="10e162e65f83"
# 有 N 个客户端时，大约每 N 次更新就会丢掉 N−1 次：一个客户端在 `GET` 和 `SET` 之间 sleep 时，其他客户端读到的是同一个旧值，最后执行的那次 `SET` 覆盖了其他所有写入。
#
# 去掉 sleep 后，窗口只剩两次网络往返之间的那段时间。它变小了，但不是零：16 个完全不停顿的客户端依然会丢失更新。

# %% tags=["varies"]
got = run_clients(get_then_set, r.key("counter", "no-sleep"), 16, 200, 0)
print(_("expected {expected}, got {got}, lost {lost}", expected=16 * 200, got=got, lost=16 * 200 - got))

# %% [markdown] lang="en"
# ## Why INCR cannot lose
#
# Redis executes commands one at a time, each to completion. `INCR` reads, adds and writes inside
# one command, so no other command can run in the middle. Since Redis 6 the optional I/O threads
# (`io-threads`, off by default) write replies in parallel; before Redis 8.0 they read and parse
# requests only with `io-threads-do-reads yes`, whose default is `no` (8.0 threads both always).
# Either way commands are still executed by the main thread, one after another. A command is
# atomic; a sequence of commands is not. The defaults, asked from a private Redis server:

# %% [markdown] lang="ru" translated="d892ed7e58ab"
# ## Почему INCR не может потерять обновление
#
# Redis выполняет команды по одной, каждую до конца. `INCR` читает, прибавляет и записывает
# внутри одной команды, поэтому посередине не может выполниться ничья другая команда. Начиная
# с Redis 6 можно включить потоки ввода-вывода (`io-threads`, по умолчанию выключены): они
# параллельно пишут ответы, а читать и разбирать запросы до Redis 8.0 начинают только при
# `io-threads-do-reads yes`, а по умолчанию там `no` (в 8.0 потоки всегда делают и то и другое).
# Сами команды в любом случае выполняет главный поток, одну за другой. Команда атомарна,
# последовательность команд — нет. Значения по умолчанию, которые сообщает приватный сервер Redis:

# %% [markdown] lang="zh" translated="d892ed7e58ab"
# ## 为什么 INCR 不会丢失更新
#
# Redis 一次执行一条命令，每条都执行完才轮到下一条。`INCR` 在一条命令内部完成读取、加一和写回，所以中间不可能插入其他命令。从 Redis 6 开始可以启用 I/O 线程（`io-threads`，默认关闭）：它们并行地写回响应；在 Redis 8.0 之前，只有设置 `io-threads-do-reads yes` 时它们才会读取和解析请求，而默认值是 `no`（8.0 起读写总是都交给线程）。无论哪种情况，命令本身仍由主线程一条接一条地执行。单条命令是原子的，一串命令则不是。下面是向一个私有 Redis 服务器查询到的默认值：

# %%
from redis_course import private_redis, redis_server_binary

if redis_server_binary() is None:
    print(_("redis-server is not installed here: see the lesson page for Redis 7.0's answer."))
else:
    with private_redis() as srv:
        print(sorted(srv.client(prefix="").config_get("io-threads*").items()))

# %% [markdown] lang="en"
# ## MULTI/EXEC: a queue that runs as one block
#
# `MULTI` starts a transaction: the following commands are queued, and `EXEC` runs them all
# without any other client's command in between. In redis-py this is a pipeline with
# `transaction=True` (the default): the whole block goes in one round trip.

# %% [markdown] lang="ru" translated="653030c30807"
# ## MULTI/EXEC: очередь, которая выполняется одним блоком
#
# `MULTI` начинает транзакцию: следующие команды ставятся в очередь, а `EXEC` выполняет их все
# подряд, так что между ними не вклинится ни одна команда другого клиента. В redis-py это
# конвейер (pipeline) с `transaction=True` (по умолчанию): весь блок уходит за один сетевой обмен.

# %% [markdown] lang="zh" translated="653030c30807"
# ## MULTI/EXEC：作为一个整体执行的队列
#
# `MULTI` 开启事务：之后的命令进入队列，`EXEC` 一次性执行全部命令，中间不会插入其他客户端的命令。在 redis-py 中它就是 `transaction=True`（默认值）的管道（pipeline）：整个块只需一次网络往返。

# %%
hits = r.key("hits")
with r.pipeline(transaction=True) as pipe:
    pipe.incr(hits)
    pipe.expire(hits, 60)
    print(pipe.execute())

# %% [markdown] lang="en"
# ### No rollback
#
# A command that fails while `EXEC` runs does not undo the ones before it. Here the second
# command fails (`name` holds a string, not a number), and the first has already taken 30 from
# the balance:

# %% [markdown] lang="ru" translated="a76b2eebb720"
# ### Отката нет
#
# Команда, завершившаяся ошибкой во время `EXEC`, не отменяет предыдущие. Здесь вторая команда
# падает (в `name` лежит строка, а не число), а первая уже списала 30 с баланса:

# %% [markdown] lang="zh" translated="a76b2eebb720"
# ### 没有回滚
#
# `EXEC` 执行过程中某条命令失败，并不会撤销它之前的命令。下面第二条命令失败了（`name` 里是字符串而不是数字），而第一条已经从余额里扣掉了 30：

# %%
balance, name = r.key("balance"), r.key("name")
r.set(balance, 100)
r.set(name, "alice")
with r.pipeline() as pipe:
    pipe.decrby(balance, 30)
    pipe.incr(name)
    for reply in pipe.execute(raise_on_error=False):
        print(type(reply).__name__, reply)
print(r.get(balance))

# %% [markdown] lang="en"
# Only errors found while *queueing* (an unknown command, a wrong number of arguments) make
# `EXEC` discard the whole block (`EXECABORT`); redis-py raises before anything runs:

# %% [markdown] lang="ru" translated="1889ca79119b"
# Только ошибки, найденные ещё при *постановке в очередь* (неизвестная команда, неверное число
# аргументов), заставляют `EXEC` отбросить весь блок (`EXECABORT`); redis-py выбрасывает исключение
# раньше, чем что-либо выполнится:

# %% [markdown] lang="zh" translated="1889ca79119b"
# 只有在*入队*时就能发现的错误（未知命令、参数个数不对）才会让 `EXEC` 丢弃整个块（`EXECABORT`）；redis-py 会在任何命令执行之前就抛出异常：

# %%
with r.pipeline() as pipe:
    pipe.incrby(balance, 5)
    pipe.execute_command("INCR")           # INCR without a key: rejected while queueing
    try:
        pipe.execute()
    except redis.ResponseError as exc:
        print(type(exc).__name__, exc)
print(r.get(balance))

# %% [markdown] lang="en"
# ## Pipelines without a transaction
#
# `pipeline(transaction=False)` sends many commands in one round trip without `MULTI`/`EXEC`.
# That saves the network, but other clients' commands may run between yours. The time saved
# depends on the network: on fakeredis there is no network, so the gap is small.

# %% [markdown] lang="ru" translated="921040adc2ad"
# ## Конвейер без транзакции
#
# `pipeline(transaction=False)` отправляет много команд за один сетевой обмен, без `MULTI`/`EXEC`.
# Это экономит сеть, но между вашими командами могут выполниться команды других клиентов.
# Выигрыш во времени зависит от сети: у fakeredis сети нет, и разница мала.

# %% [markdown] lang="zh" translated="921040adc2ad"
# ## 不带事务的管道
#
# `pipeline(transaction=False)` 在一次往返中发送多条命令，但不包在 `MULTI`/`EXEC` 里。这样节省了网络开销，但其他客户端的命令可能插在你的命令之间执行。节省多少时间取决于网络：fakeredis 没有网络，所以差距很小。

# %% tags=["varies"]
counter = r.key("pipelined")
start = time.perf_counter()
for i in range(1000):
    r.incr(counter)
one_by_one = time.perf_counter() - start

start = time.perf_counter()
with r.pipeline(transaction=False) as pipe:
    for i in range(1000):
        pipe.incr(counter)
    replies = pipe.execute()
pipelined = time.perf_counter() - start
print(_("1000 INCR one by one: {one:.1f} ms, in one pipeline: {pipelined:.1f} ms",
        one=one_by_one * 1000, pipelined=pipelined * 1000))

# %%
print(r.get(counter), replies[-1])

# %% [markdown] lang="en"
# ## WATCH: check, then set only if nothing changed
#
# `MULTI` cannot make a decision: queued commands do not see each other's results. To decide in
# the application ("is the balance enough?") and still be safe, `WATCH` the key, read it, then
# run `MULTI`/`EXEC`. If any client (or this one) wrote the key after `WATCH`, `EXEC` does nothing
# and returns nil; redis-py raises `WatchError`, and we try again. This is optimistic locking.

# %% [markdown] lang="ru" translated="cdd2e444ed0f"
# ## WATCH: проверить и записать, только если ничего не изменилось
#
# `MULTI` не умеет принимать решения: команды в очереди не видят результатов друг друга. Чтобы
# решать в приложении («хватает ли денег?») и при этом не терять корректность, вызовите `WATCH` для
# ключа, прочитайте его и выполните `MULTI`/`EXEC`. Если после `WATCH` ключ записал кто угодно (даже этот
# же клиент), `EXEC` ничего не выполнит и вернёт nil; redis-py выбросит `WatchError`, и мы повторим
# попытку. Это оптимистическая блокировка.

# %% [markdown] lang="zh" translated="cdd2e444ed0f"
# ## WATCH：先检查，只有在没人改动时才写入
#
# `MULTI` 本身不能做判断：队列里的命令看不到彼此的结果。要在应用里做判断（“余额够不够？”）又保证安全，就先 `WATCH` 这个键，读取它，再执行 `MULTI`/`EXEC`。如果在 `WATCH` 之后任何客户端（包括它自己）写了这个键，`EXEC` 什么也不执行并返回 nil；redis-py 抛出 `WatchError`，我们重试。这就是乐观锁。

# %%
def withdraw(c, key, amount, window=0.0):
    """Take amount from key if the balance allows it. Returns (done, retries).

    WATCH, GET, then MULTI/DECRBY/EXEC: 3 round trips per attempt (UNWATCH too when the balance is
    short), retried on conflict.
    """
    retries = 0
    while True:
        with c.pipeline() as pipe:
            try:
                pipe.watch(key)                      # EXEC will fail if key changes from now on
                current = int(pipe.get(key) or 0)    # immediate read while watching
                if current < amount:
                    pipe.unwatch()
                    return False, retries
                time.sleep(window)
                pipe.multi()
                pipe.decrby(key, amount)
                pipe.execute()                       # raises WatchError on conflict
                return True, retries
            except redis.WatchError:
                retries += 1


r.set(balance, 100)
print(withdraw(r, balance, 30))
print(withdraw(r, balance, 500))
print(r.get(balance))

# %% [markdown] lang="en"
# A conflict, step by step: another client writes between our `WATCH` and our `EXEC`.

# %% [markdown] lang="ru" translated="2184314561d3"
# Конфликт по шагам: другой клиент пишет между нашими `WATCH` и `EXEC`.

# %% [markdown] lang="zh" translated="2184314561d3"
# 一步步看冲突：另一个客户端在我们的 `WATCH` 和 `EXEC` 之间写入了这个键。

# %%
other = connect()
with r.pipeline() as pipe:
    pipe.watch(balance)
    seen = int(pipe.get(balance))
    other.incrby(balance, 1000)              # the other client deposits
    pipe.multi()
    pipe.set(balance, seen - 10)
    try:
        pipe.execute()
    except redis.WatchError as exc:
        print("WatchError:", exc)
print(r.get(balance))

# %% [markdown] lang="en"
# ### The retry storm
#
# Under contention only one client wins each round; all the others retry. Here N clients each
# make `K_WATCH` deposits on one key with `WATCH` (deposits never fail for lack of money, so every
# attempt that does not go through is a conflict):

# %% [markdown] lang="ru" translated="37c85309d033"
# ### Шторм повторов
#
# При высокой конкуренции в каждом раунде выигрывает только один клиент, остальные повторяют попытку.
# Здесь N клиентов делают по `K_WATCH` пополнений одного ключа через `WATCH` (пополнение не может
# упасть из-за нехватки денег, так что каждая неудачная попытка — это конфликт):

# %% [markdown] lang="zh" translated="37c85309d033"
# ### 重试风暴
#
# 在竞争激烈时，每一轮只有一个客户端成功，其余的都要重试。下面 N 个客户端各自用 `WATCH` 对同一个键存款 `K_WATCH` 次（存款不会因余额不足而失败，所以每次没成功的尝试都是一次冲突）：

# %%
K_WATCH = 10


def deposit_with_watch(key, times, retries_out):
    c = connect()
    retries = 0
    for _ in range(times):
        while True:
            with c.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    current = int(pipe.get(key) or 0)
                    time.sleep(WINDOW)               # the same window as before
                    pipe.multi()
                    pipe.set(key, current + 1)
                    pipe.execute()
                    break
                except redis.WatchError:
                    retries += 1
    retries_out.append(retries)


watch_rows = []
for n in CLIENTS:
    per_client = []
    total = run_clients(deposit_with_watch, r.key("counter", "watch"), n, K_WATCH, per_client)
    watch_rows.append((n, n * K_WATCH, total, sum(per_client)))

# %% tags=["varies"]
print_table(["N", _("expected"), _("total"), _("retries"), _("per deposit")],
            [(n, expected, total, retries, f"{retries / expected:.1f}") for n, expected, total, retries in watch_rows])

# %%
print(all(total == expected for n, expected, total, retries in watch_rows))   # nothing lost
print(watch_rows[0][3] == 0)                                                   # alone: no conflicts

# %% tags=["varies"]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(CLIENTS, [row[3] / row[1] for row in watch_rows], "o-", color="tab:red")
ax.set_xscale("log", base=2)
ax.set_xticks(CLIENTS, [str(n) for n in CLIENTS])
ax.set_xlabel(_("concurrent clients N"))
ax.set_ylabel(_("WATCH retries per deposit"))
ax.grid(alpha=0.3)
charts.show(fig, alt=_("Line chart of WATCH retries per deposit against the number of clients, 1 to 16: "
                       "none for one client, {retries:.1f} per deposit with 16 clients, and no deposit lost.",
                       retries=watch_rows[-1][3] / watch_rows[-1][1]))

# %% [markdown] lang="en"
# Nothing is lost, but every deposit costs about N/2 failed attempts, each with its round trips.
# `WATCH` suits keys that are rarely contended. For a hot key, move the decision into Redis.
#
# ## Lua scripts: the decision runs inside Redis
#
# A script runs as one command: while it runs, no other client's command does. So a script can
# read, decide and write with no window at all. `EVAL` sends the script text each time;
# `EVALSHA` sends only its SHA-1 after `SCRIPT LOAD`; redis-py's `register_script` does this
# for you (it tries `EVALSHA` and falls back to loading the script on `NOSCRIPT`).

# %% [markdown] lang="ru" translated="d05b9c7c25e6"
# Ничего не потеряно, но каждое пополнение стоит примерно N/2 неудачных попыток, каждая со своими
# сетевыми обменами. `WATCH` хорош для ключей, за которые редко конкурируют. Для горячего ключа
# перенесите решение внутрь Redis.
#
# ## Lua-скрипты: решение принимается внутри Redis
#
# Скрипт выполняется как одна команда: пока он работает, команды других клиентов ждут. Поэтому
# скрипт может прочитать, решить и записать без всякого окна. `EVAL` каждый раз отправляет текст
# скрипта; `EVALSHA` после `SCRIPT LOAD` отправляет только его SHA-1; `register_script` в redis-py
# делает это за вас (пробует `EVALSHA`, а при `NOSCRIPT` загружает скрипт).

# %% [markdown] lang="zh" translated="d05b9c7c25e6"
# 一次更新都没丢，但每次存款平均要付出约 N/2 次失败尝试，每次都有自己的网络往返。`WATCH` 适合很少发生竞争的键；对于热点键，应该把判断挪进 Redis 内部。
#
# ## Lua 脚本：在 Redis 内部做判断
#
# 脚本作为一条命令执行：脚本运行期间，其他客户端的命令都要等待。所以脚本可以读取、判断、写入，中间没有任何窗口。`EVAL` 每次都发送脚本全文；`SCRIPT LOAD` 之后，`EVALSHA` 只需发送脚本的 SHA-1；redis-py 的 `register_script` 会替你处理这些（先尝试 `EVALSHA`，遇到 `NOSCRIPT` 时再加载脚本）。

# %%
from redis_course.lessons import show
from redis_course.lessons.money import WITHDRAW  # the script the page shows, as lesson 01's money module runs it

show(WITHDRAW)
r.set(balance, 100)
print(r.eval(WITHDRAW, 1, balance, 30))          # EVAL: the text travels every time
sha = r.script_load(WITHDRAW)                    # SCRIPT LOAD: once
print(sha)
print(r.evalsha(sha, 1, balance, 30))            # EVALSHA: only the hash travels
withdraw_script = r.register_script(WITHDRAW)    # redis-py manages EVALSHA for you
print(withdraw_script(keys=[balance], args=[500]))
print(r.get(balance))

# %% [markdown] lang="en"
# The same contention as above, with the script: 16 clients, each withdrawing 1 until the money
# runs out. No retries, no lost updates, and the balance never goes below zero:

# %% [markdown] lang="ru" translated="496e9a518132"
# Та же конкуренция, но со скриптом: 16 клиентов снимают по 1, пока деньги не кончатся.
# Ни повторов, ни потерянных обновлений, и баланс никогда не уходит ниже нуля:

# %% [markdown] lang="zh" translated="496e9a518132"
# 同样的竞争，这次用脚本：16 个客户端每次取 1，直到钱取完。没有重试，没有丢失的更新，余额也永远不会低于零：

# %%
def drain(key, attempts, results):
    script = connect().register_script(WITHDRAW)
    mine = [script(keys=[key], args=[1]) for _ in range(attempts)]
    results.extend(mine)


results = []
final = run_clients(drain, balance, 16, 25, results, start=300)
print(final, sum(1 for x in results if x >= 0), sum(1 for x in results if x == -1))

# %% [markdown] lang="en"
# Errors inside a script are where the backends differ. When a `redis.call` fails, a real Redis
# appends where it happened (`script: <sha>, on @user_script:...`) to the message; fakeredis
# returns the message alone:

# %% [markdown] lang="ru" translated="e849c05bcbec"
# В ошибках внутри скриптов бэкенды расходятся. Когда падает `redis.call`, настоящий
# Redis добавляет к сообщению, где это случилось (`script: <sha>, on @user_script:...`);
# fakeredis возвращает только само сообщение:

# %% [markdown] lang="zh" translated="e849c05bcbec"
# 脚本内部的错误是两个后端不一致的地方。`redis.call` 失败时，真正的 Redis 会在错误信息后面附上出错的位置（`script: <sha>, on @user_script:...`）；fakeredis 只返回错误信息本身：

# %% tags=["backend-differs"]
try:
    r.eval("return redis.call('INCR', KEYS[1])", 1, name)
except redis.ResponseError as exc:
    call_error = str(exc)
print(call_error)

# %% [markdown] lang="en"
# The part that is the same on both, and the part to match on in your code:

# %% [markdown] lang="ru" translated="993b6a2387f2"
# Часть сообщения, одинаковая на обоих, — именно по ней и стоит распознавать ошибку в коде:

# %% [markdown] lang="zh" translated="993b6a2387f2"
# 两者相同的部分，也就是代码里应该用来匹配的部分：

# %%
print(call_error.split(" script: ")[0])
print(call_error.startswith("value is not an integer or out of range"))

# %% [markdown] lang="en"
# ### No rollback in a script either
#
# An error stops a script at that line; what it wrote before stays written. `MOVE` takes 30 from
# the balance, then fails on `name`, which holds `alice`:

# %% [markdown] lang="ru" translated="7189eb217da6"
# ### В скрипте отката тоже нет
#
# Ошибка останавливает скрипт на этой строке; то, что он успел записать, остаётся записанным.
# `MOVE` снимает 30 с баланса, а затем падает на ключе `name`, где лежит `alice`:

# %% [markdown] lang="zh" translated="7189eb217da6"
# ### 脚本同样没有回滚
#
# 出错时脚本停在那一行，之前已经写入的内容保持不变。`MOVE` 先从余额中扣掉 30，然后在 `name` 上失败，因为它存的是 `alice`：

# %%
from redis_course.lessons import atomicity
from redis_course.lessons import show

show(atomicity.MOVE)
r.set(balance, 100)
r.set(name, "alice")
try:
    r.eval(atomicity.MOVE, 2, balance, name, 30)
except redis.ResponseError as exc:
    say(_("error:"), str(exc).split(" script: ")[0])
print("balance:", r.get(balance), "| name:", r.get(name))

# %% [markdown] lang="en"
# `TRANSFER` checks everything that can fail before its first write: the amount, that both values
# are integers `INCRBY` takes, that the balance covers the amount. Then it either writes both keys
# or nothing:

# %% [markdown] lang="ru" translated="fbbf4f1cbdff"
# `TRANSFER` проверяет всё, что может сломаться, до первой записи: сумму, то, что оба значения —
# целые числа, которые примет `INCRBY`, и что баланса хватает. Поэтому он записывает либо оба
# ключа, либо ни одного:

# %% [markdown] lang="zh" translated="fbbf4f1cbdff"
# `TRANSFER` 在第一次写入之前先检查所有可能出错的地方：金额、两个值是否都是 `INCRBY` 能接受的整数、余额是否足够。因此它要么两个键都写，要么一个都不写：

# %%
show(atomicity.TRANSFER)
savings = r.key("savings")
r.set(balance, 100)
for target, amount in [(name, 30), (savings, "1.5"), (savings, 500), (savings, 30)]:
    try:
        reply = r.eval(atomicity.TRANSFER, 2, balance, target, amount)
    except redis.ResponseError as exc:
        reply = _("error: {detail}", detail=str(exc).split(" script: ")[0])
    print(f"{r.unprefixed(target):<8} {amount!s:>4} -> {reply!s:<40} " + _("balance: {value}", value=r.get(balance)))

# %% [markdown] lang="en"
# ## A lock in the application works, until there are two processes
#
# The same bug exists in plain Python, and so does the usual fix: a lock around the
# read-modify-write. Within one process it works: every thread takes the same `threading.Lock`.

# %% [markdown] lang="ru" translated="244bdc124101"
# ## Блокировка в приложении работает — пока процесс один
#
# Та же ошибка бывает и в чистом Python, и обычное средство от неё тоже известно: блокировка вокруг
# чтения-изменения-записи. Внутри одного процесса это работает: все потоки берут один и тот же
# `threading.Lock`.

# %% [markdown] lang="zh" translated="244bdc124101"
# ## 应用里的锁有效——直到出现第二个进程
#
# 同样的 bug 在纯 Python 里也存在，常见的修法也一样：在“读-改-写”外面加一把锁。在单个进程里这是有效的：所有线程拿的是同一个 `threading.Lock`。

# %%
local_lock = threading.Lock()


def locked_get_then_set(key, times, window=WINDOW):
    c = connect()
    for _ in range(times):
        with local_lock:                        # only one thread of THIS process at a time
            value = int(c.get(key) or 0)
            time.sleep(window)
            c.set(key, value + 1)


print(_("{got} of {total}", got=run_clients(locked_get_then_set, r.key("counter", "locked"), 4, 10), total=4 * 10))

# %% [markdown] lang="en"
# Now run the same function in four processes, as four copies of a web service would. Each
# process has its own `local_lock`, so the lock protects nothing between them. Separate
# processes need a server they can all reach: an embedded fakeredis lives inside one process
# and cannot be shared, so this cell runs only on a real Redis (set `REDIS_URL`). It uses
# `fork`, available on Linux and macOS.

# %% [markdown] lang="ru" translated="f7edd313227c"
# Теперь запустим ту же функцию в четырёх процессах — как четыре копии веб-сервиса. У каждого
# процесса свой `local_lock`, и между процессами блокировка не защищает ничего. Отдельным
# процессам нужен сервер, к которому могут подключиться все они: встроенный fakeredis живёт внутри одного
# процесса и не может быть общим, поэтому эта ячейка работает только с настоящим Redis (задайте
# `REDIS_URL`). Она использует `fork`, который есть в Linux и macOS.

# %% [markdown] lang="zh" translated="f7edd313227c"
# 现在把同一个函数放到四个进程里运行，就像 Web 服务部署了四个实例。每个进程都有自己的 `local_lock`，这把锁在进程之间什么也保护不了。多个进程需要一个它们都能连上的服务器：内嵌的 fakeredis 存在于单个进程内部，无法共享，所以这个单元格只在真正的 Redis 上运行（请设置 `REDIS_URL`）。它使用 `fork`，Linux 和 macOS 都支持。

# %% tags=["varies"]
import multiprocessing


def run_processes(target, key, processes, times):
    r.delete(key)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=target, args=(key, times)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return int(r.get(key) or 0)


if needs_real_redis(r, _("several processes sharing one server")):
    got = run_processes(locked_get_then_set, r.key("counter", "processes"), 4, 10)
    print(_("GET+SET with a lock in each process: expected {expected}, got {got}", expected=4 * 10, got=got))
    got = run_processes(with_incr, r.key("counter", "processes"), 4, 10)
    print(_("INCR, no lock at all: expected {expected}, got {got}", expected=4 * 10, got=got))

# %% [markdown] lang="en"
# The lock has to live where the data lives. For a counter that means an atomic command
# (`INCR`, `INCRBY`, `HINCRBY`); for a decision, a Lua script or `WATCH`. A lock kept in Redis
# (`SET lock token NX PX 3000`) also works, but it adds round trips, a timeout to choose and
# a failure mode when its holder stalls: for updating one value, prefer the atomic command.
#
# ## Which tool when
#
# | Need | Use | Why |
# |---|---|---|
# | add to a number | `INCR`, `INCRBY`, `HINCRBY` | one command, one round trip, cannot lose |
# | several writes, no decision in between | `MULTI`/`EXEC` | nothing else runs in between; no rollback |
# | many independent commands, fast | pipeline without a transaction | one round trip, no isolation |
# | decide in the application, key rarely contended | `WATCH` + `MULTI`/`EXEC` | no server code; retries grow with contention |
# | decide on a hot key | Lua script (`EVALSHA`, `register_script`) | isolated, no retries; no rollback: check before the first write; keep it short: it blocks the server |

# %% [markdown] lang="ru" translated="39448b7a1f7c"
# Блокировка должна жить там же, где данные. Для счётчика это атомарная команда (`INCR`, `INCRBY`,
# `HINCRBY`); для решения — Lua-скрипт или `WATCH`. Блокировка в самом Redis
# (`SET lock token NX PX 3000`) тоже работает, но добавляет сетевые обмены, тайм-аут, который нужно
# выбрать, и сбой, когда её владелец зависает: чтобы изменить одно значение, берите атомарную команду.
#
# ## Что когда выбирать
#
# | Задача | Инструмент | Почему |
# |---|---|---|
# | прибавить к числу | `INCR`, `INCRBY`, `HINCRBY` | одна команда, один обмен, потерь нет |
# | несколько записей без решения между ними | `MULTI`/`EXEC` | никто не вклинится; отката нет |
# | много независимых команд, быстро | конвейер без транзакции | один обмен, без изоляции |
# | решение в приложении, конфликты за ключ редки | `WATCH` + `MULTI`/`EXEC` | без кода на сервере; повторы растут с конкуренцией |
# | решение на горячем ключе | Lua-скрипт (`EVALSHA`, `register_script`) | изоляция, без повторов; отката нет: всё проверяйте до первой записи; держите коротким: он блокирует сервер |

# %% [markdown] lang="zh" translated="39448b7a1f7c"
# 锁必须和数据放在同一个地方。对计数器来说，就是原子命令（`INCR`、`INCRBY`、`HINCRBY`）；对需要判断的操作，就是 Lua 脚本或 `WATCH`。放在 Redis 里的锁（`SET lock token NX PX 3000`）也能用，但它增加了网络往返、需要选定一个超时时间，而且持有者卡住时会出问题：如果只是更新一个值，优先用原子命令。
#
# ## 什么时候用什么
#
# | 需求 | 使用 | 原因 |
# |---|---|---|
# | 给数字加减 | `INCR`、`INCRBY`、`HINCRBY` | 一条命令、一次往返，不会丢失 |
# | 多次写入，中间无需判断 | `MULTI`/`EXEC` | 中间不会插入其他客户端的命令；没有回滚 |
# | 大量独立命令，要快 | 不带事务的管道 | 一次往返，没有隔离 |
# | 在应用里判断，键很少被争用 | `WATCH` + `MULTI`/`EXEC` | 无需服务端代码；重试随竞争增加 |
# | 在热点键上判断 | Lua 脚本（`EVALSHA`、`register_script`） | 隔离、无重试；没有回滚：第一次写入前先检查完；要保持简短：它会阻塞服务器 |

# %% tags=["varies"]
print(r.cleanup())

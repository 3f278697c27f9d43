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
# # Rate limiting: the published limiters, their races, and seven that hold
#
# The limit throughout: **ten requests per second per IP address**, as in the `INCR` documentation.
# First the three limiters the documentation publishes, run exactly as written, with their races
# shown step by step. Then seven limiters that each take one round trip, keep a TTL on every key
# and say when to retry; one bursty trace runs through all of them.
#
# The limiters live in `redis_course.lessons.ratelimit`; `show()` prints the code the notebook runs.

# %% [markdown] lang="ru" translated="850356808d1a"
# # Ограничение частоты запросов: опубликованные ограничители, их гонки и семь надёжных
#
# Лимит везде один: **десять запросов в секунду с одного IP-адреса**, как в документации `INCR`.
# Сначала три ограничителя из документации — ровно так, как они написаны, — и их гонки шаг за шагом.
# Затем семь ограничителей, каждый из которых делает один сетевой обмен (round trip), ставит TTL
# на каждый ключ и говорит, когда повторить запрос; через все семь проходит одна и та же
# последовательность запросов со всплесками.
#
# Ограничители лежат в `redis_course.lessons.ratelimit`; `show()` печатает код, который выполняет блокнот.

# %% [markdown] lang="zh" translated="850356808d1a"
# # 限流：文档里的限流器、它们的竞态，以及七个可靠的限流器
#
# 全篇使用同一个限制：**每个 IP 地址每秒最多 10 个请求**，与 `INCR` 文档一致。先按原样运行文档里发布的三个限流器，一步一步展示它们的竞态；然后是七个限流器：每个都只需一次往返（round trip），每个键都有 TTL，并告诉客户端何时重试。最后让同一段突发流量依次通过这七个限流器。
#
# 限流器的代码在 `redis_course.lessons.ratelimit` 中；`show()` 打印笔记本实际运行的代码。

# %% tags=["varies"]
# %matplotlib inline
import random
import threading
import time

import matplotlib.pyplot as plt

from redis_course import charts, connect, needs_real_redis
from redis_course.l10n import _, say
from redis_course.lessons import show
from redis_course.lessons import ratelimit as rl
from redis_course.tables import print_table

r = connect(verbose=True)

# %% [markdown] lang="en"
# ## Limiter 1: a counter per IP per second
#
# The key is `ip:ts`, the IP and the current Unix second. The documentation publishes two
# versions. The English text reads the counter with `GET` first and only then runs
# `MULTI`/`INCR`/`EXPIRE`/`EXEC`:

# %% [markdown] lang="ru" translated="0dd97d10fa46"
# ## Ограничитель 1: счётчик на IP на каждую секунду
#
# Ключ — `ip:ts`, IP-адрес и текущая секунда Unix-времени. В документации есть две версии.
# Английская версия сначала читает счётчик через `GET` и только потом выполняет
# `MULTI`/`INCR`/`EXPIRE`/`EXEC`:

# %% [markdown] lang="zh" translated="0dd97d10fa46"
# ## 限流器 1：每个 IP 每秒一个计数器
#
# 键是 `ip:ts`，即 IP 加上当前的 Unix 秒数。文档发布过两个版本。文档的英文版先用 `GET` 读出计数器，然后才执行 `MULTI`/`INCR`/`EXPIRE`/`EXEC`：

# %%
show(rl.limiter1_get_then_multi)

# %% [markdown] lang="en"
# The Russian text (and redis.io today) runs the transaction first and decides on the value `INCR`
# returned inside it:

# %% [markdown] lang="ru" translated="7c28f6b017e9"
# Русская версия (и нынешний redis.io) сначала выполняет транзакцию и решает по значению,
# которое вернул `INCR` внутри неё:

# %% [markdown] lang="zh" translated="7c28f6b017e9"
# 文档的俄文版（以及现在的 redis.io）先执行事务，再根据事务中 `INCR` 返回的值做判断：

# %%
show(rl.limiter1_multi_then_check)

# %% [markdown] lang="en"
# Twelve requests in the same second, one after another. The `GET` version lets **eleven** in:
# after ten requests `GET` returns `10`, and `10 > 10` is false.

# %% [markdown] lang="ru" translated="aa179302fce7"
# Двенадцать запросов в одну и ту же секунду, один за другим. Версия с `GET` пропускает
# **одиннадцать**: после десяти запросов `GET` возвращает `10`, а `10 > 10` — ложь.

# %% [markdown] lang="zh" translated="aa179302fce7"
# 在同一秒内依次发出 12 个请求。带 `GET` 的版本放行了 **11** 个：10 个请求之后 `GET` 返回 `10`，而 `10 > 10` 为假。

# %%
T = 1_700_000_000  # a fixed second: the published code takes the application server's clock
say(_("GET then MULTI:"), [rl.run(rl.limiter1_get_then_multi(r, "10.0.0.1", now=T)) for _ in range(12)].count(True))
say(_("MULTI then check:"), [rl.run(rl.limiter1_multi_then_check(r, "10.0.0.2", now=T)) for _ in range(12)].count(True))

# %% [markdown] lang="en"
# Under concurrency the `GET` version lets in more. Two clients, step by step, after ten requests
# have already been counted: both read `10`, both pass the check, both increment.

# %% [markdown] lang="ru" translated="f8c063dce029"
# При конкурентном доступе версия с `GET` пропускает ещё больше. Два клиента, шаг за шагом,
# когда десять запросов уже посчитаны: оба читают `10`, оба проходят проверку, оба увеличивают счётчик.

# %% [markdown] lang="zh" translated="f8c063dce029"
# 在并发下，带 `GET` 的版本放行得更多。两个客户端一步一步地执行，此前已经计了 10 个请求：两者都读到 `10`，都通过了检查，都执行了自增。

# %%
for i in range(10):
    rl.run(rl.limiter1_get_then_multi(r, "10.0.0.3", now=T))
rl.interleave({"A": rl.limiter1_get_then_multi(r, "10.0.0.3", now=T),
               "B": rl.limiter1_get_then_multi(r, "10.0.0.3", now=T)}, "ABABAB")
say(_("counter:"), r.get(r.key("10.0.0.3", T)))

# %% [markdown] lang="en"
# Measured: 16 threads send 2 requests each at the same moment, in 20 different seconds. How many
# got in per second? The count depends on the scheduler, so it differs between runs and backends.

# %% [markdown] lang="ru" translated="cea9d4b9bedc"
# Замер: 16 потоков одновременно отправляют по 2 запроса, в 20 разных секундах. Сколько запросов
# прошло за секунду? Число зависит от планирования потоков, поэтому меняется от запуска к запуску и
# между бэкендами.

# %% [markdown] lang="zh" translated="cea9d4b9bedc"
# 实测：16 个线程在同一时刻各发 2 个请求，共测 20 个不同的秒。每秒放行了多少？结果取决于线程调度，因此每次运行、每个后端都不一样。

# %%
def concurrent_second(variant, ip, ts, clients=16, each=2):
    """Requests allowed when `clients` threads send `each` requests at once, all in second `ts`."""
    barrier = threading.Barrier(clients)
    results = []

    def client():
        barrier.wait()
        for _ in range(each):
            results.append(rl.run(variant(r, ip, now=ts)))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(results)


get_first = [concurrent_second(rl.limiter1_get_then_multi, "10.0.1.1", T + s) for s in range(20)]
multi_first = [concurrent_second(rl.limiter1_multi_then_check, "10.0.1.2", T + s) for s in range(20)]

# %% tags=["varies"]
say(_("GET then MULTI, allowed per second:"), get_first)
say(_("MULTI then check, allowed per second:"), multi_first)

# %% [markdown] lang="en"
# Whatever the scheduling, the transaction-first version never lets more than ten in:

# %% [markdown] lang="ru" translated="392fc4282663"
# Как бы ни легло расписание потоков, версия «сначала транзакция» никогда не пропускает больше десяти:

# %% [markdown] lang="zh" translated="392fc4282663"
# 无论线程如何调度，“先事务”的版本从不放行超过 10 个：

# %%
print(set(multi_first), max(get_first) > 10)

# %% [markdown] lang="en"
# ### Whose clock?
#
# Both versions take `ts` from the application server's clock. With two application servers
# whose clocks disagree, the same real second is split across two keys. Forty requests within one
# real second, alternating between server A (right clock) and server B (600 ms behind):

# %% [markdown] lang="ru" translated="26ee98b9ffd4"
# ### Чьи часы?
#
# Обе версии берут `ts` из часов сервера приложения. Если серверов приложений два и их часы
# расходятся, одна и та же реальная секунда делится между двумя ключами. Сорок запросов за одну
# реальную секунду, поочерёдно на сервер A (часы верные) и сервер B (отстаёт на 600 мс):

# %% [markdown] lang="zh" translated="26ee98b9ffd4"
# ### 用谁的时钟？
#
# 两个版本都从应用服务器的时钟取 `ts`。如果有两台应用服务器且时钟不一致，同一个真实的秒就会被拆到两个键里。在一个真实的秒内发出 40 个请求，轮流发给服务器 A（时钟准确）和服务器 B（慢 600 毫秒）：

# %%
def one_real_second(ip, skew_b):
    allowed = 0
    for i in range(40):
        true_time = T + 100 + i * 0.025
        app_clock = true_time if i % 2 == 0 else true_time - skew_b   # even: server A, odd: server B
        allowed += rl.run(rl.limiter1_multi_then_check(r, ip, now=app_clock))
    return allowed


say(_("clocks agree:"), one_real_second("10.0.2.1", skew_b=0.0))
say(_("B is 600 ms behind:"), one_real_second("10.0.2.2", skew_b=0.6))

# %% [markdown] lang="en"
# The fix is to let Redis read the clock: a script calls `TIME`, so every application server gets
# the same answer. `rl.fixed_window` is limiter 1 as one script on the server's clock. Twelve
# requests at the start of a server second:

# %% [markdown] lang="ru" translated="d655f3bfbb0d"
# Решение — пусть время читает Redis: скрипт вызывает `TIME`, и все серверы приложений получают
# один и тот же ответ. `rl.fixed_window` — это ограничитель 1 в виде одного скрипта на часах сервера.
# Двенадцать запросов в начале серверной секунды:

# %% [markdown] lang="zh" translated="d655f3bfbb0d"
# 解决办法是让 Redis 来读时钟：脚本调用 `TIME`，所有应用服务器得到的答案都一样。`rl.fixed_window` 就是把限流器 1 写成一个脚本、使用服务器时钟。在服务器某一秒的开头发出 12 个请求：

# %%
def wait_for_start_of_server_second(r):
    while True:
        seconds, micros = r.time()
        if micros < 200_000:
            return
        time.sleep((1_000_000 - micros) / 1e6 + 0.002)


wait_for_start_of_server_second(r)
print([rl.fixed_window(r, "10.0.2.3").allowed for _ in range(12)])

# %% [markdown] lang="en"
# ## Limiter 2: one counter per IP
#
# One key per IP. `EXPIRE ip 1` is sent only when `INCR` returned 1, so the counter lives for one
# second from the first request:

# %% [markdown] lang="ru" translated="d5a72a22c438"
# ## Ограничитель 2: один счётчик на IP
#
# Один ключ на IP. `EXPIRE ip 1` отправляется только тогда, когда `INCR` вернул 1, поэтому счётчик живёт
# одну секунду с первого запроса:

# %% [markdown] lang="zh" translated="d5a72a22c438"
# ## 限流器 2：每个 IP 一个计数器
#
# 每个 IP 一个键。只有当 `INCR` 返回 1 时才发送 `EXPIRE ip 1`，所以计数器从第一个请求起存活一秒：

# %%
show(rl.limiter2)

# %% [markdown] lang="en"
# It has the same check-then-act race as the `GET` version of limiter 1:

# %% [markdown] lang="ru" translated="94b7101a3266"
# У него та же гонка «проверить, потом действовать», что и у версии ограничителя 1 с `GET`:

# %% [markdown] lang="zh" translated="94b7101a3266"
# 它和限流器 1 的 `GET` 版本有同样的“先检查后执行”竞态：

# %%
r.set(r.key("10.0.3.1"), 10, ex=60)      # ten requests already counted in this second
rl.interleave({"A": rl.limiter2(r, "10.0.3.1"), "B": rl.limiter2(r, "10.0.3.1")}, "ABABAB")

# %% [markdown] lang="en"
# The race the documentation names is worse. Client A sends `INCR`, gets 1, and dies before
# `EXPIRE` (a crash, a deploy, a timeout). Stopping A's steps after its `INCR` is exactly that:

# %% [markdown] lang="ru" translated="24586c95bd82"
# Гонка, которую называет документация, хуже. Клиент A отправляет `INCR`, получает 1 и умирает
# до `EXPIRE` (падение, деплой, тайм-аут). Если остановить шаги A после его `INCR`, получится ровно это:

# %% [markdown] lang="zh" translated="24586c95bd82"
# 文档点名的那个竞态更糟糕。客户端 A 发送 `INCR`，得到 1，然后在 `EXPIRE` 之前挂掉了（崩溃、部署、超时）。在 A 执行完 `INCR` 之后停止它的后续步骤，正是这种情况：

# %%
ip = "10.0.3.2"
rl.interleave({"A": rl.limiter2(r, ip)}, "AA")   # GET, INCR ... and A is gone
print("TTL:", r.ttl(r.key(ip)))

# %% [markdown] lang="en"
# The key has no TTL. Eleven more requests later the IP is over the limit, and it stays there:
# a second later, an hour later, until someone deletes the key.

# %% [markdown] lang="ru" translated="2e55a5d11620"
# У ключа нет TTL. Через одиннадцать запросов IP превысит лимит и так и останется за ним: и через
# секунду, и через час — пока кто-нибудь не удалит ключ.

# %% [markdown] lang="zh" translated="2e55a5d11620"
# 这个键没有 TTL。再来 11 个请求，这个 IP 就超过了限制，而且会一直超限：一秒后、一小时后都一样，直到有人删掉这个键。

# %%
for i in range(11):
    rl.run(rl.limiter2(r, ip))
time.sleep(1.1)
say(_("after 1.1 s:"), rl.run(rl.limiter2(r, ip)), _("counter:"), r.get(r.key(ip)), "TTL:", r.ttl(r.key(ip)))

# %% [markdown] lang="en"
# The documentation's fix: `INCR` and the conditional `EXPIRE` in one Lua script. A script runs as
# a whole, so nobody can stop between the two. The decision is made on the value it returns.

# %% [markdown] lang="ru" translated="1c802a9c8ac3"
# Исправление из документации: `INCR` и условный `EXPIRE` в одном Lua-скрипте. Скрипт выполняется
# целиком, и никто не может остановиться между двумя командами. Решение принимается по значению, которое он вернул.

# %% [markdown] lang="zh" translated="1c802a9c8ac3"
# 文档给出的修复：把 `INCR` 和有条件的 `EXPIRE` 放进同一个 Lua 脚本。脚本是整体执行的，没有人能在两条命令之间停下来。是否放行根据脚本返回的值来判断。

# %%
show(rl.LIMITER2_LUA)
show(rl.limiter2_lua)

# %%
ip = "10.0.3.3"
print(_("{n} allowed; TTL set: {ttl}", n=rl.burst(rl.limiter2_lua, r, ip),
        ttl=r.ttl(r.key(ip)) in (0, 1)))

# %% [markdown] lang="en"
# ## The list limiter
#
# The third published limiter keeps a list per IP: `LLEN` to check, then `RPUSH` and `EXPIRE` in a
# transaction when the list does not exist, or `RPUSHX`, which only pushes onto an existing list.

# %% [markdown] lang="ru" translated="f42c10fa31e9"
# ## Ограничитель на списке
#
# Третий опубликованный ограничитель хранит список на IP: `LLEN` для проверки, затем `RPUSH` и
# `EXPIRE` в транзакции, если списка нет, или `RPUSHX`, который добавляет элемент только в существующий список.

# %% [markdown] lang="zh" translated="f42c10fa31e9"
# ## 基于列表的限流器
#
# 文档中的第三个限流器为每个 IP 维护一个列表：用 `LLEN` 检查，列表不存在时在事务中执行 `RPUSH` 和 `EXPIRE`，否则用 `RPUSHX`——它只向已存在的列表追加元素。

# %%
show(rl.list_limiter)

# %% [markdown] lang="en"
# It has the same off-by-one as `GET` (`LLEN` is 10 when the eleventh request checks):

# %% [markdown] lang="ru" translated="95675b8660d6"
# У него та же ошибка на единицу, что и у `GET` (когда проверяет одиннадцатый запрос, `LLEN` равен 10):

# %% [markdown] lang="zh" translated="95675b8660d6"
# 它和 `GET` 版本一样有差一错误（第 11 个请求检查时 `LLEN` 是 10）：

# %%
print(rl.burst(rl.list_limiter, r, "10.0.4.1"))  # 12 requests within one second

# %% [markdown] lang="en"
# Its main race is the documentation's silence: `LLEN` is read in one round trip and the push
# happens in a later one, so every client that reads the length before the others push gets in.
# The same measurement as for limiter 1: 16 threads send 2 requests each at the same moment, a
# new IP in each of 20 rounds. On a real server far more than 10 get in (15 to 25 in our runs);
# fakeredis runs a thread's few commands before it switches to the next, so there the race seldom
# shows and most rounds let 11 in:

# %% [markdown] lang="ru" translated="55462d261208"
# Главная его гонка — та, о которой документация молчит: `LLEN` читается за один сетевой обмен,
# а добавление в список происходит в следующем, поэтому проходит каждый клиент, прочитавший длину
# раньше, чем другие добавили свои элементы. Тот же замер, что и для ограничителя 1: 16 потоков
# одновременно отправляют по 2 запроса, в каждом из 20 раундов — новый IP. На настоящем сервере
# проходит намного больше 10 (в наших запусках от 15 до 25); fakeredis выполняет несколько команд
# одного потока, прежде чем переключиться на следующий, поэтому там гонка проявляется редко и в
# большинстве раундов проходит 11:

# %% [markdown] lang="zh" translated="55462d261208"
# 它最主要的竞态恰恰是文档没有提到的：`LLEN` 在一次网络往返中读取，追加元素却在之后的往返中进行，所以凡是在别人追加之前读到长度的客户端都会被放行。和限流器 1 一样的测试：16 个线程在同一时刻各发 2 个请求，20 轮中每轮换一个新 IP。在真实服务器上放行的请求远多于 10 个（我们的几次运行中为 15 到 25 个）；fakeredis 会先把一个线程的几条命令执行完再切换到下一个线程，所以在它上面竞态很少出现，大多数轮次放行 11 个：

# %% tags=["varies"]
list_rounds = [concurrent_second(lambda c, ip, now: rl.list_limiter(c, ip), f"10.0.4.{100 + s}", T)
               for s in range(20)]
say(_("list limiter, allowed of 32 per round:"), list_rounds)

# %% [markdown] lang="en"
# Stepping the clients makes the race exact, and the same on both backends: nine requests are
# already in the list, then 16 clients each read `LLEN` (9) before any of them pushes. All 16 pass,
# 25 requests in one second against a limit of 10:

# %% [markdown] lang="ru" translated="03a138a93d38"
# Если вести клиентов по шагам, гонка становится точной и одинаковой на обоих бэкендах: в списке
# уже девять запросов, затем 16 клиентов читают `LLEN` (9) раньше, чем хоть один из них добавит
# элемент. Проходят все 16 — 25 запросов за одну секунду при лимите 10:

# %% [markdown] lang="zh" translated="03a138a93d38"
# 让客户端按步骤交错执行，竞态就变得确定，在两个后端上结果一致：列表里已经有 9 个请求，然后 16 个客户端都在任何一个追加之前读取 `LLEN`（得到 9）。16 个全部通过——限额 10 的情况下，一秒内放行了 25 个请求：

# %%
ip = "10.0.4.99"
for i in range(9):
    rl.run(rl.list_limiter(r, ip))
stepped = {name: rl.list_limiter(r, ip) for name in "ABCDEFGHIJKLMNOP"}
decisions = rl.interleave(stepped, "ABCDEFGHIJKLMNOP" * 4, out=lambda step: None)
print(_("allowed: {n} of {total} | in this second: {second}", n=sum(decisions.values()), total=len(decisions),
        second=9 + sum(decisions.values())))

# %% [markdown] lang="en"
# The race the documentation calls harmless: both clients see no list, both create it. Both
# requests are counted; the second `EXPIRE` only moves the expiry a little.

# %% [markdown] lang="ru" translated="1bccbbf0056b"
# Гонка, которую документация называет безвредной: оба клиента не видят списка, оба его создают.
# Оба запроса посчитаны; второй `EXPIRE` лишь немного сдвигает момент истечения.

# %% [markdown] lang="zh" translated="1bccbbf0056b"
# 文档称之为无害的竞态：两个客户端都看到列表不存在，都去创建它。两个请求都被计数了；第二个 `EXPIRE` 只是把过期时间稍稍推后。

# %%
rl.interleave({"A": rl.list_limiter(r, "10.0.4.2"), "B": rl.list_limiter(r, "10.0.4.2")}, "AABBABAB")
say(_("length:"), r.llen(r.key("10.0.4.2")))

# %% [markdown] lang="en"
# The other interleaving misses a count: the list exists when A checks, expires before A's
# `RPUSHX`, and `RPUSHX` pushes nothing. A's request is allowed and not counted: the limiter errs
# on the side of letting one more in.

# %% [markdown] lang="ru" translated="0150de81d31b"
# При другом порядке выполнения запрос не попадает в подсчёт: список существует, когда A проверяет, истекает
# до `RPUSHX` клиента A, и `RPUSHX` ничего не добавляет. Запрос A пропущен, но не посчитан:
# ограничитель ошибается в сторону «пропустить на один больше».

# %% [markdown] lang="zh" translated="0150de81d31b"
# 另一种交错会漏计一次：A 检查时列表还在，在 A 执行 `RPUSHX` 之前过期了，`RPUSHX` 什么也没追加。A 的请求被放行了却没有被计数：限流器的误差偏向“多放行一个”。

# %%
ip = "10.0.4.3"
for i in range(3):
    rl.run(rl.list_limiter(r, ip))
a = rl.list_limiter(r, ip)
print("A:", next(a))
print("A:", next(a))
r.pexpire(r.key(ip), 1)      # the second is over: the list expires now
time.sleep(0.01)
print("A:", next(a))
say(_("exists:"), r.exists(r.key(ip)))

# %% [markdown] lang="en"
# Can it leave a list without a TTL? `RPUSH` and `EXPIRE` travel in one `MULTI`/`EXEC` (both or
# neither), and `RPUSHX` never creates a key. 16 threads hammering four IPs for two seconds, then a
# scan for list keys without a TTL:

# %% [markdown] lang="ru" translated="9f30f9efb585"
# Может ли он оставить список без TTL? `RPUSH` и `EXPIRE` идут в одном `MULTI`/`EXEC` (обе или ни
# одна), а `RPUSHX` никогда не создаёт ключ. 16 потоков две секунды засыпают запросами четыре IP, затем
# поиск ключей-списков без TTL:

# %% [markdown] lang="zh" translated="9f30f9efb585"
# 它会不会留下没有 TTL 的列表？`RPUSH` 和 `EXPIRE` 在同一个 `MULTI`/`EXEC` 中发送（要么都执行，要么都不执行），而 `RPUSHX` 从不创建键。用 16 个线程对四个 IP 连续请求两秒，然后扫描没有 TTL 的列表键：

# %%
def hammer(seconds=2.0, clients=16):
    stop = time.monotonic() + seconds

    def client(n):
        while time.monotonic() < stop:
            rl.run(rl.list_limiter(r, f"10.0.5.{n % 4}"))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


hammer()
print(rl.keys_without_ttl(r, "10.0.5.*"))

# %% [markdown] lang="en"
# ## Seven limiters that hold
#
# Every limiter below is one Lua script (one round trip: `EVALSHA`), keeps its state under one key
# that always has a TTL, and answers a `Decision`: allowed, remaining, `retry_after_ms` and
# `reset_after_ms`. The clock is `TIME` on the server unless `now_ms` is passed: a controllable
# clock that makes every demonstration below exact and the same on both backends.

# %% [markdown] lang="ru" translated="30de5da796fe"
# ## Семь надёжных ограничителей
#
# Каждый ограничитель ниже — один Lua-скрипт (один сетевой обмен: `EVALSHA`), хранит состояние в одном ключе,
# у которого всегда есть TTL, и отвечает `Decision`: пропущен ли запрос, сколько осталось,
# `retry_after_ms` и `reset_after_ms`. Часы — `TIME` на сервере, если не передан `now_ms`:
# управляемые часы, благодаря которым все демонстрации ниже точны и одинаковы на обоих бэкендах.

# %% [markdown] lang="zh" translated="30de5da796fe"
# ## 七个可靠的限流器
#
# 下面每个限流器都是一个 Lua 脚本（一次往返：`EVALSHA`），状态保存在一个始终带 TTL 的键里，并返回一个 `Decision`：是否放行、剩余次数、`retry_after_ms` 和 `reset_after_ms`。时钟默认是服务器上的 `TIME`，除非传入 `now_ms`——一个可控的时钟，它让下面的每个演示都精确可复现，并且在两个后端上结果一致。

# %%
show(rl.Decision)
show(rl._CLOCK)

# %% [markdown] lang="en"
# **Fixed window** (limiter 1, fixed): windows are aligned to the clock, `[k·1000, (k+1)·1000)` ms.

# %% [markdown] lang="ru" translated="fac274d48f36"
# **Фиксированное окно** (исправленный ограничитель 1): окна выровнены по часам, `[k·1000, (k+1)·1000)` мс.

# %% [markdown] lang="zh" translated="fac274d48f36"
# **固定窗口**（修正后的限流器 1）：窗口与时钟对齐，`[k·1000, (k+1)·1000)` 毫秒。

# %%
show(rl.FIXED_WINDOW_LUA)
T0 = 1_700_000_000_000   # ms, the start of a second
for d in [rl.fixed_window(r, "demo", now_ms=T0 + 300) for _ in range(11)][-2:]:
    print(d)
print(rl.fixed_window(r, "demo", now_ms=T0 + 1000))

# %% [markdown] lang="en"
# **First-hit window** (limiter 2, fixed and clocked): the window opens with its first request.
# **List** (the list limiter in one script): the same window, one list entry per request.

# %% [markdown] lang="ru" translated="9d21657185c7"
# **Окно с первого запроса** (исправленный ограничитель 2 с управляемыми часами): окно открывается
# первым запросом. **Список** (ограничитель на списке одним скриптом): то же окно, по элементу на запрос.

# %% [markdown] lang="zh" translated="9d21657185c7"
# **首次请求窗口**（修正后的限流器 2，改为按时钟判断）：窗口由第一个请求开启。**列表**（把基于列表的限流器写成一个脚本）：同样的窗口，每个请求一个列表元素。

# %%
show(rl.FIRST_HIT_WINDOW_LUA)
show(rl.LIST_WINDOW_LUA)
print([rl.first_hit_window(r, "demo", now_ms=T0 + 300 + i).allowed for i in range(11)].count(True),
      rl.first_hit_window(r, "demo", now_ms=T0 + 1299).retry_after_ms,
      rl.first_hit_window(r, "demo", now_ms=T0 + 1300).allowed)

# %% [markdown] lang="en"
# **Sliding log**: a sorted set of the times requests were allowed. Old entries are trimmed, the
# rest are counted, and a request is added only if it is allowed. Exact, and it tells precisely
# when the oldest entry leaves the window.

# %% [markdown] lang="ru" translated="0330902871b6"
# **Скользящий журнал** (sliding log): упорядоченное множество моментов, когда запросы были
# пропущены. Старые записи удаляются, оставшиеся считаются, и запрос добавляется только если он
# пропущен. Метод точный и точно говорит, когда самая старая запись выйдет из окна.

# %% [markdown] lang="zh" translated="0330902871b6"
# **滑动日志**（sliding log）：用有序集合记录每个被放行请求的时间。先清除过期条目，再统计剩余条目，只有被放行的请求才会写入。结果精确，而且能准确给出最早的条目何时离开窗口。

# %%
show(rl.SLIDING_LOG_LUA)
for i in range(10):
    rl.sliding_log(r, "demo", now_ms=T0 + 100 * i)        # one every 100 ms
print(rl.sliding_log(r, "demo", now_ms=T0 + 950))         # the entry at T0 leaves at T0 + 1000
print(rl.sliding_log(r, "demo", now_ms=T0 + 1000))

# %% [markdown] lang="en"
# **Sliding window counter**: two fixed-window counts, the previous one weighted by how much of it
# still overlaps the last second. O(1) memory; an estimate (measured below).

# %% [markdown] lang="ru" translated="bc45330cf7ed"
# **Счётчик скользящего окна** (sliding window counter): два счётчика фиксированных окон, предыдущий
# взвешен долей, которая ещё попадает в последнюю секунду. Память O(1); это оценка (ниже её ошибка измерена).

# %% [markdown] lang="zh" translated="bc45330cf7ed"
# **滑动窗口计数器**（sliding window counter）：两个固定窗口的计数，前一个窗口按其仍落在最近一秒内的比例加权。内存 O(1)；结果是估算值（误差在下文实测）。

# %%
show(rl.SLIDING_WINDOW_COUNTER_LUA)
for i in range(10):
    rl.sliding_window_counter(r, "demo", now_ms=T0 + 500 + 10 * i)   # ten in the second half of a window
print(rl.sliding_window_counter(r, "demo", now_ms=T0 + 1200))         # 10 * 0.8 = 8 still counted
print(rl.sliding_window_counter(r, "demo", now_ms=T0 + 1200))

# %% [markdown] lang="en"
# **Token bucket**: ten tokens, refilled at ten per second; a request takes one.
# **GCRA**: the same behaviour stored as one number, the theoretical arrival time of the next
# request (as redis-cell's `CL.THROTTLE` and go-redis `redis_rate` do).

# %% [markdown] lang="ru" translated="eac1ae36ef00"
# **Ведро токенов** (token bucket): десять токенов, пополняются по десять в секунду; запрос забирает
# один. **GCRA**: то же поведение, но хранится одно число — теоретическое время прихода следующего
# запроса (так делают `CL.THROTTLE` из redis-cell и `redis_rate` для go-redis).

# %% [markdown] lang="zh" translated="eac1ae36ef00"
# **令牌桶**（token bucket）：桶里有 10 个令牌，每秒补充 10 个；每个请求取走一个。**GCRA**：行为相同，但只存一个数字——下一个请求的理论到达时间（redis-cell 的 `CL.THROTTLE` 和 go-redis 的 `redis_rate` 就是这样做的）。

# %%
show(rl.TOKEN_BUCKET_LUA)
show(rl.GCRA_LUA)
for limiter in (rl.token_bucket, rl.gcra):
    burst = [limiter(r, "demo", now_ms=T0) for _ in range(11)]
    print(limiter.__name__, [d.allowed for d in burst].count(True), burst[-1],
          limiter(r, "demo", now_ms=T0 + 100).allowed)

# %% [markdown] lang="en"
# ## One bursty trace through all seven
#
# One client: calm requests, fifteen just before a second boundary and fifteen just after it, two
# seconds at twenty per second, a pause, twenty-five at the same millisecond, then eight per second.

# %% [markdown] lang="ru" translated="885a08ad57f8"
# ## Одна последовательность со всплесками на всех семи
#
# Один клиент: спокойные запросы, пятнадцать прямо перед границей секунды и пятнадцать сразу после
# неё, две секунды по двадцать в секунду, пауза, двадцать пять в одну и ту же миллисекунду,
# затем по восемь в секунду.

# %% [markdown] lang="zh" translated="885a08ad57f8"
# ## 同一段突发流量通过全部七个限流器
#
# 一个客户端：先是平稳的请求，然后在秒边界之前 15 个、之后紧接着 15 个，再以每秒 20 个持续两秒，停顿一下，在同一毫秒内发出 25 个，最后每秒 8 个。

# %%
times = rl.bursty_trace()
results = {name: rl.replay(r, limiter, times, "trace") for name, limiter in rl.LIMITERS.items()}

fig, ax = plt.subplots(figsize=(10, 4.2))
for row, (name, decisions) in enumerate(results.items()):
    ok = [t / 1000 for t, d in zip(times, decisions) if d.allowed]
    no = [t / 1000 for t, d in zip(times, decisions) if not d.allowed]
    ax.scatter(ok, [row - 0.15] * len(ok), marker="|", s=90, color="tab:green")   # allowed: upper line
    ax.scatter(no, [row + 0.18] * len(no), marker="x", s=14, color="tab:red")     # denied: lower line
for s in range(7):
    ax.axvline(s, color=charts.THEMES["light"]["grid"], zorder=0)
ax.set_yticks(range(len(results)), [_(name) for name in results])
ax.invert_yaxis()
ax.set_xlabel(_("seconds (green, upper: allowed; red, lower: denied; 25 requests arrive at 4.0 s)"))
ax.set_title(_("10 requests per second, one bursty client"))
fig.tight_layout()
counts = charts.listing(_("{limiter}: {allowed}", limiter=_(name), allowed=sum(d.allowed for d in decisions))
                        for name, decisions in results.items())
charts.show(fig, alt=_("Timeline of one bursty client's {n} requests over 7 seconds through seven limiters of 10 "
                       "requests per second; requests allowed of {n}: {counts}.", n=len(times), counts=counts))

# %% [markdown] lang="en"
# The largest number admitted in any one-second window (anywhere, not only aligned ones), and
# round trips per decision, counted on the wire:

# %% [markdown] lang="ru" translated="537c741b1a2b"
# Наибольшее число пропущенных запросов в любом односекундном окне (в любом месте, не только
# выровненном) и число сетевых обменов на одно решение, подсчитанное по трафику соединения:

# %% [markdown] lang="zh" translated="537c741b1a2b"
# 任意一秒窗口内（任意位置，不限于对齐的窗口）放行的最大请求数，以及每次决策的往返次数（在连接层实际计数）：

# %%
def round_trips(limiter, n=20):
    limiter(r, "rt-warmup", now_ms=T0)                    # the first call may load the script
    with rl.count_round_trips() as c:
        for i in range(n):
            limiter(r, "rt", now_ms=T0 + i)
    return c["n"] / n


trace_rows = []
for name, decisions in results.items():
    allowed = [d.allowed for d in decisions]
    trace_rows.append((_(name), f"{sum(allowed)}/{len(times)}", rl.max_in_any_window(times, allowed),
                       round_trips(rl.LIMITERS[name])))
print_table([_("limiter"), _("allowed"), _("max in 1 s"), _("round trips")], trace_rows)

# %% [markdown] lang="en"
# The published limiters, for comparison: round trips per request while they allow (the first five
# requests of an IP):

# %% [markdown] lang="ru" translated="e6f3171f200a"
# Для сравнения — опубликованные ограничители: сетевых обменов на запрос, пока они пропускают (первые пять
# запросов с одного IP):

# %% [markdown] lang="zh" translated="e6f3171f200a"
# 作为对比，文档中的限流器：放行期间每个请求的往返次数（同一 IP 的前 5 个请求）：

# %%
def published_round_trips(variant, n=5):
    """Round trips per request for the first `n` (allowed) requests of an IP."""
    rl.run(variant(r, f"rt-warmup-{variant.__name__}"))   # the first call may load a script
    with rl.count_round_trips() as c:
        for _ in range(n):
            rl.run(variant(r, f"rt-{variant.__name__}"))
    return c["n"] / n


for variant in (rl.limiter1_get_then_multi, rl.limiter1_multi_then_check, rl.limiter2, rl.limiter2_lua,
                rl.list_limiter):
    print(f"{variant.__name__:26} {published_round_trips(variant)}")

# %% [markdown] lang="en"
# (`limiter2` takes 3 round trips for the first request of a window and 2 for the others.)
#
# ## How wrong is the sliding window counter?
#
# It assumes the previous window's requests were spread evenly. A seeded random trace of
# 2,000 requests at changing rates, decided by the exact sliding log and by the counter:

# %% [markdown] lang="ru" translated="a20a35ee36f2"
# (`limiter2` делает 3 обмена для первого запроса окна и 2 для остальных.)
#
# ## Насколько ошибается счётчик скользящего окна?
#
# Он предполагает, что запросы предыдущего окна распределены равномерно. Случайная (с фиксированным
# seed) последовательность из 2 000 запросов с меняющейся частотой; решения точного скользящего
# журнала и счётчика:

# %% [markdown] lang="zh" translated="a20a35ee36f2"
# （`limiter2` 对窗口内的第一个请求需要 3 次往返，其余请求 2 次。）
#
# ## 滑动窗口计数器误差有多大？
#
# 它假设前一个窗口内的请求是均匀分布的。用固定随机种子生成 2000 个请求、速率不断变化的流量，分别交给精确的滑动日志和计数器来判断：

# %%
rng = random.Random(4)
t, noisy = 0, []
for i in range(2000):
    rate = rng.choice([4, 9, 12, 30])                     # requests per second, changing
    t += max(1, int(rng.expovariate(rate) * 1000))
    noisy.append(t)
exact = [d.allowed for d in rl.replay(r, rl.sliding_log, noisy, "noisy")]
approx = [d.allowed for d in rl.replay(r, rl.sliding_window_counter, noisy, "noisy")]
differ = sum(a != b for a, b in zip(exact, approx))
print(_("decisions that differ: {differ} of {total} ({share:.1%})", differ=differ, total=len(noisy),
        share=differ / len(noisy)))
print(_("allowed: exact {exact}, counter {counter}", exact=sum(exact), counter=sum(approx)))
print(_("max in any 1 s window: exact {exact}, counter {counter}", exact=rl.max_in_any_window(noisy, exact),
        counter=rl.max_in_any_window(noisy, approx)))

# %% [markdown] lang="en"
# ## Memory per client key
#
# `MEMORY USAGE` exists only on a real server. The key of one client after `limit` requests, as the
# limit grows (bytes; the numbers depend on the server's version and allocator):

# %% [markdown] lang="ru" translated="6326ca71c881"
# ## Память на ключ клиента
#
# `MEMORY USAGE` есть только у настоящего сервера. Ключ одного клиента после `limit` запросов при
# растущем лимите (байты; числа зависят от версии сервера и аллокатора):

# %% [markdown] lang="zh" translated="6326ca71c881"
# ## 每个客户端键占用的内存
#
# `MEMORY USAGE` 只有真正的服务器才支持。随着限制增大，一个客户端在 `limit` 个请求之后其键的大小（字节；具体数字取决于服务器版本和内存分配器）：

# %% tags=["varies"]
if needs_real_redis(r, "MEMORY USAGE"):
    limits_ = [10, 100, 1000, 10000]
    memory_rows = []
    for name, limiter in rl.LIMITERS.items():
        sizes = [r.memory_usage(rl.fill(r, limiter, f"mem{n}", n, n, now_ms=T0), samples=0) for n in limits_]
        memory_rows.append((_(name), *sizes))
    print_table([_("limiter"), *map(str, limits_)], memory_rows)

# %% [markdown] lang="en"
# ## Every key has a TTL
#
# After everything above, no limiter key is left without one:

# %% [markdown] lang="ru" translated="a319d01a1534"
# ## У каждого ключа есть TTL
#
# После всего, что было выше, ни один ключ ограничителей не остался без него:

# %% [markdown] lang="zh" translated="a319d01a1534"
# ## 每个键都有 TTL
#
# 经过上面所有操作之后，没有任何一个限流器的键缺少 TTL：

# %%
print(rl.keys_without_ttl(r, "rl:*"))

# %% [markdown] lang="en"
# ## Serving it: HTTP 429
#
# A small Starlette app puts GCRA in front of every request, keyed by the client's IP. A denied
# request gets `429 Too Many Requests` with `Retry-After`; every response carries the
# `RateLimit-Policy` and `RateLimit` fields of the IETF draft. The test client's clock is controlled.

# %% [markdown] lang="ru" translated="af7c7bd89be8"
# ## Как отдать это клиенту: HTTP 429
#
# Небольшое приложение на Starlette пропускает каждый запрос через GCRA, используя IP клиента как ключ.
# Отклонённый запрос получает `429 Too Many Requests` с `Retry-After`; каждый ответ несёт поля
# `RateLimit-Policy` и `RateLimit` из черновика IETF. Часы тестового клиента управляемые.

# %% [markdown] lang="zh" translated="af7c7bd89be8"
# ## 对外提供：HTTP 429
#
# 一个小型 Starlette 应用在每个请求前面放一个 GCRA，按客户端 IP 计数。被拒绝的请求得到带 `Retry-After` 的 `429 Too Many Requests`；每个响应都带有 IETF 草案中的 `RateLimit-Policy` 和 `RateLimit` 字段。测试客户端的时钟是可控的。

# %%
from starlette.testclient import TestClient

clock = {"now_ms": T0}
client = TestClient(rl.make_app(r, clock=lambda: clock["now_ms"]))
for i in range(11):
    response = client.get("/")
for name in ("RateLimit-Policy", "RateLimit", "Retry-After"):
    print(f"{name}: {response.headers.get(name)}")
print(response.status_code, response.json())
clock["now_ms"] += 100
print(client.get("/").status_code)

# %% [markdown] lang="en"
# This run's keys go when you are done:

# %% [markdown] lang="ru" translated="4c4c8248173b"
# Ключи этого запуска удаляются в конце:

# %% [markdown] lang="zh" translated="4c4c8248173b"
# 最后删除本次运行的键：

# %%
print(r.cleanup() > 0)

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
# # Durable counters and a delayed queue
#
# What survives a crash? First the server: a private `redis-server` with RDB, AOF `everysec` and
# AOF `always`, killed with SIGKILL while a client increments. Then the application: counters in
# Redis flushed to a SQL ledger, crashed on purpose at every step. Then `DECR`, and a delayed task
# queue from a web article, rebuilt so that no task is lost and a task run twice does its work once. The code lives in
# `redis_course.lessons.durable`; `show()` prints what the notebook runs.

# %% [markdown] lang="ru" translated="b234ce9db541"
# # Надёжные счётчики и отложенная очередь
#
# Что переживает падение? Сначала сервер: приватный `redis-server` с RDB, AOF `everysec` и AOF
# `always`, который убивают SIGKILL, пока клиент увеличивает счётчик. Потом приложение: счётчики в
# Redis, которые выгружаются в учётную SQL-базу, и мы нарочно роняем выгрузку на каждом шаге. Потом
# `DECR` и отложенная очередь задач из веб-статьи, переделанная так, чтобы ни одна задача не терялась, а
# задача, выполненная дважды, делала свою работу один раз. Код лежит в `redis_course.lessons.durable`; `show()` печатает то, что
# выполняет блокнот.

# %% [markdown] lang="zh" translated="b234ce9db541"
# # 持久可靠的计数器与延迟队列
#
# 崩溃之后还剩下什么？先看服务器：一个私有的 `redis-server`，分别用 RDB、AOF `everysec` 和 AOF `always`，在客户端不断自增时用 SIGKILL 杀掉。再看应用：计数器放在 Redis，定期落到 SQL 账本，我们在每一步故意让落库崩溃。然后是 `DECR`，以及一篇网络文章里的延迟任务队列——重建之后，任务不会丢，被执行两次的任务也只生效一次。代码在 `redis_course.lessons.durable` 中；`show()` 打印笔记本实际运行的代码。

# %% tags=["varies"]
# %matplotlib inline
import threading
from collections import Counter

import matplotlib.pyplot as plt

from redis_course import charts, connect, needs_real_redis
from redis_course.l10n import _, say
from redis_course.lessons import durable as d
from redis_course.lessons import show
from redis_course import redis_server_binary
from redis_course.tables import print_table

r = connect(verbose=True)

# %% [markdown] lang="en"
# ## Persistence, measured
#
# `measure_loss` starts a private server, sends `INCR` as fast as one client can for a second,
# kills the server with SIGKILL (no shutdown, no last save), starts it again on the same data
# directory and compares the value with the last reply the client received. Every reply was an
# acknowledgement: the client was told "your increment is done".

# %% [markdown] lang="ru" translated="9dfe7085d64c"
# ## Персистентность в цифрах
#
# `measure_loss` запускает приватный сервер, секунду шлёт `INCR` так быстро, как может один клиент,
# убивает сервер SIGKILL (без остановки и без последнего сохранения), запускает его снова на том же
# каталоге данных и сравнивает значение с последним ответом, который получил клиент. Каждый ответ —
# подтверждение: клиенту сообщили «ваш инкремент выполнен».

# %% [markdown] lang="zh" translated="9dfe7085d64c"
# ## 持久化，实测
#
# `measure_loss` 启动一个私有服务器，用一个客户端以最快速度发送 `INCR` 一秒钟，然后用 SIGKILL 杀掉服务器（不经过正常关闭，也不做最后一次保存），在同一个数据目录上重新启动，再把值与客户端收到的最后一个回复比较。每个回复都是一次确认：客户端被告知“你的自增已经完成”。

# %%
show(d.measure_loss)

# %% tags=["varies"]
if redis_server_binary() is None:
    print(_("redis-server is not installed here: the measurement is skipped (the table below is from the lesson page)."))
    runs = []
else:
    runs = [d.measure_loss(mode, seconds=0.8) for _ in range(3) for mode in d.MODES]
    print_table([_("mode"), _("acked"), _("survived"), _("lost"), "INCR/s"],
                [(run["mode"], run["acked"], run["survived"], run["lost"], f"{run['ops_per_s']:.0f}") for run in runs])

# %% tags=["varies"]
if runs:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
    for i, mode in enumerate(d.MODES):
        mine = [run for run in runs if run["mode"] == mode]
        ax1.scatter([i] * len(mine), [run["lost"] for run in mine], s=30)
        ax2.bar(i, sum(run["ops_per_s"] for run in mine) / len(mine))
    for ax, label in ((ax1, _("acknowledged INCRs lost")), (ax2, _("INCR per second, one client"))):
        ax.set_xticks(range(len(d.MODES)), d.MODES)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    summary = charts.listing(_("{mode}: lost {lost}, {ops:,.0f} INCR/s", mode=mode,
                          lost=charts.listing((run["lost"] for run in runs if run["mode"] == mode), ", "),
                          ops=sum(run["ops_per_s"] for run in runs if run["mode"] == mode) / 3)
                        for mode in d.MODES)
    charts.show(fig, alt=_("Two charts of three runs per persistence mode: acknowledged INCRs lost after SIGKILL, "
                           "and INCR per second from one client. {summary}.", summary=summary))

# %% [markdown] lang="en"
# What the numbers say, run after run:
#
# * **RDB** (`save 1 1`: a snapshot at most once a second) loses everything written since the
#   last snapshot *started*: often the whole run, sometimes all but the first second.
# * **AOF `everysec`** lost nothing here. Redis `write()`s the log to the operating system before
#   it replies; SIGKILL kills the process, not the kernel, so the page cache still reaches the
#   disk. (While the previous background `fsync` is still running, on a slow disk, Redis postpones
#   the `write()` for up to 2 s and keeps replying: a SIGKILL then loses those writes too.) What
#   `everysec` risks above all is a **power cut or kernel crash**: up to about a second of writes
#   that the kernel had not yet flushed (`fsync` runs once a second in the background).
# * **AOF `always`** also survives a power cut (it `fsync`s before replying), and pays for it:
#   one client, waiting for an `fsync` before each reply, gets more than an order of magnitude fewer
#   increments per second (≈1,400 against ≈24,900 on the lesson page; the exact ratio depends on the
#   disk). Many clients share each `fsync`, so the gap narrows under concurrency.
#
# A SIGKILL is what an OOM kill or a crash of Redis looks like; it is not a power cut, which no
# notebook can simulate honestly.
#
# The modes above were set on purpose. A Redis 7 started without a configuration file (and
# Debian's `redis.conf`, which keeps the same values) uses snapshots only: after an hour if one key
# changed, after 5 minutes if 100 did, after a minute if 10,000 did, and no AOF. Asked from a
# private server started with its defaults:

# %% [markdown] lang="ru" translated="bb5b29d998d5"
# Что говорят цифры от запуска к запуску:
#
# * **RDB** (`save 1 1`: снимок не чаще раза в секунду) теряет всё, что записано после *начала*
#   последнего снимка: часто весь прогон, иногда всё, кроме первой секунды.
# * **AOF `everysec`** здесь не потерял ничего. Redis передаёт журнал операционной системе через
#   `write()` до ответа клиенту; SIGKILL убивает процесс, а не ядро, и данные из страничного кэша всё
#   равно попадают на диск. (Пока предыдущий фоновый `fsync` ещё идёт, на медленном диске, Redis
#   откладывает `write()` до 2 с и продолжает отвечать: тогда SIGKILL теряет и эти записи.) Прежде
#   всего `everysec` рискует при **отключении питания или падении ядра**: до примерно
#   секунды записей, которые ядро ещё не сбросило на диск (`fsync` выполняется раз в секунду в фоне).
# * **AOF `always`** переживает и отключение питания (делает `fsync` до ответа), но платит за это:
#   один клиент, который перед каждым ответом ждёт `fsync`, получает больше чем на порядок меньше
#   инкрементов в секунду (≈1 400 против ≈24 900 на странице урока; точное соотношение зависит от
#   диска). Много клиентов делят один `fsync`, поэтому при конкуренции разрыв сокращается.
#
# Именно так, как SIGKILL, выглядит убийство процесса OOM killer'ом или падение Redis; но это не
# отключение питания, которое честно не сымитировать ни в каком блокноте.
#
# Режимы выше заданы намеренно. Redis 7, запущенный без файла конфигурации (и `redis.conf` из
# Debian, где те же значения), делает только снимки: через час, если изменился один ключ, через
# 5 минут, если изменились 100, через минуту, если 10 000, — и без AOF. Спрашиваем приватный сервер,
# запущенный с настройками по умолчанию:

# %% [markdown] lang="zh" translated="bb5b29d998d5"
# 每次运行，数字说明的都是同一件事：
#
# * **RDB**（`save 1 1`：最多每秒一次快照）会丢掉最近一次快照*开始*之后写入的一切：经常是整轮运行的全部写入，有时是除第一秒之外的全部。
# * **AOF `everysec`** 在这里一条也没丢。Redis 在回复之前就把日志 `write()` 给了操作系统；SIGKILL 杀的是进程而不是内核，页缓存照样会落盘。（磁盘较慢、上一次后台 `fsync` 还没结束时，Redis 会把 `write()` 推迟最多 2 秒，同时照常回复：这时 SIGKILL 也会丢掉这些写入。）`everysec` 最主要的风险是**断电或内核崩溃**：最多约一秒、内核尚未刷盘的写入（`fsync` 每秒在后台执行一次）。
# * **AOF `always`** 连断电也扛得住（回复前先 `fsync`），代价是：单个客户端每次都要等 `fsync` 完成才能收到回复，每秒的自增次数少了一个数量级以上（本课页面上是约 1,400 对约 24,900；具体比例取决于磁盘）。多个客户端可以共享一次 `fsync`，所以并发时差距会缩小。
#
# SIGKILL 模拟的是 OOM kill 或 Redis 崩溃；它不是断电，断电没有哪个笔记本能诚实地模拟。
#
# 上面的几种模式都是特意设置的。不带配置文件启动的 Redis 7（以及沿用相同取值的 Debian `redis.conf`）只做快照：一小时内有 1 个键变化、5 分钟内有 100 个、或 1 分钟内有 10,000 个键变化时保存一次，不开 AOF。下面向一个以默认设置启动的私有服务器查询：

# %%
from redis_course import private_redis

if redis_server_binary() is None:
    print(_("redis-server is not installed here: see the lesson page for Redis 7.0's defaults."))
else:
    with private_redis("default") as srv:
        print(sorted(srv.client(prefix="").config_get("save", "appendonly", "appendfsync").items()))

# %% [markdown] lang="en"
# For a counter that means a restart takes it back to the last snapshot: up to a minute of
# increments under heavy traffic, up to an hour when traffic is light. That can be far more than
# "a few dozen values", and ids handed out since the snapshot are handed out again (lesson 01).
#
# `appendfsync always` keeps every acknowledged write on *this* server. It does not survive a
# failover: replication is asynchronous. A primary and a replica, both with `always`; the replica is
# frozen and cut off (a partition), the primary acknowledges 50 more increments, each one fsynced to
# its own AOF, then dies, and the replica is promoted. `WAIT 1 100` had answered 0: no replica
# had them.

# %% [markdown] lang="ru" translated="10f1b7103359"
# Для счётчика это значит, что перезапуск откатывает его к последнему снимку: до минуты инкрементов
# при большом трафике и до часа при маленьком. Это может быть куда больше, чем «несколько десятков
# значений», а идентификаторы, выданные после снимка, выдаются повторно (урок 01).
#
# `appendfsync always` сохраняет каждую подтверждённую запись на *этом* сервере. Переключение на
# реплику он не переживает: репликация асинхронная. Основной сервер и реплика, оба с `always`;
# реплику приостанавливают и отрезают (сетевое разделение), основной подтверждает ещё 50 инкрементов,
# каждый из которых записан через fsync в его собственный AOF, затем падает, и реплику повышают.
# `WAIT 1 100` ответил 0: ни у одной реплики этих записей не было.

# %% [markdown] lang="zh" translated="10f1b7103359"
# 对计数器来说，这意味着重启会让它回到最近一次快照：流量大时丢掉最多一分钟的自增，流量小时最多一小时。这可能远远不止“几十个值”，而且快照之后发出的 ID 会被再发一次（第 01 课）。
#
# `appendfsync always` 能在*这台*服务器上保住每一次已确认的写入，却扛不住故障转移：复制是异步的。一个主节点和一个副本，都用 `always`；把副本暂停并切断连接（网络分区），主节点又确认了 50 次自增，每一次都先 fsync 到它自己的 AOF，然后主节点挂掉，副本被提升为主节点。`WAIT 1 100` 返回的是 0：没有任何副本拿到这些写入。

# %%
from redis_course.lessons import failover

show(failover.failover_with_always)
if redis_server_binary() is not None:
    for key, value in failover.failover_with_always().items():
        print(f"{key:<25} {value}")

# %% [markdown] lang="en"
# The old primary's AOF still holds 150, and it does not matter: when it comes back as a replica of
# the new primary it resynchronises, and the 50 are gone for good. `WAIT` (and `WAITAOF`, Redis
# 7.2+, which waits for the AOF fsync locally and on replicas) only report how far a write got;
# they neither block the failover nor undo the write.

# %% [markdown] lang="ru" translated="aec2c75ba3df"
# В AOF старого основного сервера по-прежнему 150, но это ничего не меняет: когда он возвращается
# репликой нового основного, он синхронизируется заново, и эти 50 пропадают навсегда. `WAIT` (и
# `WAITAOF` из Redis 7.2+, который ждёт fsync в AOF локально и на репликах) лишь сообщают, куда
# успела дойти запись; они не мешают переключению и не отменяют запись.

# %% [markdown] lang="zh" translated="aec2c75ba3df"
# 旧主节点的 AOF 里仍然是 150，但这无济于事：它作为新主节点的副本回来时会重新同步，这 50 次就永远消失了。`WAIT`（以及 Redis 7.2+ 的 `WAITAOF`，它等待本地和副本上的 AOF fsync）只报告一次写入传到了哪里；它们既不会阻止故障转移，也不会撤销写入。

# %% [markdown] lang="en"
# ## Billing-grade counters
#
# Redis counts, a SQL database keeps the books. The ledger is SQLite in a temporary folder, or
# PostgreSQL when `DATABASE_URL` is set (tables get a per-run prefix and are dropped at the end).

# %% [markdown] lang="ru"
# ## Счётчики для биллинга
#
# Redis считает, SQL-база ведёт учёт. Учётная база — SQLite во временном каталоге или PostgreSQL, если
# задан `DATABASE_URL` (у таблиц префикс этого запуска, в конце они удаляются).

# %% [markdown] lang="zh"
# ## 计费级别的计数器
#
# Redis 负责计数，SQL 数据库负责记账。账本默认是临时目录里的 SQLite；设置了 `DATABASE_URL` 时用 PostgreSQL（表名带本次运行的前缀，结束时删除）。

# %% tags=["varies"]
ledger_cm = d.temporary_ledger()
ledger = ledger_cm.__enter__()
print(ledger.kind)

# %% [markdown] lang="en"
# ### The naive flush loses increments
#
# `GET` the counter, add it in SQL, `SET` it to 0. Four threads increment while a fifth flushes
# in a loop:

# %% [markdown] lang="ru" translated="b938436215bb"
# ### Наивная выгрузка теряет инкременты
#
# `GET` счётчика, прибавить значение в SQL, `SET` в 0. Четыре потока увеличивают счётчик, пятый в цикле
# выгружает его:

# %% [markdown] lang="zh" translated="b938436215bb"
# ### 朴素的落库会丢自增
#
# `GET` 计数器，在 SQL 里加上，再 `SET` 为 0。四个线程不断自增，第五个线程循环落库：

# %%
show(d.flush_naive)

# %% tags=["varies"]
traffic = {f.__name__: d.flush_under_traffic(r, ledger, f, f.__name__, per_incrementer=500)
           for f in (d.flush_naive, d.flush_getdel, d.flush_safe)}
for name, res in traffic.items():
    print(f"{name:<13} {res}")

# %% [markdown] lang="en"
# Each `SET 0` erases the increments that arrived after its `GET`. The number changes from run to
# run; `GETDEL` and the safe flush lose nothing:

# %% [markdown] lang="ru" translated="a88efbae4470"
# Каждый `SET 0` стирает инкременты, пришедшие после его `GET`. Число меняется от запуска к запуску;
# `GETDEL` и надёжная выгрузка не теряют ничего:

# %% [markdown] lang="zh" translated="a88efbae4470"
# 每一次 `SET 0` 都抹掉了它那次 `GET` 之后到达的自增。这个数字每次运行都不同；`GETDEL` 和安全的落库一条都不丢：

# %%
print(traffic["flush_naive"]["lost"] > 0, traffic["flush_getdel"]["lost"], traffic["flush_safe"]["lost"])

# %% [markdown] lang="en"
# ### A crash at every step
#
# Each flusher takes `crash_at`: after that step it raises `SimulatedCrash`, as if the process had
# died there (an open SQL transaction is rolled back). For each step: count 10, flush and crash,
# count 1 more, flush twice normally, and compare the database with the 11 increments.

# %% [markdown] lang="ru" translated="ef973889d26c"
# ### Падение на каждом шаге
#
# Каждый вариант выгрузки принимает `crash_at`: после этого шага он бросает `SimulatedCrash`, как будто
# процесс умер именно там (открытая SQL-транзакция откатывается). Для каждого шага: насчитать 10,
# выгрузить с падением, насчитать ещё 1, дважды выгрузить нормально и сравнить базу с 11 инкрементами.

# %% [markdown] lang="zh" translated="ef973889d26c"
# ### 在每一步崩溃
#
# 每个落库函数都接受 `crash_at`：在那一步之后抛出 `SimulatedCrash`，就像进程正好死在那里（未提交的 SQL 事务会回滚）。对每一步：先自增 10 次，落库时崩溃，再自增 1 次，然后正常落库两次，然后把数据库与 11 次自增比较。

# %%
def crash_then_recover(flush, step):
    name = f"{flush.__name__}-{step}"
    r.incrby(r.key("counter", name), 10)
    try:
        flush(r, ledger, name, crash_at=step)
    except d.SimulatedCrash:
        pass
    r.incr(r.key("counter", name))
    flush(r, ledger, name)
    flush(r, ledger, name)
    return ledger.total(name)


print_table([_("flusher"), *d.STEPS], [(flush.__name__, *(crash_then_recover(flush, step) for step in d.STEPS))
                                       for flush in (d.flush_naive, d.flush_getdel, d.flush_safe)])

# %% [markdown] lang="en"
# The naive flush counts 10 twice after a crash between the commit and `SET 0` (21). `GETDEL`
# loses the 10 when it dies holding them (1). The safe flush always ends at 11:

# %% [markdown] lang="ru" translated="1a87835b9b1e"
# Наивная выгрузка после падения между коммитом и `SET 0` считает 10 дважды (21). `GETDEL` теряет
# 10, если процесс умирает, держа их в памяти (1). Надёжная выгрузка всегда приходит к 11:

# %% [markdown] lang="zh" translated="1a87835b9b1e"
# 朴素落库在提交与 `SET 0` 之间崩溃后，把 10 算了两次（21）。`GETDEL` 在手里攥着这 10 时死掉，就把它们丢了（1）。安全的落库总是得到 11：

# %%
show(d.CLAIM_PENDING)
show(d.flush_safe)
show(d.Ledger.add_once)

# %% [markdown] lang="en"
# The pending key keeps the value in Redis until the database has it; the flush id recorded in
# the same transaction makes a second application a no-op. At any moment, the SQL total plus the
# live counter plus a pending value whose id the database has not seen is the exact count:

# %% [markdown] lang="ru" translated="2de8d398097c"
# Ожидающий ключ держит значение в Redis, пока оно не попало в базу; номер выгрузки, записанный
# в той же транзакции, превращает повторное применение в пустую операцию. В любой момент сумма
# SQL-итога, текущего счётчика и ожидающего значения, чей номер база ещё не видела, — точное число:

# %% [markdown] lang="zh" translated="2de8d398097c"
# 待处理键把值留在 Redis 里，直到数据库拿到它；同一个事务里记录的 flush id 让第二次应用变成空操作。任何时刻，SQL 总数加上实时计数器，再加上数据库还没见过其 id 的待处理值，就是精确的计数：

# %%
name = "invariant"
r.incrby(r.key("counter", name), 5)
for step in d.STEPS:
    try:
        d.flush_safe(r, ledger, name, crash_at=step)
    except d.SimulatedCrash:
        pass
    r.incr(r.key("counter", name))
    print(step, d.counted(r, ledger, name))
d.flush_safe(r, ledger, name)
d.flush_safe(r, ledger, name)
print(ledger.total(name), r.exists(*d.pending_keys(r, name)[:3]))

# %% [markdown] lang="en"
# ### Redis and the ledger in "one transaction"
#
# A tempting shortcut is to skip the flusher: increment in Redis and write the ledger inside one
# SQL transaction. The transaction covers the database only. Send the `INCRBY` before the `COMMIT`
# and die in between: the database rolls back, Redis keeps the increment. Send it after the
# `COMMIT` and die in between: the ledger has it, Redis does not.

# %% [markdown] lang="ru" translated="5f63b9911fb6"
# ### Redis и учётная база «в одной транзакции»
#
# Соблазнительно обойтись без выгрузки: увеличить счётчик в Redis и записать учёт в одной
# SQL-транзакции. Но транзакция охватывает только базу данных. Отправьте `INCRBY` до `COMMIT` и
# упадите между ними: база откатится, а Redis сохранит инкремент. Отправьте его после `COMMIT` и
# упадите между ними: в учёте он есть, в Redis — нет.

# %% [markdown] lang="zh" translated="5f63b9911fb6"
# ### Redis 和账本放在“同一个事务”里
#
# 一个诱人的捷径是不要落库任务：在同一个 SQL 事务里既在 Redis 中自增、又写账本。但事务只覆盖数据库。如果在 `COMMIT` 之前发送 `INCRBY`，并在两者之间崩溃：数据库回滚了，Redis 却保留了这次自增。如果在 `COMMIT` 之后发送，并在两者之间崩溃：账本里有，Redis 里没有。

# %%
from redis_course.lessons import dualwrite as dw

show(dw.dual_write)
for label, after_commit, step in [("INCRBY before COMMIT, dies before COMMIT", False, "redis"),
                                  ("INCRBY after COMMIT, dies before INCRBY", True, "committed")]:
    name = f"dual-{int(after_commit)}"
    try:
        dw.dual_write(r, ledger, name, 1, redis_after_commit=after_commit, crash_after=step)
    except d.SimulatedCrash:
        pass
    print(f"{label:<42} Redis {int(r.get(r.key('counter', name)) or 0)}   ledger {ledger.total(name)}")

# %% [markdown] lang="en"
# Keep one source of truth instead. Either Redis counts and the safe flush above moves the counts
# into SQL, or SQL is the truth: the event (with its id) and the total commit in one transaction,
# and a relay applies each recorded event to Redis once, with a marker per event id. After a
# crash Redis lags behind until the next relay; it never disagrees for good:

# %% [markdown] lang="ru" translated="02958ea7cc4d"
# Вместо этого держите один источник истины. Либо считает Redis, а безопасная выгрузка выше
# переносит счёт в SQL, либо истина — SQL: событие (со своим id) и итог фиксируются одной
# транзакцией, а ретранслятор применяет каждое записанное событие к Redis один раз, с меткой на
# каждый id события. После сбоя Redis отстаёт до следующего прохода ретранслятора, но не расходится
# с базой навсегда:

# %% [markdown] lang="zh" translated="02958ea7cc4d"
# 正确的做法是只保留一个事实来源（source of truth）。要么由 Redis 计数，再由上面的安全落库把计数搬进 SQL；要么以 SQL 为准：事件（带上它的 id）和总数在一个事务里提交，再由一个转发程序（relay）把每个已记录的事件应用到 Redis，每个事件 id 一个标记，只应用一次。崩溃之后 Redis 会落后，直到下一次转发；但它不会永远和数据库不一致：

# %%
show(dw.APPLY_ONCE)
dw.record(ledger, "outbox", 5, "outbox:1")
try:
    dw.record(ledger, "outbox", 7, "outbox:2", crash_at="applied")   # dies before its COMMIT
except d.SimulatedCrash:
    pass
dw.record(ledger, "outbox", 7, "outbox:2")                            # the caller retries
say(_("before the relay:"), "Redis", r.get(r.key("counter", "outbox")), "|", _("ledger"), ledger.total("outbox"))
print(_("events applied: {first}, then {second}", first=dw.relay(r, ledger, "outbox"),
        second=dw.relay(r, ledger, "outbox")))
say(_("after the relay:"), "Redis", r.get(r.key("counter", "outbox")), "|", _("ledger"), ledger.total("outbox"))

# %% tags=["varies"]
ledger_cm.__exit__(None, None, None)

# %% [markdown] lang="en"
# ## DECR in practice
#
# The article's first use: take back a mistaken view. `DECR` is atomic, but an undo that is
# retried (a client timeout, a double click) takes back two views. Let the undo carry the view's
# id and decrement only the first time:

# %% [markdown] lang="ru" translated="e2bb7a44fc3e"
# ## DECR на практике
#
# Первое применение из статьи — отменить ошибочный просмотр. `DECR` атомарен, но повторённая отмена
# (тайм-аут клиента, двойной клик) отнимет два просмотра. Пусть отмена передаёт id просмотра и уменьшает
# счётчик только в первый раз:

# %% [markdown] lang="zh" translated="e2bb7a44fc3e"
# ## DECR 实战
#
# 文章里的第一个用法：撤销一次误点的浏览。`DECR` 是原子的，但被重试的撤销（客户端超时、双击）会撤掉两次浏览。让撤销带上这次浏览的 id，只在第一次时递减：

# %%
show(d.UNDO_VIEW)
r.set(r.key("views", "post-17"), 1000)
print([d.undo_view(r, "post-17", "view-8812") for _ in range(3)])

# %% [markdown] lang="en"
# The second: count down a stock without going below zero. `DECR` first, then give the unit back
# if the reply is negative: each reply >= 0 is a distinct unit, so 16 threads buying 10 each
# from 100 seats sell exactly 100. It is two commands, though, and a process that dies between
# them keeps a seat nobody can buy (lesson 01 shows that window for money); the script that checks
# and decrements in one step sells exactly 100 too, and is the default. Checking with `GET` first
# oversells:

# %% [markdown] lang="ru" translated="b345923fa303"
# Второе: уменьшение остатка без ухода ниже нуля. Сначала `DECR`, а если ответ отрицательный —
# вернуть единицу: каждый ответ >= 0 — отдельная единица, поэтому 16 потоков, покупающих по 10 из 100
# мест, продают ровно 100. Но это две команды, и процесс, умерший между ними, удерживает место,
# которое уже никто не купит (урок 01 показывает это окно на деньгах); скрипт, который проверяет и
# уменьшает за один шаг, тоже продаёт ровно 100 и используется по умолчанию. Проверка через `GET`
# заранее продаёт лишнее:

# %% [markdown] lang="zh" translated="b345923fa303"
# 第二个用法：扣减库存且不低于零。先 `DECR`，如果回复为负就把这一件还回去：每个 >= 0 的回复都对应不同的一件，所以 16 个线程从 100 个座位中各买 10 个，恰好卖出 100 个。不过这是两条命令，进程如果在两者之间挂掉，就会占住一个谁也买不到的座位（第 01 课用金钱演示了这个窗口）；在一步之内完成检查和扣减的脚本同样恰好卖出 100 个，它是默认做法。先用 `GET` 检查的做法会超卖：

# %%
show(d.take_one)


def sell(take, key, threads=16, each=10, stock=100):
    r.set(key, stock)
    sold = []

    def buyer():
        c = connect()
        sold.append(sum(take(c, key) for _ in range(each)))

    workers = [threading.Thread(target=buyer) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return sum(sold), int(r.get(key))


print(sell(d.take_one, r.key("seats", "decr-first")))

from redis_course.lessons import money

print(sell(lambda c, key: money.withdraw(c, key, 1) >= 0, r.key("seats", "script")))

# %% tags=["varies"]
print(sell(d.take_one_check_first, r.key("seats", "check-first")))

# %% [markdown] lang="en"
# ## The article's delayed queue, as published
#
# The article creates six buckets with one line:

# %% [markdown] lang="ru" translated="9f54deffaae8"
# ## Отложенная очередь из статьи — как опубликовано
#
# Статья создаёт шесть «корзин» одной строкой:

# %% [markdown] lang="zh" translated="9f54deffaae8"
# ## 文章里的延迟队列，原样复现
#
# 文章用一行命令“创建”了六个桶：

# %%
print(r.mset({r.key("BUCKET1"): "BUCKET2", r.key("BUCKET3"): "BUCKET4", r.key("BUCKET5"): "BUCKET6"}))
print(r.get(r.key("BUCKET1")), r.type(r.key("BUCKET1")), r.exists(r.key("BUCKET2")))

# %% [markdown] lang="en"
# `MSET` takes key–value pairs: it made three strings (`BUCKET1` = `"BUCKET2"`, ...), not six
# buckets. Sorted sets need no creating, and a string in the way makes `ZADD` fail with
# `WRONGTYPE`. Then `addTask`: the comparisons after `if delay` were lost in the copy (a `<`
# swallowed as HTML). With them put back, a delay of 60 s or more falls into `else: return`, and the
# payload is never stored at all:

# %% [markdown] lang="ru" translated="7ff2949a3a9d"
# `MSET` принимает пары ключ–значение: он создал три строки (`BUCKET1` = `"BUCKET2"`, ...), а не
# шесть корзин. Упорядоченные множества не нужно создавать заранее, а строка на их месте ломает `ZADD`
# ошибкой `WRONGTYPE`. Дальше `addTask`: сравнения после `if delay` потерялись при копировании (`<`
# съеден как HTML). Если их вернуть, задержка от 60 с попадает в `else: return`, а сама задача
# (её данные) не сохраняется вообще:

# %% [markdown] lang="zh" translated="7ff2949a3a9d"
# `MSET` 接收的是键值对：它创建了三个字符串（`BUCKET1` = `"BUCKET2"`……），而不是六个桶。有序集合不需要创建，挡在那里的字符串反而会让 `ZADD` 报 `WRONGTYPE`。接着是 `addTask`：`if delay` 之后的比较在转载时丢了（`<` 被当成 HTML 吞掉）。把它们补回去之后，60 秒及以上的延迟会落进 `else: return`，而任务内容（payload）根本没有被保存：

# %%
show(d.article_add_task)
T = 1_700_000_000
print(d.article_add_task(r, "send-report", 5, now=T), d.article_add_task(r, "renew", 90, now=T))
print(r.course_keys("bucket*") == [r.key("bucket2")], r.zrange(r.key("bucket2"), 0, -1, withscores=True))

# %% [markdown] lang="en"
# Task 2 (90 s) got an id and vanished. `loopTask` then asks for everything due before
# `now + 10`: a task due in 5 s runs at once.

# %% [markdown] lang="ru" translated="67cc9f0f1957"
# Задача 2 (90 с) получила id и исчезла. А `loopTask` запрашивает всё, что наступает раньше
# `now + 10`: задача со сроком через 5 с выполняется сразу.

# %% [markdown] lang="zh" translated="67cc9f0f1957"
# 任务 2（90 秒）拿到了 id 就消失了。而 `loopTask` 取的是 `now + 10` 之前到期的一切：5 秒后才到期的任务会被立刻执行。

# %%
ran = []
d.article_loop_once(r, now=T, execute=lambda task_id: ran.append((task_id, "due at", T + 5, "ran at", T)))
print(ran)

# %% [markdown] lang="en"
# Two workers poll the same bucket. Each reads the due ids with `ZRANGEBYSCORE`, then removes and
# runs them; the reply of `ZREM` (1 if this worker removed it, 0 if somebody else did) is
# ignored. Step by step:

# %% [markdown] lang="ru" translated="78a624eeb8b5"
# Два воркера опрашивают одну корзину. Каждый читает готовые id через `ZRANGEBYSCORE`, потом удаляет
# и выполняет их; ответ `ZREM` (1 — удалил этот воркер, 0 — кто-то другой) игнорируется. По шагам:

# %% [markdown] lang="zh" translated="78a624eeb8b5"
# 两个工作进程轮询同一个桶。每个都先用 `ZRANGEBYSCORE` 读出到期的 id，再删除并执行；`ZREM` 的回复（1 表示这个工作进程删掉了它，0 表示被别人删了）被忽略。一步一步来：

# %%
bucket = r.key("bucket1")
r.zadd(bucket, {"41": T - 1})
seen_by_a = r.zrangebyscore(bucket, 0, T)      # worker A
seen_by_b = r.zrangebyscore(bucket, 0, T)      # worker B, before A's ZREM
print(seen_by_a, seen_by_b, r.zrem(bucket, "41"), r.zrem(bucket, "41"))

# %% [markdown] lang="en"
# Both run task 41. With four threads running `checkTask` on 2,000 due tasks, how many ran more
# than once varies with the scheduling:

# %% [markdown] lang="ru" translated="97e416f90a93"
# Оба выполняют задачу 41. Если четыре потока крутят `checkTask` на 2 000 готовых задач, число задач,
# выполненных больше одного раза, зависит от планирования потоков:

# %% [markdown] lang="zh" translated="97e416f90a93"
# 两个都执行了任务 41。如果四个线程对 2000 个到期任务跑 `checkTask`，被执行不止一次的任务有多少，取决于线程调度：

# %% tags=["varies"]
def article_race(tasks=2000, workers=4):
    r.zadd(bucket, {str(i): T - 1 for i in range(tasks)})
    runs, lock = [], threading.Lock()

    def worker():
        c = connect()
        while c.zcard(bucket):
            d.article_check_task(c, T, lambda task_id: (lock.acquire(), runs.append(task_id), lock.release()))

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(1 for times in Counter(runs).values() if times > 1)


print(_("tasks run twice or more: {n} of 2000", n=article_race()))

# %% [markdown] lang="en"
# ### And the rest
#
# The article has more defects than the four above. redis-py returns **bytes** unless the client
# decodes replies, so the ids that `ZRANGEBYSCORE` returns build keys like `taskb'1'`:

# %% [markdown] lang="ru" translated="cd0a26bed275"
# ### И остальное
#
# Ошибок в статье больше четырёх, перечисленных выше. redis-py возвращает **байты**, если клиент не
# декодирует ответы, поэтому id, которые вернул `ZRANGEBYSCORE`, превращаются в ключи вида `taskb'1'`:

# %% [markdown] lang="zh" translated="cd0a26bed275"
# ### 还有更多
#
# 文章的缺陷不止上面四个。除非客户端对回复做解码，redis-py 返回的是 **bytes**，所以用 `ZRANGEBYSCORE` 返回的 id 拼出来的键是 `taskb'1'` 这样的：

# %%
raw = connect(decode_responses=False)          # redis.Redis() as the article creates it
raw.zadd(r.key("bucket9"), {"1": T})
task_id = raw.zrangebyscore(r.key("bucket9"), 0, T)[0]
print(task_id, "->", "task" + str(task_id))

# %% [markdown] lang="en"
# The article is about `DECR`, and its code never sends it: here is every redis-py method its
# functions call while adding a task and running one turn of the loop:

# %% [markdown] lang="ru" translated="df6856a2399c"
# Статья посвящена `DECR`, но её код его ни разу не вызывает: вот все методы redis-py, которые её
# функции вызывают, пока добавляют задачу и проходят один круг цикла:

# %% [markdown] lang="zh" translated="df6856a2399c"
# 这篇文章讲的是 `DECR`，它的代码却一次也没有调用它：下面是文章里的函数在添加一个任务并运行一轮循环时调用的全部 redis-py 方法：

# %%
class Recorder:
    """Stands in for the client and notes the name of every client method the article's code calls."""

    def __init__(self, client):
        self.client, self.called = client, set()

    def key(self, *parts):
        return self.client.key(*parts)

    def __getattr__(self, name):
        self.called.add(name)
        return getattr(self.client, name)


recorder = Recorder(r)
d.article_add_task(recorder, "send-report", 5, now=T)
d.article_loop_once(recorder, now=T, execute=lambda task_id: None)
say(sorted(recorder.called), "|", _("decr called:"), "decr" in recorder.called)

# %% [markdown] lang="en"
# Its text and its code disagree twice. The text says the loop then waits 60 seconds for new
# tasks; the code sleeps 1 second. The text says the check looks a few seconds into the past
# ("the current time minus 1 to 10 seconds"); the check asks for `0 … now` and the loop for
# `0 … now + 10`. Five tasks, and what each range picks: the text's window misses a task that fell
# due while the worker was down, the loop's runs tasks early.

# %% [markdown] lang="ru" translated="e43df94eb791"
# Текст и код статьи расходятся дважды. Текст говорит, что затем цикл 60 секунд ждёт новых задач, а
# код спит 1 секунду. Текст говорит, что проверка смотрит на несколько секунд в прошлое («текущее
# время минус от 1 до 10 секунд»), а проверка запрашивает `0 … now`, цикл — `0 … now + 10`. Пять
# задач и то, что выбирает каждый диапазон: окно из текста пропускает задачу, срок которой наступил,
# пока воркер не работал, а диапазон цикла запускает задачи раньше срока.

# %% [markdown] lang="zh" translated="e43df94eb791"
# 文章的文字和代码有两处对不上。文字说循环随后会等待 60 秒接收新任务，代码却只 sleep 1 秒。文字说检查的是过去几秒（“当前时间减去 1 到 10 秒之间”），而检查函数查询的是 `0 … now`，循环查询的是 `0 … now + 10`。五个任务，看看每个范围各取到哪些：文字里的窗口会漏掉在工作进程停机期间到期的任务，循环的范围则会提前执行任务。

# %%
ranges = r.key("ranges")
r.zadd(ranges, {"due 30 s ago": T - 30, "due 5 s ago": T - 5, "due now": T, "due in 5 s": T + 5,
                "due in 15 s": T + 15})
print("text, now-10 .. now-1:", r.zrangebyscore(ranges, T - 10, T - 1))
print("checkTask, 0 .. now:  ", r.zrangebyscore(ranges, 0, T))
print("loopTask, 0 .. now+10:", r.zrangebyscore(ranges, 0, T + 10))

# %% [markdown] lang="en"
# The code as printed does not even run: the copy turned its quotes into typographic ones, which
# Python refuses:

# %% [markdown] lang="ru" translated="8da2138b349f"
# В напечатанном виде код даже не запускается: при копировании кавычки превратились в типографские,
# а их Python не принимает:

# %% [markdown] lang="zh" translated="8da2138b349f"
# 按原样印出来的代码根本跑不起来：复制时引号变成了排版用的弯引号，Python 不认：

# %%
try:
    compile("task_id = conn.incr(\u201ctask_id\u201d)", "article.py", "exec")
except SyntaxError as exc:
    print("SyntaxError:", exc.msg)

# %% [markdown] lang="en"
# Last, the payload is deleted before the task runs. `checkTask` removes the id and deletes
# `task<id>`, then "runs" the task: the work never sees its data, and a worker that dies while
# running it leaves nothing to retry. Here the payload exists (as if `addTask` had stored it) and
# the worker dies in the task:

# %% [markdown] lang="ru" translated="0b504290df15"
# И последнее: данные задачи удаляются до того, как задача выполнится. `checkTask` убирает id и
# удаляет `task<id>`, а потом «выполняет» задачу: работа своих данных не видит, а воркер, умерший
# во время выполнения, не оставляет ничего, что можно повторить. Здесь данные есть (как если бы
# `addTask` их сохранил), а воркер умирает внутри задачи:

# %% [markdown] lang="zh" translated="0b504290df15"
# 最后，任务数据在任务执行之前就被删掉了。`checkTask` 先移除 id、删除 `task<id>`，然后才“执行”任务：任务本身拿不到它的数据，而在执行过程中挂掉的工作进程也不会留下任何可以重试的东西。这里任务数据是存在的（就当 `addTask` 把它存下来了），而工作进程在执行任务时挂掉：

# %%
r.set(r.key("task7"), "send the report to ops")
r.zadd(r.key("bucket1"), {"7": T - 1})


def dies_in_the_task(task_id):
    raise d.SimulatedCrash(_("the worker died while running task {task_id}", task_id=task_id))


try:
    d.article_check_task(r, T, dies_in_the_task)
except d.SimulatedCrash as exc:
    print(exc)
say(_("task data:"), r.get(r.key("task7")), "|", _("still due:"), r.zscore(r.key("bucket1"), "7"))

# %% [markdown] lang="en"
# ## The delayed queue, rebuilt
#
# One sorted set `queue:due` (score: due time in ms), payloads in the hash `queue:tasks`, and a
# claim that is one Lua script: it moves due tasks to `queue:processing` with a lease deadline as
# the score and counts the attempt. A worker acknowledges with the attempt it got; `recover` puts
# tasks whose lease ended back in `queue:due`. The clock is a parameter.

# %% [markdown] lang="ru" translated="69f85157622d"
# ## Отложенная очередь, собранная заново
#
# Одно упорядоченное множество `queue:due` (score — срок в мс), данные задач в хеше `queue:tasks` и
# взятие задач одним Lua-скриптом: он переносит готовые задачи в `queue:processing` с концом аренды в
# качестве score и считает попытки. Воркер подтверждает задачу номером своей попытки; `recover`
# возвращает задачи с истёкшей арендой в `queue:due`. Время — параметр.

# %% [markdown] lang="zh" translated="69f85157622d"
# ## 重建延迟队列
#
# 一个有序集合 `queue:due`（score 为毫秒级到期时间），payload 放在哈希 `queue:tasks` 中，领取（claim）是一个 Lua 脚本：它把到期任务移到 `queue:processing`，以租约截止时间为 score，并记录尝试次数。工作进程确认时带上自己领取时拿到的尝试序号（attempt）；`recover` 把租约到期的任务放回 `queue:due`。时间作为参数传入。

# %%
show(d.CLAIM)
for when, payload in [(1000, "email:1"), (3000, "email:2"), (2000, "email:3")]:
    d.schedule(r, payload, when)
print(d.claim(r, now_ms=999, lease_ms=500))
print(d.claim(r, now_ms=2000, lease_ms=500))
print(d.recover(r, now_ms=2499), d.recover(r, now_ms=2500))
again = d.claim(r, now_ms=2500, lease_ms=500)
print(again)
print([d.ack(r, task_id, attempt) for task_id, _, attempt in again], d.ack(r, 1, 1))
print(d.claim(r, now_ms=3000, lease_ms=500), d.waiting(r))

# %% [markdown] lang="en"
# The first worker claimed tasks 1 and 3 and never acknowledged them: at 2500 ms their lease
# ended, they came back with attempt 2, and the first worker's late `ack(1, 1)` was refused.
#
# So the queue runs a task **at least once** and acknowledges it once. If the first worker had done
# the work before it stalled, the work runs twice. Say task 1 adds 500 to a customer's usage. Run
# plainly (`INCRBY`) the second attempt adds it again; applied with the task id as an event id (one
# script: a marker `SET NX`, then `INCRBY`), it counts once however many attempts there are:

# %% [markdown] lang="ru" translated="ef9c5eb7000a"
# Первый воркер забрал задачи 1 и 3 и не подтвердил их: в 2 500 мс аренда истекла, они вернулись
# с attempt 2, а запоздавший `ack(1, 1)` первого воркера отклонён.
#
# Значит, очередь выполняет задачу **хотя бы один раз** и подтверждает её один раз. Если первый
# воркер успел сделать работу, прежде чем застрял, работа выполнится дважды. Пусть задача 1
# прибавляет 500 к расходу клиента. Выполненная в лоб (`INCRBY`), вторая попытка прибавит их ещё раз;
# применённая с id задачи в роли id события (один скрипт: метка через `SET NX`, затем `INCRBY`), она
# учитывается один раз, сколько бы ни было попыток:

# %% [markdown] lang="zh" translated="ef9c5eb7000a"
# 第一个工作进程领取了任务 1 和 3 却一直没有确认：到 2500 毫秒时租约到期，它们以 attempt 2 回到队列，第一个工作进程迟到的 `ack(1, 1)` 被拒绝。
#
# 所以这个队列保证的是任务**至少执行一次**、只确认一次。如果第一个工作进程在卡住之前已经完成了工作，这份工作就会执行两次。假设任务 1 要给某个客户的用量加 500。直接执行（`INCRBY`）的话，第二次尝试会再加一次；如果把任务 id 当作事件 id 来应用（一个脚本：先 `SET NX` 一个标记，再 `INCRBY`），无论尝试多少次都只算一次：

# %%
from redis_course.lessons import dualwrite as dw

plain, once = r.key("usage", "plain"), r.key("usage", "once")
for task_id, payload, attempt in [(1, "email:1", 1), (1, "email:1", 2)]:   # the two claims of task 1
    r.incrby(plain, 500)
    dw.apply_once(r, once, 500, f"task:{task_id}")
say(_("plain:"), r.get(plain), "|", _("keyed by the task id:"), r.get(once))

# %% [markdown] lang="en"
# The same works in SQL: insert the task id into a table with a unique key in the transaction that
# applies the work (as `Ledger.add_once` does with a flush id).
#
# ### Four worker processes, one of them killed
#
# Separate processes cannot share an in-process fakeredis, so this part runs on a real server
# only. 2,000 tasks due over 1.5 s, four workers, lease 500 ms; worker 0 kills itself (SIGKILL)
# in the middle of a claimed batch. `bench/durable_queue.py` does the same with 10,000 tasks.

# %% [markdown] lang="ru" translated="810b4c9dd5c8"
# То же работает и в SQL: вставляйте id задачи в таблицу с уникальным ключом в той же транзакции,
# что применяет работу (как `Ledger.add_once` делает с id выгрузки).
#
# ### Четыре процесса-воркера, один из них убит
#
# Отдельные процессы не могут делить fakeredis внутри одного процесса, поэтому эта часть работает
# только с настоящим сервером. 2 000 задач со сроками в пределах 1,5 с, четыре воркера, аренда 500 мс;
# воркер 0 убивает себя (SIGKILL) посреди забранного пакета. `bench/durable_queue.py` делает то же
# с 10 000 задачами.

# %% [markdown] lang="zh" translated="810b4c9dd5c8"
# SQL 里也是同样的做法：在应用这份工作的同一个事务里，把任务 id 插入一张带唯一键的表（就像 `Ledger.add_once` 对落库 id 所做的那样）。
#
# ### 四个工作进程，其中一个被杀
#
# 不同进程无法共享进程内的 fakeredis，所以这一部分只在真实服务器上运行。2000 个任务在 1.5 秒内陆续到期，四个工作进程，租约 500 毫秒；工作进程 0 在处理一批已领取的任务时用 SIGKILL 杀死自己。`bench/durable_queue.py` 用 10,000 个任务做同样的事。

# %% tags=["varies"]
if needs_real_redis(r, _("four worker processes")):
    import os

    result = d.run_queue(os.environ["REDIS_URL"], r.prefix, tasks=2000, spread_ms=1500, lease_ms=500)
    for key, value in result.items():
        print(f"{key:<12} {value}")
    say(_("every task ran:"), result["missing"] == 0, "|", _("none ran again after its ack:"), result["after_ack"] == 0)

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
# # Counters in production
#
# A limiter sits in front of every request, so what it does when Redis is slow, gone or full is
# part of the API's behaviour. This notebook stops and pauses a private `redis-server` under
# traffic, fills one up under each eviction policy, limits work in flight with a semaphore that a
# crashed holder cannot keep, ships the limiter as a Redis Function, and chooses what to count a
# request under; then a primary switch, connections, the numbers to watch and a hot key. The code
# lives in `redis_course.lessons` (`guard`, `outage`, `switchover`, `pools`, `eviction`,
# `semaphore`, `functions`, `identity`, `backoff`, `vitals`, `hotkeys`); `show()` prints what the
# notebook runs.
# Everything that needs `CONFIG SET`, `SIGSTOP` or a restart runs on a private server that the
# notebook starts and stops, never on yours.

# %% [markdown] lang="ru" translated="0e2feb80a562"
# # Счётчики в продакшене
#
# Ограничитель частоты стоит перед каждым запросом, поэтому то, что он делает, когда Redis тормозит,
# недоступен или переполнен, — часть поведения самого API. В этом блокноте мы останавливаем и
# приостанавливаем приватный `redis-server` под нагрузкой, заполняем его память при каждой политике
# вытеснения, ограничиваем число одновременных запросов семафором, который упавший владелец не
# удержит навсегда, поставляем ограничитель как функцию Redis и выбираем, по какому ключу считать
# запрос; затем переключение на реплику, соединения, числа для наблюдения и горячий ключ. Код лежит
# в `redis_course.lessons` (`guard`, `outage`, `switchover`, `pools`, `eviction`, `semaphore`,
# `functions`, `identity`, `backoff`, `vitals`, `hotkeys`); `show()` печатает то, что выполняет
# блокнот. Всё, что
# требует `CONFIG SET`, `SIGSTOP` или перезапуска, выполняется на приватном сервере, который блокнот
# сам запускает и останавливает, и никогда — на вашем.

# %% [markdown] lang="zh" translated="0e2feb80a562"
# # 生产环境中的计数器
#
# 限流器挡在每个请求前面，所以 Redis 变慢、宕机或内存写满时它怎么做，本身就是 API 行为的一部分。本笔记本在流量中停止和暂停一个私有的 `redis-server`，在每种淘汰策略下把它的内存写满，用一个崩溃的持有者无法永远占住的信号量限制同时在处理的请求数，把限流器作为 Redis Function 发布，并选择请求按哪个键计数；然后是故障转移、连接、需要监控的数字和热点键。代码在 `redis_course.lessons` 中（`guard`、`outage`、`switchover`、`pools`、`eviction`、`semaphore`、`functions`、`identity`、`backoff`、`vitals`、`hotkeys`）；`show()` 打印笔记本实际运行的代码。凡是需要 `CONFIG SET`、`SIGSTOP` 或重启的操作，都在笔记本自己启动和停止的私有服务器上进行，绝不会碰你的服务器。

# %% tags=["varies"]
# %matplotlib inline
import time

import matplotlib.pyplot as plt
import redis

from redis_course import charts, connect
from redis_course.l10n import _, pgettext, say
from redis_course.lessons import backoff as bo
from redis_course.lessons import eviction as ev
from redis_course.lessons import functions as fn
from redis_course.lessons import guard as g
from redis_course.lessons import identity as ident
from redis_course.lessons import outage
from redis_course.lessons import ratelimit as rl
from redis_course.lessons import semaphore as sem
from redis_course.lessons import show
from redis_course.lessons import switchover as so
from redis_course import private_redis, redis_server_binary
from redis_course.tables import print_table

r = connect(verbose=True)
T = 1_700_000_000_000  # a controlled clock (ms) wherever a result must not depend on the machine
SERVER = redis_server_binary() is not None
if not SERVER:
    print(_("redis-server is not installed here: the cells that need a private server are skipped "
            "(the lesson page has their results)."))

# %% [markdown] lang="en"
# ## When Redis fails
#
# redis-py's defaults are made for a batch job, not for a limiter. redis-py 8 waits up to 5 s for
# every reply and retries a command that timed out or lost its connection up to ten times, so a
# paused server holds the caller for about a minute; before 8 there was no socket timeout at all
# (a paused server held the caller until it answered). `budget_client` makes a client on the same server whose every wait is
# bounded by a budget and that never retries; `Guard` answers by a policy chosen in advance when
# Redis gives no answer, and its breaker stops asking Redis for a while after a failure.

# %% [markdown] lang="ru" translated="c7166111005c"
# ## Когда Redis отказывает
#
# Настройки redis-py по умолчанию рассчитаны на пакетную задачу, а не на ограничитель частоты.
# redis-py 8 ждёт каждого ответа до 5 с и повторяет команду, которая не дождалась ответа или потеряла
# соединение, до десяти раз, так что приостановленный сервер держит вызывающего около минуты; до версии 8
# тайм-аута сокета не было вовсе (приостановленный сервер держал вызывающего, пока не ответит). `budget_client` создаёт
# клиента того же сервера, у которого любое ожидание ограничено бюджетом и нет повторов; `Guard`
# отвечает по заранее выбранной политике, когда Redis не дал ответа, а его предохранитель
# (circuit breaker) после отказа на время перестаёт обращаться к Redis.

# %% [markdown] lang="zh" translated="c7166111005c"
# ## 当 Redis 出故障时
#
# redis-py 的默认设置是为批处理任务准备的，而不是为限流器。redis-py 8 每次等待回复最多 5 秒，并把超时或断开连接的命令重试最多十次，所以被暂停的服务器会拖住调用方大约一分钟；8 之前根本没有套接字超时（被暂停的服务器会一直拖住调用方，直到它回复）。`budget_client` 在同一台服务器上创建一个客户端，它的每一次等待都受预算限制，并且从不重试；当 Redis 没有给出答复时，`Guard` 按事先选定的策略回答，它的熔断器在一次失败之后暂时不再询问 Redis。

# %%
show(g.budget_client)
show(g.Guard.__call__)

# %% [markdown] lang="en"
# Which errors are "no answer": an outage, a failover or a busy server, yes; a wrong password
# (which redis-py makes a `ConnectionError`) and a bug, no.

# %% [markdown] lang="ru" translated="5b5c8d7984bc"
# Какие ошибки означают «нет ответа»: сбой, переключение на реплику или занятый сервер — да;
# неверный пароль (в redis-py это `ConnectionError`) и ошибка в коде — нет.

# %% [markdown] lang="zh" translated="5b5c8d7984bc"
# 哪些错误算“没有答复”：故障、故障转移或正忙的服务器算；密码错误（redis-py 把它归为 `ConnectionError`）和程序缺陷不算。

# %%
E = redis.exceptions
print_table([_("error"), "no_answer"], [(type(x).__name__, g.no_answer(x)) for x in (
    E.ConnectionError("refused"), E.TimeoutError("slow"), E.OutOfMemoryError("OOM"), E.ReadOnlyError("READONLY"),
    redis.exceptions.ResponseError("BUSY Redis is busy running a script."), E.MasterDownError("MASTERDOWN"),
    E.TryAgainError("TRYAGAIN"), E.AuthenticationError("WRONGPASS"),
    redis.exceptions.ResponseError("wrong number of arguments"))])  # Redis's own texts, as redis-py gets them

# %% [markdown] lang="en"
# A socket timeout bounds each wait, not the request. Through a proxy that delays every reply of a
# private server by 200 ms, a client with a 300 ms timeout on a new connection waits for the
# handshake and the reply, each under 300 ms, together over it; under `deadline` the guard answers
# by its policy within the budget.

# %% [markdown] lang="ru" translated="450f96eceb54"
# Тайм-аут сокета ограничивает каждое ожидание, а не запрос. Через прокси, задерживающий каждый ответ
# приватного сервера на 200 мс, клиент с тайм-аутом 300 мс на новом соединении ждёт рукопожатия и
# ответа — каждого меньше 300 мс, а вместе больше; внутри `deadline` защита отвечает по своей политике
# в пределах бюджета.

# %% [markdown] lang="zh" translated="450f96eceb54"
# 套接字超时限制的是每一次等待，而不是请求。经过一个把私有服务器的每个回复延迟 200 毫秒的代理，超时为 300 毫秒的客户端在新连接上要等握手和回复，每一步都不到 300 毫秒，加起来却超过了；在 `deadline` 之内，防护会在预算内按策略回答。

# %% tags=["varies"]
if SERVER:
    from redis_course.lessons import slowproxy

    with private_redis(unix_socket=True) as srv:
        base = srv.client(prefix="course:slow:")
        with slowproxy.in_front_of(srv.socket_path, delay_s=0.2, connect_delay_s=0):
            started = time.monotonic()
            pong = g.budget_client(base, 300).ping()
            per_wait_ms = (time.monotonic() - started) * 1000
            fast = g.budget_client(base, 300)
            started = time.monotonic()
            verdict = g.Guard(fast.ping, "closed", budget_ms=300)()
            deadline_ms = (time.monotonic() - started) * 1000
    say(_("each wait under the budget:"), pong, f"{per_wait_ms:.0f} ms", "|",
          _("under a deadline:"), verdict, f"{deadline_ms:.0f} ms")
    say(_("over the budget without a deadline:"), per_wait_ms > 300, "|",
          _("within the budget with one:"), deadline_ms < 300 + 150)

# %% [markdown] lang="en"
# A timeout is not a "no". An `INCR` sent to a paused server with a 200 ms budget: the caller gets
# a `TimeoutError`, yet the command was delivered and runs when the server resumes. And one `INCR`
# from a client with a 200 ms timeout and redis-py 8's default retry, while the server is paused
# for a second: the caller sent one request and got one reply, and the counter went up more than
# once, though not once per retry. The server's commandstats say why: each retry first reconnects,
# and during the pause the new connection's `HELLO` times out before the `INCR` is sent again; only
# the retry that gets through sends it a second time.

# %% [markdown] lang="ru" translated="514c20e09d6a"
# Тайм-аут — это не «нет». `INCR`, отправленный приостановленному серверу с бюджетом 200 мс: вызывающий
# получает `TimeoutError`, но команда уже доставлена и выполнится, когда сервер оживёт. И один
# `INCR` от клиента с тайм-аутом 200 мс и повторами redis-py 8 по умолчанию, пока сервер приостановлен на
# секунду: вызывающий отправил один запрос и получил один ответ, а счётчик вырос больше чем на
# единицу, хотя и не на единицу за каждый повтор. Статистика команд сервера (commandstats) объясняет
# почему: каждый повтор сначала заново подключается, и во время приостановки `HELLO` нового соединения
# обрывается по тайм-ауту раньше, чем `INCR` отправлен снова; второй раз его отправляет только
# прошедший повтор.

# %% [markdown] lang="zh" translated="514c20e09d6a"
# 超时不等于“没有执行”。用 200 毫秒的预算向一个被暂停的服务器发送 `INCR`：调用方收到 `TimeoutError`，但命令已经送达，服务器恢复后照样执行。再看一个超时为 200 毫秒、使用 redis-py 8 默认重试的客户端发出的一次 `INCR`，而服务器被暂停一秒：调用方只发了一个请求、只收到一个回复，计数器却不止加了一，但也不是每次重试都加一。服务器的命令统计（commandstats）说明了原因：每次重试都先重新建立连接，暂停期间新连接的 `HELLO` 在 `INCR` 再次发出之前就超时了；只有穿过去的那次重试会第二次发送它。

# %%
if SERVER:
    late = outage.timed_out_incr_runs_later()
    say(_("the caller got:"), late["answer"], "|", _("the counter after the resume:"), late["hits_after_resume"])
    twice = outage.default_retry_counts_twice()
    say(_("redis-py's default retries:"), twice["retries"], "|",
          _("one INCR counted more than once:"), twice["hits"] > 1)
    # how many retries fit in the pause depends on the machine's load: not their number, but that
    # there were more handshakes than INCRBY calls
    say(_("INCRBY run by the server:"), twice["incr_calls"], "|",
          _("more handshakes (HELLO, one per connection) than INCRBY:"), twice["hello_calls"] > twice["incr_calls"])

# %% [markdown] lang="en"
# ### An outage under traffic
#
# `run_outage` sends 100 requests per second from four caller threads through lesson 04's GCRA
# (50 per second for one API key) on a private server and, in the middle of the run, **stops** it
# (SIGKILL, then a restart: connections are refused at once) or **pauses** it (SIGSTOP, then
# SIGCONT: the kernel still accepts connections and nobody answers) for 0.8 s. The setups:
# redis-py's defaults, and a `Guard` on a 50 ms budget with a 250 ms breaker under each policy.

# %% [markdown] lang="ru" translated="e2434ee24c3b"
# ### Отказ под нагрузкой
#
# `run_outage` отправляет 100 запросов в секунду из четырёх потоков через GCRA из урока 04 (50 в
# секунду на один API-ключ) на приватном сервере и посреди прогона на 0,8 с **останавливает**
# его (SIGKILL, затем перезапуск: соединения сразу отвергаются) или **приостанавливает** (SIGSTOP, затем
# SIGCONT: ядро по-прежнему принимает соединения, но никто не отвечает). Варианты клиента: настройки
# redis-py по умолчанию и `Guard` с бюджетом 50 мс и предохранителем на 250 мс при каждой политике.

# %% [markdown] lang="zh" translated="e2434ee24c3b"
# ### 流量中的一次故障
#
# `run_outage` 在私有服务器上用四个调用线程每秒发送 100 个请求，经过第 04 课的 GCRA（一个 API key 每秒 50 次），并在运行中途把服务器**停止**（SIGKILL 后重启：连接立即被拒绝）或**暂停**（SIGSTOP 后 SIGCONT：内核照样接受连接，却没有人回复）0.8 秒。客户端的几种设置：redis-py 的默认设置，以及预算 50 毫秒、熔断 250 毫秒的 `Guard` 在每种策略下的表现。

# %%
SETUPS = ("defaults", "open", "closed", "local")
RUN = dict(seconds=1.4, fault_at=0.3, fault_for=0.8)
# the words of the tables and charts; open, closed and local are the guard's policies, as in the code
SHOWN = {"stop": pgettext("outage", "stop"), "pause": pgettext("outage", "pause"),
         "defaults": pgettext("outage", "defaults"), "open": "open", "closed": "closed", "local": "local"}

# %% tags=["varies"]
outages = {}
if SERVER:
    for fault in ("stop", "pause"):
        for setup in SETUPS:
            outages[fault, setup] = outage.run_outage(fault, setup, **RUN)
    rows = []
    for (fault, setup), records in outages.items():
        s = outage.summarize(records, RUN["fault_at"], RUN["fault_for"])
        rows.append((SHOWN[fault], SHOWN[setup], s["requests"], s["allowed"], s["denied"], s["errors"],
                     f"{s['p50_ms']:.1f}", f"{s['p99_ms']:.1f}", f"{s['max_ms']:.0f}"))
    print_table([_("fault"), _("client"), _("requests"), _("allowed"), _("denied"), _("errors"),
                 _("p50, ms"), _("p99, ms"), _("max, ms")], rows)

# %% tags=["varies"]
if outages:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
    for ax, fault in zip(axes, ("stop", "pause")):
        for setup in ("defaults", "closed"):
            records = outages[fault, setup]
            ax.scatter([x["due"] for x in records], [max(0.05, (x["done"] - x["due"]) * 1000) for x in records],
                       s=6, label=_("redis-py defaults") if setup == "defaults" else _("guard, 50 ms budget"))
        ax.axvspan(RUN["fault_at"], RUN["fault_at"] + RUN["fault_for"], color="grey", alpha=0.15)
        ax.set_yscale("log")
        ax.set_xlabel(_("request due at, s") + f" ({SHOWN[fault]})")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(_("wait for the decision, ms"))
    axes[0].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    charts.show(fig, alt=_("Two scatter plots of how long each request waited for the limiter's decision "
                           "while the server was stopped and while it was paused for 0.8 s: with redis-py's "
                           "defaults requests wait until the server is back; with the guard they wait at most about the "
                           "50 ms budget."))

# %% [markdown] lang="en"
# The same runs, reduced to what does not depend on the machine: during the fault, did each setup
# admit all, part or none of the traffic, and did every caller get its answer within 300 ms?

# %% [markdown] lang="ru" translated="313ff859a618"
# Те же прогоны, сведённые к тому, что не зависит от машины: пропустил ли каждый вариант во время
# отказа весь трафик, часть или ничего, и получил ли каждый вызывающий ответ в пределах 300 мс?

# %% [markdown] lang="zh" translated="313ff859a618"
# 同样几轮运行，只保留与机器无关的结论：故障期间，每种设置放行了全部、部分还是没有流量？每个调用方是否都在 300 毫秒内得到了答复？

# %%
def share(n, total):
    return _("all") if n == total else _("none") if n <= 0.05 * total else _("part")


if outages:
    rows = []
    for (fault, setup), records in outages.items():
        s = outage.summarize(records, RUN["fault_at"], RUN["fault_for"])
        rows.append((SHOWN[fault], SHOWN[setup], share(s["allowed"], s["requests"]), s["max_ms"] < 300))
    print_table([_("fault"), _("client"), _("admitted"), _("answered within 300 ms")], rows)

# %% [markdown] lang="en"
# ### A primary switch, as a client sees it
#
# A private primary and its replica, and a client that knows only the primary's address, never
# retries and waits at most 3 s. First a planned `FAILOVER` while the client keeps writing: the
# switch pauses writes until the replica has caught up, so nothing acknowledged is lost, and then
# every write to the old address gets `READONLY`.

# %% [markdown] lang="ru" translated="4c1d0f0a9ca7"
# ### Переключение на реплику глазами клиента
#
# Приватный основной сервер, его реплика и клиент, который знает только адрес основного, никогда
# не повторяет команды и ждёт ответа не дольше 3 с. Сначала плановый `FAILOVER`, пока клиент
# продолжает писать: на время переключения записи приостанавливаются, пока реплика не догонит
# основной, поэтому ничего подтверждённого не теряется, а затем каждая запись по старому адресу
# получает `READONLY`.

# %% [markdown] lang="zh" translated="4c1d0f0a9ca7"
# ### 客户端眼中的故障转移
#
# 一个私有的主节点、它的副本，以及一个只知道主节点地址、从不重试、最多等待 3 秒的客户端。先在客户端持续写入时执行一次计划内的 `FAILOVER`：切换期间写入会暂停，直到副本追上主节点，所以已确认的写入一条也不会丢；之后，发往旧地址的每一次写入都得到 `READONLY`。

# %%
if SERVER:
    planned = so.planned_failover()
    print(_("answers:"), sorted(planned["answers"]), "|", _("acknowledged and lost:"), planned["lost"], "|",
          _("the old primary is now:"), planned["old_role"])
    print(_("writes acknowledged after the first READONLY:"), planned["ok_after_first_error"], "|",
          planned["first_error"])

# %% tags=["varies"]
if SERVER:
    print(_("answers:"), planned["answers"], "|",
          _("the write held during the switch waited:"), f"{planned['slowest_ms']:.0f} ms")

# %% [markdown] lang="en"
# Then a primary that dies with writes its replica never got. The replica is cut off (frozen, its
# link dropped), the primary acknowledges 5 more `INCR`s and grants the only slot of a semaphore to
# `a`, `WAIT 1 100` says that no replica has them, the primary is killed and the replica promoted
# (`REPLICAOF NO ONE`, what Sentinel or a cluster would do). Before the promotion the replica, set
# to `replica-serve-stale-data no`, answers `MASTERDOWN`.

# %% [markdown] lang="ru" translated="5e0bb907a483"
# Затем основной сервер, который умирает с записями, так и не дошедшими до реплики. Реплику
# отрезают (приостанавливают и рвут её соединение), основной подтверждает ещё 5 `INCR` и отдаёт
# единственный слот семафора клиенту `a`, `WAIT 1 100` сообщает, что ни у одной реплики их нет,
# основной убивают, а реплику повышают (`REPLICAOF NO ONE` — то, что сделали бы Sentinel или
# кластер). До повышения реплика с `replica-serve-stale-data no` отвечает `MASTERDOWN`.

# %% [markdown] lang="zh" translated="5e0bb907a483"
# 然后是一个带着副本从未收到的写入死去的主节点。副本被隔离（暂停并断开它的复制连接），主节点又确认了 5 次 `INCR`，并把信号量唯一的名额给了 `a`，`WAIT 1 100` 表明没有任何副本拿到这些写入；随后主节点被杀死，副本被提升（`REPLICAOF NO ONE`，也就是 Sentinel 或集群会做的事）。提升之前，设置了 `replica-serve-stale-data no` 的副本回答 `MASTERDOWN`。

# %%
if SERVER:
    died = so.unplanned_failover(before=10, after_cut=5)
    print_table([_("what"), _("value")], [(k, v) for k, v in died.items() if k != "wait_ms"])

# %% [markdown] lang="en"
# `min-replicas-to-write 1` makes a primary refuse writes once its replica lags more than
# `min-replicas-max-lag` seconds; until then it acknowledges what it may still lose.

# %% [markdown] lang="ru" translated="4f1c4e282f7f"
# `min-replicas-to-write 1` заставляет основной сервер отказывать в записи, как только реплика
# отстаёт больше чем на `min-replicas-max-lag` секунд; до тех пор он подтверждает то, что ещё может
# потерять.

# %% [markdown] lang="zh" translated="4f1c4e282f7f"
# `min-replicas-to-write 1` 让主节点在副本落后超过 `min-replicas-max-lag` 秒之后拒绝写入；在此之前，它照样确认那些仍可能丢失的写入。

# %% tags=["varies"]
if SERVER:
    lag = so.min_replicas(max_lag_s=1)
    print(lag["error"], "|", _("after"), f"{lag['refused_after_s']:.1f} s", "|",
          _("acknowledged while the replica was frozen:"), lag["acked_while_frozen"], "|",
          "no_answer:", g.no_answer(redis.exceptions.ResponseError(lag["error"])))

# %% [markdown] lang="en"
# `WAIT` is a real Redis command; fakeredis has no replication and does not know it.

# %% [markdown] lang="ru" translated="b42ad3e77c90"
# `WAIT` — команда настоящего Redis; в fakeredis нет репликации, и этой команды он не знает.

# %% [markdown] lang="zh" translated="b42ad3e77c90"
# `WAIT` 是真正的 Redis 命令；fakeredis 没有复制功能，也不认识这条命令。

# %% tags=["backend-differs"]
r.incr(r.key("fo", "hits"))
try:
    print("WAIT 1 50 ->", r.execute_command("WAIT", 1, 50), "| hits:", r.get(r.key("fo", "hits")))
except redis.exceptions.ResponseError as exc:
    print("WAIT ->", exc)

# %% [markdown] lang="en"
# ### Connections and their pool
#
# A pool of two connections, both taken, and a third caller: a plain pool says `MaxConnectionsError`
# at once, a blocking pool waits its `timeout` (50 ms here), then says `ConnectionError`. The guard
# answers both by its policy and keeps its breaker closed: the process is busy, Redis is not away.
# The same on both backends.

# %% [markdown] lang="ru" translated="16e265cc48c9"
# ### Соединения и их пул
#
# Пул из двух соединений, оба заняты, и третий вызывающий: обычный пул сразу отвечает
# `MaxConnectionsError`, блокирующий ждёт свой `timeout` (здесь 50 мс), затем отвечает
# `ConnectionError`. Защита отвечает на обе ошибки по своей политике и не размыкает предохранитель:
# занят процесс, а Redis на месте. На обоих бэкендах одинаково.

# %% [markdown] lang="zh" translated="16e265cc48c9"
# ### 连接和连接池
#
# 一个有两个连接的连接池，两个都在用，来了第三个调用方：普通连接池立即回答 `MaxConnectionsError`，阻塞连接池等满它的 `timeout`（这里是 50 毫秒），然后回答 `ConnectionError`。防护按策略回答这两种错误，熔断器保持闭合：忙的是进程，Redis 并没有离开。两种后端上都一样。

# %%
from redis_course.lessons import pools

full = pools.exhausted(r, size=2, wait_ms=50)
print_table([_("pool"), _("error"), _("message"), _("waited 45 ms or more"), _("guard"), _("breaker")],
            [(kind, x["error"], x["message"], x["waited_ms"] >= 45, x["verdict"].source, x["breaker"])
             for kind, x in full.items() if kind != "defaults"])
print(full["defaults"])

# %% [markdown] lang="en"
# On a private server: connections the server accepted for 20 `INCR`s through one client per
# process and through a client per request; the `PING`s `health_check_interval=1` sends; and a
# connection the server closed after its `timeout`.

# %% [markdown] lang="ru" translated="90e32003990d"
# На приватном сервере: сколько соединений сервер принял на 20 `INCR` через один клиент на процесс и
# через клиент на каждый запрос; какие `PING` отправляет `health_check_interval=1`; и что с
# соединением, которое сервер закрыл по своему `timeout`.

# %% [markdown] lang="zh" translated="90e32003990d"
# 在私有服务器上：通过每个进程一个客户端、以及每个请求一个客户端执行 20 次 `INCR`，服务器各接受了多少个连接；`health_check_interval=1` 发送哪些 `PING`；以及服务器按它的 `timeout` 关闭的连接会怎样。

# %%
if SERVER:
    with private_redis() as srv:
        warm = pools.warm_or_per_request(srv, calls=20)
        checks = pools.health_check(srv, interval_s=1)
    print({how: x["connections"] for how, x in warm.items()})
    print({k: v for k, v in checks.items() if k != "new connections"}, "| reconnected:", checks["new connections"] >= 1)

# %% tags=["varies"]
if SERVER:
    print({how: f"{x['ms_per_call']:.2f} ms per call" for how, x in warm.items()})

# %% [markdown] lang="en"
# A port that never accepts (a listener with a full backlog): `socket_timeout` alone leaves the
# connect at redis-py's 5 s (cut off here after 1.5 s); `socket_connect_timeout` bounds it.

# %% [markdown] lang="ru" translated="f61ca6310256"
# Порт, который никогда не принимает соединения (слушающий сокет с заполненной очередью):
# `socket_timeout` сам по себе оставляет подключению 5 с redis-py (здесь оно обрывается через
# 1,5 с); ограничивает его `socket_connect_timeout`.

# %% [markdown] lang="zh" translated="f61ca6310256"
# 一个从不接受连接的端口（积压队列已满的监听套接字）：只设置 `socket_timeout` 时，建立连接仍用 redis-py 的 5 秒（这里在 1.5 秒后截断）；限制它的是 `socket_connect_timeout`。

# %%
dead = pools.connect_timeout(socket_timeout_s=0.2, connect_timeout_s=0.2, patience_s=1.5)
print_table([_("client"), "socket_connect_timeout", _("error"), _("waited over 1 s")],
            [(how, x["connect_timeout_s"], x["error"], x["waited_s"] > 1) for how, x in dead.items()])

# %% [markdown] lang="en"
# ## When Redis fills up
#
# `overflow` fills a private server with 500 counters (no TTL) and 500 limiter keys (60 s TTL),
# sets `maxmemory` just above what they use, and keeps writing a new limiter key and a new counter
# per request, as traffic would, under each `maxmemory-policy`. fakeredis answers OK to
# `CONFIG SET maxmemory` and ignores it (it neither evicts nor refuses a write), so this runs on a
# private `redis-server` on both backends.

# %% [markdown] lang="ru" translated="6dbbca2eabd4"
# ## Когда память Redis заполнена
#
# `overflow` заполняет приватный сервер 500 счётчиками (без TTL) и 500 ключами ограничителя (TTL 60 с),
# ставит `maxmemory` чуть выше того, что они занимают, и продолжает писать на каждый запрос новый ключ
# ограничителя и новый счётчик, как это делал бы трафик, — при каждой `maxmemory-policy`. fakeredis
# отвечает OK на `CONFIG SET maxmemory` и ничего с этим не делает (не вытесняет и не отвергает
# записи), поэтому на обоих бэкендах это выполняется на приватном `redis-server`.

# %% [markdown] lang="zh" translated="6dbbca2eabd4"
# ## 当 Redis 内存写满时
#
# `overflow` 在私有服务器上写入 500 个计数器（没有 TTL）和 500 个限流键（TTL 60 秒），把 `maxmemory` 设为刚好高出它们的占用，然后像真实流量那样，每个请求继续写一个新的限流键和一个新的计数器，在每种 `maxmemory-policy` 下各跑一遍。fakeredis 对 `CONFIG SET maxmemory` 回答 OK，却并不照做（既不淘汰，也不拒绝写入），所以两种后端都在私有的 `redis-server` 上运行这一部分。

# %% tags=["varies"]
filled = []
if SERVER:
    with private_redis() as srv:
        default_policy = srv.client(prefix="").config_get("maxmemory-policy")["maxmemory-policy"]
        filled = [ev.overflow(srv, policy) for policy in ev.POLICIES]
        evicted_key = ev.evicted_limit_resets(srv, "volatile-ttl")
        kept_key = ev.evicted_limit_resets(srv, "noeviction")
    print_table([_("policy"), _("counters left"), _("limiter keys left"), _("failed writes"), "evicted_keys"],
                [(x["policy"], x["counters_left"], x["limiter_keys_left"], x["failed_writes"], x["evicted"])
                 for x in filled])

# %%
def kept(n, total):
    return _("all kept") if n == total else _("lost")


if filled:
    say(_("maxmemory-policy of a server started without one:"), default_policy)
    print_table([_("policy"), _("counters (500)"), _("limiter keys (500)")],
                [(x["policy"], kept(x["counters_left"], 500), kept(x["limiter_keys_left"], 500)) for x in filled])
    print()
    by = {x["policy"]: x for x in filled}
    say(_("noeviction refused every new write:"), by["noeviction"]["failed_writes"] == 2 * 1500, "|",
          _("allkeys-* refused none:"), all(by[p]["failed_writes"] == 0 for p in by if p.startswith("allkeys")))
    print("volatile-ttl:", evicted_key)
    print("noeviction:  ", kept_key)

# %% [markdown] lang="en"
# `noeviction` keeps every key and refuses every write that may grow memory, `INCR` included.
# `allkeys-*` refused nothing here and deleted counters with no TTL: a total is gone without an
# error. `volatile-*` only evicts keys with a TTL, so counters without one stay, and refuses a write
# when it finds none to evict (how often depends on the run: the first table). And an evicted
# limiter key is a reset: a client that was over its limit passes again. Below, the counters get a
# 3-day retention TTL, as lesson 03's dated counters have, and the traffic writes limiter keys
# only: `volatile-*` then evicts counters too. A `maxmemory` below what an empty server uses makes
# `allkeys-*` refuse writes as well. And not every script sees `OOM`: Redis 7 checks a script
# without flags only until its first write.

# %% [markdown] lang="ru" translated="4115c12096b4"
# `noeviction` сохраняет все ключи и отвергает каждую запись, которая может увеличить память, в том
# числе `INCR`. `allkeys-*` здесь ничего не отвергла и удалила счётчики без TTL: итог пропадает без
# единой ошибки. `volatile-*` вытесняет только ключи с TTL, так что счётчики без него остаются, и
# отвергает запись, когда вытеснять нечего (как часто — зависит от прогона: см. первую таблицу).
# Вытесненный ключ ограничителя — это сброс: клиент, превысивший лимит, снова проходит. Ниже у
# счётчиков срок хранения 3 дня, как у датированных счётчиков урока 03, а трафик пишет только ключи
# ограничителя: тогда `volatile-*` вытесняет и счётчики. При `maxmemory` меньше того, что занимает
# пустой сервер, записи отвергает и `allkeys-*`. И не каждый скрипт видит `OOM`: Redis 7 проверяет
# скрипт без флагов только до его первой записи.

# %% [markdown] lang="zh" translated="4115c12096b4"
# `noeviction` 保留所有键，拒绝每一个可能增加内存的写入，`INCR` 也不例外。`allkeys-*` 在这里什么都没拒绝，却删掉了没有 TTL 的计数器：一个总数悄无声息地消失了。`volatile-*` 只淘汰带 TTL 的键，所以没有 TTL 的计数器留下，找不到可淘汰的键时就拒绝写入（拒绝多少次因运行而异，见第一张表）。而限流键被淘汰就等于重置：一个已经超限的客户端又能通过了。下面给计数器加上 3 天的保留期 TTL（和第 03 课按日期的计数器一样），流量只写限流键：这时 `volatile-*` 连计数器也会淘汰。`maxmemory` 比空服务器的占用还小时，`allkeys-*` 也会拒绝写入。而且并不是每个脚本都会遇到 `OOM`：Redis 7 只在没有标志的脚本第一次写入之前检查它。

# %% tags=["varies"]
if SERVER:
    with private_redis() as srv:
        dated = [ev.overflow(srv, policy, new=1500, counter_ttl_s=3 * 86_400, new_counters=False)
                 for policy in ev.POLICIES if policy.startswith("volatile")]
        tiny = {policy: ev.tiny_maxmemory(srv, policy) for policy in ("allkeys-lru", "volatile-lru")}
        oom = fn.at_maxmemory(srv)
    print_table([_("policy"), _("dated counters left (500)"), _("limiter keys left")],
                [(x["policy"], x["counters_left"], x["limiter_keys_left"]) for x in dated])
    say(_("maxmemory of 1 byte:"), tiny)
    print_table([_("at maxmemory, noeviction"), _("answer")], list(oom.items()))

# %% [markdown] lang="en"
# ## Concurrency limiting
#
# A rate limiter counts requests per second; a **concurrency limiter** counts requests in flight.
# The holders of a semaphore live in one sorted set: a random token per acquisition, scored by the
# end of its lease. Every call first removes the leases that ended, so a holder that crashed keeps
# its slot only until its lease ends.

# %% [markdown] lang="ru" translated="2104c40c0023"
# ## Ограничение параллельности
#
# Ограничитель частоты считает запросы в секунду; **ограничитель параллельности** считает запросы,
# которые выполняются прямо сейчас. Владельцы семафора хранятся в одном упорядоченном множестве:
# случайный токен на каждый захват, score — конец его аренды. Каждый вызов сначала удаляет
# закончившиеся аренды, поэтому упавший владелец держит слот только до конца аренды.

# %% [markdown] lang="zh" translated="2104c40c0023"
# ## 并发限制
#
# 限流器统计每秒的请求数；**并发限制器**统计正在处理中的请求数。信号量的持有者放在一个有序集合里：每次获取一个随机令牌，score 是它租约的结束时间。每次调用都先删除已经结束的租约，所以崩溃的持有者只能占住名额到租约结束为止。

# %%
show(sem.ACQUIRE_LUA)

# %%
slots = [sem.acquire(r, "db", 3, 1000, now_ms=T + i) for i in range(3)]
print([s.held for s in slots], sem.acquire(r, "db", 3, 1000, now_ms=T + 10))
crashed = sem.acquire(r, "one", 1, 1000, now_ms=T)          # this holder never releases
say(_("a second holder at +999 ms:"), sem.acquire(r, "one", 1, 1000, now_ms=T + 999).token is not None)
say(_("a second holder at +1000 ms:"), sem.acquire(r, "one", 1, 1000, now_ms=T + 1000).token is not None)
for _i in range(3):
    sem.counter_acquire(r, "db", 3)                          # INCR semaphore: three holders die
say(_("INCR semaphore after three crashed holders:"), sem.counter_acquire(r, "db", 3),
      r.get(r.key("sem", "db", "count")), r.ttl(r.key("sem", "db", "count")))

# %% [markdown] lang="en"
# ### One trace, two limiters
#
# 20 requests per second for 10 s; they take 50 ms each, except from the 3rd to the 6th second,
# when the service behind the limiter slows down to 2 s per request. A rate limiter at 20 per
# second admits every request and lets them pile up; a semaphore of 8 caps the load.

# %% [markdown] lang="ru" translated="064bfd904508"
# ### Один поток запросов, два ограничителя
#
# 20 запросов в секунду в течение 10 с; каждый занимает 50 мс, кроме промежутка с 3-й по 6-ю
# секунду, когда сервис за ограничителем замедляется до 2 с на запрос. Ограничитель частоты на 20 в
# секунду пропускает все запросы и даёт им копиться; семафор на 8 ограничивает нагрузку.

# %% [markdown] lang="zh" translated="064bfd904508"
# ### 同一条请求序列，两种限制器
#
# 每秒 20 个请求，持续 10 秒；每个请求耗时 50 毫秒，只有第 3 秒到第 6 秒之间，限制器后面的服务变慢，每个请求要 2 秒。每秒 20 次的限流器放行了所有请求，任由它们堆积；容量为 8 的信号量则限住了负载。

# %%
trace = sem.slowdown_trace()
by_rate = sem.replay_concurrency(
    trace, lambda now: "x" if rl.gcra(r, "api", limit=20, window_ms=1000, now_ms=now).allowed else None,
    lambda token, now: None)
by_slots = sem.replay_concurrency(
    trace, lambda now: sem.acquire(r, "api", 8, 10_000, now_ms=now).token,
    lambda token, now: sem.release(r, "api", token, now_ms=now))
print_table([_("limiter"), _("requests"), _("admitted"), _("most in flight")],
            [(_("rate, 20 per second"), len(trace), sum(by_rate["admitted"]), max(n for _t, n in by_rate["in_flight"])),
             (_("concurrency, 8 slots"), len(trace), sum(by_slots["admitted"]), max(n for _t, n in by_slots["in_flight"]))])

# %%
fig, ax = plt.subplots(figsize=(8, 3))
for run, label in ((by_rate, _("rate limiter, 20 per second")), (by_slots, _("semaphore, 8 slots"))):
    ax.step([(t - T) / 1000 for t, _n in run["in_flight"]], [n for _t, n in run["in_flight"]], where="post", label=label)
ax.axvspan(3, 6, color="grey", alpha=0.15)
ax.set_xlabel(_("time, s (grey: the service is slow)"))
ax.set_ylabel(_("requests in flight"))
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
fig.tight_layout()
charts.show(fig, alt=_("Requests in flight over ten seconds: while the service is slow, the rate limiter lets "
                       "{rate} pile up; the semaphore never has more than {slots}.",
                       rate=max(n for _t, n in by_rate["in_flight"]), slots=max(n for _t, n in by_slots["in_flight"])))

# %% [markdown] lang="en"
# ### Fairness
#
# Three clients want one slot again as soon as they give it back; `eager` asks every 5 ms while
# it waits, the two polite ones every 50 ms. With the plain semaphore, whoever asks most often
# wins. `acquire_fair` adds a line ordered by ticket (`INCR`): a client keeps its token while it
# waits, and a waiter that stops asking leaves the line.

# %% [markdown] lang="ru" translated="63ccfe9f754b"
# ### Справедливость
#
# Трём клиентам снова нужен единственный слот, как только они его вернули; `eager` спрашивает каждые
# 5 мс, пока ждёт, два вежливых — каждые 50 мс. С простым семафором выигрывает тот, кто спрашивает
# чаще. `acquire_fair` добавляет очередь, упорядоченную по номеру билета (`INCR`): клиент сохраняет
# свой токен, пока ждёт, а ожидающий, который перестал спрашивать, выходит из очереди.

# %% [markdown] lang="zh" translated="63ccfe9f754b"
# ### 公平性
#
# 三个客户端在交还唯一的名额之后马上又想要它；`eager` 在等待时每 5 毫秒询问一次，两个“礼貌”的客户端每 50 毫秒一次。用普通的信号量，谁问得最勤谁就赢。`acquire_fair` 增加了一个按票号（`INCR`）排序的队列：客户端在等待期间保留自己的令牌，不再询问的等待者会离开队列。

# %%
clients = {"eager": 5, "polite-a": 50, "polite-b": 50}
unfair = sem.poll_race(r, "u", clients, fair=False, duration_ms=3000)
fair = sem.poll_race(r, "f", clients, fair=True, duration_ms=3000)
print_table([_("client"), _("polls every, ms"), _("acquired, plain"), _("longest wait, plain"),
             _("acquired, fair"), _("longest wait, fair")],
            [(c, clients[c], unfair[c]["acquired"], unfair[c]["longest_wait_ms"], fair[c]["acquired"],
              fair[c]["longest_wait_ms"]) for c in clients])

# %% [markdown] lang="en"
# ### A lease is not the work: fencing tokens
#
# A holder that stalls keeps working after its lease ended and another client took the slot. Only
# the resource can refuse its late write: `acquire_fenced` hands out a fence with every grant (one
# more each time), and `fenced_write` refuses a fence older than the newest it has seen. `a` holds
# the only slot for 1 s and stalls for 2 s; `b` takes it at +1.5 s and writes; `a` wakes at +2 s
# and writes.

# %% [markdown] lang="ru" translated="bb528e8d3df2"
# ### Аренда — это не работа: маркеры ограждения
#
# Зависший владелец продолжает работать после того, как его аренда кончилась и слот занял другой
# клиент. Отвергнуть его запоздавшую запись может только ресурс: `acquire_fenced` вместе с каждым
# слотом выдаёт маркер (каждый раз на единицу больше), а `fenced_write` отвергает маркер старше самого
# нового из виденных. `a` держит единственный слот 1 с и зависает на 2 с; `b` занимает его через
# 1,5 с и пишет; `a` просыпается через 2 с и пишет.

# %% [markdown] lang="zh" translated="bb528e8d3df2"
# ### 租约不等于工作：围栏令牌
#
# 卡住的持有者在租约结束、名额被另一个客户端拿走之后还在继续工作。只有资源能拒绝它迟到的写入：`acquire_fenced` 每发放一个名额就同时发放一个令牌（每次大一），`fenced_write` 拒绝比它见过的最新令牌更旧的令牌。`a` 持有唯一的名额 1 秒，然后卡住 2 秒；`b` 在 1.5 秒时拿到名额并写入；`a` 在 2 秒时醒来并写入。

# %%
show(sem.FENCED_WRITE_LUA)
stories = {_("plain HSET"): sem.stalled_holder(r, "plain", fenced=False),
           "fenced_write": sem.stalled_holder(r, "fenced", fenced=True)}
print_table([_("writes"), _("fences"), _("a still holds a lease"), _("the late write of a"), _("value at the end")],
            [(how, x["fences"] if how == "fenced_write" else "-", x["a_still_held"],
              _("applied") if x["late_write_applied"] else _("refused"), x["value"]) for how, x in stories.items()])

# %% [markdown] lang="en"
# ## Shipping scripts the Redis 7 way
#
# A script sent with `EVALSHA` lives in the server's script cache: not saved, not replicated, gone
# after a restart or a failover, so the client keeps the source and loads it again on `NOSCRIPT`.
# A **function library** (`FUNCTION LOAD`) is part of the dataset and is called by name with
# `FCALL`. The course's library holds lesson 04's GCRA and a read-only `course_peek`:

# %% [markdown] lang="ru" translated="20c499f515ad"
# ## Скрипты по-новому: функции Redis 7
#
# Скрипт, отправленный через `EVALSHA`, живёт в кэше скриптов сервера: он не сохраняется на диск, не
# реплицируется и пропадает после перезапуска или переключения на реплику, поэтому клиент хранит его
# текст и загружает заново при `NOSCRIPT`. **Библиотека функций** (`FUNCTION LOAD`) — часть данных, а
# функции вызываются по имени через `FCALL`. Библиотека курса содержит GCRA из урока 04 и функцию
# только для чтения `course_peek`:

# %% [markdown] lang="zh" translated="20c499f515ad"
# ## 用 Redis 7 的方式发布脚本
#
# 用 `EVALSHA` 发送的脚本存放在服务器的脚本缓存里：不持久化、不复制，重启或故障转移之后就没了，所以客户端要保留源码，遇到 `NOSCRIPT` 时重新加载。**函数库**（`FUNCTION LOAD`）则是数据集的一部分，用 `FCALL` 按名字调用。本课程的函数库包含第 04 课的 GCRA 和一个只读的 `course_peek`：

# %%
print(fn.LIBRARY_LUA.replace(fn.GCRA_LUA, "  -- GCRA_LUA\n"))

# %% [markdown] lang="en"
# A library is not a key: loaded on your Redis it would stay there after the course's keys are
# deleted. So these cells run on a private server, on both backends.

# %% [markdown] lang="ru" translated="04bdf9864cc3"
# Библиотека — не ключ: загруженная в ваш Redis, она осталась бы там и после удаления ключей курса.
# Поэтому эти ячейки выполняются на приватном сервере на обоих бэкендах.

# %% [markdown] lang="zh" translated="04bdf9864cc3"
# 函数库不是键：如果加载到你的 Redis 上，课程的键删除之后它仍会留在那里。所以这些单元格在两种后端上都使用私有服务器。

# %%
if SERVER:
    with private_redis() as srv:
        c = srv.client(prefix="course:fn:")
        print("FUNCTION LOAD:", fn.load(c), fn.libraries(c))
        times = [T + 37 * i for i in range(40)]
        same = [fn.gcra(c, "a", now_ms=t) for t in times] == [rl.gcra(c, "b", now_ms=t) for t in times]
        say(_("FCALL decides exactly as EVALSHA, 40 requests:"), same)
        try:
            fn.fcall(c, "course_gcra", [c.key("k")], T, 10, 1000, read_only=True)
        except Exception as exc:  # noqa: BLE001 - the server's refusal is the point
            print("FCALL_RO course_gcra ->", type(exc).__name__, exc)
        c.config_set("maxmemory-policy", "noeviction")
        c.config_set("maxmemory", 1)                   # below what the server uses: writes are refused
        try:
            fn.gcra(c, "a", now_ms=T)
        except Exception as exc:  # noqa: BLE001
            print("FCALL course_gcra ->", type(exc).__name__)
        tat, pttl = fn.fcall(c, "course_peek", [c.key("rl", "gcra", "a")], read_only=True)
        print("FCALL_RO course_peek ->", int(tat) > T * 1000, pttl > 0)

# %% [markdown] lang="en"
# What survives: the library and a script loaded on a private server, then a restart without
# persistence, with RDB, with AOF, and a failover to a replica.

# %% [markdown] lang="ru" translated="18f7cfa60424"
# Что остаётся: библиотеку и скрипт загружаем на приватный сервер, а затем перезапускаем его без
# персистентности, с RDB, с AOF и переключаемся на реплику.

# %% [markdown] lang="zh" translated="18f7cfa60424"
# 什么能保留下来：在私有服务器上加载函数库和一个脚本，然后分别在不持久化、RDB、AOF 三种设置下重启，以及故障转移到副本。

# %%
if SERVER:
    print_table([_("after"), _("library"), _("script")],
                [(mode, *fn.what_survives(mode).values()) for mode in ("none", "rdb", "aof-everysec", "failover")])

# %% [markdown] lang="en"
# fakeredis runs `FUNCTION LOAD` and `FCALL`, but not `EVAL_RO` nor the `#!lua flags=no-writes`
# line of a script, which Redis 7 accepts. This cell reads one key of this run on your backend:

# %% [markdown] lang="ru" translated="042ad12e0e1f"
# fakeredis выполняет `FUNCTION LOAD` и `FCALL`, но не понимает `EVAL_RO` и строку
# `#!lua flags=no-writes` в скрипте, которые Redis 7 принимает. Эта ячейка читает один ключ этого
# прогона на вашем бэкенде:

# %% [markdown] lang="zh" translated="042ad12e0e1f"
# fakeredis 能执行 `FUNCTION LOAD` 和 `FCALL`，却不支持 `EVAL_RO`，也不认识脚本中的 `#!lua flags=no-writes` 一行，而 Redis 7 两者都接受。下面这个单元格在你的后端上读取本次运行的一个键：

# %% tags=["backend-differs"]
for command in (("EVAL_RO", "return redis.call('GET', KEYS[1])", 1, r.key("k")),
                ("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", 1, r.key("k"))):
    try:
        print(command[0], "->", r.execute_command(*command))
    except Exception as exc:  # noqa: BLE001 - fakeredis's refusal is the point
        print(command[0], "->", type(exc).__name__)

# %% [markdown] lang="en"
# ## Choosing what to limit
#
# Count a request under its API key when it has one, else under its address: an IPv4 address, or
# the IPv6 /64 (a client can pick any of its 2^64 addresses). The address is the TCP peer's unless
# the peer is one of your proxies; then `X-Forwarded-For` is read from the right, skipping your
# proxies. Its leftmost entries are whatever the client wrote.

# %% [markdown] lang="ru" translated="4ccf095aab6b"
# ## Что ограничивать
#
# Считайте запрос по его API-ключу, если он есть, иначе — по адресу: адресу IPv4 или сети IPv6 /64
# (клиент может выбрать любой из её 2^64 адресов). Адрес — это адрес TCP-собеседника, если только
# собеседник не ваш прокси; тогда `X-Forwarded-For` читается справа, пропуская ваши прокси. Самые
# левые его записи — то, что написал сам клиент.

# %% [markdown] lang="zh" translated="4ccf095aab6b"
# ## 限制什么
#
# 请求带有 API key 时按 API key 计数，否则按地址计数：IPv4 地址，或者 IPv6 的 /64 网段（客户端可以任选其中 2^64 个地址之一）。地址取 TCP 对端的地址，除非对端是你自己的代理；这时从右往左读 `X-Forwarded-For`，跳过你的代理。最左边的条目是客户端自己随便写的。

# %%
show(ident.client_ip)

# %%
PROXIES = ["10.0.0.0/8"]
cases = [("k-42", "10.0.0.5", "203.0.113.7"), (None, "198.51.100.9", "1.2.3.4"),
         (None, "10.0.0.5", "1.2.3.4, 203.0.113.7"), (None, "2001:db8:7:1::1", None),
         (None, "2001:db8:7:1:ffff:1234:5678:9abc", None)]
print_table([_("API key"), _("TCP peer"), "X-Forwarded-For", _("counted under")],
            [(k or "-", peer, xff or "-", ident.limit_key(k, peer, xff, PROXIES)) for k, peer, xff in cases])

# %%
addrs = [f"2001:db8:7:1:{i:x}:{i * 7919 % 65536:x}::1" for i in range(50)]
naive = sum(rl.gcra(r, "n:" + ident.naive_client_ip("10.0.0.5", f"192.0.2.{i}, 203.0.113.7"), now_ms=T).allowed
            for i in range(30))
right = sum(rl.gcra(r, ident.limit_key(None, "10.0.0.5", f"192.0.2.{i}, 203.0.113.7", PROXIES), now_ms=T).allowed
            for i in range(30))
say(_("50 requests from 50 addresses of one /64, 10 per second:"),
      sum(rl.gcra(r, "a:" + a, now_ms=T).allowed for a in addrs), _("allowed by address,"),
      sum(rl.gcra(r, "n:" + ident.network_of(a), now_ms=T).allowed for a in addrs), _("by /64"))
say(_("30 requests with a new address written into X-Forwarded-For each time:"),
      naive, _("allowed by the leftmost entry,"), right, _("by the address our proxy saw"))

# %% [markdown] lang="en"
# ### Shadow mode, then enforce
#
# Before a new limit denies anyone, run it in shadow mode: ask the limiter, allow the request
# anyway, and count who would have been denied, per client and day.

# %% [markdown] lang="ru" translated="881e420851b3"
# ### Сначала теневой режим, потом запреты
#
# Прежде чем новый лимит начнёт кому-то отказывать, запустите его в теневом режиме: спросите
# ограничитель, всё равно пропустите запрос и посчитайте, кому было бы отказано, по клиентам и дням.

# %% [markdown] lang="zh" translated="881e420851b3"
# ### 先影子模式，再强制执行
#
# 在新的限额真正拒绝任何人之前，先用影子模式运行：询问限流器，但无论如何都放行请求，并按客户端和日期统计本来会被拒绝的次数。

# %%
said = [bo.shadow(r, rl.gcra, "tenant-a", "2026-05-01", now_ms=T) for _i in range(14)]
bo.shadow(r, rl.gcra, "tenant-b", "2026-05-01", now_ms=T)
say(_("all 14 requests served; the limiter said no to"), said.count(False), "|",
      r.hgetall(r.key("shadow", "2026-05-01")))

# %% [markdown] lang="en"
# ### What clients do with a 429
#
# 50 clients send one request each at the same moment to a limit of 10 per second, and retry until
# they get through: with exponential backoff and no jitter, waiting exactly `Retry-After`, and with
# `Retry-After` plus full jitter.

# %% [markdown] lang="ru" translated="6c734f93287d"
# ### Что клиенты делают с ответом 429
#
# 50 клиентов одновременно отправляют по одному запросу при лимите 10 в секунду и повторяют, пока не
# пройдут: с экспоненциальной задержкой без случайного разброса (jitter), с ожиданием ровно
# `Retry-After` и с `Retry-After` плюс полный случайный разброс.

# %% [markdown] lang="zh" translated="6c734f93287d"
# ### 客户端收到 429 之后怎么办
#
# 50 个客户端在同一时刻各发一个请求，限额是每秒 10 个，被拒绝就重试直到通过：分别使用不带抖动（jitter）的指数退避、严格等待 `Retry-After`，以及 `Retry-After` 加完全抖动。

# %%
show(bo.retry_delay_ms)
storms = {_("backoff, no jitter"): bo.storm(r, jitter=False, use_retry_after=False),
          _("exactly Retry-After"): bo.storm(r, jitter=False, use_retry_after=True),
          _("Retry-After + jitter"): bo.storm(r, jitter=True, use_retry_after=True)}
print_table([_("clients retry with"), _("requests"), _("largest wave in 10 ms"), _("last through, ms"), _("gave up")],
            [(name, s["requests"], s["largest_wave"], s["last_ms"], s["gave_up"]) for name, s in storms.items()])

# %% [markdown] lang="en"
# ## Watching it
#
# `vitals` reads the few numbers worth an alert with read-only commands. fakeredis has none of
# `INFO`, `SLOWLOG` and `LATENCY`; on Redis every number is there.

# %% [markdown] lang="ru" translated="a97936a23c60"
# ## Наблюдение
#
# `vitals` читает те немногие числа, ради которых стоит заводить тревогу, командами, которые ничего
# не меняют. В fakeredis нет ни `INFO`, ни `SLOWLOG`, ни `LATENCY`; в Redis есть все числа.

# %% [markdown] lang="zh" translated="a97936a23c60"
# ## 监控
#
# `vitals` 用只读命令读取那几个值得告警的数字。fakeredis 没有 `INFO`、`SLOWLOG` 和 `LATENCY`；在 Redis 上每个数字都有。

# %% tags=["backend-differs"]
from redis_course.lessons import vitals as vt

seen = vt.vitals(r)
print(_("missing:"), seen["missing"], "|", _("numbers read:"), len(seen) - 1)

# %% [markdown] lang="en"
# On a private server each number is moved once on purpose: 5 `GET`s, a `WRONGTYPE`, a 50 ms
# `DEBUG SLEEP`, a client past `maxclients`, a fill past `maxmemory` under `allkeys-lru`, and a new
# redis-py connection, whose handshake itself adds errors on Redis before 7.2.

# %% [markdown] lang="ru" translated="7f0d3364b32f"
# На приватном сервере каждое число нарочно сдвигается один раз: 5 `GET`, один `WRONGTYPE`,
# `DEBUG SLEEP` на 50 мс, клиент сверх `maxclients`, заполнение сверх `maxmemory` при `allkeys-lru`
# и новое соединение redis-py, чьё рукопожатие само добавляет ошибки на Redis до 7.2.

# %% [markdown] lang="zh" translated="7f0d3364b32f"
# 在私有服务器上，每个数字都被故意推动一次：5 次 `GET`、一次 `WRONGTYPE`、一次 50 毫秒的 `DEBUG SLEEP`、一个超出 `maxclients` 的客户端、在 `allkeys-lru` 下超出 `maxmemory` 的写满，以及一个新的 redis-py 连接——在 7.2 之前的 Redis 上，它的握手本身就会增加错误。

# %%
if SERVER:
    with private_redis() as srv:
        settings, moved = vt.defaults(srv), vt.provoke(srv)
    print(settings)
    print_table([_("what"), _("moved by")], [(k, v) for k, v in moved.items() if k != "evicted_keys"])
    print("evicted_keys > 0:", moved["evicted_keys"] > 0)

# %% tags=["varies"]
if SERVER:
    print("evicted_keys:", moved["evicted_keys"])

# %% [markdown] lang="en"
# ## Hot keys
#
# A global limit of 1,000 per window is one key that every request hits: on a cluster one slot, so
# one primary. Split over 16 shards (no common hash tag) it spreads over the slots and summed on
# read it is still exact; counted per process and sent in one `INCRBY` per 50 hits it costs a few
# round trips and overshoots by at most `(N - 1) × batch`.

# %% [markdown] lang="ru" translated="4eb79bdacd54"
# ## Горячие ключи
#
# Глобальный лимит 1000 за окно — это один ключ, в который попадает каждый запрос: в кластере один
# слот, а значит, один основной узел. Разделённый на 16 шардов (без общего хеш-тега), он
# распределяется по слотам и при чтении суммой остаётся точным; подсчитанный в каждом процессе и
# отправляемый одним `INCRBY` на 50 обращений, он стоит нескольких сетевых обменов и превышает лимит
# не больше чем на `(N - 1) × batch`.

# %% [markdown] lang="zh" translated="4eb79bdacd54"
# ## 热点键
#
# 每个窗口 1,000 的全局限额是每个请求都会命中的一个键：在集群上是一个槽，也就是一个主节点。拆成 16 个分片（没有共同的哈希标签）后，它分散到多个槽上，读取时求和仍然精确；在每个进程内计数、每 50 次命中用一个 `INCRBY` 发出，只需要少量往返，超出限额最多 `(N - 1) × batch`。

# %%
from redis_course.lessons import hotkeys as hk

print(hk.placement(r))
rows = []
for requests in (2000, 1100):
    for how, x in hk.sharded_window(r, f"w{requests}", requests, limit=1000).items():
        rows.append((how, requests, x["admitted"], x["round trips"], f"{x['busiest key']:.0%}"))
batched = hk.batched_window(r, "b", 2000, limit=1000, processes=4, batch=50)
rows.append((_("4 processes, one INCRBY per 50"), 2000, batched["admitted"], batched["round trips"], "100%"))
print_table([_("limit of 1,000"), _("requests"), _("admitted"), _("round trips"), _("busiest key")], rows)
print({k: v for k, v in batched.items() if k not in ("admitted", "round trips")})

# %% [markdown] lang="en"
# `OBJECT FREQ` and `redis-cli --hotkeys` need an LFU policy: on a private server, 300 `INCR`s of
# one key beside 50 cold keys, first under `noeviction`, then under `allkeys-lfu`.

# %% [markdown] lang="ru" translated="fd1bf44c872a"
# `OBJECT FREQ` и `redis-cli --hotkeys` требуют политики LFU: на приватном сервере 300 `INCR` одного
# ключа рядом с 50 холодными, сначала при `noeviction`, затем при `allkeys-lfu`.

# %% [markdown] lang="zh" translated="fd1bf44c872a"
# `OBJECT FREQ` 和 `redis-cli --hotkeys` 需要 LFU 策略：在私有服务器上，一个键在 50 个冷键旁边被 `INCR` 300 次，先在 `noeviction` 下，再在 `allkeys-lfu` 下。

# %%
if SERVER:
    with private_redis() as srv:
        lfu = hk.lfu_view(srv, hits=300)
    for k, v in lfu.items():
        print(k, "->", (0 < v < 300) if isinstance(v, int) else v)

# %% tags=["varies"]
if SERVER:
    print("OBJECT FREQ, allkeys-lfu ->", lfu["OBJECT FREQ, allkeys-lfu"])

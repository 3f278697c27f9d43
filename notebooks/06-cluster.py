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
# # Counters on a Redis Cluster
#
# Slots are computed here in pure Python, so those cells run everywhere. Everything else runs on a
# real Redis Cluster that this notebook starts itself: three primaries and three replicas of
# `redis-server` on free ports of 127.0.0.1, stopped in the last cell. fakeredis has no cluster mode:
# on fakeredis those cells print a note and are skipped; set `REDIS_URL` to run them.

# %% [markdown] lang="ru" translated="5f768686a85b"
# # Счётчики в Redis Cluster
#
# Слоты здесь вычисляются на чистом Python, поэтому эти ячейки работают везде. Всё остальное
# выполняется на настоящем Redis Cluster, который блокнот запускает сам: три основных узла и три
# реплики `redis-server` на свободных портах 127.0.0.1; последняя ячейка его останавливает. У fakeredis
# нет режима кластера: на fakeredis эти ячейки печатают примечание и пропускаются; задайте
# `REDIS_URL`, чтобы их выполнить.

# %% [markdown] lang="zh" translated="5f768686a85b"
# # Redis Cluster 上的计数器
#
# 这里的槽用纯 Python 计算，所以这些单元格在任何环境都能运行。其余部分运行在笔记本自己启动的真实 Redis Cluster 上：三个主节点和三个副本，都是 `redis-server`，监听 127.0.0.1 的空闲端口，最后一个单元格会停止它们。fakeredis 没有集群模式：在 fakeredis 上这些单元格会打印一条说明并跳过；设置 `REDIS_URL` 即可运行它们。

# %% tags=["varies"]
import random
import threading
import time

import redis

from redis_course import connect, msg, needs_real_redis
from redis_course.l10n import _, say
from redis_course.cluster import LocalCluster, cluster_available, default_primary, drive_incr, key_slot, same_slot
from redis_course.lessons import ratelimit
from redis_course.tables import print_table

r = connect(verbose=True)
#: what a refused command raises: an error reply, or redis-py refusing before it sends anything
ERRORS = (redis.exceptions.RedisError, redis.exceptions.RedisClusterException)

# %% [markdown] lang="en"
# ## Hash slots
#
# A cluster splits the keyspace into 16384 slots: `slot = CRC16(key) mod 16384`. When a key contains
# a *hash tag*, a non-empty `{...}`, only the tag is hashed. `redis-cli --cluster create` gives each of
# three primaries a third of the slots: 0–5460, 5461–10922, 10923–16383.

# %% [markdown] lang="ru" translated="9ab4401352ac"
# ## Хеш-слоты
#
# Кластер делит пространство ключей на 16 384 слота: `slot = CRC16(key) mod 16384`. Если в ключе есть
# *хеш-тег* — непустой `{...}`, — хешируется только тег. `redis-cli --cluster create` отдаёт каждому из
# трёх основных узлов треть слотов: 0–5460, 5461–10922, 10923–16383.

# %% [markdown] lang="zh" translated="9ab4401352ac"
# ## 哈希槽
#
# 集群把键空间分成 16384 个槽：`slot = CRC16(key) mod 16384`。如果键里含有*哈希标签*（非空的 `{...}`），就只对标签计算哈希。`redis-cli --cluster create` 给三个主节点各分三分之一的槽：0–5460、5461–10922、10923–16383。

# %%
for key in ["views", "user:17:views", "user:17:likes", "{user:17}:views", "{user:17}:likes",
            "{user:18}:views", "{}views", "{user:17}{x}"]:
    slot = key_slot(key)
    say(f"{key:18}", _("slot {slot:5}, primary #{primary}", slot=slot, primary=default_primary(slot)))

# %% [markdown] lang="en"
# `{user:17}:views` and `{user:17}:likes` share a slot; without the tag they do not. An empty `{}` is
# not a tag (the whole key is hashed), and only the first `{...}` counts.
#
# ## A private cluster

# %% [markdown] lang="ru" translated="a96487875e44"
# `{user:17}:views` и `{user:17}:likes` попадают в один слот, а без тега — нет. Пустые `{}` тегом не
# считаются (хешируется весь ключ), и учитывается только первая пара `{...}`.
#
# ## Собственный кластер

# %% [markdown] lang="zh" translated="a96487875e44"
# `{user:17}:views` 和 `{user:17}:likes` 落在同一个槽；没有标签时则不然。空的 `{}` 不算标签（对整个键计算哈希），并且只有第一个 `{...}` 起作用。
#
# ## 私有集群

# %% tags=["varies"]
cluster = rc = None
if needs_real_redis(r, "Redis Cluster"):
    if cluster_available():
        cluster = LocalCluster().start()
        rc = cluster.client(prefix=r.prefix)
        print(rc.describe())
    else:
        print(msg("no_redis_server"))


def on_cluster():
    """True when this notebook has its own cluster (a real server and redis-server installed)."""
    return rc is not None


# %% tags=["varies"]
if on_cluster():
    for row in cluster.topology():
        role = _("primary") if row["role"] == "primary" else _("replica of {node}", node=row["primary"])
        say(f"127.0.0.1:{row['port']}  {role:<16}", _("slots {slots}", slots=" ".join(row["slots"]) or "-"))

# %% [markdown] lang="en"
# ## Which node holds a counter
#
# The cluster client asks one node for the slot table once, computes each key's slot itself and sends
# the command straight to the primary that holds it.

# %% [markdown] lang="ru" translated="e88d2a336215"
# ## На каком узле живёт счётчик
#
# Клиент кластера один раз запрашивает у узла таблицу слотов, сам вычисляет слот каждого ключа и
# отправляет команду сразу тому основному узлу, который хранит этот ключ.

# %% [markdown] lang="zh" translated="e88d2a336215"
# ## 计数器在哪个节点上
#
# 集群客户端只向某个节点要一次槽表，然后自己计算每个键的槽，把命令直接发给持有它的主节点。

# %% tags=["varies"]
if on_cluster():
    views = rc.key("views")
    print("INCR ->", rc.incr(views))
    say(_("slot (Python):"), key_slot(views), " CLUSTER KEYSLOT:", rc.cluster_keyslot(views))
    say(_("held by"), rc.node_of(views))

# %% [markdown] lang="en"
# ## MOVED and ASK
#
# A plain client that asks the wrong node gets `MOVED <slot> <host:port>`. While a slot is being moved
# to another node, the old node answers `ASK` for a key it no longer has (moved already, or never
# there): ask the other node, this time only.
# The cluster client follows both; here a slot is moved by hand, step by step.

# %% [markdown] lang="ru" translated="d17665c0e208"
# ## MOVED и ASK
#
# Обычный клиент, обратившийся не к тому узлу, получает `MOVED <slot> <host:port>`. Пока слот
# переносится на другой узел, старый узел отвечает `ASK` на ключ, которого у него уже нет (перенесён
# или не существовал): спросите другой узел, но только в этот раз. Клиент кластера обрабатывает оба ответа; здесь слот переносится вручную, шаг за шагом.

# %% [markdown] lang="zh" translated="d17665c0e208"
# ## MOVED 与 ASK
#
# 普通客户端问错了节点，会得到 `MOVED <slot> <host:port>`。当一个槽正在迁往另一个节点时，旧节点对它已经没有的键（已迁走，或本来就不存在）会回复 `ASK`：仅这一次改问另一个节点。集群客户端会自动处理这两种回复；这里我们手动、一步一步地迁移一个槽。

# %% tags=["varies"]
if on_cluster():
    key = rc.key("moving")
    rc.set(key, "here")
    slot = key_slot(key)
    src = cluster.owner_of(slot)
    dst = next(p for p in cluster.primary_ports() if p != src)
    try:
        cluster.node(dst).get(key)
    except redis.exceptions.ResponseError as e:
        say(_("wrong node:"), type(e).__name__, e)
    cluster.begin_slot_move(slot, dst)
    cluster.migrate(src, dst, key)
    try:
        cluster.node(src).get(key)
    except redis.exceptions.ResponseError as e:
        say(_("during the move:"), type(e).__name__, e)
    say(_("cluster client:"), rc.get(key))
    cluster.finish_slot_move(slot, dst)
    try:
        cluster.node(src).get(key)
    except redis.exceptions.ResponseError as e:
        say(_("after the move:"), type(e).__name__, e)
    say(_("cluster client:"), rc.get(key), _("from"), rc.node_of(key))

# %% [markdown] lang="en"
# ## CROSSSLOT
#
# A command, a MULTI/EXEC block or a script may only touch keys of one slot. redis-py refuses before
# sending; a node answers `CROSSSLOT`.

# %% [markdown] lang="ru" translated="77105499c653"
# ## CROSSSLOT
#
# Команда, блок MULTI/EXEC или скрипт могут касаться только ключей одного слота. redis-py отказывает ещё
# до отправки; узел отвечает `CROSSSLOT`.

# %% [markdown] lang="zh" translated="77105499c653"
# ## CROSSSLOT
#
# 一条命令、一个 MULTI/EXEC 块或一个脚本只能访问同一个槽中的键。redis-py 会在发送之前就拒绝；节点则回复 `CROSSSLOT`。

# %% tags=["varies"]
if on_cluster():
    a, b = rc.key("user:17:views"), rc.key("user:17:likes")
    say(_("same slot?"), same_slot(a, b))
    for what, call in [("MGET (redis-py)", lambda: rc.mget(a, b)),
                       (_("MGET (a node)"), lambda: cluster.node(cluster.owner_of(key_slot(a))).mget(a, b)),
                       (_("EVAL (a node)"), lambda: cluster.node(cluster.owner_of(key_slot(a))).eval(
                           "return redis.call('INCR', KEYS[1]) + redis.call('INCR', KEYS[2])", 2, a, b))]:
        try:
            call()
        except ERRORS as e:
            print(f"{what:16} {type(e).__name__}: {e}")

# %% [markdown] lang="en"
# With a hash tag the same operations work: one user's counters share a slot.

# %% [markdown] lang="ru" translated="9459b4d951f1"
# С хеш-тегом те же операции работают: счётчики одного пользователя лежат в одном слоте.

# %% [markdown] lang="zh" translated="9459b4d951f1"
# 加上哈希标签，同样的操作就能执行：同一个用户的计数器位于同一个槽。

# %% tags=["varies"]
if on_cluster():
    a, b = rc.key("{user:17}", "views"), rc.key("{user:17}", "likes")
    say(_("same slot?"), same_slot(a, b))
    rc.incr(a)
    rc.incrby(b, 2)
    print("MGET:", rc.mget(a, b))
    print("EVAL:", rc.eval("return redis.call('INCR', KEYS[1]) + redis.call('INCR', KEYS[2])", 2, a, b))
    pipe = rc.pipeline(transaction=True)
    pipe.incr(a)
    pipe.incr(b)
    print("MULTI/EXEC:", pipe.execute())

# %% [markdown] lang="en"
# ## A tag that is too coarse
#
# Tag what must be used together, and nothing more. One tag for all users puts every user into one
# slot: one primary gets all the keys and all the traffic.

# %% [markdown] lang="ru" translated="bae81a1dfaf6"
# ## Слишком грубый тег
#
# Помечайте тегом то, что используется вместе, и не более. Один тег на всех пользователей складывает их в
# один слот: один основной узел получает все ключи и весь трафик.

# %% [markdown] lang="zh" translated="bae81a1dfaf6"
# ## 过粗的标签
#
# 只给必须一起使用的键加同一个标签，不要更多。所有用户共用一个标签，会把他们全部放进一个槽：一个主节点承担所有的键和所有的流量。

# %%
users = range(3000)
for name, make in [("{user:<id>}:views", lambda u: f"{{user:{u}}}:views"),
                   ("{users}:<id>:views", lambda u: f"{{users}}:{u}:views")]:
    per_primary = [0, 0, 0]
    for u in users:
        per_primary[default_primary(key_slot(r.key(make(u))))] += 1
    say(f"{name:20}", _("keys per primary: {counts}", counts=per_primary))

# %% [markdown] lang="en"
# The same on the running cluster, counted by each primary (`DBSIZE`):

# %% [markdown] lang="ru" translated="41cfb31e528e"
# То же на работающем кластере, по подсчёту каждого основного узла (`DBSIZE`):

# %% [markdown] lang="zh" translated="41cfb31e528e"
# 在运行中的集群上也是如此，由每个主节点自己计数（`DBSIZE`）：

# %% tags=["varies"]
if on_cluster():
    for name, make in [("{user:<id>}", lambda u: rc.key(f"{{user:{u}}}", "views")),
                       ("{users}", lambda u: rc.key("{users}", u, "views"))]:
        before = {p: cluster.node(p).dbsize() for p in cluster.primary_ports()}
        pipe = rc.pipeline()
        for u in range(300):
            pipe.incr(make(u))
        pipe.execute()
        say(f"{name:12}", _("new keys per primary:"), [cluster.node(p).dbsize() - before[p] for p in sorted(before)])

# %% [markdown] lang="en"
# ## A hot counter
#
# One key that takes all the traffic lives on one primary, however many primaries there are. A sharded
# counter splits it into N sub-keys *without* a common tag: each hit INCRs a random shard, a read sums
# the shards (GETs in one pipeline: one MGET would be CROSSSLOT).

# %% [markdown] lang="ru" translated="533bd1248cf4"
# ## Горячий счётчик
#
# Один ключ, принимающий весь трафик, живёт на одном основном узле, сколько бы узлов ни было.
# Шардированный счётчик делится на N подключей *без* общего тега: каждое обращение увеличивает случайный
# шард, чтение суммирует шарды (GET в одном конвейере: один MGET дал бы CROSSSLOT).

# %% [markdown] lang="zh" translated="533bd1248cf4"
# ## 热点计数器
#
# 承担全部流量的单个键只在一个主节点上，不管集群有多少个主节点。分片计数器把它拆成 N 个*没有*共同标签的子键：每次计数对随机选中的一个分片执行 INCR，读取时把所有分片相加（在一个管道里发 GET：一条 MGET 会得到 CROSSSLOT）。

# %% tags=["varies"]
SHARDS = 16


def hot_incr(client, name):
    """INCR one random shard of the counter: one round trip, O(1)."""
    return client.incr(client.key("hot", name, random.randrange(SHARDS)))


def hot_total(client, name):
    """The exact total: GET every shard in one pipeline (one batch per primary), O(SHARDS)."""
    pipe = client.pipeline(transaction=False)
    for i in range(SHARDS):
        pipe.get(client.key("hot", name, i))
    return sum(int(v) for v in pipe.execute() if v is not None)


if on_cluster():
    for i in range(1000):
        hot_incr(rc, "home")
    say(_("total:"), hot_total(rc, "home"))
    say(_("primaries holding shards:"), len({rc.node_of(rc.key("hot", "home", i)) for i in range(SHARDS)}))

# %% [markdown] lang="en"
# Throughput on this cluster: two threads send INCRs in pipelines of 100 for 1.5 s, to one key and then
# to the 16 shards. The INCR calls each primary served show where the load lands.

# %% [markdown] lang="ru" translated="e81302010a2e"
# Пропускная способность на этом кластере: два потока 1,5 с отправляют INCR конвейерами по 100 — сначала
# в один ключ, потом в 16 шардов. Число вызовов INCR на каждом основном узле показывает, куда ложится
# нагрузка.

# %% [markdown] lang="zh" translated="e81302010a2e"
# 这个集群上的吞吐量：两个线程以每批 100 条的管道发送 INCR，持续 1.5 秒，先打到一个键，再打到 16 个分片。每个主节点处理的 INCR 调用次数显示了负载落在哪里。

# %% tags=["varies"]
if on_cluster():
    one_key = rc.key("hot", "one")
    shards = [rc.key("hot", "sharded", i) for i in range(SHARDS)]
    for name, pick in [(_("one key"), lambda: one_key), (_("16 shards"), lambda: random.choice(shards))]:
        cluster.reset_stats()
        n = drive_incr(rc, pick, seconds=1.5)
        calls = cluster.incr_calls()
        say(f"{name}: {n / 1.5:,.0f} INCR/s,", _("per primary: {calls}", calls=sorted(calls.values(), reverse=True)))

# %% [markdown] lang="en"
# ## Rate limiters on a cluster
#
# Each limiter of lesson 04 keeps all its state in one key and runs as one script on that key: it is
# cluster-safe as it is. Replayed on the same trace with a controlled clock, the cluster decides
# exactly as one server does:

# %% [markdown] lang="ru" translated="45529727f6d6"
# ## Ограничители в кластере
#
# Каждый ограничитель из урока 04 хранит всё состояние в одном ключе и выполняется одним скриптом на этом
# ключе: он уже безопасен для кластера. На той же последовательности запросов с управляемыми часами кластер принимает ровно те
# же решения, что и один сервер:

# %% [markdown] lang="zh" translated="45529727f6d6"
# ## 集群上的限流器
#
# 第 04 课的每个限流器都把全部状态放在一个键里，并用针对这个键的一个脚本执行：它本身就适用于集群。用可控时钟重放同一段请求流量，集群做出的决定与单台服务器完全相同：

# %% tags=["varies"]
trace = ratelimit.bursty_trace()
if on_cluster():
    cluster_rows = []
    for name, limiter in ratelimit.LIMITERS.items():
        single = [d.allowed for d in ratelimit.replay(r, limiter, trace, "10.0.0.1")]
        on_cl = [d.allowed for d in ratelimit.replay(rc, limiter, trace, "10.0.0.1")]
        cluster_rows.append((_(name), f"{sum(single)}/{len(trace)}", single == on_cl))
    print_table([_("limiter"), _("allowed"), _("same on the cluster")], cluster_rows)

# %% [markdown] lang="en"
# A decision that needs two keys, a per-second and a per-minute quota of one user, is one script on two
# keys: they must share a slot, so both carry the user's tag.

# %% [markdown] lang="ru" translated="8f253043c5de"
# Решение, которому нужны два ключа — квота пользователя в секунду и в минуту, — это один скрипт на двух
# ключах: они должны быть в одном слоте, поэтому оба несут тег пользователя.

# %% [markdown] lang="zh" translated="8f253043c5de"
# 需要两个键才能做出的决定（同一用户的每秒配额和每分钟配额）是作用于两个键的一个脚本：两个键必须在同一个槽，所以都带上用户的标签。

# %% tags=["varies"]
TWO_WINDOWS = """
local s = redis.call('INCR', KEYS[1])
if s == 1 then redis.call('PEXPIRE', KEYS[1], 1000) end
local m = redis.call('INCR', KEYS[2])
if m == 1 then redis.call('PEXPIRE', KEYS[2], 60000) end
if s > tonumber(ARGV[1]) or m > tonumber(ARGV[2]) then return 0 end
return 1
"""
if on_cluster():
    for second, minute in [(rc.key("rl", "user:17", "s"), rc.key("rl", "user:17", "m")),
                           (rc.key("rl", "{user:17}", "s"), rc.key("rl", "{user:17}", "m"))]:
        try:
            print(rc.unprefixed(second), "->", [rc.eval(TWO_WINDOWS, 2, second, minute, 3, 100) for _ in range(5)])
        except ERRORS as e:
            print(rc.unprefixed(second), "->", type(e).__name__, e)

# %% [markdown] lang="en"
# ## Replication is asynchronous
#
# A primary replies to INCR before its replica has the write. Here the replica of the counter's
# primary is cut off (frozen, and its link closed), as a network partition would do; the primary keeps
# acknowledging INCRs; then the primary dies, the replica comes back and takes over.

# %% [markdown] lang="ru" translated="f25e4736267d"
# ## Репликация асинхронна
#
# Основной узел отвечает на INCR раньше, чем запись получила реплика. Здесь реплику основного узла
# счётчика отрезают (приостанавливают и закрывают её соединение), как это сделало бы разделение сети; первичный
# узел продолжает подтверждать INCR; затем он умирает, реплика возвращается и занимает его место.

# %% [markdown] lang="zh" translated="f25e4736267d"
# ## 复制是异步的
#
# 主节点在副本拿到写入之前就回复了 INCR。这里我们把计数器所在主节点的副本切断（暂停它并关闭复制连接），就像网络分区那样；主节点继续确认 INCR；随后主节点宕机，副本恢复并接管。

# %% tags=["varies"]
if on_cluster():
    counter = rc.key("payments")
    old = cluster.owner_of(key_slot(counter))
    replica = cluster.replica_of(old)
    acked = sum(1 for _ in range(100) if rc.incr(counter))
    cluster.pause(replica)
    cluster.node(old).client_kill_filter(_type="replica")
    acked += sum(1 for _ in range(50) if rc.incr(counter))
    say(_("acknowledged INCRs:"), acked)
    cluster.kill(old)
    cluster.resume(replica)
    t0 = time.monotonic()
    new = cluster.wait_failover(old)
    print(_("127.0.0.1:{port} took over after {seconds:.1f} s", port=new, seconds=time.monotonic() - t0))
    value = int(cluster.node(new).get(counter) or 0)
    say(_("value on the new primary:"), value, "|", _("acknowledged and lost:"), acked - value)

# %% [markdown] lang="en"
# `WAIT numreplicas timeout` blocks until that many replicas have acknowledged this connection's
# writes, and returns how many did. It tells you; it does not undo the write when the answer is 0, and
# a replica that acknowledged can still lose it.

# %% [markdown] lang="ru" translated="d34d992d1d1e"
# `WAIT numreplicas timeout` блокирует клиента, пока указанное число реплик не подтвердит записи этого
# соединения, и возвращает, сколько подтвердили. WAIT только сообщает: при ответе 0 запись не
# отменяется, а реплика, которая её подтвердила, всё равно может её потерять.

# %% [markdown] lang="zh" translated="d34d992d1d1e"
# `WAIT numreplicas timeout` 会阻塞，直到指定数量的副本确认收到本连接的写入，并返回实际确认的副本数。它只是告诉你结果：答案为 0 时它不会撤销写入，而已经确认的副本也仍可能丢失这次写入。

# %% tags=["varies"]
if on_cluster():
    # a key whose primary still has a replica (the last failover left one primary without any)
    key = next(k for k in (rc.key("waited", i) for i in range(100)) if cluster.replica_of(cluster.owner_of(key_slot(k))))
    primary = cluster.owner_of(key_slot(key))
    direct = cluster.node(primary)
    pipe = direct.pipeline(transaction=False)
    pipe.incr(key)
    pipe.execute_command("WAIT", 1, 1000)
    print("INCR, WAIT 1 1000 ->", pipe.execute())
    replica = cluster.replica_of(primary)
    cluster.pause(replica)
    pipe = direct.pipeline(transaction=False)
    pipe.incr(key)
    pipe.execute_command("WAIT", 1, 200)
    say(_("replica frozen:"), "INCR, WAIT 1 200 ->", pipe.execute(), "|", _("the value stays:"), direct.get(key))
    cluster.resume(replica)

# %% [markdown] lang="en"
# ## Retries and idempotency
#
# A timeout does not say whether the command ran. Here the reply is lost after the server executed the
# INCR; the client retries and the counter counts the request twice.

# %% [markdown] lang="ru" translated="08da3be1e89d"
# ## Повторы и идемпотентность
#
# Тайм-аут не говорит, выполнилась ли команда. Здесь ответ теряется после того, как сервер выполнил INCR;
# клиент повторяет запрос, и счётчик засчитывает его дважды.

# %% [markdown] lang="zh" translated="08da3be1e89d"
# ## 重试与幂等
#
# 超时并不能说明命令是否已经执行。这里服务器执行了 INCR 之后回复丢失；客户端重试，计数器把这个请求计了两次。

# %%
def lose_reply(client, *command):
    """Send the command, then act as if the reply never arrived (a timeout after it ran)."""
    client.execute_command(*command)
    raise redis.exceptions.TimeoutError("Timeout reading from socket")


def incr_with_retry(client, key, attempts=2, first_reply_lost=True):
    for attempt in range(attempts):
        try:
            if attempt == 0 and first_reply_lost:
                return lose_reply(client, "INCR", key)
            return client.incr(key)
        except redis.exceptions.TimeoutError as e:
            print(_("attempt {n}: {error}; retrying", n=attempt + 1, error=e))


orders = r.key("orders")
say(_("INCR with a retry ->"), incr_with_retry(r, orders), "|", _("counter:"), r.get(orders))

# %% [markdown] lang="en"
# Idempotent increment: every request carries an id. One script checks the id's marker, increments and
# records the result with a TTL; a retry finds the marker and gets the same answer. Counter and marker
# share the tag `{orders}`, so on a cluster they are in one slot.

# %% [markdown] lang="ru" translated="35ac7f6d2dca"
# Идемпотентный инкремент: у каждого запроса есть id. Один скрипт проверяет отметку с этим id,
# увеличивает счётчик и записывает результат с TTL; повтор находит отметку и получает тот же ответ.
# Счётчик и отметка имеют общий тег `{orders}`, поэтому в кластере они в одном слоте.

# %% [markdown] lang="zh" translated="35ac7f6d2dca"
# 幂等自增：每个请求带一个 ID。一个脚本检查该 ID 的标记、自增并把结果连同 TTL 记录下来；重试时找到标记，得到同样的答案。计数器和标记共用标签 `{orders}`，所以在集群中位于同一个槽。

# %%
INCR_ONCE = """
local done = redis.call('GET', KEYS[2])
if done then return tonumber(done) end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], value, 'EX', ARGV[2])
return value
"""


def incr_once(client, name, request_id, by=1, ttl_s=3600):
    """One EVAL: GET marker; INCRBY + SET EX only the first time. O(1), atomic, one slot."""
    counter, marker = client.key("counter", f"{{{name}}}"), client.key("counter", f"{{{name}}}", "req", request_id)
    return client.eval(INCR_ONCE, 2, counter, marker, by, ttl_s)


def incr_once_with_retry(client, name, request_id):
    counter, marker = client.key("counter", f"{{{name}}}"), client.key("counter", f"{{{name}}}", "req", request_id)
    try:
        return lose_reply(client, "EVAL", INCR_ONCE, 2, counter, marker, 1, 3600)
    except redis.exceptions.TimeoutError as e:
        print(_("attempt {n}: {error}; retrying", n=1, error=e))
        return incr_once(client, name, request_id)


say(_("idempotent, with a retry ->"), incr_once_with_retry(r, "orders", "req-1"))
say(_("the same request again ->"), incr_once(r, "orders", "req-1"))
say(_("the next request ->"), incr_once(r, "orders", "req-2"))
say(_("counter:"), r.get(r.key("counter", "{orders}")),
      "|", _("marker TTL:"), r.ttl(r.key("counter", "{orders}", "req", "req-1")))

# %% [markdown] lang="en"
# On the cluster the timeout is real: the primary is frozen for 300 ms while a client with a 100 ms
# timeout sends the command. The command waits in the socket and runs when the node wakes up; the
# client retries 400 ms later. (redis-py's own retries are switched off here to make the retry
# visible; by default redis-py 8 retries a command up to 10 times after a timeout, so the same thing
# happens without a line of your code.)

# %% [markdown] lang="ru" translated="6fee3c7745ba"
# В кластере тайм-аут настоящий: основной узел приостановлен на 300 мс, а клиент с тайм-аутом 100 мс
# отправляет команду. Команда ждёт в сокете и выполняется, когда узел просыпается; клиент повторяет её
# через 400 мс. (Собственные повторы redis-py здесь выключены, чтобы повтор был виден; по умолчанию
# redis-py 8 после тайм-аута повторяет команду до 10 раз, так что то же самое происходит без единой
# строки вашего кода.)

# %% [markdown] lang="zh" translated="6fee3c7745ba"
# 在集群上超时是真实的：主节点被暂停 300 毫秒，同时一个超时为 100 毫秒的客户端发送命令。命令在套接字里等待，节点醒来后照样执行；客户端在 400 毫秒后重试。（这里关闭了 redis-py 自己的重试，好让重试清晰可见；默认情况下 redis-py 8 在超时后最多重试 10 次，所以不写一行代码也会发生同样的事。）

# %% tags=["varies"]
from redis.backoff import NoBackoff
from redis.retry import Retry

if on_cluster():
    for idempotent in (False, True):
        key = rc.key("counter", "{signups}") if idempotent else rc.key("signups")
        primary = cluster.owner_of(key_slot(key))
        impatient = connect(f"redis://127.0.0.1:{primary}/0", prefix=rc.prefix, owned=True,
                            socket_timeout=0.1, retry=Retry(NoBackoff(), 0))
        impatient.ping()  # the connection is open before the node freezes
        cluster.pause(primary)
        threading.Timer(0.3, cluster.resume, args=(primary,)).start()
        send = (lambda: incr_once(impatient, "signups", "req-9")) if idempotent else (lambda: impatient.incr(key))
        try:
            send()
        except redis.exceptions.TimeoutError as e:
            print(_("attempt {n}: {error}", n=1, error="TimeoutError (" + str(e) + ")"))
        time.sleep(0.4)
        say(f"{'incr_once' if idempotent else 'INCR':9}",
              _("retry -> {reply}, counter: {counter}", reply=send(), counter=rc.get(key)))

# %% [markdown] lang="en"
# ## Clean up

# %% [markdown] lang="ru" translated="efd5399e92dc"
# ## Уборка

# %% [markdown] lang="zh" translated="efd5399e92dc"
# ## 清理

# %% tags=["varies"]
if on_cluster():
    cluster.stop()
    say(_("cluster stopped; processes left:"), sum(cluster.alive(p) for p in cluster.ports))
say(_("keys deleted:"), r.cleanup())

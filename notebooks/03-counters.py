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
# # Counter patterns: windows, TTL, hashes, history, unique visitors
#
# This notebook runs every example of the lesson [Counter patterns](index.md). It prints the same
# thing on fakeredis and on a real Redis, except where a cell says otherwise. Time never comes from
# the machine's clock or zone in printed output: the examples pass explicit datetimes, and the few
# examples that need real time passing use TTLs of a few hundred milliseconds.

# %% [markdown] lang="ru" translated="044ca0289dcc"
# # Паттерны счётчиков: окна, TTL, хеши, история, уникальные посетители
#
# Этот блокнот выполняет каждый пример урока [Паттерны счётчиков](index.md). На fakeredis и на
# настоящем Redis он печатает одно и то же, кроме ячеек, где сказано иначе. Время в выводе никогда не
# берётся из часов или часового пояса машины: примеры передают явные datetime, а тем немногим, которым
# нужно, чтобы время действительно шло, хватает TTL в несколько сотен миллисекунд.

# %% [markdown] lang="zh" translated="044ca0289dcc"
# # 计数器模式：窗口、TTL、哈希、历史与独立访客
#
# 这个笔记本运行本课[计数器模式](index.md)中的每一个示例。除非单元格另有说明，它在 fakeredis 和真实 Redis 上输出相同的内容。输出中的时间从不取自机器的时钟或时区：示例显式传入 datetime，少数需要真实时间流逝的示例只用几百毫秒的 TTL。

# %% tags=["varies"]
import os
import threading
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import redis

from redis_course import charts, connect, needs_real_redis
from redis_course.l10n import N_, _, say
from redis_course.tables import print_table

r = connect(verbose=True)
UTC = timezone.utc

# %% [markdown] lang="en"
# ## One key per counter per day
#
# The key name carries the window: `views:post:17:2026-05-01` counts the views of post 17 on the
# UTC day 1 May 2026. A new day means a new key, so the counter never has to be reset. `day_key`
# builds the name from an explicit, timezone-aware datetime.

# %% [markdown] lang="ru" translated="573f34f8e4bf"
# ## Один ключ на счётчик на день
#
# Окно записано в имени ключа: `views:post:17:2026-05-01` считает просмотры поста 17 за 1 мая 2026 года
# по UTC. Новый день — новый ключ, поэтому счётчик никогда не нужно сбрасывать. `day_key` строит имя из
# явного datetime с часовым поясом (timezone-aware).

# %% [markdown] lang="zh" translated="573f34f8e4bf"
# ## 每个计数器每天一个键
#
# 窗口写在键名里：`views:post:17:2026-05-01` 统计文章 17 在 2026 年 5 月 1 日（UTC）这一天的浏览量。新的一天就是新的键，所以计数器永远不需要清零。`day_key` 用一个显式的、带时区的 datetime 生成键名。

# %%
def day_key(r, post_id, when):
    """views:post:<id>:<YYYY-MM-DD> for the UTC day of `when` (an aware datetime); no round trip."""
    return r.key("views", "post", post_id, when.astimezone(UTC).strftime("%Y-%m-%d"))


now = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)  # an explicit clock, never datetime.now()
k = day_key(r, 17, now)
print(r.unprefixed(k))
print(r.incr(k), r.incr(k), r.incr(k))

# %% [markdown] lang="en"
# The price is one key per counter per window: 50 posts kept for 30 days are 1,500 keys, and a
# per-user daily counter for a million users is a million keys a day. Each small string key costs
# about 70 bytes on a 64-bit Redis 7.0, more with a long name (measured further down).

# %% [markdown] lang="ru" translated="ec64bfa3b621"
# Цена — один ключ на счётчик на каждое окно: 50 постов за 30 дней — это 1 500 ключей, а дневной
# счётчик на пользователя при миллионе пользователей — миллион ключей в день. Каждый маленький
# строковый ключ занимает около 70 байт на 64-битном Redis 7.0, а с длинным именем — больше (замер ниже).

# %% [markdown] lang="zh" translated="ec64bfa3b621"
# 代价是每个计数器的每个窗口一个键：50 篇文章保留 30 天就是 1,500 个键，一百万用户的每用户每日计数器每天就是一百万个键。在 64 位的 Redis 7.0 上，每个小的字符串键大约占 70 字节，键名较长时会更多（后面会实测）。

# %%
month = [day_key(r, post, now - timedelta(days=d)) for post in range(101, 151) for d in range(30)]
with r.pipeline(transaction=False) as p:  # one round trip for 1,500 INCRs
    for key in month:
        p.incr(key)
    p.execute()
print(_("{n} keys", n=r.exists(*month)))
deleted = r.delete(*month)

# %% [markdown] lang="en"
# ## Self-closing windows: the date in the key plus a TTL
#
# The date closes the window; the TTL only collects the garbage. Give each day's key a TTL that
# outlives the day by a margin (here two days), so that yesterday's total can still be read this
# morning. `ttl_until_day_end` computes it from the explicit `now`.

# %% [markdown] lang="ru" translated="160da9004d29"
# ## Самозакрывающиеся окна: дата в ключе плюс TTL
#
# Дата закрывает окно, а TTL только убирает старые ключи. Дайте ключу каждого дня TTL, который переживает
# этот день с запасом (здесь два дня), чтобы вчерашний итог можно было прочитать и сегодня утром.
# `ttl_until_day_end` вычисляет его из явного `now`.

# %% [markdown] lang="zh" translated="160da9004d29"
# ## 自动关闭的窗口：键里的日期加上 TTL
#
# 日期负责关闭窗口，TTL 只负责清理垃圾。给每天的键一个比这一天更长、留有余量（这里是两天）的 TTL，这样今天早上仍然能读到昨天的总数。`ttl_until_day_end` 根据显式的 `now` 计算它。

# %%
MARGIN = timedelta(days=2)


def ttl_until_day_end(now, margin=MARGIN):
    """Seconds from `now` to the end of its UTC day, plus `margin`."""
    day_end = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), datetime.min.time(), UTC)
    return int((day_end + margin - now).total_seconds())


ttl = ttl_until_day_end(now)
print(_("{ttl} seconds = {duration}", ttl=ttl, duration=timedelta(seconds=ttl)))
print(r.expire(k, ttl, nx=True))  # NX: set it once, never move it
print(0 < r.ttl(k) <= ttl)

# %% [markdown] lang="en"
# ### Whose day? UTC versus the reader's local day
#
# A view at 23:30 on Friday in New York is 03:30 on Saturday in UTC. A key by UTC date counts it on
# Saturday; the reader would call it Friday. Neither is wrong, but pick one on purpose, and never let
# the server's time zone pick it for you.

# %% [markdown] lang="ru" translated="4fb4d2fa79d0"
# ### Чей день? UTC или локальный день читателя
#
# Просмотр в 23:30 пятницы в Нью-Йорке — это 03:30 субботы по UTC. Ключ по дате UTC засчитает его в
# субботу, а читатель назвал бы это пятницей. Ни то ни другое не ошибка, но выбирайте осознанно и
# никогда не позволяйте выбор делать часовому поясу сервера.

# %% [markdown] lang="zh" translated="4fb4d2fa79d0"
# ### 按谁的日期？UTC 还是读者的本地日期
#
# 纽约周五 23:30 的一次浏览，在 UTC 里已是周六 03:30。按 UTC 日期命名的键把它算在周六，而读者会说是周五。两者都不算错，但要有意识地选定一种，绝不要让服务器的时区替你选。

# %%
ny = ZoneInfo("America/New_York")
friday_night = datetime(2026, 5, 1, 23, 30, tzinfo=ny)
print(friday_night.astimezone(UTC))
say(_("UTC day key:"), r.unprefixed(day_key(r, 17, friday_night)))
say(_("reader's local day:"), friday_night.strftime("%Y-%m-%d"))

# %% [markdown] lang="en"
# `datetime.fromtimestamp(ts)` without a zone uses the zone of the machine it runs on. The same
# timestamp gives a different day on a server in Tokyo and on one in New York; with an explicit zone
# it gives the same day everywhere. (The cell changes this process's zone for a moment to show it.)

# %% [markdown] lang="ru" translated="2e9e7fbf2ec5"
# `datetime.fromtimestamp(ts)` без пояса берёт пояс машины, на которой выполняется. Одна и та же метка
# времени даёт разные дни на сервере в Токио и на сервере в Нью-Йорке; с явным поясом — один и тот же
# день везде. (Чтобы это показать, ячейка ненадолго меняет часовой пояс этого процесса.)

# %% [markdown] lang="zh" translated="2e9e7fbf2ec5"
# 不带时区的 `datetime.fromtimestamp(ts)` 使用它所运行的机器的时区。同一个时间戳在东京的服务器和纽约的服务器上得出不同的日期；带上显式时区，在哪里都是同一天。（为了演示，这个单元格会临时修改本进程的时区。）

# %%
ts = friday_night.timestamp()
saved_tz = os.environ.get("TZ")
for machine_zone in ["Asia/Tokyo", "America/New_York"]:
    os.environ["TZ"] = machine_zone
    time.tzset()
    print(f"{machine_zone:17} fromtimestamp(ts): {datetime.fromtimestamp(ts).date()}   "
          f"fromtimestamp(ts, UTC): {datetime.fromtimestamp(ts, UTC).date()}")
if saved_tz is None:
    del os.environ["TZ"]
else:
    os.environ["TZ"] = saved_tz
time.tzset()

# %% [markdown] lang="en"
# ## The TTL trap: EXPIRE on every hit
#
# Windows without a date in the key rely on the TTL alone: "at most 5 attempts per 500 ms". Calling
# `EXPIRE` after every `INCR` restarts the TTL on every hit, so under steady traffic the key never
# expires and the window never closes. Setting the TTL only when `INCR` returned 1 (the key was just
# created) lets it close. Both run side by side: a hit every 15 ms for about a second and a half.

# %% [markdown] lang="ru" translated="236bd8040b9e"
# ## Ловушка TTL: EXPIRE при каждом обращении
#
# Окна без даты в ключе держатся только на TTL: «не больше 5 попыток за 500 мс». Вызов `EXPIRE` после
# каждого `INCR` запускает TTL заново при каждом обращении, поэтому при постоянном трафике ключ не
# истекает и окно не закрывается. TTL, поставленный только когда `INCR` вернул 1 (ключ только что
# создан), позволяет окну закрыться. Оба варианта работают бок о бок: обращение каждые 15 мс в течение
# примерно полутора секунд.

# %% [markdown] lang="zh" translated="236bd8040b9e"
# ## TTL 陷阱：每次访问都 EXPIRE
#
# 键名里没有日期的窗口只依靠 TTL：“每 500 毫秒 最多 5 次尝试”。每次 `INCR` 之后都调用 `EXPIRE`，会让 TTL 在每次访问时重新计时，所以在持续流量下键永远不会过期，窗口永远不会关闭。只在 `INCR` 返回 1（键刚被创建）时设置 TTL，窗口才能关闭。两种写法并排运行：每 15 毫秒 访问一次，持续约 1.5 秒。

# %%
def hit_expire_every_time(r, key, ttl_ms):
    """INCR, then PEXPIRE on every hit (2 round trips): the TTL restarts on every hit. The trap."""
    n = r.incr(key)
    r.pexpire(key, ttl_ms)
    return n


def hit_expire_on_first(r, key, ttl_ms):
    """INCR, then PEXPIRE only when INCR returned 1. Correct while nothing crashes (see below)."""
    n = r.incr(key)
    if n == 1:
        r.pexpire(key, ttl_ms)
    return n


TTL_MS, GAP_S, HITS = 500, 0.015, 100  # a TTL far above any pause of a busy machine
trap, first = [], []
for i in range(HITS):
    trap.append(hit_expire_every_time(r, r.key("trap"), TTL_MS))
    first.append(hit_expire_on_first(r, r.key("first"), TTL_MS))
    time.sleep(GAP_S)
print(_("EXPIRE on every hit: last value {last} after {hits} hits; the window restarted: {restarted}",
        last=trap[-1], hits=HITS, restarted=1 in trap[1:]))
print(_("EXPIRE on the first hit: the window restarted at least twice: {twice}", twice=first.count(1) >= 3))

# %% [markdown] lang="en"
# ### The crash between INCR and EXPIRE
#
# `hit_expire_on_first` takes two round trips. If the process dies after `INCR` returned 1 and before
# `PEXPIRE` (a deploy, an OOM kill, a dropped connection), the key exists without a TTL, and every
# later hit sees a value above 1, so nobody ever sets it: the counter lives for ever. `Crash` stands for
# that death; the function raises it at the worst moment.

# %% [markdown] lang="ru" translated="4ee45ccfba2c"
# ### Падение между INCR и EXPIRE
#
# `hit_expire_on_first` делает два сетевых обмена. Если процесс умрёт после того, как `INCR`
# вернул 1, и до `PEXPIRE` (деплой, OOM killer, оборванное соединение), ключ останется без TTL, а каждое
# следующее обращение увидит значение больше 1, поэтому TTL не поставит никто: счётчик живёт вечно.
# `Crash` изображает такое падение; функция выбрасывает его в самый неудачный момент.

# %% [markdown] lang="zh" translated="4ee45ccfba2c"
# ### INCR 与 EXPIRE 之间的崩溃
#
# `hit_expire_on_first` 需要两次往返。如果进程在 `INCR` 返回 1 之后、`PEXPIRE` 之前死掉（部署、被 OOM killer 杀掉、连接断开），键就没有 TTL，而之后的每次访问看到的值都大于 1，于是再也没有人设置 TTL：计数器永远存在。`Crash` 代表这次死亡；函数在最糟糕的时刻抛出它。

# %%
class Crash(Exception):
    """Stands for the process dying between two commands."""


def hit_crashing(r, key, ttl_ms, crash=False):
    n = r.incr(key)
    if crash:
        raise Crash(_("died after INCR, before PEXPIRE"))
    if n == 1:
        r.pexpire(key, ttl_ms)
    return n


leak = r.key("leak")
try:
    hit_crashing(r, leak, TTL_MS, crash=True)
except Crash as exc:
    say(_("crash:"), exc)
print(_("the next hit returns {n}, so it sets no TTL; PTTL: {pttl}", n=hit_crashing(r, leak, TTL_MS), pttl=r.pttl(leak)))

# %% [markdown] lang="en"
# Four forms that fix it. The first three cannot leave a key without a TTL, even after a crash; the
# fourth can, but repairs it on the next hit, so a key that gets no further hit keeps no TTL. Each
# takes the same `crash` switch, raised between its steps where it has more than one.
#
# 1. **MULTI/EXEC** with `PEXPIRE key ttl NX` (Redis 7.0+): one round trip, executed all together.
#    `NX` sets the TTL only when the key has none, so it never extends it. A client that dies before
#    `EXEC` leaves nothing behind: redis-py sends nothing until `execute()`, and the server drops a
#    queued transaction when its connection closes.
# 2. **A Lua script**: `INCR`, and `PEXPIRE` when the result is 1, run as one command.
# 3. **`SET key 0 PX ttl NX`, then `INCR`, in one MULTI/EXEC**: the key is born with its TTL, and
#    `INCR` keeps it. Sent as two separate commands it has a hole of its own, shown below.
# 4. **`INCR`, then `PEXPIRE key ttl NX` on every hit**: not atomic, but self-healing: a key left
#    without a TTL by a crash gets one on the next hit (and a key with no next hit keeps no TTL).

# %% [markdown] lang="ru" translated="32d6552a93d0"
# Четыре формы, которые это исправляют. Первые три не могут оставить ключ без TTL даже при падении;
# четвёртая может, но чинит ключ при следующем обращении, так что ключ, к которому больше никто не
# обратится, так и останется без TTL. Каждая форма принимает тот же переключатель `crash`, который
# срабатывает между её шагами, если шагов больше одного.
#
# 1. **MULTI/EXEC** с `PEXPIRE key ttl NX` (Redis 7.0+): один сетевой обмен, выполняется целиком. `NX`
#    ставит TTL, только если у ключа его нет, поэтому никогда его не продлевает. Клиент, умерший до
#    `EXEC`, ничего не оставляет: redis-py ничего не отправляет до `execute()`, а сервер отбрасывает
#    транзакцию из очереди, когда её соединение закрывается.
# 2. **Lua-скрипт**: `INCR` и `PEXPIRE`, если результат равен 1, выполняются как одна команда.
# 3. **`SET key 0 PX ttl NX`, затем `INCR`, в одном MULTI/EXEC**: ключ рождается сразу с TTL, а `INCR`
#    его сохраняет. Двумя отдельными командами у этой формы есть своя дыра — она показана ниже.
# 4. **`INCR`, затем `PEXPIRE key ttl NX` при каждом обращении**: не атомарно, но самовосстанавливается:
#    ключ, оставленный падением без TTL, получит его при следующем обращении (а ключ без следующего
#    обращения так и останется без TTL).

# %% [markdown] lang="zh" translated="32d6552a93d0"
# 下面四种写法可以解决这个问题。前三种即使发生崩溃也不会留下没有 TTL 的键；第四种可能会留下，但会在下一次访问时修复它，所以如果这个键之后再也没有被访问，它就一直没有 TTL。每种都接受同一个 `crash` 开关，如果它有多个步骤，就在步骤之间触发。
#
# 1. **MULTI/EXEC** 配合 `PEXPIRE key ttl NX`（Redis 7.0+）：一次往返，整体执行。`NX` 只在键没有 TTL 时才设置，所以永远不会延长它。在 `EXEC` 之前死掉的客户端什么也不会留下：redis-py 在 `execute()` 之前什么都不发送，而服务器会在连接关闭时丢弃排队中的事务。
# 2. **Lua 脚本**：`INCR`，以及结果为 1 时的 `PEXPIRE`，作为一条命令执行。
# 3. **在同一个 MULTI/EXEC 里先 `SET key 0 PX ttl NX`，再 `INCR`**：键在创建时就带着 TTL，`INCR` 会保留它。如果作为两条独立的命令发送，它有自己的漏洞，见下文。
# 4. **每次访问都先 `INCR` 再 `PEXPIRE key ttl NX`**：不是原子的，但能自我修复：崩溃留下的没有 TTL 的键，会在下一次访问时得到 TTL（如果再也没有下一次访问，这个键就一直没有 TTL）。

# %%
def hit_multi(r, key, ttl_ms, crash=False):
    """MULTI; INCR; PEXPIRE key ttl NX; EXEC: one round trip, all or nothing. O(1)."""
    with r.pipeline(transaction=True) as p:
        p.incr(key)
        p.pexpire(key, ttl_ms, nx=True)
        if crash:
            raise Crash(_("died before EXEC"))
        n, expire_set = p.execute()
    return n


INCR_TTL = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""
incr_ttl_script = r.register_script(INCR_TTL)


def hit_lua(r, key, ttl_ms, crash=False):
    """EVALSHA of INCR_TTL: one round trip, one atomic step, so there is no 'between'. O(1)."""
    return incr_ttl_script(keys=[key], args=[ttl_ms], client=r)


def hit_set_nx(r, key, ttl_ms, crash=False):
    """MULTI; SET key 0 PX ttl NX; INCR; EXEC: one round trip; the key is born with its TTL. O(1)."""
    with r.pipeline(transaction=True) as p:
        p.set(key, 0, px=ttl_ms, nx=True)
        p.incr(key)
        if crash:
            raise Crash(_("died before EXEC"))
        return p.execute()[1]


def hit_expire_nx(r, key, ttl_ms, crash=False):
    """INCR, then PEXPIRE key ttl NX on every hit (2 round trips). O(1)."""
    n = r.incr(key)
    if crash:
        raise Crash(_("died after INCR, before PEXPIRE"))
    r.pexpire(key, ttl_ms, nx=True)
    return n


FORMS = {"MULTI/EXEC + NX": hit_multi, N_("Lua script"): hit_lua,
         "MULTI SET NX + INCR": hit_set_nx, "INCR + PEXPIRE NX": hit_expire_nx}
crashes = []
for name, hit in FORMS.items():
    key = r.key("crash", name.replace(" ", ""))
    try:
        hit(r, key, 60_000, crash=True)
    except Crash:
        pass
    state = _("no key") if not r.exists(key) else _("value {v}, has TTL: {ttl}", v=r.get(key), ttl=r.pttl(key) > 0)
    hit(r, key, 60_000)
    crashes.append((_(name), state, r.pttl(key) > 0))
print_table([_("form"), _("after the crash"), _("after one more hit: has TTL")], crashes)

# %% [markdown] lang="en"
# The key that leaked above is repaired by the first form that uses `NX`, because `PEXPIRE ... NX`
# applies to any key that has no TTL:

# %% [markdown] lang="ru" translated="b08771c034b7"
# Ключ, который «утёк» выше, чинит первая же форма с `NX`, потому что `PEXPIRE ... NX` действует на
# любой ключ без TTL:

# %% [markdown] lang="zh" translated="b08771c034b7"
# 上面泄漏的那个键，会被第一种使用 `NX` 的写法修复，因为 `PEXPIRE ... NX` 对任何没有 TTL 的键都生效：

# %%
print(hit_multi(r, leak, TTL_MS), r.pttl(leak) > 0)

# %% [markdown] lang="en"
# Why `SET ... NX` and `INCR` belong in one transaction: as two commands, the key can expire between
# them. `SET NX` sees the key still alive and does nothing; the key expires; `INCR` creates a new key,
# and that one has no TTL. With a TTL of a day the gap is rarely hit, but one hit is a counter that
# never expires. A pause longer than the TTL that is left shows it every time:

# %% [markdown] lang="ru" translated="e5099b01a269"
# Почему `SET ... NX` и `INCR` должны идти в одной транзакции: между двумя отдельными командами ключ
# может истечь. `SET NX` видит, что ключ ещё жив, и ничего не делает; ключ истекает; `INCR` создаёт
# новый ключ, и у него TTL нет. При TTL в сутки в эту щель попадают редко, но одно попадание — это
# счётчик, который не истечёт никогда. Пауза длиннее оставшегося TTL показывает это каждый раз:

# %% [markdown] lang="zh" translated="e5099b01a269"
# 为什么 `SET ... NX` 和 `INCR` 必须放在同一个事务里：作为两条命令，键可能在它们之间过期。`SET NX` 看到键还存在，于是什么也不做；随后键过期；`INCR` 创建了一个新键，而这个新键没有 TTL。TTL 为一天时很少会碰上这个间隙，但只要碰上一次，就是一个永不过期的计数器。一次比剩余 TTL 更长的停顿每次都能把它暴露出来：

# %%
slow = r.key("slow")
r.incr(slow)
r.pexpire(slow, 100)
print(r.set(slow, 0, px=100, nx=True))  # None: the key exists, SET NX does nothing
time.sleep(0.15)  # a GC pause or a slow network, longer than the 100 ms left
print(r.incr(slow), r.pttl(slow))  # INCR created a new key: value 1, PTTL -1 (no TTL)

# %% [markdown] lang="en"
# And under the same steady traffic as before, every form closes its window:

# %% [markdown] lang="ru" translated="abecc0cd5d7b"
# И при том же постоянном трафике, что и раньше, каждая форма закрывает своё окно:

# %% [markdown] lang="zh" translated="abecc0cd5d7b"
# 在与前面相同的持续流量下，每种写法都能关闭自己的窗口：

# %%
seen = {name: [] for name in FORMS}
for i in range(HITS):
    for name, hit in FORMS.items():
        seen[name].append(hit(r, r.key("steady", name.replace(" ", "")), TTL_MS))
    time.sleep(GAP_S)
for name, values in seen.items():
    say(_(name) + ":", _("restarted at least twice: {twice}", twice=values.count(1) >= 3))

# %% [markdown] lang="en"
# Redis 7.0 has no single command that increments and sets a TTL; Redis 8.8 adds one, `INCREX`.
#
# ## When EXPIRE on every hit is what you want
#
# The `INCR` reference describes a counter that calls `INCR` and `EXPIRE` together on every view: it
# counts the latest views *separated by less than T*. That is a different question from "views per
# window": it is a streak, or an activity session that ends after T of silence. Here T is 1,000 ms and
# the views arrive 50 ms apart, then a pause of 1.5 s, then one more view.

# %% [markdown] lang="ru" translated="788961490a2a"
# В Redis 7.0 нет одной команды, которая увеличивает значение и ставит TTL; в Redis 8.8 такая
# появилась — `INCREX`.
#
# ## Когда EXPIRE при каждом обращении — то, что нужно
#
# В справке по `INCR` описан счётчик, который при каждом просмотре вызывает `INCR` и `EXPIRE` вместе:
# он считает последние просмотры, *между которыми прошло меньше T*. Это другой вопрос, чем «просмотры
# за окно»: это серия или сессия активности, которая заканчивается после T тишины. Здесь T = 1000 мс,
# просмотры идут с интервалом 50 мс, затем пауза 1,5 с и ещё один просмотр.

# %% [markdown] lang="zh" translated="788961490a2a"
# Redis 7.0 没有一条既自增又设置 TTL 的命令；Redis 8.8 新增了一条：`INCREX`。
#
# ## 什么时候每次都 EXPIRE 才是你想要的
#
# `INCR` 的参考文档描述了一种在每次浏览时同时调用 `INCR` 和 `EXPIRE` 的计数器：它统计*相邻间隔都小于 T* 的最近浏览次数。这和“每个窗口的浏览量”是不同的问题：它统计的是一串连续浏览，或者在静默 T 之后结束的一次活跃会话。这里 T 是 1000 毫秒，浏览以 50 毫秒的间隔到达，然后暂停 1.5 秒，再来一次浏览。

# %%
def count_streak(r, user, idle_ms):
    """MULTI; INCR; PEXPIRE (no NX); EXEC: views in a row with gaps shorter than idle_ms."""
    key = r.key("streak", user)
    with r.pipeline(transaction=True) as p:
        p.incr(key)
        p.pexpire(key, idle_ms)
        return p.execute()[0]


streak = []
for pause in [0.05, 0.05, 0.05, 1.5, 0]:
    streak.append(count_streak(r, "u42", 1000))
    time.sleep(pause)
print(streak)

# %% [markdown] lang="en"
# ## Read and reset at once; take back; count down
#
# A common job reads a counter every minute, adds the value to a database and resets it. With `GET`
# then `SET 0`, a view that arrives between the two commands is wiped out. The cell plays that
# interleaving step by step:

# %% [markdown] lang="ru" translated="d9aa2540cf95"
# ## Прочитать и сбросить разом; вернуть; уменьшать остаток
#
# Частая задача: раз в минуту прочитать счётчик, прибавить его к значению в базе данных и сбросить.
# При `GET`, а затем `SET 0` просмотр, пришедший между двумя командами, стирается. Ячейка разыгрывает
# такое чередование по шагам:

# %% [markdown] lang="zh" translated="d9aa2540cf95"
# ## 一步读取并清零；撤回；扣减
#
# 一个常见的任务每分钟读取一次计数器，把数值加到数据库里，然后清零。先 `GET` 再 `SET 0`，两条命令之间到达的浏览就被抹掉了。这个单元格一步一步地演示这种交错：

# %%
pending = r.key("pending")  # views not yet flushed to the database
r.set(pending, 10)
flushed = r.get(pending)  # the flusher reads 10 ...
r.incr(pending)  # ... a view arrives ...
r.set(pending, 0)  # ... and the reset wipes it out
print(_("flushed {flushed}, left {left}: one view lost", flushed=flushed, left=r.get(pending)))

# %% [markdown] lang="en"
# One command that reads and resets closes the gap: `GETDEL` (Redis 6.2+) deletes the key, `SET key 0
# GET` (6.2+) writes 0 and returns the old value, and the older `GETSET` does the same (deprecated
# since 6.2). Plain `SET` drops the key's TTL; add `KEEPTTL` when the counter has one. `GETSET` has no
# such option: it always drops the TTL (`PTTL` -1 on the last line).

# %% [markdown] lang="ru" translated="373d8dd3660f"
# Одна команда, которая читает и сбрасывает, закрывает эту щель: `GETDEL` (Redis 6.2+) удаляет ключ,
# `SET key 0 GET` (6.2+) записывает 0 и возвращает старое значение, а более старый `GETSET` делает то
# же самое (устарел с 6.2). Обычный `SET` сбрасывает TTL ключа; добавьте `KEEPTTL`, если у счётчика
# есть TTL. У `GETSET` такой опции нет: он всегда сбрасывает TTL (`PTTL` -1 в последней строке).

# %% [markdown] lang="zh" translated="373d8dd3660f"
# 用一条同时读取和清零的命令就能堵上这个缺口：`GETDEL`（Redis 6.2+）删除键，`SET key 0 GET`（6.2+）写入 0 并返回旧值，更老的 `GETSET` 也是一样（自 6.2 起弃用）。普通的 `SET` 会清除键的 TTL；计数器有 TTL 时要加上 `KEEPTTL`。`GETSET` 没有这个选项：它总是清除 TTL（最后一行的 `PTTL` 为 -1）。

# %%
r.set(pending, 10)
print(r.getdel(pending), r.get(pending))
r.set(pending, 10, px=60_000)
print(r.set(pending, 0, get=True, keepttl=True), r.get(pending), r.pttl(pending) > 0)
print(r.getset(pending, 0), r.get(pending), r.pttl(pending))

# %% [markdown] lang="en"
# Four threads, each with its own client, count 4,000 views while the flusher drains with `GETDEL`
# as fast as it can. Nothing is lost and nothing is counted twice:

# %% [markdown] lang="ru" translated="6c59a685d7d8"
# Четыре потока, у каждого свой клиент, насчитывают 4 000 просмотров, а отдельный поток тем временем
# как можно быстрее забирает их через `GETDEL`. Ничего не теряется и ничего не считается дважды:

# %% [markdown] lang="zh" translated="6c59a685d7d8"
# 四个线程（各自使用自己的客户端）累计 4,000 次浏览，同时清空任务尽可能快地用 `GETDEL` 取走数值。什么都不丢，什么都不重复计数：

# %%
def producer(n):
    c = connect()  # one client per thread
    for _ in range(n):
        c.incr(pending)


r.delete(pending)
threads = [threading.Thread(target=producer, args=(1000,)) for _ in range(4)]
for t in threads:
    t.start()
drained = 0
while any(t.is_alive() for t in threads):
    drained += int(r.getdel(pending) or 0)
for t in threads:
    t.join()
drained += int(r.getdel(pending) or 0)
print(drained, drained == 4000)

# %% [markdown] lang="en"
# `DECR` takes back a mistaken increment, for example a view from a bot you recognise after counting
# it:

# %% [markdown] lang="ru" translated="22fd753887e2"
# `DECR` отменяет ошибочный инкремент, например просмотр бота, которого вы распознали уже после
# подсчёта:

# %% [markdown] lang="zh" translated="22fd753887e2"
# `DECR` 可以撤回一次错误的自增，例如计数之后才识别出来的爬虫浏览：

# %%
k = day_key(r, 17, now)
print(r.get(k), r.incr(k), r.decr(k))

# %% [markdown] lang="en"
# `DECR` also counts stock down. Checking first (`GET`, then `DECR` if positive) oversells: between
# the check and the act, other buyers pass the same check. `DECR` first and giving the unit back when
# the result is negative never oversells (other readers may briefly see a negative stock), and a Lua
# script that checks and decrements in one step never even shows a negative value. Eight threads,
# each with its own client, try 320 purchases of 100 units:

# %% [markdown] lang="ru" translated="4a06e1462222"
# Ещё `DECR` уменьшает остаток на складе. Сначала проверка (`GET`, затем `DECR`, если больше нуля) —
# и продаётся лишнее: между проверкой и действием другие покупатели проходят ту же проверку. Сначала
# `DECR`, а при отрицательном результате возврат единицы — и лишнего не продаётся никогда (другие
# клиенты могут на мгновение увидеть отрицательный остаток), а Lua-скрипт, который проверяет и уменьшает за
# один шаг, не показывает отрицательного значения вовсе. Восемь потоков, у каждого свой клиент,
# делают 320 попыток купить 100 единиц:

# %% [markdown] lang="zh" translated="4a06e1462222"
# `DECR` 也能用来扣减库存。先检查（`GET`，大于零再 `DECR`）会超卖：在检查和操作之间，其他买家也通过了同样的检查。先 `DECR`、结果为负就把这一件加回去，则永远不会超卖（其他读取方可能短暂看到负的库存）；在一步之内检查并扣减的 Lua 脚本甚至不会出现负值。八个线程（各自使用自己的客户端）对 100 件库存发起 320 次购买：

# %%
stock = r.key("stock", "sku-1")


def buy_check_then_act(c):
    """GET, then DECR when positive: 2 round trips and a race between them."""
    if int(c.get(stock)) > 0:
        time.sleep(0.0005)  # validating the order; the race exists without it too
        c.decr(stock)
        return True
    return False


def buy_decr_first(c):
    """DECR; if the result is negative, INCR it back (1 round trip, 2 when sold out)."""
    if c.decr(stock) >= 0:
        return True
    c.incr(stock)
    return False


BUY_LUA = """
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
  return 1
end
return 0
"""
buy_script = r.register_script(BUY_LUA)


def buy_lua(c):
    """EVALSHA of BUY_LUA: check and decrement in one atomic step."""
    return buy_script(keys=[stock], client=c) == 1


def sell(buy, units=100, threads=8, attempts=40):
    r.set(stock, units)
    sold = [0] * threads

    def worker(i):
        c = connect()
        for _ in range(attempts):
            sold[i] += buy(c)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(sold), int(r.get(stock))


# %% tags=["varies"]
sold, left = sell(buy_check_then_act)
print(_("check then act: sold {sold}, stock {left}, oversold {over}", sold=sold, left=left, over=sold - 100))

# %%
for name, buy in [(_("DECR, give back"), buy_decr_first), ("Lua", buy_lua)]:
    sold, left = sell(buy)
    print(_("{name}: sold {sold}, stock {left}", name=name, sold=sold, left=left))

# %% [markdown] lang="en"
# Both sell exactly 100, but "DECR, give back" is two commands, with the crash window of lesson 01:
# a cart of 5 units arrives when 3 are left, `DECRBY` answers −2, and the process dies before it
# gives them back. The 3 units can no longer be sold. The script writes nothing when it refuses, so
# it is the default here too:

# %% [markdown] lang="ru" translated="f494dce5c0e6"
# Оба продают ровно 100, но «`DECR`, потом вернуть» — это две команды, с окном для сбоя из урока 01:
# приходит корзина на 5 единиц, когда осталось 3, `DECRBY` отвечает −2, и процесс умирает, не успев
# вернуть их. Эти 3 единицы больше не продать. Скрипт при отказе ничего не пишет, поэтому и здесь
# он — вариант по умолчанию:

# %% [markdown] lang="zh" translated="f494dce5c0e6"
# 两者都恰好卖出 100 件，但“先 `DECR` 再加回”是两条命令，带着第 01 课里的崩溃窗口：剩 3 件时来了一个要买 5 件的购物车，`DECRBY` 返回 −2，进程还没来得及加回去就挂了。这 3 件再也卖不出去了。脚本在拒绝时什么都不写，所以这里同样默认用脚本：

# %%
from redis_course.lessons import money

r.set(stock, 3)
cart = money.withdraw_decr_first(r, stock, 5)
print(next(cart))
cart.close()                                  # dies before its INCRBY
say(_("stock:"), r.get(stock), "|", _("a buyer of 1 now:"), buy_lua(r))
r.set(stock, 3)
say(_("the script:"), money.withdraw(r, stock, 5), "|", _("stock:"), r.get(stock), "|", _("a buyer of 1 now:"),
      buy_lua(r))

# %% [markdown] lang="en"
# ## One key per counter, or fields in a hash
#
# A group of counters that belong together (the views, likes and shares of one post) can live in
# one hash: `HINCRBY` is as atomic as `INCR`, `HGETALL` reads the group in one command, and one TTL
# covers the whole group.

# %% [markdown] lang="ru" translated="bd637356a92f"
# ## Ключ на счётчик или поля в хеше
#
# Группа счётчиков, которые относятся друг к другу (просмотры, лайки и репосты одного поста), может
# жить в одном хеше: `HINCRBY` так же атомарна, как `INCR`, `HGETALL` читает группу одной командой, а
# один TTL действует на всю группу.

# %% [markdown] lang="zh" translated="bd637356a92f"
# ## 每个计数器一个键，还是哈希里的字段
#
# 属于同一组的计数器（一篇文章的浏览、点赞和分享）可以放在一个哈希里：`HINCRBY` 和 `INCR` 一样是原子的，`HGETALL` 一条命令读出整组，一个 TTL 覆盖整组。

# %%
stats = r.key("stats", "post", 17)
r.hincrby(stats, "views", 1)
r.hincrby(stats, "likes", 1)
r.hincrby(stats, "views", 1)
print(r.hgetall(stats))
print(r.pexpire(stats, 60_000), r.pttl(stats) > 0)

# %% [markdown] lang="en"
# What you lose: a TTL per field. Redis 7.4 added `HEXPIRE`; Redis 7.0 does not know it. Here the two
# backends differ: fakeredis 2.41 accepts `HEXPIRE` even while it emulates Redis 7.0 (and replies 1,
# "TTL set"), so code that relies on it passes on fakeredis and fails on a 7.0 server.

# %% [markdown] lang="ru" translated="be6e498e1d4a"
# Чем вы платите: TTL для отдельного поля. `HEXPIRE` появилась в Redis 7.4; Redis 7.0 её не знает.
# Здесь бэкенды расходятся: fakeredis 2.41 принимает `HEXPIRE`, даже эмулируя Redis 7.0 (и отвечает 1,
# «TTL поставлен»), поэтому код, который на неё полагается, проходит на fakeredis и падает на сервере 7.0.

# %% [markdown] lang="zh" translated="be6e498e1d4a"
# 要放弃的是：按字段的 TTL。Redis 7.4 新增了 `HEXPIRE`；Redis 7.0 不认识它。这里两个后端不同：fakeredis 2.41 即使在模拟 Redis 7.0 时也接受 `HEXPIRE`（并回复 1，表示“已设置 TTL”），所以依赖它的代码在 fakeredis 上能通过，在 7.0 服务器上会失败。

# %% tags=["backend-differs"]
try:
    print(r.execute_command("HEXPIRE", stats, 60, "FIELDS", 1, "likes"))
except redis.ResponseError as exc:
    say(_("error:"), str(exc).split(",")[0])

# %% [markdown] lang="en"
# Memory, measured on a real server (fakeredis has no `MEMORY USAGE` or `INFO`): 10,000 counters as
# 10,000 string keys, as one hash with 10,000 fields, and as 100 hashes of 100 fields. A hash stays
# in the compact *listpack* encoding while it has at most `hash-max-listpack-entries` fields (512 by
# default in Redis 7.0; the cell prints your server's setting) with names and values of at most
# `hash-max-listpack-value` bytes (64); beyond that it becomes a hash table. The numbers depend on
# the server's version, configuration and allocator.

# %% [markdown] lang="ru" translated="807d87387872"
# Память, измеренная на настоящем сервере (у fakeredis нет `MEMORY USAGE` и `INFO`): 10 000 счётчиков
# как 10 000 строковых ключей, как один хеш на 10 000 полей и как 100 хешей по 100 полей. Хеш остаётся в
# компактной кодировке *listpack*, пока в нём не больше `hash-max-listpack-entries` полей (в Redis 7.0
# по умолчанию 512; ячейка печатает настройку вашего сервера), а имена полей и значения не длиннее
# `hash-max-listpack-value` байт (64); дальше он становится хеш-таблицей. Числа зависят от версии,
# конфигурации и аллокатора сервера.

# %% [markdown] lang="zh" translated="807d87387872"
# 在真实服务器上测量内存（fakeredis 没有 `MEMORY USAGE` 和 `INFO`）：10,000 个计数器分别存成 10,000 个字符串键、一个有 10,000 个字段的哈希、100 个各有 100 个字段的哈希。只要哈希的字段数不超过 `hash-max-listpack-entries`（Redis 7.0 默认 512；单元格会打印你的服务器的设置），且每个字段名和值都不超过 `hash-max-listpack-value` 字节（默认 64），它就保持紧凑的 *listpack* 编码；超过之后就变成哈希表。数字取决于服务器的版本、配置和内存分配器。

# %% tags=["varies"]
if needs_real_redis(r, "MEMORY USAGE"):
    N = 10_000
    say(_("listpack limits:"), r.config_get("hash-max-listpack-*"))

    def measure(label, write, pattern):
        before = r.info("memory")["used_memory"]
        with r.pipeline(transaction=False) as p:
            write(p)
            p.execute()
        after = r.info("memory")["used_memory"]
        keys = r.course_keys(pattern)
        with r.pipeline(transaction=False) as p:
            for key in keys:
                p.memory_usage(key, samples=0)
            usage = sum(p.execute())
        encoding = r.object("encoding", keys[0])
        r.delete(*keys)
        return label, len(keys), encoding, f"{usage:,}", f"{usage / N:.1f}", f"{after - before:,}"

    print_table(["", _("keys"), "OBJECT ENCODING", "MEMORY USAGE, B", _("B per counter"), _("INFO delta, B")], [
        measure(_("10,000 string keys"), lambda p: [p.set(r.key("mem", "s", i), N + i) for i in range(N)], "mem:s:*"),
        measure(_("1 hash × 10,000"), lambda p: [p.hset(r.key("mem", "h"), i, N + i) for i in range(N)], "mem:h"),
        measure(_("100 hashes × 100"),
                lambda p: [p.hset(r.key("mem", "b", i // 100), i % 100, N + i) for i in range(N)], "mem:b:*")])

# %% [markdown] lang="en"
# ## A week of history
#
# Daily keys are their own archive: the last seven days are seven keys, read with one `MGET`. A day
# without views has no key, and `MGET` answers `None` for it. Each key got a TTL of 8 days when it was
# created, so the history keeps itself at about a week.

# %% [markdown] lang="ru" translated="138e50bb2190"
# ## Неделя истории
#
# Дневные ключи сами себе архив: последние семь дней — это семь ключей, которые читаются одним `MGET`.
# У дня без просмотров ключа нет, и `MGET` отвечает для него `None`. Каждый ключ при создании получил
# TTL 8 дней, поэтому история сама держится на уровне примерно недели.

# %% [markdown] lang="zh" translated="138e50bb2190"
# ## 一周的历史
#
# 按天的键本身就是历史存档：最近七天就是七个键，用一条 `MGET` 读出。没有浏览的那天没有键，`MGET` 对它返回 `None`。每个键在创建时得到 8 天的 TTL，所以历史会自动保持在一周左右。

# %%
RETENTION_S = 8 * 24 * 3600
today = datetime(2026, 5, 7, 15, 0, tzinfo=UTC)
week = [today - timedelta(days=d) for d in range(6, -1, -1)]
simulated = [120, 95, 143, 160, 0, 88, 131]  # views per day; the fifth day had none
with r.pipeline(transaction=True) as p:
    for day, n in zip(week, simulated):
        if n:
            p.incrby(day_key(r, 17, day), n)
            p.expire(day_key(r, 17, day), RETENTION_S, nx=True)
    p.execute()

counts = r.mget([day_key(r, 17, day) for day in week])
print(counts)
say(_("every key has a TTL:"), all(r.ttl(day_key(r, 17, day)) > 0 for day, n in zip(week, simulated) if n))

# %% [markdown] lang="en"
# On a Redis Cluster, `MGET` needs all its keys in one **hash slot** (16,384 of them, spread over the
# nodes), not merely on one node: keys in different slots are refused with `CROSSSLOT` even when
# one node holds both slots. The seven daily keys fall into seven slots; with a hash tag
# (`{post:17}`) only the tag is hashed, and they share one (lesson 06 runs a cluster):

# %% [markdown] lang="ru" translated="9bd1443abcbf"
# В Redis Cluster `MGET` требует, чтобы все его ключи лежали в одном **слоте** (их 16 384, и они
# распределены по узлам), а не просто на одном узле: ключи из разных слотов отклоняются с `CROSSSLOT`,
# даже если оба слота принадлежат одному узлу. Семь дневных ключей попадают в семь слотов; с хеш-тегом
# (`{post:17}`) хешируется только тег, и слот у них общий (кластер запускается в уроке 06):

# %% [markdown] lang="zh" translated="9bd1443abcbf"
# 在 Redis Cluster 中，`MGET` 要求所有键都在同一个**哈希槽**里（一共 16,384 个槽，分布在各个节点上），而不仅仅是在同一个节点上：即使两个槽属于同一个节点，不同槽的键也会被 `CROSSSLOT` 拒绝。七个按天的键落在七个槽里；加上哈希标签（`{post:17}`）之后只对标签做哈希，它们就共用一个槽（第 06 课会运行一个集群）：

# %%
from redis_course.cluster import key_slot

plain = [f"views:post:17:{day:%Y-%m-%d}" for day in week]
tagged = [f"views:{{post:17}}:{day:%Y-%m-%d}" for day in week]
print(plain[-1], [key_slot(k) for k in plain])
print(tagged[-1], [key_slot(k) for k in tagged])

# %%
# %matplotlib inline
import matplotlib.pyplot as plt

values = [int(c or 0) for c in counts]
fig, ax = plt.subplots(figsize=(7, 2.8))
ax.bar([charts.day_label(d) for d in week], values, color="#d9413a")
ax.set_ylabel(_("views"))
ax.set_title(_("Post 17, views per UTC day (MGET of 7 daily keys)"))
for x, v in enumerate(values):
    ax.annotate(str(v), (x, v), ha="center", va="bottom", fontsize=8)
fig.tight_layout()
day_views = charts.listing(_("{day}: {views}", day=charts.day_label(d).replace("\n", " "), views=v)
                      for d, v in zip(week, values))
charts.show(fig, alt=_("Bar chart of post 17's views on 7 UTC days: {days}.", days=day_views))

# %% [markdown] lang="en"
# ## Unique visitors: a SET or a HyperLogLog
#
# `INCR` counts events; it cannot tell whether two views came from the same visitor. A SET of visitor
# ids answers exactly, and its memory grows with every id. A HyperLogLog (`PFADD`, `PFCOUNT`,
# `PFMERGE`) answers with a standard error of 0.81% in a string of at most 12,304 bytes, whatever the
# count (`MEMORY USAGE` says about 14 KB: see below why).
#
# The estimate is deterministic: the same ids give the same answer on every run of a real Redis.
# **Here the backends differ:** fakeredis stores a HyperLogLog as a plain set, so its `PFCOUNT` is
# exact (error 0) and `TYPE` says `set` where Redis says `string`. Measure HyperLogLog error on a real
# server.

# %% [markdown] lang="ru" translated="dab9a2e25c43"
# ## Уникальные посетители: SET или HyperLogLog
#
# `INCR` считает события и не может понять, пришли ли два просмотра от одного посетителя. Множество
# (SET) из id посетителей отвечает точно, но занимаемая им память растёт с каждым id. HyperLogLog (`PFADD`, `PFCOUNT`,
# `PFMERGE`) отвечает со стандартной ошибкой 0,81%, а сам занимает строку не длиннее 12 304 байт при
# любом количестве (`MEMORY USAGE` показывает около 14 КБ — почему, см. ниже).
#
# Оценка детерминирована: одни и те же id дают один и тот же ответ при каждом запуске настоящего Redis.
# **Здесь бэкенды расходятся:** fakeredis хранит HyperLogLog как обычное множество, поэтому его
# `PFCOUNT` точен (ошибка 0), а `TYPE` отвечает `set` там, где Redis отвечает `string`. Ошибку
# HyperLogLog измеряйте на настоящем сервере.

# %% [markdown] lang="zh" translated="dab9a2e25c43"
# ## 独立访客：SET 还是 HyperLogLog
#
# `INCR` 统计事件，它分不清两次浏览是否来自同一个访客。访客 id 组成的 SET 给出精确答案，但它的内存随每个 id 增长。HyperLogLog（`PFADD`、`PFCOUNT`、`PFMERGE`）以 0.81% 的标准误差作答，无论数量多大，它本身都是一个最多 12,304 字节的字符串（`MEMORY USAGE` 显示约 14 KB，原因见下文）。
#
# 估算是确定性的：同样的 id 在真实 Redis 上每次运行都得到同样的答案。**这里两个后端不同：** fakeredis 把 HyperLogLog 存成普通集合，所以它的 `PFCOUNT` 是精确的（误差为 0），`TYPE` 返回 `set`，而 Redis 返回 `string`。请在真实服务器上测量 HyperLogLog 的误差。

# %% tags=["backend-differs"]
def visitors(n, start=0):
    return [f"visitor:{i}" for i in range(start, start + n)]


def fill(key, members, add, chunk=5_000):
    with r.pipeline(transaction=False) as p:  # a few commands of 5,000 members each
        for i in range(0, len(members), chunk):
            add(p, key, members[i:i + chunk])
        p.execute()


uv_rows = []
for n in [1_000, 10_000, 100_000]:
    members = visitors(n)
    s, h = r.key("uv", "set", n), r.key("uv", "hll", n)
    fill(s, members, lambda p, k, m: p.sadd(k, *m))
    fill(h, members, lambda p, k, m: p.pfadd(k, *m))
    exact, estimate = r.scard(s), r.pfcount(h)
    uv_rows.append((f"{n:,}", f"{exact:,}", f"{estimate:,}", f"{100 * (estimate - exact) / exact:+.2f}%"))
print_table([_("visitors"), "SCARD", "PFCOUNT", _("error")], uv_rows)
say(_("TYPE of a HyperLogLog:"), r.type(h))
deleted = r.delete(*r.course_keys("uv:*"))

# %% [markdown] lang="en"
# Daily HyperLogLogs merge into a weekly one: `PFCOUNT` of several keys counts the union, and
# `PFMERGE` stores it. A visitor who came on three days counts once, which summing the daily counts
# cannot do. Here 7 days of 1,000 visitors each overlap to 2,800 distinct visitors:

# %% [markdown] lang="ru" translated="3a3d038c4fb2"
# Дневные HyperLogLog сливаются в недельный: `PFCOUNT` от нескольких ключей считает объединение, а
# `PFMERGE` его сохраняет. Посетитель, приходивший три дня, считается один раз — суммированием дневных
# счётчиков этого не добиться. Здесь 7 дней по 1 000 посетителей перекрываются и дают 2 800 разных
# посетителей:

# %% [markdown] lang="zh" translated="3a3d038c4fb2"
# 每天的 HyperLogLog 可以合并成一周的：对多个键执行 `PFCOUNT` 统计的是并集，`PFMERGE` 则把并集存下来。来了三天的访客只算一次，把每天的计数相加做不到这一点。这里 7 天、每天 1,000 个访客，重叠后共有 2,800 个不同的访客：

# %%
days = [r.key("uv", "day", d) for d in range(7)]
for d, key in enumerate(days):
    r.pfadd(key, *visitors(1_000, start=300 * d))
weekly = r.key("uv", "week")
r.pfmerge(weekly, *days)
say(_("sum of daily counts > 6,900:"), sum(r.pfcount(key) for key in days) > 6_900,
      "|", _("weekly within 1% of 2,800:"), abs(r.pfcount(weekly) - 2_800) <= 28,
      "|", _("PFCOUNT of the 7 keys = PFMERGE:"), r.pfcount(*days) == r.pfcount(weekly))

# %% [markdown] lang="en"
# Memory and error from a thousand to a million visitors, on a real server only (1,000,000 `SADD`s
# are slow on fakeredis, and its numbers would say nothing about Redis anyway). `MEMORY USAGE ...
# SAMPLES 0` measures the whole set instead of sampling it.

# %% [markdown] lang="ru" translated="5bea81044bd1"
# Память и ошибка от тысячи до миллиона посетителей, только на настоящем сервере (1 000 000 `SADD` на
# fakeredis идут медленно, да и его числа ничего не говорят о Redis). `MEMORY USAGE ... SAMPLES 0`
# измеряет всё множество целиком, а не по выборке.

# %% [markdown] lang="zh" translated="5bea81044bd1"
# 从一千到一百万个访客的内存和误差，只在真实服务器上测量（在 fakeredis 上执行 1,000,000 次 `SADD` 很慢，而且它的数字也说明不了 Redis 的情况）。`MEMORY USAGE ... SAMPLES 0` 测量整个集合，而不是抽样估算。

# %% tags=["varies"]
if needs_real_redis(r, "MEMORY USAGE"):
    sizes, set_bytes, hll_bytes, errors = [1_000, 10_000, 100_000, 1_000_000], [], [], []
    for n in sizes:
        members = visitors(n)
        s, h = r.key("uv", "set", n), r.key("uv", "hll", n)
        fill(s, members, lambda p, k, m: p.sadd(k, *m), chunk=10_000)
        fill(h, members, lambda p, k, m: p.pfadd(k, *m), chunk=10_000)
        set_bytes.append(r.memory_usage(s, samples=0))
        hll_bytes.append(r.memory_usage(h, samples=0))
        errors.append(100 * (r.pfcount(h) - n) / n)
        print(_("{n:,} visitors: SET {set:,} B, HLL {hll:,} B, HLL error {error:+.2f}%",
                n=n, set=set_bytes[-1], hll=hll_bytes[-1], error=errors[-1]))
        r.unlink(s, h)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3))
    a1.loglog(sizes, set_bytes, "o-", label="SET")
    a1.loglog(sizes, hll_bytes, "s-", label="HyperLogLog")
    a1.set_xlabel(_("distinct visitors"))
    a1.set_ylabel(_("bytes (MEMORY USAGE)"))
    a1.legend()
    a2.semilogx(sizes, errors, "s-", color="#d9413a")
    a2.axhspan(-0.81, 0.81, alpha=0.15, label=_("±0.81% (1 standard error)"))
    a2.set_xlabel(_("distinct visitors"))
    a2.set_ylabel(_("PFCOUNT error, %"))
    a2.legend()
    fig.tight_layout()
    charts.show(fig, alt=_("Two charts. Left, memory on log scales: a SET of a million visitors takes {set:,} bytes, "
                           "a HyperLogLog {hll:,} bytes at every size. Right, the HyperLogLog error stays between "
                           "{low:+.2f}% and {high:+.2f}%, near the ±0.81% band of one standard error.",
                           set=set_bytes[-1], hll=hll_bytes[-1], low=min(errors), high=max(errors)))

# %% [markdown] lang="en"
# 12 KB and 14 KB are both right. A dense HyperLogLog is 16,384 registers of 6 bits (12,288 bytes)
# plus a 16-byte header: a string of 12,304 bytes, whatever the count. `MEMORY USAGE` counts what the
# allocator reserved: jemalloc rounds 12,304 bytes up to its next size class, 14,336, and the key,
# its object and its slot in the keyspace add a few dozen bytes more. A plain string of 12,304 bytes
# costs exactly as much. Asked from a private Redis server, so the answer is the same on both
# backends:

# %% [markdown] lang="ru" translated="2405694c460d"
# Верно и 12 КБ, и 14 КБ. Плотный HyperLogLog — это 16 384 регистра по 6 бит (12 288 байт) плюс
# 16-байтный заголовок: строка в 12 304 байта при любом количестве. `MEMORY USAGE` считает то, что
# зарезервировал распределитель памяти: jemalloc округляет 12 304 байта вверх до ближайшего своего
# класса размера, 14 336, а ключ, его объект и его место в пространстве ключей добавляют ещё несколько
# десятков байт. Обычная строка в 12 304 байта стоит ровно столько же. Спрашиваем приватный сервер
# Redis, поэтому ответ одинаков на обоих бэкендах:

# %% [markdown] lang="zh" translated="2405694c460d"
# 12 KB 和 14 KB 都没错。稠密（dense）表示的 HyperLogLog 是 16,384 个 6 位寄存器（12,288 字节）再加 16 字节的头部：无论数量多大，都是一个 12,304 字节的字符串。`MEMORY USAGE` 统计的是内存分配器实际预留的空间：jemalloc 会把 12,304 字节向上取整到它的下一个尺寸档位 14,336 字节，键本身、它的对象以及它在键空间中的位置还要再加几十个字节。一个 12,304 字节的普通字符串占用的内存完全一样。下面向一个私有 Redis 服务器查询，所以两个后端上的结果相同：

# %%
from redis_course import private_redis, redis_server_binary

if redis_server_binary() is None:
    print(_("redis-server is not installed here: see the lesson page for Redis 7.0's answer."))
else:
    with private_redis() as srv:
        c = srv.client(prefix="")
        for start in range(0, 20_000, 5_000):
            c.pfadd("uv:hll", *visitors(5_000, start=start))
        c.set("uv:str", "x" * 12_304)
        print("HyperLogLog: STRLEN", c.strlen("uv:hll"), "| MEMORY USAGE", c.memory_usage("uv:hll", samples=0))
        say(_("plain string:"), "STRLEN", c.strlen("uv:str"), "| MEMORY USAGE", c.memory_usage("uv:str", samples=0))

# %% [markdown] lang="en"
# ## After a restart
#
# Counters live in memory. With the default persistence (snapshots only), a restart brings a counter
# back to its value at the last snapshot, which can be an hour old. AOF `everysec` loses nothing
# when Redis itself crashes while the disk keeps up (on a slow disk Redis holds the log in its own
# memory for up to two seconds, and a crash loses that), and up to about two seconds on a power cut
# or a kernel crash; `always` loses nothing on one server, and a failover can still lose
# acknowledged writes. A view counter shrugs that off, a billing counter cannot. Lesson 05 measures
# it.
#
# Clean up this run's keys:

# %% [markdown] lang="ru" translated="460efc7d3af0"
# ## После перезапуска
#
# Счётчики живут в памяти. С сохранением по умолчанию (только снимки) перезапуск возвращает счётчик
# к значению на момент последнего снимка, а тому может быть и час. AOF `everysec` ничего не теряет,
# когда падает сам Redis, пока диск успевает (при медленном диске Redis до двух секунд держит журнал
# у себя в памяти, и падение это теряет), и теряет примерно до двух секунд при отключении питания
# или падении ядра; `always` на одном сервере не теряет ничего, но переключение на реплику всё равно
# может потерять подтверждённые записи. Счётчик просмотров это переживёт, счётчик для биллинга —
# нет. Урок 05 это измеряет.
#
# Удаляем ключи этого запуска:

# %% [markdown] lang="zh" translated="460efc7d3af0"
# ## 重启之后
#
# 计数器保存在内存里。使用默认的持久化设置（只有快照）时，重启会让计数器回到最近一次快照时的值，而那次快照可能已是一小时之前。AOF `everysec` 在磁盘跟得上时，Redis 进程自身崩溃什么都不丢（磁盘慢时 Redis 会把日志在自己的内存里最多压住两秒，崩溃就会丢掉这部分），在断电或内核崩溃时最多丢约两秒；`always` 在单台服务器上什么都不丢，但故障转移仍可能丢掉已确认的写入。浏览计数器无所谓，计费计数器则不行。第 05 课会对此进行测量。
#
# 清理本次运行的键：

# %%
print(r.cleanup() > 0)

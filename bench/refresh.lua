-- wrk: POST /api/v1/auth/refresh chains. Each thread owns a pool of refresh tokens (its share of the
-- file TOKENS); a request takes one from the pool and the answer's new token goes back in.
local pool, pending = {}, {}
local thread_index = 0
local counter = 0
function setup(thread)
  thread:set("index", counter)
  counter = counter + 1
end
function init(args)
  local i, n = 0, tonumber(os.getenv("THREADS") or "1")
  for line in io.lines(os.getenv("TOKENS")) do
    if i % n == index then pool[#pool + 1] = line end
    i = i + 1
  end
end
function request()
  local token = table.remove(pool, 1)
  pending[#pending + 1] = token
  return wrk.format("POST", "/api/v1/auth/refresh", { ["Content-Type"] = "application/json" }, '{"refresh_token":"' .. token .. '"}')
end
function response(status, headers, body)
  local old = table.remove(pending, 1)
  local new = body:match('"refresh_token":"([^"]+)"')
  pool[#pool + 1] = new or old
end

-- wrk: GET /api/v1/auth/me with a random token from the file TOKENS (one per line).
local tokens = {}
function init(args)
  for line in io.lines(os.getenv("TOKENS")) do tokens[#tokens + 1] = line end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end
function request()
  return wrk.format("GET", "/api/v1/auth/me", { ["Authorization"] = "Bearer " .. tokens[math.random(#tokens)] })
end

-- wrk: GET /api/v1/auth/me (or ME_PATH: /oauth/userinfo) with a random token from the file TOKENS (one per line).
-- Each token's request is built once: the load generator shares the cores with the server.
local requests = {}
function init(args)
  local prefix = "GET " .. (os.getenv("ME_PATH") or "/api/v1/auth/me") .. " HTTP/1.1\r\nHost: " .. wrk.headers["Host"] .. "\r\nAuthorization: Bearer "
  for line in io.lines(os.getenv("TOKENS")) do requests[#requests + 1] = prefix .. line .. "\r\n\r\n" end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end
function request()
  return requests[math.random(#requests)]
end

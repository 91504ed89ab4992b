-- wrk: POST /api/v1/auth/api-keys/exchange with a random API key from the file KEYS (one per line).
local requests = {}
function init(args)
  for line in io.lines(os.getenv("KEYS")) do
    requests[#requests + 1] = wrk.format("POST", "/api/v1/auth/api-keys/exchange", { ["Content-Type"] = "application/json" },
      '{"api_key":"' .. line .. '"}')
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end
function request()
  return requests[math.random(#requests)]
end

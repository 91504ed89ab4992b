-- wrk: POST /api/v1/auth/approval/start, a new identifier each time (accounts that do not exist
-- get a decoy made by the same work), so no per-identifier limit is reached.
local n = 0
local prefix
function init(args)
  prefix = tostring(math.random(1, 1000000000))
end
function request()
  n = n + 1
  local body = '{"email":"b' .. prefix .. "-" .. n .. '@bench.test","device_name":"bench"}'
  return wrk.format("POST", "/api/v1/auth/approval/start", { ["Content-Type"] = "application/json" }, body)
end

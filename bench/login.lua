-- wrk: POST /api/v1/auth/password/login for the user in EMAIL with PASSWORD.
local body
function init(args)
  body = '{"email":"' .. os.getenv("EMAIL") .. '","password":"' .. os.getenv("PASSWORD") .. '"}'
end
function request()
  return wrk.format("POST", "/api/v1/auth/password/login", { ["Content-Type"] = "application/json" }, body)
end

-- wrk: POST /oauth/token (device_code grant) with a random pending device code from the file CODES.
-- Every answer is 400 authorization_pending or slow_down: nobody approves these codes.
local requests = {}
function init(args)
  for line in io.lines(os.getenv("CODES")) do
    requests[#requests + 1] = wrk.format("POST", "/oauth/token", { ["Content-Type"] = "application/x-www-form-urlencoded" },
      "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=" .. line)
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end
function request()
  return requests[math.random(#requests)]
end

-- wrk: GET /login on the issuer's host (HOST) with a live pre-sign-in cookie (COOKIE): the page
-- rendered from its templates, without a new cookie sealed or a new-page charge.
local request_text
function init(args)
  request_text = "GET /login HTTP/1.1\r\nHost: " .. os.getenv("HOST") .. "\r\nCookie: " .. os.getenv("COOKIE") .. "\r\n\r\n"
end
function request()
  return request_text
end

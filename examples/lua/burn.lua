-- burn.lua: a wrk script whose request() spends about a millisecond of CPU on every request,
-- as one that signs or encrypts each body would. Run with -t 1 against a cheap endpoint,
-- apiperf itself is the bottleneck, and the verdict says generator-bound:
--   apiperf sweep -t 1 -s examples/lua/burn.lua --levels 1,4,16 http://127.0.0.1:8080/healthz
request = function()
  local x = 0
  for i = 1, 20000 do x = (x * 31 + i) % 1000003 end
  return wrk.format("GET", nil, {["X-Burn"] = tostring(x)})
end

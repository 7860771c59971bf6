-- wrk script for `ember serve` (issue 17): POSTs one KServe/Triton v2 JSON
-- request, a 1 x 1 x 28 x 28 FP32 image of fixed pseudo-random values
-- (W1's input), on every connection; at the end prints one JSON line with
-- the request count, throughput, latency percentiles and wrk's error counts.
--   wrk -t2 -c64 -d60s -s bench/serve/v2_infer.lua http://127.0.0.1:8080/v2/models/w1/infer
-- EMBER_BENCH_INPUT (default "input") names the model's input.
local input = os.getenv("EMBER_BENCH_INPUT") or "input"
local values = {}
math.randomseed(1)
for i = 1, 784 do values[i] = string.format("%.4f", math.random() * 2 - 1) end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":[{"name":"' .. input .. '","shape":[1,1,28,28],"datatype":"FP32","data":[' ..
           table.concat(values, ",") .. ']}]}'

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"rps":%.2f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
    '"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d}\n',
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end

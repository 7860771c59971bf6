#!/usr/bin/python3
"""Load and latency of `ember serve` (issue 17, "Load and latency"): Debian's `wrk` posting v2
JSON requests (bench/serve/v2_infer.lua) on loopback to W1's CNN, exported with a dynamic batch.

For each side it starts the server, runs wrk at each concurrency (wrk threads: min(2, c)), reads
wrk's JSON line (requests/s, p50/p90/p99, errors) and the server's RSS (/proc/PID/status) before
and after, then stops it (SIGTERM for `ember serve`, whose exit code must be 0). Sides:
  ember-batch    `ember serve --max-batch 32 --max-delay-us 2000` (batching on, the default)
  ember-nobatch  `ember serve --max-batch 1` (batching off)
  torch          bench/serve/torch_server.py: python3 http.server + torch, one forward per request
A soak (--soak S, batching on, concurrency 16) samples RSS every 5 s.

Prints a markdown table, the issue's checks, and a final JSON line (for scripts/bench-vs-pytorch).
The W1 export is made once (1 short epoch on 2,560 images: the weights do not change the work)
into BUILD/bench-serve/w1.ember unless --model is given.

Usage: bench/serve/serve_bench.py [--sides ember-batch,ember-nobatch,torch] [--concurrency 1,16,64]
                                  [--duration 60] [--soak 300] [--threads 2] [--model PATH]
Needs: a built build/ (EMBER_BUILD_DIR overrides), wrk; the torch side needs python3-torch."""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.abspath(os.path.join(ROOT, os.environ.get("EMBER_BUILD_DIR", "build")))
EMBER = os.path.join(BUILD, "apps", "ember", "ember")
OUT = os.path.join(BUILD, "bench-serve")
LUA = os.path.join(HERE, "v2_infer.lua")
MAX_DELAY_US = 2000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def make_model():
    """The W1 CNN exported with a dynamic batch at optimize level 2, made once."""
    path = os.path.join(OUT, "w1.ember")
    if os.path.exists(path):
        return path
    os.makedirs(OUT, exist_ok=True)
    runs = os.path.join(OUT, "runs")
    log("training 1 short epoch of W1's cnn for an export (the weights do not change the work)")
    subprocess.run([EMBER, "train", os.path.join(ROOT, "configs", "bench", "w1_fmnist_cnn.yaml"), "train.epochs=1",
                    "data.limit_train=2560", "data.limit_test=400", f"log.root={runs}", "log.name=w1",
                    "log.progress=none"], check=True, stdout=subprocess.DEVNULL)
    run = sorted(os.path.join(runs, d) for d in os.listdir(runs))[-1]
    subprocess.run([EMBER, "export", run, "--dynamic", "batch", "--optimize", "2", "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class ServerProcess:
    """A server started with its stdout on a pipe; the port is read from its log."""

    def __init__(self, cmd, port_re, env=None):
        self.cmd = cmd
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=dict(os.environ, **(env or {})), start_new_session=True)
        self.log = []
        deadline = time.time() + 120
        self.port = None
        while self.port is None and time.time() < deadline:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"{cmd[0]} exited before listening:\n" + "".join(self.log))
            self.log.append(line)
            m = re.search(port_re, line)
            if m:
                self.port = int(m.group(1))
        # Keep draining the pipe so the server never blocks on a full one.
        threading.Thread(target=lambda: [self.log.append(l) for l in self.p.stdout], daemon=True).start()

    def stop(self, sig):
        self.p.send_signal(sig)
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -9


def wrk(port, path, conns, seconds, env):
    cmd = ["wrk", f"-t{min(2, conns)}", f"-c{conns}", f"-d{seconds}s", "--timeout", "10s", "-s", LUA,
           f"http://127.0.0.1:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env), timeout=seconds + 60).stdout
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            r = json.loads(line)
            r["errors"] = sum(r[k] for k in r if k.startswith("errors_"))
            return r
    raise RuntimeError("wrk printed no JSON line:\n" + out)


def start(side, model, threads):
    if side == "torch":
        return ServerProcess(["/usr/bin/python3", os.path.join(HERE, "torch_server.py"), "--threads", str(threads)],
                             r"listening on port (\d+)"), "/v2/models/w1/infer"
    batch = ["--max-batch", "32", "--max-delay-us", str(MAX_DELAY_US)] if side == "ember-batch" else ["--max-batch", "1"]
    cmd = [EMBER, "serve", model, "--port", "0", "--threads", str(threads)] + batch
    return ServerProcess(cmd, r"listening on http://127\.0\.0\.1:(\d+)"), "/v2/models/w1/infer"


def run_side(side, model, a):
    server, path = start(side, model, a.threads)
    rows = []
    try:
        wrk(server.port, path, 4, 2, {})  # warm-up: caches, oneDNN primitives, the arena
        for c in a.concurrency:
            before = rss_mib(server.p.pid)
            r = wrk(server.port, path, c, a.duration, {})
            r.update(side=side, conns=c, rss_before_mib=before, rss_after_mib=rss_mib(server.p.pid))
            log(f"{side} c={c}: {r['rps']:.0f} req/s p50 {r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms "
                f"errors {r['errors']} rss {r['rss_after_mib']:.0f} MiB")
            rows.append(r)
    finally:
        rc = server.stop(signal.SIGINT if side == "torch" else signal.SIGTERM)
    for r in rows:
        r["exit_code"] = rc
    return rows


def soak(model, a):
    server, path = start("ember-batch", model, a.threads)
    samples, result = [], {}
    t = threading.Thread(target=lambda: result.update(wrk(server.port, path, 16, a.soak, {})))
    t.start()
    t0 = time.time()
    while t.is_alive():
        samples.append((round(time.time() - t0, 1), rss_mib(server.p.pid)))
        t.join(5)
    rc = server.stop(signal.SIGTERM)
    # The first 10% warms up (arena, caches, thread pools); growth is measured after it.
    settled = [s for s in samples if s[0] >= 0.1 * a.soak] or samples
    return {"seconds": a.soak, "requests": result.get("requests"), "errors": result.get("errors"),
            "rps": result.get("rps"), "rss_first_mib": settled[0][1], "rss_last_mib": settled[-1][1],
            "rss_max_mib": max(s[1] for s in settled), "rss_min_mib": min(s[1] for s in settled),
            "samples": samples, "exit_code": rc}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sides", default="ember-batch,ember-nobatch,torch")
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--duration", type=int, default=60, help="seconds per point (the issue: 60)")
    ap.add_argument("--soak", type=int, default=300, help="seconds of the RSS soak (the issue: 300); 0 skips it")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model")
    a = ap.parse_args()
    a.concurrency = [int(c) for c in a.concurrency.split(",")]
    model = a.model or make_model()
    rows = []
    for side in a.sides.split(","):
        rows += run_side(side, model, a)
    soaked = soak(model, a) if a.soak > 0 else None

    print(f"model {model}; {a.duration} s per point; wrk threads min(2, c); server threads {a.threads}")
    print("| server | conns | req/s | p50 ms | p90 ms | p99 ms | errors | RSS MiB before/after | exit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['side']} | {r['conns']} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | "
              f"{r['p99_ms']:.2f} | {r['errors']} | {r['rss_before_mib']:.0f}/{r['rss_after_mib']:.0f} | "
              f"{r['exit_code']} |")
    fig = {}
    for r in rows:
        for k in ("rps", "p50_ms", "p90_ms", "p99_ms", "errors"):
            fig[f"{r['side']}.c{r['conns']}.{k}"] = r[k]
    get = lambda side, c, k: fig.get(f"{side}.c{c}.{k}")
    cmax = max(a.concurrency)
    on, off, single = get("ember-batch", cmax, "rps"), get("ember-nobatch", cmax, "rps"), get("ember-nobatch", 1, "p50_ms")
    if on and off:
        fig["batching_speedup"] = on / off
        print(f"batching on vs off at concurrency {cmax}: {on / off:.2f}x throughput (issue: >= 3x)")
    p99 = get("ember-batch", cmax, "p99_ms")
    if p99 and single:
        bound = 2 * single + MAX_DELAY_US / 1000
        fig["p99_bound_ms"] = bound
        print(f"p99 at concurrency {cmax} with batching: {p99:.2f} ms; 2 x single-request p50 ({single:.2f} ms) + "
              f"max-delay = {bound:.2f} ms (issue: p99 <= that)")
    torch_rps = get("torch", cmax, "rps")
    if on and torch_rps:
        fig["vs_torch_speedup"] = on / torch_rps
        print(f"ember serve (batching) vs python3 http.server + torch at concurrency {cmax}: {on / torch_rps:.2f}x")
    print(f"errors over all runs: {sum(r['errors'] for r in rows)}; exit codes {sorted(set(r['exit_code'] for r in rows))}")
    if soaked:
        fig.update({f"soak.{k}": v for k, v in soaked.items() if k != "samples"})
        print(f"soak {soaked['seconds']} s at concurrency 16 with batching: {soaked['requests']} requests, "
              f"{soaked['errors']} errors; RSS after warm-up first {soaked['rss_first_mib']:.1f} MiB, last "
              f"{soaked['rss_last_mib']:.1f}, min {soaked['rss_min_mib']:.1f}, max {soaked['rss_max_mib']:.1f}; "
              f"exit {soaked['exit_code']}")
        print("RSS samples (s, MiB): " + ", ".join(f"{t:.0f}:{m:.1f}" for t, m in soaked["samples"]))
    print(json.dumps({"workload": "serve", "figures": fig}))


if __name__ == "__main__":
    main()

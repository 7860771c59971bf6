#!/usr/bin/python3
"""The PyTorch side of the serving benchmark (bench/serve/serve_bench.py): W1's CNN
(../shared/anchors/w1_fmnist_cnn.py's make_model, random weights, eval, no_grad) behind
Python's own http.server (ThreadingHTTPServer), answering the same v2 JSON requests as
`ember serve`: POST /v2/models/NAME/infer -> {"outputs": [...]}. Debian packages only
(python3 + python3-torch); no batching, one forward per request, as a hand-written
Python endpoint does. Prints "listening on port N" once it accepts.
Usage: /usr/bin/python3 torch_server.py [--port 0] [--threads 2]"""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn as nn


def make_model():  # as ../shared/anchors/w1_fmnist_cnn.py
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as wrk expects

    def log_message(self, *args):
        pass

    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            req = json.loads(body)
            t = req["inputs"][0]
            x = torch.tensor(t["data"], dtype=torch.float32).reshape(t["shape"])
        except Exception as e:  # noqa: BLE001 - any malformed request is a 400
            return self.send(400, {"error": repr(e)})
        with torch.no_grad():
            y = self.server.model(x)
        self.send(200, {"model_name": "w1", "outputs": [{"name": "output", "datatype": "FP32",
                                                         "shape": list(y.shape), "data": y.flatten().tolist()}]})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    server.model = make_model().eval()
    print(f"listening on port {server.server_address[1]} (torch {torch.__version__}, {a.threads} threads)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    # Skip the interpreter's teardown: torch's thread pools abort in it (exit -6) under a live request thread.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

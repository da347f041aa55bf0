#!/usr/bin/env python3
"""A stand-in upstream JSON API on loopback, for trying the gateway by hand.

    python3 Scripts/upstream.py [--port 9000]

Routes:
    GET /users/{id}      200 {"id": 1, "name": "Ada"} for ids 1-3;
                         404 {"error": "not_found", "message": "..."} for other ids;
                         500 with an HTML body for id 500 (not the API's error format).
    GET /slow?seconds=N  200 {"slept_seconds": N} after N seconds (default 5). While it waits it
                         watches the connection, and logs it when the client closes it first.

Every line it logs starts with the wall-clock time in seconds, so that its
events can be lined up with a client's.
"""

import argparse
import json
import select
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

USERS = {1: "Ada", 2: "Grace", 3: "Barbara"}


def log(message):
    print(f"{time.time():.6f} upstream: {message}", flush=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real API
    disable_nagle_algorithm = True  # the head and the body go in two writes: don't hold the second

    def do_GET(self):
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        log(f"{self.client_address[1]} GET {self.path}")
        if url.path == "/slow":
            seconds = float(parse_qs(url.query).get("seconds", ["5"])[0])
            if self.wait_watching_client(seconds):
                self.send_json(200, {"slept_seconds": seconds})
        elif len(parts) == 2 and parts[0] == "users" and parts[1].isdigit():
            user_id = int(parts[1])
            if user_id in USERS:
                self.send_json(200, {"id": user_id, "name": USERS[user_id]})
            elif user_id == 500:
                self.send_body(500, b"<html><body><h1>Internal Server Error</h1></body></html>", "text/html")
            else:
                self.send_json(404, {"error": "not_found", "message": f"no user {user_id}"})
        else:
            self.send_json(404, {"error": "not_found", "message": f"no route {url.path}"})

    def wait_watching_client(self, seconds):
        """Waits `seconds`; returns False as soon as the client closes the connection (then logs it)."""
        started = time.monotonic()
        deadline = started + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], left)
            if not readable:
                continue
            try:
                data = self.connection.recv(1, socket.MSG_PEEK)
                how = "closed (FIN)" if not data else None
            except ConnectionResetError:
                how = "reset (RST)"
            if how is None:
                # A pipelined request is waiting: leave it for later.
                time.sleep(min(left, 0.05))
                continue
            log(f"{self.client_address[1]} client {how} the connection after "
                f"{time.monotonic() - started:.3f} s, before the answer to {self.path}")
            self.close_connection = True
            return False
        return True

    def send_json(self, status, value):
        self.send_body(status, json.dumps(value).encode(), "application/json")

    def send_body(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        log(f"{self.client_address[1]} answered {status} to {self.path}")

    def log_message(self, format, *args):
        pass  # `log` says what matters


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    options = parser.parse_args()
    server = ThreadingHTTPServer((options.host, options.port), Handler)
    server.daemon_threads = True
    log(f"listening on http://{options.host}:{server.server_address[1]}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())

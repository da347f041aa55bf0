#!/usr/bin/env python3
"""Clients that leave, half-close, reuse a connection or meet a shutdown, for trying the gateway by hand.

    python3 Scripts/client.py get /users/1 /users/2      # requests on one keep-alive connection
    python3 Scripts/client.py leave /slow --after 0.5    # send, then reset the connection (RST)
    python3 Scripts/client.py leave /slow --fin          # send, then close it normally (FIN)
    python3 Scripts/client.py half-close /slow           # send, shut down the sending side, read
    python3 Scripts/client.py shutdown --requests 5 --seconds 2 -- .build/debug/HummingbirdGateway
        # starts the gateway, sends 5 slow requests, SIGTERMs it 0.5 s later, tries a new request,
        # and times the exit

Timestamps are wall-clock seconds, like those of Scripts/upstream.py. --port (default 8080) is the
gateway's.
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time


def stamp():
    return f"{time.time():.6f}"


def request_bytes(path):
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n".encode()


def read_response(sock):
    """Reads one HTTP/1.1 response with a Content-Length; returns (status line, body) or raises."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} bytes of the head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed after {len(body)} of {length} body bytes")
        body += chunk
    return lines[0], body.decode()


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=60)


def get(options):
    with connect(options.port) as sock:
        print(f"{stamp()} client: connected from port {sock.getsockname()[1]}")
        for path in options.paths:
            sock.sendall(request_bytes(path))
            status, body = read_response(sock)
            print(f"{stamp()} client: GET {path} -> {status} {body}")


def leave(options):
    sock = connect(options.port)
    sock.sendall(request_bytes(options.path))
    print(f"{stamp()} client: sent GET {options.path} from port {sock.getsockname()[1]}")
    time.sleep(options.after)
    if not options.fin:
        # Linger 0: close() sends RST instead of FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    closing = stamp()
    sock.close()
    print(f"{closing} client: {'closed (FIN)' if options.fin else 'reset (RST)'} the connection")


def half_close(options):
    started = time.monotonic()
    with connect(options.port) as sock:
        sock.sendall(request_bytes(options.path))
        sock.shutdown(socket.SHUT_WR)
        print(f"{stamp()} client: sent GET {options.path} and shut down the sending side")
        status, body = read_response(sock)
        print(f"{stamp()} client: after {time.monotonic() - started:.3f} s -> {status} {body}")
        rest = sock.recv(1)
        print(f"{stamp()} client: then the server {'closed the connection' if not rest else 'sent more'}")


def shutdown(options):
    log = open(options.log, "w") if options.log else subprocess.DEVNULL
    env = dict(os.environ, PORT=str(options.port))
    app = subprocess.Popen(options.command, env=env, stdout=log, stderr=log)
    for _ in range(200):  # wait until it listens
        try:
            connect(options.port).close()
            break
        except OSError:
            time.sleep(0.05)
    results = {}

    def slow(index):
        started = time.time()
        try:
            with connect(options.port) as sock:
                sock.sendall(request_bytes(f"/slow?seconds={options.seconds}"))
                status, body = read_response(sock)
                results[index] = f"{status} {body}"
        except OSError as error:
            results[index] = f"error: {error!r}"
        results[index] = f"after {time.time() - started:.3f} s: {results[index]}"

    threads = [threading.Thread(target=slow, args=(index,)) for index in range(options.requests)]
    for thread in threads:
        thread.start()
    time.sleep(options.signal_after)
    signalled = time.monotonic()
    app.send_signal(signal.SIGTERM)
    print(f"{stamp()} client: sent SIGTERM to {app.pid}")
    time.sleep(0.1)
    try:
        with connect(options.port) as sock:
            sock.sendall(request_bytes("/users/1"))
            late = " ".join(read_response(sock))
    except OSError as error:
        late = f"error: {error!r}"
    print(f"{stamp()} client: a new request 0.1 s after SIGTERM -> {late}")
    code = app.wait()
    print(f"{stamp()} client: the gateway exited with {code}, "
          f"{time.monotonic() - signalled:.3f} s after SIGTERM")
    for thread in threads:
        thread.join()
    for index in sorted(results):
        print(f"client: slow request {index + 1} {results[index]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("get")
    command.add_argument("paths", nargs="+")
    command.set_defaults(run=get)
    command = commands.add_parser("leave")
    command.add_argument("path")
    command.add_argument("--after", type=float, default=0.5)
    command.add_argument("--fin", action="store_true", help="close normally instead of resetting")
    command.set_defaults(run=leave)
    command = commands.add_parser("half-close")
    command.add_argument("path")
    command.set_defaults(run=half_close)
    command = commands.add_parser("shutdown")
    command.add_argument("--requests", type=int, default=5)
    command.add_argument("--seconds", type=int, default=2)
    command.add_argument("--signal-after", type=float, default=0.5)
    command.add_argument("--log", help="where the gateway's output goes")
    command.add_argument("command", nargs="+", help="the gateway to start, after --")
    command.set_defaults(run=shutdown)
    options = parser.parse_args()
    options.run(options)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Curlew test server: HTTP/2 (and HTTP/1.1) on 127.0.0.1, a free port, with HTTP/2 faults on demand.

Started by the tests (see Tests/CurlewTestSupport/H2TestServer.swift). Needs Python's `h2` package
(and its `hyperframe`), nothing else outside the standard library.

With --cert and --key it speaks TLS and offers the ALPN protocols given with --alpn (default `h2` and
`http/1.1`); a connection that agrees on `http/1.1`, or on none, is served as HTTP/1.1. Without them it
speaks cleartext: a connection that opens with the HTTP/2 preface is HTTP/2 (prior knowledge), any
other is HTTP/1.1.

On start it prints exactly one line, `{"port": N}`, to stdout. It exits when stdin reaches end of file
(so a test process that dies never leaves it running), on SIGTERM, or on SIGINT. Each line `stats`
written to its stdin is answered with one line on stdout: the JSON of `/stats` (below). Asking this
way opens no connection, so it does not change what it reports.

Every request is answered according to its path (the query may add `ms=N`: wait N ms first):

    /ok, /delay?ms=N, any other path
        200, a JSON report: {"connection": 3, "stream": 5, "connections": 3, "concurrent": 2,
        "protocol": "h2" | "http/1.1", "method": "GET", "path": "/ok?x", "cookie": "a=b" | null,
        "body_length": 0, "tls": true}. `connection` numbers this connection (from 1, in accept
        order), `connections` is how many were accepted so far, `stream` is the HTTP/2 stream id (the
        request's number on its connection for HTTP/1.1), `concurrent` counts this connection's
        requests in progress when this one arrived, itself included.
    /set-cookie?c=SET-COOKIE-VALUE (repeatable)
        the report, with one `Set-Cookie` field per `c`.
    /trailers
        the report, followed by trailer fields `x-trailer-one: 1` and `x-checksum: <length of body>`.
    /reset?code=cancel|internal|refused|N[&after=headers]
        RST_STREAM with that error code (default CANCEL), before any response or (after=headers)
        after a 200 head and part of a body. HTTP/1.1: the connection is closed.
    /refuse-once?tag=T
        the first request with tag T is refused (RST_STREAM REFUSED_STREAM), later ones get the report.
    /goaway?keep=K[&code=N][&ms=M]
        answers this request with the report, then sends GOAWAY (error code N, default NO_ERROR) whose
        last-stream-id keeps the K oldest requests still in progress on this connection (K=0: none):
        those are completed, the later ones are never answered (unprocessed, as RFC 9113 allows).
        The connection closes once the kept requests are done.
    /bad-frame
        a DATA frame on stream 0 (a connection error, PROTOCOL_ERROR, for the client).
    /stats
        200, JSON: {"connections": accepted, "open_connections": n, "peak_open_connections": n,
        "requests": n, "in_progress": n, "peak_streams": the most requests one connection had in
        progress at once, "resets_sent": n, "goaways_sent": n, "client_resets": n,
        "protocol_errors": ["..."], "by_connection": {"1": {"protocol": "h2", "requests": n,
        "peak_streams": n, "closed": false}}}
"""

import argparse
import asyncio
import json
import os
import signal
import ssl
import sys
import threading
import urllib.parse

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
from hyperframe.frame import GoAwayFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
RESET_CODES = {
    "cancel": h2.errors.ErrorCodes.CANCEL,
    "internal": h2.errors.ErrorCodes.INTERNAL_ERROR,
    "refused": h2.errors.ErrorCodes.REFUSED_STREAM,
}


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cert", help="PEM certificate (with its chain); with --key: TLS")
    parser.add_argument("--key", help="PEM private key (unencrypted)")
    parser.add_argument("--alpn", action="append", help="ALPN protocol to offer (repeatable); default h2, http/1.1")
    parser.add_argument(
        "--max-concurrent-streams", type=int, default=250, help="SETTINGS_MAX_CONCURRENT_STREAMS (default 250)"
    )
    parser.add_argument("--verbose", action="store_true", help="log connections and errors to stderr")
    return parser.parse_args()


class Stats:
    """What the server counts; read by `/stats` and the `stats` command (any thread)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.accepted = 0
        self.open = 0
        self.peak_open = 0
        self.requests = 0
        self.in_progress = 0
        self.peak_streams = 0
        self.resets_sent = 0
        self.goaways_sent = 0
        self.client_resets = 0
        self.protocol_errors = []
        self.by_connection = {}
        self.refused_tags = set()

    def connection_opened(self):
        with self.lock:
            self.accepted += 1
            self.open += 1
            self.peak_open = max(self.peak_open, self.open)
            number = self.accepted
            self.by_connection[number] = {"protocol": None, "requests": 0, "peak_streams": 0, "closed": False}
            return number

    def connection_closed(self, number):
        with self.lock:
            self.open -= 1
            self.by_connection[number]["closed"] = True

    def snapshot(self):
        with self.lock:
            return {
                "connections": self.accepted,
                "open_connections": self.open,
                "peak_open_connections": self.peak_open,
                "requests": self.requests,
                "in_progress": self.in_progress,
                "peak_streams": self.peak_streams,
                "resets_sent": self.resets_sent,
                "goaways_sent": self.goaways_sent,
                "client_resets": self.client_resets,
                "protocol_errors": list(self.protocol_errors),
                "by_connection": {str(k): dict(v) for k, v in self.by_connection.items()},
            }


STATS = Stats()
VERBOSE = False


def log(message):
    if VERBOSE:
        sys.stderr.write("h2_server: %s\n" % message)
        sys.stderr.flush()


class Request:
    def __init__(self, connection, stream, method, target, headers):
        self.connection = connection
        self.stream = stream
        self.method = method
        self.target = target
        self.headers = headers  # list of (lowercased name, value)
        self.body = bytearray()
        parts = urllib.parse.urlsplit(target)
        self.path = parts.path
        self.query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        self.concurrent = 0

    def arg(self, name, default=None):
        values = self.query.get(name)
        return values[-1] if values else default

    def header(self, name):
        values = [v for n, v in self.headers if n == name]
        return "; ".join(values) if values else None

    def report(self):
        return {
            "connection": self.connection.number,
            "stream": self.stream,
            "connections": STATS.accepted,
            "concurrent": self.concurrent,
            "protocol": self.connection.protocol,
            "method": self.method,
            "path": self.target,
            "cookie": self.header("cookie"),
            "body_length": len(self.body),
            "tls": self.connection.tls,
        }


def json_body(value):
    return json.dumps(value).encode() + b"\n"


class Connection(asyncio.Protocol):
    """One accepted connection: detects the protocol, then hands bytes to the HTTP/2 or HTTP/1.1 side."""

    def __init__(self, settings):
        self.settings = settings
        self.transport = None
        self.number = 0
        self.protocol = None
        self.tls = False
        self.pending = b""
        self.closed = False
        self.in_progress = 0
        self.tasks = set()
        # HTTP/2
        self.h2 = None
        self.streams = {}  # stream id -> Request (requests received, not finished)
        self.window_waiters = {}
        self.goaway_last = None
        # HTTP/1.1
        self.h1_queue = None
        self.h1_requests = 0

    # asyncio.Protocol

    def connection_made(self, transport):
        self.transport = transport
        self.number = STATS.connection_opened()
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is not None:
            self.tls = True
            alpn = ssl_object.selected_alpn_protocol()
            self.start("h2" if alpn == "h2" else "http/1.1")
        log("connection %d opened (tls=%s, protocol=%s)" % (self.number, self.tls, self.protocol))

    def data_received(self, data):
        if self.protocol is None:
            self.pending += data
            if self.pending.startswith(PREFACE) or (len(self.pending) < len(PREFACE) and PREFACE.startswith(self.pending)):
                if len(self.pending) < len(PREFACE):
                    return
                self.start("h2")
            else:
                self.start("http/1.1")
            data, self.pending = self.pending, b""
        if self.protocol == "h2":
            self.h2_received(data)
        else:
            self.h1_queue.feed_data(data)

    def connection_lost(self, exc):
        if self.closed:
            return
        self.closed = True
        for task in list(self.tasks):
            task.cancel()
        for waiter in self.window_waiters.values():
            waiter.set()
        if self.h1_queue is not None:
            self.h1_queue.feed_eof()
        with STATS.lock:
            STATS.in_progress -= self.in_progress
        self.in_progress = 0
        STATS.connection_closed(self.number)
        log("connection %d closed" % self.number)

    def start(self, protocol):
        self.protocol = protocol
        with STATS.lock:
            STATS.by_connection[self.number]["protocol"] = protocol
        if protocol == "h2":
            config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
            self.h2 = h2.connection.H2Connection(config=config)
            self.h2.local_settings = h2.settings.Settings(
                client=False,
                initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.settings.max_concurrent_streams},
            )
            self.h2.initiate_connection()
            self.flush()
        else:
            self.h1_queue = asyncio.StreamReader()
            self.spawn(self.h1_serve())

    def spawn(self, coroutine):
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def flush(self):
        if self.h2 is not None and not self.closed:
            data = self.h2.data_to_send()
            if data:
                self.transport.write(data)

    def request_started(self, request):
        self.in_progress += 1
        request.concurrent = self.in_progress
        with STATS.lock:
            STATS.requests += 1
            STATS.in_progress += 1
            entry = STATS.by_connection[self.number]
            entry["requests"] += 1
            entry["peak_streams"] = max(entry["peak_streams"], self.in_progress)
            STATS.peak_streams = max(STATS.peak_streams, self.in_progress)

    def request_finished(self, request):
        if self.protocol == "h2" and self.streams.pop(request.stream, None) is None:
            return
        if self.closed:
            return
        self.in_progress -= 1
        with STATS.lock:
            STATS.in_progress -= 1
        if self.protocol == "h2":
            self.close_when_kept_done()

    # HTTP/2

    def h2_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            with STATS.lock:
                STATS.protocol_errors.append("connection %d: %r" % (self.number, error))
            log("connection %d: protocol error %r" % (self.number, error))
            self.flush()
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                headers = [(n.lower(), v) for n, v in event.headers]
                pseudo = dict((n, v) for n, v in headers if n.startswith(":"))
                request = Request(self, event.stream_id, pseudo.get(":method", ""), pseudo.get(":path", "/"),
                                  [(n, v) for n, v in headers if not n.startswith(":")])
                self.streams[event.stream_id] = request
                self.request_started(request)
                if event.stream_ended is not None:
                    self.dispatch(request)
            elif isinstance(event, h2.events.DataReceived):
                request = self.streams.get(event.stream_id)
                if request is not None:
                    request.body += event.data
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                request = self.streams.get(event.stream_id)
                if request is not None and not hasattr(request, "task"):
                    self.dispatch(request)
            elif isinstance(event, h2.events.StreamReset):
                request = self.streams.get(event.stream_id)
                if request is not None:
                    with STATS.lock:
                        STATS.client_resets += 1
                    task = getattr(request, "task", None)
                    if task is not None:
                        task.cancel()
                    self.request_finished(request)
                waiter = self.window_waiters.get(event.stream_id)
                if waiter is not None:
                    waiter.set()
            elif isinstance(event, h2.events.WindowUpdated):
                if event.stream_id == 0:
                    for waiter in self.window_waiters.values():
                        waiter.set()
                elif event.stream_id in self.window_waiters:
                    self.window_waiters[event.stream_id].set()
            elif isinstance(event, h2.events.ConnectionTerminated):
                log("connection %d: client GOAWAY %s" % (self.number, event.error_code))
                self.flush()
                self.transport.close()
                return
        self.flush()

    def dispatch(self, request):
        request.task = self.spawn(self.h2_handle(request))

    async def h2_handle(self, request):
        try:
            await self.h2_respond(request)
        except asyncio.CancelledError:
            pass
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError) as error:
            log("connection %d stream %d: %r" % (self.number, request.stream, error))
        except Exception as error:  # noqa: BLE001 - a test server reports and resets the stream
            with STATS.lock:
                STATS.protocol_errors.append("connection %d stream %d: %r" % (self.number, request.stream, error))
            sys.stderr.write("h2_server: connection %d stream %d failed: %r\n" % (self.number, request.stream, error))
            if not self.closed and request.stream in self.streams:
                self.send_reset(request, h2.errors.ErrorCodes.INTERNAL_ERROR)
        finally:
            self.request_finished(request)

    async def h2_respond(self, request):
        if request.path == "/hold":
            # The head at once, the body (the report) after `hold` ms: a response that starts at once and
            # lasts, as an event stream's does.
            self.h2.send_headers(request.stream, [(":status", "200"), ("content-type", "application/json")])
            self.flush()
            await asyncio.sleep(int(request.arg("hold", "0") or 0) / 1000)
            if self.closed or request.stream not in self.streams:
                return
            self.h2.send_data(request.stream, json_body(request.report()), end_stream=True)
            self.flush()
            return
        delay = int(request.arg("ms", "0") or 0)
        if delay > 0:
            await asyncio.sleep(delay / 1000)
        if self.closed or request.stream not in self.streams:
            return
        path = request.path
        if path == "/reset":
            code = request.arg("code", "cancel")
            error_code = RESET_CODES[code] if code in RESET_CODES else int(code)
            if request.arg("after") == "headers":
                self.h2.send_headers(request.stream, [(":status", "200"), ("content-type", "application/json")])
                self.h2.send_data(request.stream, b'{"partial": ')
                self.flush()
                await asyncio.sleep(0.05)
            self.send_reset(request, error_code)
            return
        if path == "/refuse-once":
            tag = request.arg("tag", "")
            with STATS.lock:
                first = tag not in STATS.refused_tags
                STATS.refused_tags.add(tag)
            if first:
                self.send_reset(request, h2.errors.ErrorCodes.REFUSED_STREAM)
                return
        if path == "/bad-frame":
            self.flush()
            # hyperframe refuses to build this frame: 9-byte header (length 3, type DATA, no flags, stream 0).
            self.transport.write(b"\x00\x00\x03\x00\x00\x00\x00\x00\x00bad")
            return
        if path == "/stats":
            await self.h2_send(request, 200, [("content-type", "application/json")], json_body(STATS.snapshot()))
            return
        headers = [("content-type", "application/json")]
        if path == "/set-cookie":
            headers += [("set-cookie", value) for value in request.query.get("c", [])]
        trailers = None
        body = json_body(request.report())
        if path == "/trailers":
            trailers = [("x-trailer-one", "1"), ("x-checksum", str(len(body)))]
        await self.h2_send(request, 200, headers, body, trailers)
        if path == "/goaway":
            self.send_goaway(request)

    def send_reset(self, request, error_code):
        self.h2.reset_stream(request.stream, error_code=error_code)
        self.flush()
        with STATS.lock:
            STATS.resets_sent += 1

    def send_goaway(self, request):
        keep = int(request.arg("keep", "0") or 0)
        code = int(request.arg("code", "0") or 0)
        others = sorted(s for s in self.streams if s != request.stream)
        last = others[keep - 1] if 0 < keep <= len(others) else (0 if keep == 0 else max(others + [0]))
        self.goaway_last = last
        # Written past h2's state machine, which would refuse to send anything after its own GOAWAY: the
        # kept streams still get their responses.
        self.flush()
        self.transport.write(GoAwayFrame(0, last_stream_id=last, error_code=code).serialize())
        with STATS.lock:
            STATS.goaways_sent += 1
        log("connection %d: GOAWAY last=%d code=%d (in progress %s)" % (self.number, last, code, others))
        for stream in others:
            if stream > last:
                pending = self.streams.get(stream)
                task = getattr(pending, "task", None)
                if task is not None:
                    task.cancel()
                self.request_finished(pending)
        self.close_when_kept_done()

    def close_when_kept_done(self):
        if self.goaway_last is None or self.closed:
            return
        if not any(s <= self.goaway_last for s in self.streams):
            asyncio.get_running_loop().call_later(0.1, self.transport.close)

    async def h2_send(self, request, status, headers, body, trailers=None):
        stream = request.stream
        all_headers = [(":status", str(status))] + headers + [("content-length", str(len(body)))]
        self.h2.send_headers(stream, all_headers, end_stream=not body and not trailers)
        self.flush()
        view = memoryview(body)
        while view:
            while True:
                if self.closed or stream not in self.streams:
                    return
                window = self.h2.local_flow_control_window(stream)
                if window > 0:
                    break
                waiter = self.window_waiters[stream] = asyncio.Event()
                await waiter.wait()
                self.window_waiters.pop(stream, None)
            size = min(window, len(view), self.h2.max_outbound_frame_size)
            last = size == len(view) and not trailers
            self.h2.send_data(stream, bytes(view[:size]), end_stream=last)
            self.flush()
            view = view[size:]
        if trailers:
            self.h2.send_headers(stream, trailers, end_stream=True)
            self.flush()

    # HTTP/1.1

    async def h1_serve(self):
        reader = self.h1_queue
        try:
            while not self.closed:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = []
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers.append((name.strip().lower(), value.strip()))
                self.h1_requests += 1
                request = Request(self, self.h1_requests, method, target, headers)
                length = int(request.header("content-length") or 0)
                if length:
                    request.body += await reader.readexactly(length)
                self.request_started(request)
                try:
                    keep_open = await self.h1_respond(request)
                finally:
                    self.request_finished(request)
                if not keep_open:
                    self.transport.close()
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, ConnectionError):
            self.transport.close()

    async def h1_respond(self, request):
        delay = int(request.arg("ms", "0") or 0)
        if delay > 0:
            await asyncio.sleep(delay / 1000)
        path = request.path
        if path in ("/reset", "/bad-frame", "/goaway"):
            return False
        body = json_body(STATS.snapshot() if path == "/stats" else request.report())
        lines = ["HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: %d" % len(body)]
        if path == "/set-cookie":
            lines += ["Set-Cookie: %s" % value for value in request.query.get("c", [])]
        self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        return True


def make_tls_context(arguments):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    context.set_alpn_protocols(arguments.alpn or ["h2", "http/1.1"])
    return context


async def serve(arguments):
    loop = asyncio.get_running_loop()
    context = make_tls_context(arguments) if arguments.cert else None
    server = await loop.create_server(lambda: Connection(arguments), "127.0.0.1", 0, ssl=context, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write(json.dumps({"port": port}) + "\n")
    sys.stdout.flush()
    done = asyncio.Event()

    def read_commands():
        # Serve until stdin closes: the parent exited, crashed or asked us to stop.
        try:
            for line in sys.stdin:
                if line.strip() == "stats":
                    sys.stdout.write(json.dumps(STATS.snapshot()) + "\n")
                    sys.stdout.flush()
        except (OSError, ValueError):
            pass
        loop.call_soon_threadsafe(done.set)

    threading.Thread(target=read_commands, daemon=True).start()
    await done.wait()


def main():
    global VERBOSE
    arguments = parse_arguments()
    VERBOSE = arguments.verbose
    if bool(arguments.cert) != bool(arguments.key):
        sys.stderr.write("h2_server: --cert and --key go together\n")
        return 2

    def stop(*_):
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        asyncio.run(serve(arguments))
    except (OSError, ssl.SSLError, ValueError) as error:
        sys.stderr.write("h2_server: cannot start: %s\n" % error)
        return 1
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

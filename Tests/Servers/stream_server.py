#!/usr/bin/env python3
"""Curlew test server: bodies streamed both ways over HTTP/1.1 and HTTP/2 on 127.0.0.1, with exact byte
accounting for backpressure measurements.

Started by the tests (Tests/CurlewTestSupport/StreamTestServer.swift) and the benchmarks. Needs Python's
`h2` package, and `python-multipart` for /multipart only (`make test-deps` installs both).

With --cert and --key it speaks TLS and offers the ALPN protocols given with --alpn (default `h2` and
`http/1.1`); a connection that agrees on `http/1.1`, or on none, is served as HTTP/1.1. Without them it
speaks cleartext: a connection that opens with the HTTP/2 preface is HTTP/2 (prior knowledge), any other
is HTTP/1.1.

Threads and blocking sockets, so that counts are exact and pacing simple: one thread per connection
(HTTP/1.1 serves its requests in turn; HTTP/2 reads frames and hands each request to a thread of its
own). Every write counts the bytes the kernel accepted (for TLS: the plaintext handed to the TLS layer,
about 0.2% less than what goes on the wire). Request bodies are read as the route asks for them: over
HTTP/2 the flow-control window is given back only for bytes the route has read, so a slow route slows
the client down; once the route has answered, what it left unread is dropped and its window given back,
as real servers do.

On start it prints exactly one line, `{"port": N}`, to stdout. It exits when stdin reaches end of file
(so a test process that dies never leaves it running), on SIGTERM, or on SIGINT. Each line `stats`
written to its stdin is answered with one line on stdout: the JSON of `/stats`.

Routes (the same over both protocols):

    GET /bytes?n=N[&chunk=C][&encoding=identity|gzip|deflate][&length=1][&random=1][&tag=T]
        N bytes of a pattern (byte i is i % 251; with random=1, bytes from a generator seeded with N,
        which do not compress), written C bytes at a time (default 65536) as fast as the connection
        allows; `encoding` compresses them on the fly (Content-Encoding set; deflate is the zlib
        format). `length=1` sends Content-Length (identity only); otherwise HTTP/1.1 is chunked.
    GET /bomb?n=N&encoding=gzip|deflate[&tag=T]
        N zero bytes (whole MiB) compressed, about 1032:1, built as they are sent; chunked on HTTP/1.1.
    POST /echo
        200 at once, then every piece of the request body written back as soon as it is read (a 1-byte
        write from the client comes back as a 1-byte chunk); the request's trailers come back as
        response trailers.
    POST /speak?rounds=N[&length=1][&tag=T]
        200 at once, then N times: a 1-byte chunk `A`, then wait for at least one byte of request body;
        then the response ends (and the rest of the request body is read). `length=1` sends
        Content-Length: N, so the response's end shows by its length (over HTTP/2 libcurl 7.88 reports the
        end of a response without a length or trailers only when the whole exchange ends); a request body
        that ends before the last round then closes the connection. With a tag, what became of the request
        body is reported by /speak-report.
    GET /speak-report?tag=T
        The JSON of the /speak tagged T, as it stands (404 before it started; a later /speak with the tag
        replaces it): {"tag", "protocol", "connection": its connection's number (as /request numbers
        them), "request": its number on that connection, "spoken": `A`s written, "body_bytes": request
        body bytes read so far, "ended": the route has stopped reading the body (it ended, or broke off:
        a closed connection, a reset stream), "complete": the body ended whole (HTTP/1.1: the chunked
        body's last chunk `0` and the empty line after it (and any trailers) were read, or the whole
        Content-Length; HTTP/2: the request's END_STREAM)}. Its own tag is not counted in /stats.
    GET /trailers
        `Response body`, then trailers X-Trailer-One: first-value, X-Trailer-Two: second-value,
        X-Checksum: abc123.
    ANY /request[?drop-once=T]
        Reads the whole request and answers JSON: {"method", "path", "headers": {name: [values]},
        "body": latin-1 text, "body_length", "trailers": {name: [values]}, "connection": this
        connection's number (from 1), "request": this request's number on its connection (from 1),
        "protocol": "h2" | "http/1.1"}. With drop-once=T, the first such request that arrives on a
        connection that already served one is read completely and then its connection is closed without
        an answer; later requests with the tag are answered.
    POST /early?status=S[&read=K][&reset=1][&length=none]
        Reads K bytes of the body (default 0), answers S (default 401) with body `early S` and
        Content-Length (none with length=none), without reading the rest. HTTP/1.1: then reads and
        drops the rest for up to 2 s and closes the connection. HTTP/2: ends the response stream and
        drops what else arrives; with reset=1 also resets the request side with NO_ERROR, in the same
        write as the answer; with reset=later, 200 ms after it (as nginx does, in a read of its own).
    ANY /redirect?status=S&to=PATH[&read=0]
        Reads the body (unless read=0) and answers S (default 307) with Location: PATH.
    POST /slow-read?rate=B[&tag=T]
        Reads the body at B bytes per second, then answers JSON {"received": n}.
    GET /stall
        Never answers.
    GET /stall-body?n=N
        200, N bytes of `A`, then nothing more.
    GET /drip?n=N&interval=MS&size=S
        200, then N chunks of S bytes of `A`, MS milliseconds apart.
    GET /file?n=N[&key=K][&etag=E[&weak=1]][&last-modified=1|T[&date-offset=S]][&pace=B][&chunk=C]
             [&encoding=gzip|deflate][&length=0|1][&status=S][&cut=K][&claim=M][&wrong-range=1]
        A downloadable resource of N pattern bytes (byte i is i % 251) with Content-Length (identity;
        length=0: chunked over HTTP/1.1), Accept-Ranges: bytes, and as asked: ETag "E" (W/"E" with
        weak=1), Last-Modified (1: 14 Nov 2023 22:13:20 GMT, else the Unix time T) with Date that many
        seconds later (date-offset, default 86400). Honours `Range: bytes=A-` for GET with identity
        coding, after `If-Range` as RFC 9110 §13.1.5 says (an entity tag matches a strong ETag compared
        strongly; a date matches an equal Last-Modified only when Date is at least 1 s later): 206 with
        Content-Range: bytes A-(N-1)/N and bytes A.., or 416 with Content-Range: bytes */N (and a short
        text body) when A >= N; a false If-Range or another Range form: 200 and the whole body.
        `wrong-range=1` answers a 206 that starts at A/2 instead. `encoding` compresses the body
        (Range ignored; chunked unless length=1). `status=S` answers S with the body, ignoring Range.
        The body is written C bytes at a time (default 65536), one write per C/B seconds with pace=B.
        `label=NAME` sends Content-Encoding: NAME over the identity body (a coding never applied).
        `coded-cut=K` keeps only the first K bytes of the compressed body (a coding that stops half way,
        framed as complete); `cut=K` closes the connection after K body bytes; `claim=M` sends Content-Length: M instead and
        closes the connection after the body when M is larger. Response fields X-Seen-Range,
        X-Seen-If-Range and X-Seen-Accept-Encoding echo the request's, when sent. With key=K, every
        parameter `then-X` (an empty value: absent) replaces X for the resource's later requests (a
        changed version, or a cut only the first time), and each request is logged under K (see /log):
        {"method", "range", "if_range", "accept_encoding", "status", "sent": body bytes written,
        "connection", "request"}.
    POST|PUT /inflate[?key=K][&status=S&to=PATH][&drop-once=T]
        Reads the whole body, undoes its Content-Encoding (gzip; deflate: the zlib format only; none:
        the body as it is) and answers S (default 200; with Location: PATH when `to` is given) with JSON
        {"method", "content_encoding", "content_length" (the field as a number, or null),
        "transfer_encoding", "wire_length": bytes received, "decoded_length", "sha256" and "crc32" of
        the decoded bytes, "complete": the coding's stream ended exactly at the body's end, "error":
        null or why decoding failed, "connection", "request"}, also logged under K. drop-once=T as for
        /request.
    POST|PUT /hold?key=K&after=B
        Reads B bytes of the body (the HTTP/1.1 socket's receive buffer shrunk to 64 KiB first, so the
        client can run ahead only by its own send buffer), logs {"event": "holding", "received"} under
        K, waits (up to 30 s) for /release?key=K, then reads the rest and answers JSON {"received",
        "sha256"} (logged with "event": "done"); a body that breaks off (a closed connection, a reset
        stream) is logged as "failed".
    POST|PUT /trickle?rate=B
        As /slow-read, with the HTTP/1.1 socket's receive buffer shrunk to 64 KiB first, so that the
        client's sending follows the reads.
    POST|PUT|PATCH /multipart[?key=K][&status=S&to=PATH][&report-after=B][&drop-once=T]
        Parses the body as multipart/form-data with python-multipart's streaming parser (never our own
        code), in constant memory, and answers S (default 200; 400 when the body is not a complete form;
        with Location: PATH when `to` is given) with JSON {"method", "target": the request target as
        sent, "protocol", "content_type", "content_length" (a number or null), "transfer_encoding",
        "chunked": the HTTP/1.1 body was chunked, "boundary": the boundary parsed from Content-Type,
        "body_length", "body_sha256", "body": base64 of the whole body when at most 64 KiB, else null,
        "complete": the closing boundary was parsed and the body ended, "error": null or why not,
        "parts": [{"headers": [[field, value]] as the parser split each header line (the value
        without the spaces after the colon), "disposition", "name", "filename" (null when absent),
        "content_type" (null when absent), "size", "crc32", "sha256", "content": base64 when at most
        64 KiB, else null}], "connection", "request"}; names and file names are the parameter values
        as parse_options_header of python-multipart reads them (bytes decoded as UTF-8). Also logged
        under K; a body that breaks off (a closed connection, a reset stream) is logged as
        {"event": "failed", "received", "complete": false, "parts": the parts seen so far}; with
        report-after=B, {"event": "receiving", "received", "complete": false, "parts": []} is logged once
        B bytes of the body have arrived (so a test can break a body off after the server has seen it).
        drop-once=T as for /request (the dropped request, read whole, is not logged).
    ANY /release?key=K
        Lets the /hold of key K read on (and the /steps waiting on K).
    GET /steps?key=K&chunks=C&size=S[&wait=W][&free=F&gap=G][&length=0]
        200 with Content-Length C*S (length=0: chunked over HTTP/1.1), then the body in C chunks of S
        pattern bytes: the first F (default 1) with the head, G milliseconds apart, each later one i
        (1-based) once /release?key=K-i has been asked for; after W seconds (default 30) without it the
        connection is closed.
    GET /log?key=K
        The JSON list of what /file, /inflate and /hold logged under key K, in order.
    GET /stats (and the `stats` command)
        {"connections": accepted, "requests": n, "protocol_errors": [...], "dropped": [tags],
        "tags": {T: {"written": bytes the kernel accepted on that exchange's connection so far (over
        HTTP/2 other streams on the connection count too), "outq": the connection's unsent and unacked
        bytes now (SIOCOUTQ), "peer_port": the client's port, "connection": the connection's number,
        "done": the route finished without an error, "blocked": a write has been waiting for more than
        200 ms, for room in the socket or, over HTTP/2, for the stream's flow-control window}}}
"""

import argparse
import base64
import email.utils
import faulthandler
import fcntl
import hashlib
import json
import os
import queue
import random
import re
import select
import signal
import socket
import ssl
import struct
import sys
import termios
import threading
import time
import urllib.parse
import zlib

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

# python-multipart (PyPI), for /multipart only: the server starts without it, and /multipart then answers 500.
try:
    import python_multipart as multipart_parser  # 0.0.13 and later
except ImportError:  # pragma: no cover
    try:
        import multipart as multipart_parser  # older releases of python-multipart
        import multipart.multipart  # noqa: F401 (absent from the unrelated package of the same name)
    except ImportError:
        multipart_parser = None

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
REASONS = {200: "OK", 206: "Partial Content", 301: "Moved Permanently", 302: "Found", 303: "See Other",
           307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
           404: "Not Found", 405: "Method Not Allowed", 413: "Content Too Large", 416: "Range Not Satisfiable",
           500: "Internal Server Error"}
STOPPING = threading.Event()


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert", help="PEM certificate (with its chain); with --key: TLS")
    parser.add_argument("--key", help="PEM private key (unencrypted)")
    parser.add_argument("--alpn", action="append", help="ALPN protocol to offer (repeatable); default h2, http/1.1")
    parser.add_argument("--max-concurrent-streams", type=int, default=100)
    parser.add_argument("--initial-window", type=int, default=65535, help="SETTINGS_INITIAL_WINDOW_SIZE for request bodies")
    parser.add_argument("--sndbuf", type=int, default=0, help="SO_SNDBUF of accepted sockets (0: the kernel's)")
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args()


ARGS = None


def log(message):
    if ARGS and ARGS.verbose:
        print(message, file=sys.stderr, flush=True)


class Stats:
    """What the server counts (any thread)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        self.protocol_errors = []
        self.dropped = []
        self.dropped_tags = set()
        self.tags = {}

    def snapshot(self):
        with self.lock:
            tags = {}
            for tag, entry in self.tags.items():
                connection = entry["connection"]
                tags[tag] = {"written": connection.written, "outq": connection.outq(), "peer_port": connection.peer_port,
                             "connection": connection.number, "done": entry["done"], "blocked": connection.blocked()}
            return {"connections": self.connections, "requests": self.requests,
                    "protocol_errors": list(self.protocol_errors), "dropped": list(self.dropped), "tags": tags}


STATS = Stats()


class Connection:
    """A socket with counted, lock-ordered writes."""

    def __init__(self, sock, number):
        self.sock = sock
        self.number = number
        self.written = 0
        self.write_lock = threading.Lock()
        self.sending_since = None
        # HTTP/2: when the I/O thread's queue last made progress while not empty.
        self.stalled_since = None
        # HTTP/2: since when each stream's writer has waited for its flow-control window (a client that
        # reads the socket but holds a paused stream's data stops that stream's writer so).
        self.window_waits = {}
        self.served = 0
        try:
            self.peer_port = sock.getpeername()[1]
        except OSError:
            self.peer_port = 0

    def send(self, data):
        """Writes all of `data`, counting what the kernel accepts. Raises OSError when the peer is gone."""
        with self.write_lock:
            view = memoryview(data)
            while len(view):
                self.sending_since = time.monotonic()
                try:
                    sent = self.sock.send(view)
                finally:
                    self.sending_since = None
                if sent <= 0:
                    raise OSError("connection closed")
                self.written += sent
                view = view[sent:]

    def blocked(self):
        now = time.monotonic()
        since = self.sending_since if self.sending_since is not None else self.stalled_since
        if since is not None and now - since > 0.2:
            return True
        return any(now - waiting > 0.2 for waiting in list(self.window_waits.values()))

    def outq(self):
        try:
            value = fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
            return struct.unpack("i", value)[0]
        except (OSError, ValueError):
            return -1  # closed

    def reset(self):
        """Closes the socket with RST."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


class Dropped(Exception):
    """The route closed the connection on purpose."""


def pattern(offset, count):
    base = bytes(i % 251 for i in range(251))
    start = offset % 251
    data = (base[start:] + base * (count // 251 + 2))[:count]
    return data


# MARK: Routes, written once against the Exchange interface below


def route(exchange):
    path = exchange.path
    query = exchange.query
    # /speak-report's tag names the /speak it reports on, not an exchange of its own.
    tag = query.get("tag") if path != "/speak-report" else None
    if tag:
        with STATS.lock:
            STATS.tags[tag] = {"connection": exchange.connection, "done": False}
    handler = ROUTES.get(path, not_found)
    handler(exchange, query)
    if tag:
        with STATS.lock:
            if tag in STATS.tags:
                STATS.tags[tag]["done"] = True


def not_found(exchange, query):
    exchange.read_all()
    exchange.respond(404, [("content-type", "text/plain")], b"not found")


def route_bytes(exchange, query):
    exchange.read_all()
    total = int(query.get("n", "0"))
    chunk = int(query.get("chunk", "65536"))
    encoding = query.get("encoding", "identity")
    headers = [("content-type", "application/octet-stream")]
    compressor = None
    if encoding == "gzip":
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    elif encoding == "deflate":
        compressor = zlib.compressobj(6, zlib.DEFLATED, 15)
    if compressor:
        headers.append(("content-encoding", encoding))
    elif query.get("length") == "1":
        headers.append(("content-length", str(total)))
    generator = random.Random(total) if query.get("random") == "1" else None
    exchange.send_head(200, headers)
    sent = 0
    while sent < total:
        count = min(chunk, total - sent)
        data = generator.randbytes(count) if generator else pattern(sent, count)
        sent += count
        if compressor:
            data = compressor.compress(data)
            if not data:
                continue
        exchange.write(data)
    if compressor:
        tail = compressor.flush()
        if tail:
            exchange.write(tail)
    exchange.finish()


def route_bomb(exchange, query):
    # One MiB of zeros compresses (level 9, then a full flush) to about 1 KiB of deflate that can be
    # repeated as it is: the bomb is built as it is sent, so a client that stops reading costs no CPU.
    exchange.read_all()
    mebibytes = max(1, int(query.get("n", "0")) >> 20)
    encoding = query.get("encoding", "gzip")
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    unit = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    final = compressor.flush(zlib.Z_FINISH)
    exchange.send_head(200, [("content-type", "application/octet-stream"), ("content-encoding", encoding)])
    exchange.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" if encoding == "gzip" else b"\x78\xda")
    check = 0 if encoding == "gzip" else 1
    batch = 64
    sent = 0
    while sent < mebibytes:
        count = min(batch, mebibytes - sent)
        for _ in range(count):
            check = zlib.crc32(zeros, check) if encoding == "gzip" else zlib.adler32(zeros, check)
        exchange.write(unit * count)
        sent += count
    size = (mebibytes << 20) & 0xFFFFFFFF
    trailer = struct.pack("<II", check, size) if encoding == "gzip" else struct.pack(">I", check)
    exchange.write(final + trailer)
    exchange.finish()


def route_echo(exchange, query):
    exchange.send_head(200, [("content-type", "application/octet-stream")])
    while True:
        data = exchange.read(65536)
        if not data:
            break
        exchange.write(data)
    exchange.finish(exchange.request_trailers or None)


# What each tagged /speak did with its request body (see /speak-report), by tag; changed under STATS.lock.
SPEAK_REPORTS = {}


def route_speak(exchange, query):
    rounds = int(query.get("rounds", "1"))
    tag = query.get("tag")
    report = None
    if tag:
        report = {"tag": tag, "protocol": exchange.protocol, "connection": exchange.connection.number,
                  "request": exchange.request_number, "spoken": 0, "body_bytes": 0, "ended": False, "complete": False}
        with STATS.lock:
            SPEAK_REPORTS[tag] = report

    def count(field, data):
        if report is not None and data:
            with STATS.lock:
                report[field] += len(data)
        return data

    length = query.get("length") == "1"
    try:
        headers = [("content-type", "text/plain")] + ([("content-length", str(rounds))] if length else [])
        exchange.send_head(200, headers)
        spoken = 0
        for _ in range(rounds):
            exchange.write(b"A")
            spoken += 1
            count("spoken", b"A")
            if not count("body_bytes", exchange.read(65536)):
                break
        if length and spoken < rounds:
            raise Dropped()  # the announced length cannot be met
        # The response ends first: the client ends its body once it has seen the response's end.
        exchange.finish()
        while count("body_bytes", exchange.read(65536)):
            pass
    finally:
        # Also when the body broke off (an OSError from a closed connection, a reset stream): the report
        # says so, and the error goes on to end the connection or stream as before.
        if report is not None:
            complete = exchange.body_done and body_ended_whole(exchange)
            with STATS.lock:
                report["complete"] = complete
                report["ended"] = True


def route_speak_report(exchange, query):
    exchange.read_all()
    with STATS.lock:
        report = SPEAK_REPORTS.get(query.get("tag", ""))
        text = json.dumps(report) if report is not None else None
    if text is None:
        exchange.respond(404, [("content-type", "text/plain")], b"no /speak with this tag")
        return
    exchange.respond(200, [("content-type", "application/json")], text.encode())


def route_trailers(exchange, query):
    exchange.read_all()
    exchange.send_head(200, [("content-type", "text/plain")])
    exchange.write(b"Response body")
    exchange.finish([("x-trailer-one", "first-value"), ("x-trailer-two", "second-value"), ("x-checksum", "abc123")])


def drop_once(exchange, tag):
    """With a tag: the first such request on a connection that already served one closes the connection."""
    if not tag:
        return
    with STATS.lock:
        drop = tag not in STATS.dropped_tags and exchange.request_number > 1
        if drop:
            STATS.dropped_tags.add(tag)
            STATS.dropped.append(tag)
    if drop:
        raise Dropped()


def route_request(exchange, query):
    body = exchange.read_all()
    drop_once(exchange, query.get("drop-once"))
    headers = {}
    for name, value in exchange.headers:
        headers.setdefault(name, []).append(value)
    trailers = {}
    for name, value in exchange.request_trailers:
        trailers.setdefault(name, []).append(value)
    report = {"method": exchange.method, "path": exchange.target, "headers": headers, "body": body.decode("latin-1"),
              "body_length": len(body), "trailers": trailers, "connection": exchange.connection.number,
              "request": exchange.request_number, "protocol": exchange.protocol}
    exchange.respond(200, [("content-type", "application/json")], json.dumps(report).encode())


def route_early(exchange, query):
    status = int(query.get("status", "401"))
    wanted = int(query.get("read", "0"))
    got = 0
    while got < wanted:
        data = exchange.read(wanted - got)
        if not data:
            break
        got += len(data)
    body = f"early {status}".encode()
    if query.get("length") == "none":
        exchange.send_head(status, [("content-type", "text/plain")])
        exchange.write(body)
        exchange.finish()
    else:
        exchange.respond(status, [("content-type", "text/plain")], body)
    exchange.after_early_answer()


def route_redirect(exchange, query):
    if query.get("read", "1") != "0":
        exchange.read_all()
    status = int(query.get("status", "307"))
    exchange.respond(status, [("location", query.get("to", "/request"))], b"")


def route_slow_read(exchange, query):
    rate = int(query.get("rate", str(1 << 20)))
    step = max(1, rate // 20)
    received = 0
    while True:
        data = exchange.read(step)
        if not data:
            break
        received += len(data)
        time.sleep(len(data) / rate)
    exchange.respond(200, [("content-type", "application/json")], json.dumps({"received": received}).encode())


def route_stall(exchange, query):
    STOPPING.wait()


def route_stall_body(exchange, query):
    exchange.read_all()
    exchange.send_head(200, [("content-type", "text/plain")])
    exchange.write(b"A" * int(query.get("n", "1000")))
    STOPPING.wait()


def route_drip(exchange, query):
    exchange.read_all()
    count = int(query.get("n", "10"))
    interval = int(query.get("interval", "100")) / 1000
    size = int(query.get("size", "1"))
    exchange.send_head(200, [("content-type", "text/plain")])
    for index in range(count):
        if index:
            time.sleep(interval)
        exchange.write(b"A" * size)
    exchange.finish()


def route_stats(exchange, query):
    exchange.read_all()
    exchange.respond(200, [("content-type", "application/json")], json.dumps(STATS.snapshot()).encode())


# Resources logged per key (/file, /inflate, /hold, /log): what each request asked for and got.
KEY_COUNTS = {}
KEY_LOGS = {}
HOLDS = {}
# Tue, 14 Nov 2023 22:13:20 GMT: the Last-Modified of /file?last-modified=1.
LAST_MODIFIED = 1700000000


def body_ended_whole(exchange):
    """Whether the request body ended whole: over HTTP/2 a reset stream reads as an end too, and only
    END_STREAM ends a body whole; over HTTP/1.1 the reader already saw its framing end."""
    if exchange.protocol != "h2":
        return True
    with exchange.server.lock:
        stream = exchange.server.streams.get(exchange.stream_id)
        return stream is not None and stream.ended


def log_entry(key, entry):
    if key:
        with STATS.lock:
            KEY_LOGS.setdefault(key, []).append(entry)


def keyed_query(query):
    """The query as this request of its key sees it: `then-X` replaces X after the first; empty is absent."""
    key = query.get("key")
    count = 1
    if key:
        with STATS.lock:
            count = KEY_COUNTS.get(key, 0) + 1
            KEY_COUNTS[key] = count
    effective = {name: value for name, value in query.items() if not name.startswith("then-")}
    if count > 1:
        effective.update({name[5:]: value for name, value in query.items() if name.startswith("then-")})
    return {name: value for name, value in effective.items() if value != ""}


def request_header(exchange, name):
    return next((value for field, value in exchange.headers if field == name), None)


def if_range_holds(value, etag, last_modified, date):
    """RFC 9110 §13.1.5: a strong entity-tag comparison, or an exact date of a strong Last-Modified."""
    value = value.strip()
    if value.startswith('"') or value.startswith("W/"):
        return etag is not None and not etag.startswith("W/") and not value.startswith("W/") and value == etag
    if last_modified is None or date is None or date - last_modified < 1:
        return False
    return value == email.utils.formatdate(last_modified, usegmt=True)


def route_file(exchange, query):
    exchange.read_all()
    query = keyed_query(query)
    key = query.get("key")
    total = int(query.get("n", "0"))
    chunk = max(1, int(query.get("chunk", "65536")))
    pace = int(query.get("pace", "0"))
    encoding = query.get("encoding", "identity")
    seen_range = request_header(exchange, "range")
    seen_if_range = request_header(exchange, "if-range")
    seen_encoding = request_header(exchange, "accept-encoding")
    headers = [("content-type", "application/octet-stream"), ("accept-ranges", "bytes")]
    etag = None
    if "etag" in query:
        etag = ("W/" if query.get("weak") == "1" else "") + '"' + query["etag"] + '"'
        headers.append(("etag", etag))
    last_modified = date = None
    if "last-modified" in query:
        last_modified = LAST_MODIFIED if query["last-modified"] == "1" else int(query["last-modified"])
        date = last_modified + int(query.get("date-offset", "86400"))
        headers += [("last-modified", email.utils.formatdate(last_modified, usegmt=True)),
                    ("date", email.utils.formatdate(date, usegmt=True))]
    for name, value in (("x-seen-range", seen_range), ("x-seen-if-range", seen_if_range),
                        ("x-seen-accept-encoding", seen_encoding)):
        if value is not None:
            headers.append((name, value))
    status = int(query.get("status", "200"))
    start = 0
    ranged = status == 200 and encoding == "identity" and exchange.method == "GET" and seen_range is not None
    match = re.fullmatch(r"bytes=(\d+)-", seen_range.strip()) if ranged else None
    if match and (seen_if_range is None or if_range_holds(seen_if_range, etag, last_modified, date)):
        first = int(match.group(1))
        if first >= total:
            body = b"range not satisfiable"
            exchange.respond(416, headers + [("content-range", f"bytes */{total}")], body)
            log_entry(key, {"method": exchange.method, "range": seen_range, "if_range": seen_if_range,
                            "accept_encoding": seen_encoding, "status": 416, "sent": len(body),
                            "connection": exchange.connection.number, "request": exchange.request_number})
            return
        start = first // 2 if query.get("wrong-range") == "1" else first
        status = 206
        headers.append(("content-range", f"bytes {start}-{total - 1}/{total}"))
    body = pattern(start, total - start)
    if encoding in ("gzip", "deflate"):
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
        body = compressor.compress(body) + compressor.flush()
        if "coded-cut" in query:
            body = body[:int(query["coded-cut"])]
        headers.append(("content-encoding", encoding))
        if query.get("length") == "1":
            headers.append(("content-length", str(len(body))))
    elif query.get("length") != "0":
        headers.append(("content-length", query.get("claim", str(len(body)))))
    if "label" in query and encoding not in ("gzip", "deflate"):
        headers.append(("content-encoding", query["label"]))
    cut = int(query["cut"]) if "cut" in query else None
    entry = {"method": exchange.method, "range": seen_range, "if_range": seen_if_range,
             "accept_encoding": seen_encoding, "status": status, "sent": 0,
             "connection": exchange.connection.number, "request": exchange.request_number}
    log_entry(key, entry)
    exchange.send_head(status, headers)
    offset = 0
    while offset < len(body):
        piece = body[offset:offset + chunk]
        if cut is not None:
            piece = piece[:max(0, cut - offset)]
            if not piece:
                break
        exchange.write(piece)
        offset += len(piece)
        with STATS.lock:
            entry["sent"] = offset
        if pace and offset < len(body):
            time.sleep(len(piece) / pace)
    if (cut is not None and cut < len(body)) or int(query.get("claim", "0")) > len(body):
        if exchange.protocol == "h2":
            # What was written is still queued for the connection's I/O thread: sent before it closes.
            deadline = time.monotonic() + 5
            with exchange.server.lock:
                while exchange.server.outbound and not exchange.server.closed and time.monotonic() < deadline:
                    exchange.server.lock.wait(0.1)
        raise Dropped()
    exchange.finish()


def route_inflate(exchange, query):
    key = query.get("key")
    wire = exchange.read_all()
    drop_once(exchange, query.get("drop-once"))
    coding = request_header(exchange, "content-encoding")
    length = request_header(exchange, "content-length")
    decoded, error, complete = wire, None, True
    if coding:
        try:
            if coding.lower() not in ("gzip", "deflate"):
                raise zlib.error(f"unknown coding {coding}")
            decompressor = zlib.decompressobj(31 if coding.lower() == "gzip" else 15)
            decoded = decompressor.decompress(wire) + decompressor.flush()
            complete = decompressor.eof and not decompressor.unused_data
        except zlib.error as failure:
            decoded, error, complete = b"", str(failure), False
    report = {"method": exchange.method, "content_encoding": coding,
              "content_length": int(length) if length is not None else None,
              "transfer_encoding": request_header(exchange, "transfer-encoding"), "wire_length": len(wire),
              "decoded_length": len(decoded), "sha256": hashlib.sha256(decoded).hexdigest(),
              "crc32": zlib.crc32(decoded), "complete": complete, "error": error,
              "connection": exchange.connection.number, "request": exchange.request_number}
    log_entry(key, report)
    headers = [("content-type", "application/json")]
    if "to" in query:
        headers.append(("location", query["to"]))
    exchange.respond(int(query.get("status", "200")), headers, json.dumps(report).encode())


def hold_event(key):
    with STATS.lock:
        return HOLDS.setdefault(key, threading.Event())


def route_hold(exchange, query):
    key = query.get("key", "")
    after = int(query.get("after", "0"))
    if exchange.protocol == "http/1.1":
        try:
            exchange.connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        except OSError:
            pass
    digest = hashlib.sha256()
    received = 0
    try:
        while received < after:
            data = exchange.read(min(65536, after - received))
            if not data:
                break
            digest.update(data)
            received += len(data)
        log_entry(key, {"event": "holding", "received": received})
        hold_event(key).wait(30)
        while True:
            data = exchange.read(65536)
            if not data:
                break
            digest.update(data)
            received += len(data)
    except OSError:
        log_entry(key, {"event": "failed", "received": received})
        raise
    if not body_ended_whole(exchange):
        log_entry(key, {"event": "failed", "received": received})
        return
    report = {"received": received, "sha256": digest.hexdigest()}
    log_entry(key, dict(report, event="done"))
    exchange.respond(200, [("content-type", "application/json")], json.dumps(report).encode())


def route_trickle(exchange, query):
    # As /slow-read, with a small receive buffer: the client's bytes sent follow the reads.
    if exchange.protocol == "http/1.1":
        try:
            exchange.connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        except OSError:
            pass
    route_slow_read(exchange, query)


def route_release(exchange, query):
    exchange.read_all()
    hold_event(query.get("key", "")).set()
    exchange.respond(200, [("content-type", "text/plain")], b"released")


def route_steps(exchange, query):
    key = query.get("key", "")
    chunks, size = int(query.get("chunks", "1")), int(query.get("size", "1000"))
    free, gap = int(query.get("free", "1")), int(query.get("gap", "0")) / 1000
    headers = [("content-type", "application/octet-stream")]
    if query.get("length") != "0":
        headers.append(("content-length", str(chunks * size)))
    exchange.send_head(200, headers)
    for index in range(chunks):
        if index >= free and not hold_event(f"{key}-{index + 1}").wait(float(query.get("wait", "30"))):
            raise Dropped()
        if 0 < index < free:
            time.sleep(gap)
        exchange.write(pattern(index * size, size))
    exchange.finish()


def route_log(exchange, query):
    exchange.read_all()
    with STATS.lock:
        entries = json.dumps(KEY_LOGS.get(query.get("key", ""), []))
    exchange.respond(200, [("content-type", "application/json")], entries.encode())


# Parts whose bytes are at most this many come back whole (base64), as does a body of at most this many.
MULTIPART_INLINE = 65536


class MultipartPart:
    """One part as the parser reports it, its bytes hashed as they come (only a small part is kept)."""

    def __init__(self):
        self.headers = []
        self.field = bytearray()
        self.value = bytearray()
        self.size = 0
        self.crc32 = 0
        self.sha256 = hashlib.sha256()
        self.content = bytearray()

    def add(self, data):
        self.size += len(data)
        self.crc32 = zlib.crc32(data, self.crc32)
        self.sha256.update(data)
        if len(self.content) <= MULTIPART_INLINE:
            self.content += data[:MULTIPART_INLINE + 1 - len(self.content)]

    def report(self):
        def text(raw):
            return raw.decode("utf-8", "backslashreplace")

        headers = [[text(field), text(value)] for field, value in self.headers]
        disposition = next((value for field, value in self.headers if field.lower() == b"content-disposition"), None)
        content_type = next((value for field, value in self.headers if field.lower() == b"content-type"), None)
        kind, options = multipart_parser.multipart.parse_options_header(disposition.decode("latin-1")) if disposition \
            else (b"", {})
        return {"headers": headers, "disposition": text(kind),
                "name": text(options[b"name"]) if b"name" in options else None,
                "filename": text(options[b"filename"]) if b"filename" in options else None,
                "content_type": text(content_type) if content_type is not None else None,
                "size": self.size, "crc32": self.crc32, "sha256": self.sha256.hexdigest(),
                "content": base64.b64encode(self.content).decode() if self.size <= MULTIPART_INLINE else None}


def route_multipart(exchange, query):
    key = query.get("key")
    if multipart_parser is None:
        exchange.read_all()
        exchange.respond(500, [("content-type", "text/plain")], b"python-multipart is not installed (make test-deps)")
        return
    content_type = request_header(exchange, "content-type")
    length = request_header(exchange, "content-length")
    kind, options = multipart_parser.multipart.parse_options_header(content_type)
    boundary = options.get(b"boundary")
    parts = []
    state = {"ended": False}
    error = None
    parser = None
    if kind != b"multipart/form-data" or not boundary:
        error = f"not a multipart/form-data Content-Type with a boundary: {content_type!r}"
    else:
        def part_begin():
            parts.append(MultipartPart())

        def header_field(data, start, end):
            parts[-1].field += data[start:end]

        def header_value(data, start, end):
            parts[-1].value += data[start:end]

        def header_end():
            part = parts[-1]
            part.headers.append((bytes(part.field), bytes(part.value)))
            part.field, part.value = bytearray(), bytearray()

        def part_data(data, start, end):
            parts[-1].add(data[start:end])

        def end():
            state["ended"] = True

        callbacks = {"on_part_begin": part_begin, "on_header_field": header_field, "on_header_value": header_value,
                     "on_header_end": header_end, "on_part_data": part_data, "on_end": end}
        try:
            try:
                parser = multipart_parser.MultipartParser(boundary, callbacks, max_header_count=64,
                                                          max_header_size=1 << 20)
            except TypeError:  # releases before 0.0.21 have no header limits
                parser = multipart_parser.MultipartParser(boundary, callbacks)
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
    received = 0
    report_after = int(query.get("report-after", "-1"))
    body_digest = hashlib.sha256()
    body = bytearray()
    try:
        while True:
            data = exchange.read(65536)
            if not data:
                break
            if received < report_after <= received + len(data):
                log_entry(key, {"event": "receiving", "received": received + len(data), "complete": False, "parts": []})
            received += len(data)
            body_digest.update(data)
            if len(body) <= MULTIPART_INLINE:
                body += data[:MULTIPART_INLINE + 1 - len(body)]
            if parser is not None and error is None:
                try:
                    parser.write(data)
                except Exception as failure:
                    error = f"{type(failure).__name__}: {failure}"
    except OSError:
        log_entry(key, {"event": "failed", "received": received, "complete": False,
                        "parts": [part.report() for part in parts]})
        raise
    if not body_ended_whole(exchange):
        log_entry(key, {"event": "failed", "received": received, "complete": False,
                        "parts": [part.report() for part in parts]})
        return
    drop_once(exchange, query.get("drop-once"))
    if parser is not None and error is None:
        try:
            parser.finalize()
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
    complete = error is None and state["ended"]
    if error is None and not complete:
        error = "the body ended before the closing boundary"
    report = {"event": "done", "method": exchange.method, "target": exchange.target, "protocol": exchange.protocol,
              "content_type": content_type, "content_length": int(length) if length is not None else None,
              "transfer_encoding": request_header(exchange, "transfer-encoding"),
              "chunked": bool(getattr(exchange, "chunked", False)),
              "boundary": boundary.decode("latin-1") if boundary else None, "body_length": received,
              "body_sha256": body_digest.hexdigest(),
              "body": base64.b64encode(body).decode() if received <= MULTIPART_INLINE else None,
              "complete": complete, "error": error, "parts": [part.report() for part in parts],
              "connection": exchange.connection.number, "request": exchange.request_number}
    log_entry(key, report)
    headers = [("content-type", "application/json")]
    if "to" in query:
        headers.append(("location", query["to"]))
    status = int(query.get("status", "200")) if complete else 400
    exchange.respond(status, headers, json.dumps(report).encode())


ROUTES = {"/bytes": route_bytes, "/bomb": route_bomb, "/echo": route_echo, "/speak": route_speak,
          "/speak-report": route_speak_report, "/trailers": route_trailers, "/request": route_request,
          "/early": route_early, "/redirect": route_redirect, "/slow-read": route_slow_read, "/stall": route_stall,
          "/stall-body": route_stall_body, "/drip": route_drip, "/stats": route_stats, "/file": route_file,
          "/inflate": route_inflate, "/hold": route_hold, "/release": route_release, "/steps": route_steps,
          "/log": route_log, "/trickle": route_trickle, "/multipart": route_multipart}


# MARK: HTTP/1.1


class Reader:
    """Buffered reads from a socket."""

    def __init__(self, sock, initial=b""):
        self.sock = sock
        self.buffer = bytearray(initial)

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buffer += data
        return True

    def line(self, limit=65536):
        while b"\r\n" not in self.buffer:
            if len(self.buffer) > limit or not self.fill():
                return None
        index = self.buffer.index(b"\r\n")
        line = bytes(self.buffer[:index])
        del self.buffer[:index + 2]
        return line

    def some(self, maximum):
        if not self.buffer and not self.fill():
            return b""
        data = bytes(self.buffer[:maximum])
        del self.buffer[:len(data)]
        return data


class H1Exchange:
    protocol = "http/1.1"

    def __init__(self, connection, reader, method, target, headers, request_number):
        self.connection = connection
        self.reader = reader
        self.method = method
        self.target = target
        parsed = urllib.parse.urlsplit(target)
        self.path = parsed.path
        self.query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        self.headers = headers
        self.request_number = request_number
        self.request_trailers = []
        self.close_after = any(n == "connection" and v.lower() == "close" for n, v in headers)
        length = next((v for n, v in headers if n == "content-length"), None)
        self.chunked = any(n == "transfer-encoding" and "chunked" in v.lower() for n, v in headers)
        self.remaining = int(length) if length and not self.chunked else 0
        self.chunk_left = 0
        self.body_done = not self.chunked and self.remaining == 0
        self.head_sent = False
        self.response_chunked = False
        self.finished = False
        self.continue_sent = False
        self.expects_continue = any(n == "expect" and v.lower() == "100-continue" for n, v in headers)

    def read(self, maximum):
        """Up to `maximum` bytes of the request body; b"" at its end."""
        if self.body_done or maximum <= 0:
            return b""
        if self.expects_continue and not self.continue_sent and not self.head_sent:
            self.continue_sent = True
            self.connection.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not self.chunked:
            data = self.reader.some(min(maximum, self.remaining))
            if not data:
                raise OSError("the client closed the connection mid-body")
            self.remaining -= len(data)
            self.body_done = self.remaining == 0
            return data
        while True:
            if self.chunk_left == 0:
                line = self.reader.line()
                if line is None:
                    raise OSError("the client closed the connection mid-body")
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        trailer = self.reader.line()
                        if trailer is None:
                            # Not the empty line that ends the body: the client closed before it.
                            raise OSError("the client closed the connection mid-body")
                        if not trailer:
                            break
                        name, _, value = trailer.decode("latin-1").partition(":")
                        self.request_trailers.append((name.strip().lower(), value.strip()))
                    self.body_done = True
                    return b""
                self.chunk_left = size
            data = self.reader.some(min(maximum, self.chunk_left))
            if not data:
                raise OSError("the client closed the connection mid-body")
            self.chunk_left -= len(data)
            if self.chunk_left == 0 and self.reader.line() != b"":
                raise OSError("malformed chunk")
            return data

    def read_all(self):
        parts = []
        while True:
            data = self.read(65536)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def send_head(self, status, headers):
        self.head_sent = True
        names = {n.lower() for n, _ in headers}
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{n}: {v}" for n, v in headers]
        if "content-length" not in names and status not in (204, 304) and self.method != "HEAD":
            lines.append("transfer-encoding: chunked")
            self.response_chunked = True
        if self.close_after:
            lines.append("connection: close")
        self.connection.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def write(self, data):
        if not data or self.method == "HEAD":
            return
        if self.response_chunked:
            self.connection.send(b"%x\r\n" % len(data) + bytes(data) + b"\r\n")
        else:
            self.connection.send(data)

    def finish(self, trailers=None):
        if self.finished:
            return
        self.finished = True
        if self.response_chunked:
            tail = b"0\r\n" + b"".join(f"{n}: {v}\r\n".encode("latin-1") for n, v in (trailers or [])) + b"\r\n"
            self.connection.send(tail)

    def respond(self, status, headers, body):
        self.send_head(status, headers + [("content-length", str(len(body)))])
        self.write(body)
        self.finish()

    def after_early_answer(self):
        """Reads and drops the rest of the body for up to 2 s, then closes the connection."""
        self.connection.sock.settimeout(2)
        try:
            deadline = time.monotonic() + 2
            while not self.body_done and time.monotonic() < deadline:
                self.read(65536)
        except OSError:
            pass
        raise Dropped()


def serve_h1(connection, initial):
    reader = Reader(connection.sock, initial)
    number = 0
    while not STOPPING.is_set():
        request_line = reader.line()
        if not request_line:
            return
        parts = request_line.decode("latin-1").split(" ")
        if len(parts) != 3:
            return
        headers = []
        while True:
            line = reader.line()
            if line is None:
                return
            if not line:
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers.append((name.strip().lower(), value.strip()))
        number += 1
        with STATS.lock:
            STATS.requests += 1
        exchange = H1Exchange(connection, reader, parts[0], parts[1], headers, number)
        route(exchange)
        if not exchange.finished:
            exchange.finish()
        if not exchange.body_done:
            exchange.read_all()
        if exchange.close_after:
            return


# MARK: HTTP/2


class H2Stream:
    def __init__(self):
        self.data = queue.Queue()
        self.window_open = threading.Condition()
        self.ended = False
        # The route is over: what arrives for it is dropped and its window given back at once.
        self.discarding = False


class H2Exchange:
    protocol = "h2"

    def __init__(self, server, stream_id, headers, request_number):
        self.server = server
        self.connection = server.connection
        self.stream_id = stream_id
        self.request_number = request_number
        pseudo = {n: v for n, v in headers if n.startswith(":")}
        self.method = pseudo.get(":method", "GET")
        self.target = pseudo.get(":path", "/")
        parsed = urllib.parse.urlsplit(self.target)
        self.path = parsed.path
        self.query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        self.headers = [(n, v) for n, v in headers if not n.startswith(":")]
        self.request_trailers = []
        self.pending = b""
        self.body_done = False
        self.finished = False
        self.head_sent = False

    def read(self, maximum):
        if self.body_done and not self.pending:
            return b""
        if not self.pending:
            stream = self.server.streams[self.stream_id]
            item = stream.data.get()
            if item is None:
                self.body_done = True
                self.request_trailers = getattr(stream, "trailers", [])
                return b""
            self.pending = item
        data = self.pending[:maximum]
        self.pending = self.pending[len(data):]
        self.server.acknowledge(self.stream_id, len(data))
        return data

    def read_all(self):
        parts = []
        while True:
            data = self.read(65536)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def send_head(self, status, headers, end=False):
        self.head_sent = True
        self.server.send_headers(self.stream_id, [(":status", str(status))] + list(headers), end)

    def write(self, data):
        if data:
            self.server.send_data(self.stream_id, bytes(data))

    def finish(self, trailers=None):
        if self.finished:
            return
        self.finished = True
        if trailers:
            self.server.send_headers(self.stream_id, list(trailers), True)
        else:
            self.server.send_data(self.stream_id, b"", end=True)

    def respond(self, status, headers, body):
        self.send_head(status, headers + [("content-length", str(len(body)))], end=not body)
        if body:
            self.server.send_data(self.stream_id, body, end=True)
        self.finished = True

    def after_early_answer(self):
        # RFC 9113 §8.1 lets a server reset the request side with NO_ERROR after a complete answer; libcurl
        # 7.88 then loses the answer when both arrive in one read, so it is done only when asked for.
        if self.query.get("reset") == "later":
            time.sleep(0.2)
        if self.query.get("reset") in ("1", "later"):
            self.server.reset(self.stream_id, h2.errors.ErrorCodes.NO_ERROR)
        self.body_done = True


class H2Server:
    """One HTTP/2 connection. A single thread does all of the socket's I/O (an OpenSSL connection must not
    be read and written from two threads at once): stream threads queue frames in `outbound` and wake it."""

    def __init__(self, connection, initial):
        self.connection = connection
        config = h2.config.H2Configuration(client_side=False, header_encoding="latin-1")
        self.h2 = h2.connection.H2Connection(config=config)
        self.lock = threading.Condition()
        self.streams = {}
        self.requests = 0
        self.initial = initial
        self.closed = False
        self.outbound = bytearray()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)

    def flush(self):
        """Queues what h2 has to send (with the lock held) and wakes the I/O thread."""
        data = self.h2.data_to_send()
        if data and not self.closed:
            if not self.outbound:
                self.connection.stalled_since = time.monotonic()
            self.outbound += data
            # Under the lock, and never once closed: the descriptor's number may already be another
            # connection's socket.
            try:
                os.write(self.wake_write, b"w")
            except BlockingIOError:
                pass

    def run(self):
        with self.lock:
            self.h2.local_settings.update({
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: ARGS.max_concurrent_streams,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: ARGS.initial_window,
            })
            self.h2.initiate_connection()
            self.flush()
        sock = self.connection.sock
        sock.setblocking(False)
        pending = self.initial
        try:
            while not STOPPING.is_set():
                if pending:
                    if not self.receive(pending):
                        break
                    pending = b""
                with self.lock:
                    wants_write = bool(self.outbound)
                readable, writable, _ = select.select([sock, self.wake_read], [sock] if wants_write else [], [], 0.5)
                if self.wake_read in readable:
                    try:
                        os.read(self.wake_read, 4096)
                    except BlockingIOError:
                        pass
                if sock in readable or (hasattr(sock, "pending") and sock.pending()):
                    data = self.read_available(sock)
                    if data is None:
                        break
                    if data and not self.receive(data):
                        break
                if sock in writable:
                    self.write_some(sock)
        except OSError:
            pass
        finally:
            with self.lock:
                self.closed = True
                for stream in self.streams.values():
                    stream.data.put(None)
                self.lock.notify_all()
                os.close(self.wake_read)
                os.close(self.wake_write)

    @staticmethod
    def read_available(sock):
        """What can be read now (b"" when nothing), or None at the end of the connection."""
        chunks = []
        while True:
            try:
                data = sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
            if not data:
                return None if not chunks else b"".join(chunks)
            chunks.append(data)
            if len(chunks) >= 16:
                break
        return b"".join(chunks)

    def receive(self, data):
        with self.lock:
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                with STATS.lock:
                    STATS.protocol_errors.append(str(error))
                self.flush()
                self.write_some(self.connection.sock)
                return False
            for event in events:
                self.handle(event)
            self.flush()
            self.lock.notify_all()
        return True

    def write_some(self, sock):
        with self.lock:
            chunk = bytes(self.outbound[:262144])
        if not chunk:
            return
        try:
            sent = sock.send(chunk)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            sent = 0
        with self.lock:
            if sent > 0:
                del self.outbound[:sent]
                self.connection.written += sent
                self.connection.stalled_since = time.monotonic() if self.outbound else None
            self.lock.notify_all()

    def handle(self, event):
        if isinstance(event, h2.events.RequestReceived):
            self.requests += 1
            with STATS.lock:
                STATS.requests += 1
            self.streams[event.stream_id] = H2Stream()
            exchange = H2Exchange(self, event.stream_id, event.headers, self.requests)
            if event.stream_ended:
                self.streams[event.stream_id].data.put(None)
            threading.Thread(target=self.serve, args=(exchange,), daemon=True).start()
        elif isinstance(event, h2.events.DataReceived):
            stream = self.streams.get(event.stream_id)
            if stream is None or stream.discarding:
                # As real servers do: bytes no route will read still give the connection its window back,
                # or one abandoned upload would starve every later stream on the connection.
                if event.flow_controlled_length:
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                return
            # An empty DATA frame without END_STREAM is legal and carries nothing: an empty item would read
            # as the body's end.
            if stream:
                if event.data:
                    stream.data.put(event.data)
                padding = event.flow_controlled_length - len(event.data)
                if padding:
                    self.h2.acknowledge_received_data(padding, event.stream_id)
            if event.stream_ended and stream:
                stream.data.put(None)
        elif isinstance(event, h2.events.TrailersReceived):
            stream = self.streams.get(event.stream_id)
            if stream:
                stream.trailers = [(n, v) for n, v in event.headers]
            if event.stream_ended and stream:
                stream.data.put(None)
        elif isinstance(event, h2.events.StreamEnded):
            stream = self.streams.get(event.stream_id)
            if stream and not stream.ended:
                stream.ended = True
        elif isinstance(event, h2.events.StreamReset):
            stream = self.streams.get(event.stream_id)
            if stream:
                stream.data.put(None)

    def serve(self, exchange):
        try:
            route(exchange)
            if not exchange.finished:
                exchange.finish()
            self.discard(exchange)
        except Dropped:
            self.connection.close()
        except (OSError, h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError) as error:
            log(f"h2 stream {exchange.stream_id}: {error}")

    def discard(self, exchange):
        """The route has answered: the body bytes it left unread are dropped and their window given back."""
        with self.lock:
            stream = self.streams.get(exchange.stream_id)
            if stream is None:
                return
            stream.discarding = True
            unread = len(exchange.pending)
            exchange.pending = b""
            while True:
                try:
                    item = stream.data.get_nowait()
                except queue.Empty:
                    break
                if item:
                    unread += len(item)
            if unread and not self.closed:
                try:
                    self.h2.acknowledge_received_data(unread, exchange.stream_id)
                    self.flush()
                except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError, OSError):
                    pass

    def acknowledge(self, stream_id, count):
        if count <= 0:
            return
        with self.lock:
            try:
                self.h2.acknowledge_received_data(count, stream_id)
                self.flush()
            except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError, OSError):
                pass

    def send_headers(self, stream_id, headers, end):
        with self.lock:
            self.h2.send_headers(stream_id, headers, end_stream=end)
            self.flush()

    def send_data(self, stream_id, data, end=False):
        view = memoryview(data)
        while True:
            with self.lock:
                try:
                    while not self.closed:
                        window = self.h2.local_flow_control_window(stream_id)
                        # A window, and room in the queue: a client that stops reading stops the writer.
                        if (window > 0 or not len(view)) and len(self.outbound) < 262144:
                            break
                        if window <= 0 and len(view):
                            self.connection.window_waits.setdefault(stream_id, time.monotonic())
                        self.lock.wait(0.5)
                finally:
                    self.connection.window_waits.pop(stream_id, None)
                if self.closed:
                    raise OSError("connection closed")
                size = min(len(view), window, self.h2.max_outbound_frame_size)
                last = size == len(view)
                self.h2.send_data(stream_id, bytes(view[:size]), end_stream=end and last)
                self.flush()
            view = view[size:]
            if last:
                return

    def reset(self, stream_id, code):
        with self.lock:
            try:
                self.h2.reset_stream(stream_id, code)
                self.flush()
            except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
                pass


# MARK: Connections


def serve_connection(raw, context):
    with STATS.lock:
        STATS.connections += 1
        number = STATS.connections
    sock = raw
    if ARGS.sndbuf:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, ARGS.sndbuf)
    try:
        if context:
            sock = context.wrap_socket(raw, server_side=True)
            protocol = sock.selected_alpn_protocol()
            connection = Connection(sock, number)
            if protocol == "h2":
                H2Server(connection, b"").run()
            else:
                serve_h1(connection, b"")
        else:
            initial = b""
            while len(initial) < len(PREFACE) and PREFACE.startswith(initial):
                data = raw.recv(len(PREFACE) - len(initial))
                if not data:
                    return
                initial += data
            connection = Connection(raw, number)
            if initial == PREFACE:
                H2Server(connection, initial).run()
            else:
                serve_h1(connection, initial)
    except Dropped:
        pass
    except (OSError, ssl.SSLError) as error:
        log(f"connection {number}: {error}")
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main():
    global ARGS
    ARGS = parse_arguments()
    context = None
    if ARGS.cert and ARGS.key:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(ARGS.cert, ARGS.key)
        context.set_alpn_protocols(ARGS.alpn or ["h2", "http/1.1"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", ARGS.port))
    listener.listen(1024)
    print(json.dumps({"port": listener.getsockname()[1]}), flush=True)

    def stop(*_):
        STOPPING.set()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # `kill -USR1` prints every thread's stack to stderr: what a stuck server is waiting for.
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    def commands():
        for line in sys.stdin:
            if line.strip() == "stats":
                try:
                    answer = json.dumps(STATS.snapshot())
                except Exception as error:  # an answer must come, or the asker waits for it
                    answer = json.dumps({"error": str(error)})
                print(answer, flush=True)
        stop()

    threading.Thread(target=commands, daemon=True).start()
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve_connection, args=(raw, context), daemon=True).start()


if __name__ == "__main__":
    main()

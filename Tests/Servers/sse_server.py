#!/usr/bin/env python3
"""Curlew test server: scripted server-sent event streams over HTTP/1.1 and HTTP/2 on 127.0.0.1, each
request recorded so tests can check what every reconnect sent.

Started by the tests (Tests/CurlewTestSupport/SSETestServer.swift). It is stream_server.py (imported, not
changed) with one more route and a few more counts: the same command line (--cert/--key/--alpn for TLS,
--max-concurrent-streams for HTTP/2, here advertised in the server's first SETTINGS frame, a stream over
it refused rather than its connection closed), the same `{"port": N}` line on start, the same exit on end
of stdin, SIGTERM or SIGINT, and the same `stats` command on stdin, whose answer here also has:

    "open_connections": connections open now, "peak_open_connections": the most open at once,
    "refused_streams": HTTP/2 streams refused because the client opened more than the limit at once,
    "refused": [{"connection", "stream": its id, "path"}] for each of them,
    "logs": {K: [record, ...]} for every key K of /sse (below), in arrival order.

Route:

    ANY /sse?key=K&plan=P[&anything else]
        P is base64url (padding optional) of a JSON list of attempts; the n-th request with key K (from 1)
        follows attempt min(n, len(P)) - 1, so the last one repeats. Other query parameters are ignored
        (a reconnect request may carry the last event id in its query). The request body is read whole
        first. An attempt is an object:

            "status": S (default 200); 0: no answer at all (HTTP/1.1: the connection is closed; HTTP/2:
                    RST_STREAM INTERNAL_ERROR)
            "type": the Content-Type (default "text/event-stream"; null: none sent)
            "headers": [[name, value], ...] more response fields (e.g. ["retry-after", "1"])
            "body": for a status other than 200: the body (default ""), sent with Content-Length; a 204
                    is a head only. Nothing else of the attempt applies then.
            "steps": what to do after a 200 head, in order, each one of
                "text"                               written as one write (one chunk on HTTP/1.1)
                {"bytes": base64}                    the bytes (any, not only UTF-8) as one write
                {"sleep": MS}                        a pause
                {"repeat": "text", "count": N, "every": MS}
                                                     N writes of text, MS apart (the first after MS)
                {"numbered": "text", "count": N[, "first": F][, "every": MS]}
                                                     N events "id: I\ndata: text\n\n", I from F (default 1),
                                                     one write each, MS apart (default 0: back to back;
                                                     else the first after MS)
                {"gather": G, "count": N[, "timeout": MS]}
                                                     waits until N requests have reached a gather G
                                                     (default timeout 30000; the record says whether
                                                     they all came)
            "end": how the response ends after the steps (default "finish")
                "finish"   the body ends cleanly (HTTP/1.1: the last chunk; the connection stays open)
                "close"    HTTP/1.1: the body ends cleanly, then the connection is closed; HTTP/2: finish
                "cut"      HTTP/1.1: the connection is closed before the last chunk (an incomplete
                           body); HTTP/2: RST_STREAM INTERNAL_ERROR
                "reset"    HTTP/1.1: the connection is reset (RST); HTTP/2: RST_STREAM INTERNAL_ERROR
                "silent"   nothing more is sent until the client goes away (HTTP/1.1: its connection
                           closes; HTTP/2: its stream is reset or its connection closes), at most 60 s,
                           then the body ends cleanly

        Each request is recorded under K: {"attempt": n, "method", "target": the request target as sent,
        "headers": {lowercased name: [values]}, "body": latin-1 text, "connection": its connection's number
        (from 1, in accept order), "request": its number on its connection (from 1), "protocol": "h2" |
        "http/1.1", "at": monotonic seconds when it arrived, "ending": monotonic
        seconds just before its end began (its answer, last write, close or reset: the client cannot see the
        end earlier; for "silent", when the silence began), "ended": monotonic seconds when the attempt
        ended (null until then), "outcome": null until it ends, then "dropped" (status 0), "answered" (a
        status other than 200),
        "finished", "closed", "cut", "reset", "client-gone" (silent, and the client went away),
        "silence-expired", or "write-failed" (a write found the client gone), "gathered": true | false |
        null (no gather step)}.
"""

import base64
import json
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_server as base  # noqa: E402

import h2.errors  # noqa: E402
import h2.events  # noqa: E402
import h2.exceptions  # noqa: E402
import h2.settings  # noqa: E402


class SSEStats(base.Stats):
    """stream_server's counts, with open connections and the /sse records."""

    def __init__(self):
        super().__init__()
        self.open_connections = 0
        self.refused_streams = 0
        self.refused = []
        self.peak_open_connections = 0
        self.attempts = {}
        self.gathers = {}

    def snapshot(self):
        result = super().snapshot()
        with self.lock:
            result["open_connections"] = self.open_connections
            result["peak_open_connections"] = self.peak_open_connections
            result["refused_streams"] = self.refused_streams
            result["refused"] = list(self.refused)
            result["logs"] = json.loads(json.dumps(base.KEY_LOGS))
        return result


STATS = SSEStats()
base.STATS = STATS
original_serve_connection = base.serve_connection


def serve_connection(raw, context):
    """stream_server's connection, counted while it is open."""
    with STATS.lock:
        STATS.open_connections += 1
        STATS.peak_open_connections = max(STATS.peak_open_connections, STATS.open_connections)
    try:
        original_serve_connection(raw, context)
    finally:
        with STATS.lock:
            STATS.open_connections -= 1


base.serve_connection = serve_connection
original_h2_server_init = base.H2Server.__init__


def h2_server_init(self, connection, initial):
    """stream_server's HTTP/2 connection, advertising --max-concurrent-streams and --initial-window in its
    first SETTINGS frame, and refusing the streams a client opens beyond the limit as RFC 9113 §5.1.2 has
    it (a stream error: RST_STREAM REFUSED_STREAM, which clients retry), counted in `refused_streams`.

    (stream_server.py sets them with `local_settings.update`, which h2 holds back until the client
    acknowledges a SETTINGS frame: its first SETTINGS frame, the only one, carries h2's defaults, 100
    streams whatever --max-concurrent-streams says. And h2 itself treats a stream over the limit as an
    error of the whole connection, which the server then closes with every stream on it.)"""
    original_h2_server_init(self, connection, initial)
    conn = self.h2
    send_preamble = conn.initiate_connection

    def initiate_connection():
        conn.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: base.ARGS.max_concurrent_streams,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: base.ARGS.initial_window,
        })
        send_preamble()
        # What the client was told stays; h2 no longer enforces the limit, h2_server_handle does.
        conn.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 2 ** 31 - 1,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: base.ARGS.initial_window,
        })

    conn.initiate_connection = initiate_connection


base.H2Server.__init__ = h2_server_init
original_h2_server_handle = base.H2Server.handle


def open_before(conn, stream_id):
    """The client's streams opened before `stream_id` that are still open (h2 may already hold later
    ones: it parses every frame of a read before the first event is handled)."""
    return sum(1 for number, stream in list(conn.streams.items())
               if number % 2 == 1 and number < stream_id and not stream.closed)


def h2_server_handle(self, event):
    """Refuses a request whose stream exceeds the advertised limit (called with the connection's lock held)."""
    limit = base.ARGS.max_concurrent_streams
    if isinstance(event, h2.events.RequestReceived) and open_before(self.h2, event.stream_id) >= limit:
        path = next((value for name, value in event.headers if name in (":path", b":path")), "")
        with STATS.lock:
            STATS.refused_streams += 1
            STATS.refused.append({"connection": self.connection.number, "stream": event.stream_id,
                                  "path": path.decode("latin-1") if isinstance(path, bytes) else path})
        self.h2.reset_stream(event.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
        return
    original_h2_server_handle(self, event)


base.H2Server.handle = h2_server_handle


class ClientGone(Exception):
    """A write found the client gone."""


def decode_plan(text):
    padded = text + "=" * (-len(text) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8"))


def client_gone(exchange):
    """Whether the client went away: its HTTP/1.1 connection closed, or its HTTP/2 stream or connection ended."""
    if exchange.protocol == "h2":
        server = exchange.server
        with server.lock:
            if server.closed:
                return True
            stream = server.streams.get(exchange.stream_id)
            # The body was read to its end: anything queued after it is a reset (or the connection's end).
            return stream is None or not stream.data.empty()
    sock = exchange.connection.sock
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        if isinstance(sock, ssl.SSLSocket):
            # TLS cannot peek: the client sends nothing more on an event stream's connection, so what is
            # readable is its close_notify, or the end of the connection.
            timeout = sock.gettimeout()
            sock.settimeout(0.5)
            try:
                return sock.recv(1) == b""
            except socket.timeout:
                return False
            finally:
                sock.settimeout(timeout)
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def write(exchange, text):
    write_bytes(exchange, text.encode("utf-8"))


def write_bytes(exchange, data):
    try:
        exchange.write(data)
    except (OSError, h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError) as error:
        raise ClientGone() from error


def gather(step):
    name = step["gather"]
    count = int(step["count"])
    deadline = time.monotonic() + int(step.get("timeout", 30000)) / 1000
    with STATS.lock:
        entry = STATS.gathers.setdefault(name, {"arrived": 0, "condition": threading.Condition(STATS.lock)})
        entry["arrived"] += 1
        entry["condition"].notify_all()
        while entry["arrived"] < count:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            entry["condition"].wait(left)
        return True


def mark_ending(record):
    """The moment the attempt starts to end (before its last write, close or reset): the client cannot see
    the end before it."""
    with STATS.lock:
        if record["ending"] is None:
            record["ending"] = time.monotonic()


def end_record(record, outcome):
    with STATS.lock:
        record["outcome"] = outcome
        record["ended"] = time.monotonic()


def route_sse(exchange, query):
    body = exchange.read_all()
    key = query.get("key", "")
    with STATS.lock:
        number = STATS.attempts.get(key, 0) + 1
        STATS.attempts[key] = number
    headers = {}
    for name, value in exchange.headers:
        headers.setdefault(name, []).append(value)
    record = {"attempt": number, "method": exchange.method, "target": exchange.target, "headers": headers,
              "body": body.decode("latin-1"), "connection": exchange.connection.number,
              "request": exchange.request_number, "protocol": exchange.protocol, "at": time.monotonic(),
              "ending": None, "ended": None, "outcome": None, "gathered": None}
    base.log_entry(key, record)
    try:
        plan = decode_plan(query.get("plan", ""))
        attempt = plan[min(number, len(plan)) - 1]
    except (ValueError, IndexError, TypeError, KeyError) as error:
        exchange.respond(400, [("content-type", "text/plain")], f"bad plan: {error}".encode())
        end_record(record, "answered")
        return
    status = int(attempt.get("status", 200))
    response_headers = [tuple(field) for field in attempt.get("headers", [])]
    content_type = attempt.get("type", "text/event-stream")
    if content_type is not None:
        response_headers.insert(0, ("content-type", content_type))
    if status != 200:
        mark_ending(record)
    if status == 0:
        end_record(record, "dropped")
        if exchange.protocol == "h2":
            exchange.finished = True
            exchange.server.reset(exchange.stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
            return
        raise base.Dropped()
    if status != 200:
        if status == 204:
            if exchange.protocol == "h2":
                exchange.send_head(204, response_headers, end=True)
            else:
                exchange.send_head(204, response_headers)
            exchange.finished = True
        else:
            exchange.respond(status, response_headers, attempt.get("body", "").encode("utf-8"))
        end_record(record, "answered")
        return
    response_headers.append(("cache-control", "no-store"))
    ending = attempt.get("end", "finish")
    try:
        exchange.send_head(200, response_headers)
        for step in attempt.get("steps", []):
            if isinstance(step, str):
                write(exchange, step)
            elif "bytes" in step:
                write_bytes(exchange, base64.b64decode(step["bytes"]))
            elif "sleep" in step:
                time.sleep(int(step["sleep"]) / 1000)
            elif "repeat" in step:
                for _ in range(int(step.get("count", 1))):
                    time.sleep(int(step.get("every", 0)) / 1000)
                    write(exchange, step["repeat"])
            elif "numbered" in step:
                first = int(step.get("first", 1))
                every = int(step.get("every", 0)) / 1000
                for number in range(first, first + int(step.get("count", 1))):
                    if every:
                        time.sleep(every)
                    write(exchange, f"id: {number}\ndata: {step['numbered']}\n\n")
            elif "gather" in step:
                gathered = gather(step)
                with STATS.lock:
                    record["gathered"] = gathered
        mark_ending(record)
        if ending == "silent":
            deadline = time.monotonic() + 60
            while not client_gone(exchange):
                if time.monotonic() > deadline:
                    exchange.finish()
                    end_record(record, "silence-expired")
                    return
                time.sleep(0.02)
            exchange.finished = True
            end_record(record, "client-gone")
            if exchange.protocol != "h2":
                raise base.Dropped()
            return
        if ending in ("cut", "reset"):
            exchange.finished = True
            if exchange.protocol == "h2":
                flush_h2(exchange)
                exchange.server.reset(exchange.stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
                end_record(record, ending)
                return
            end_record(record, ending)
            if ending == "reset":
                reset_h1(exchange)
            raise base.Dropped()
        exchange.finish()
        if ending == "close" and exchange.protocol != "h2":
            end_record(record, "closed")
            raise base.Dropped()
        end_record(record, "finished")
    except ClientGone:
        mark_ending(record)
        exchange.finished = True
        end_record(record, "write-failed")
        if exchange.protocol != "h2":
            raise base.Dropped()


def reset_h1(exchange):
    """Closes the HTTP/1.1 connection with RST, without the FIN a shutdown would send first."""
    sock = exchange.connection.sock
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


def flush_h2(exchange):
    """Waits (up to 5 s) until what the route wrote has left the HTTP/2 connection's queue."""
    server = exchange.server
    deadline = time.monotonic() + 5
    with server.lock:
        while server.outbound and not server.closed and time.monotonic() < deadline:
            server.lock.wait(0.05)


base.ROUTES["/sse"] = route_sse

if __name__ == "__main__":
    base.main()

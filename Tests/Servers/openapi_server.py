#!/usr/bin/env python3
"""Curlew test server for the OpenAPI transport: the operations of Tests/OpenAPIFixture/openapi.yaml over
HTTP/1.1 on 127.0.0.1.

Started by the tests (Tests/CurlewTestSupport/OpenAPITestServer.swift). Standard library only, but for
/form, which parses the body with `python-multipart` (`make test-deps` installs it; without it /form
answers 500).

http.server's ThreadingHTTPServer, one daemon thread per connection, HTTP/1.1 with keep-alive: every
answer has a Content-Length or is chunked. Request bodies may come with Content-Length or chunked (with
or without trailers); `Expect: 100-continue` is answered by http.server. A route that does not read the
body has it read and dropped before it answers, so the connection stays usable.

On start it prints exactly one line, `{"port": N}`, to stdout. It exits when stdin reaches end of file
(so a test process that dies never leaves it running), on SIGTERM, or on SIGINT.

Routes (JSON answers are `application/json` with Content-Length; a bad or missing query parameter is
answered 400 `{"error": why}`, an unknown path 404, another method on a known path 405):

    GET /greet[?name=NAME]
        200 {"message": "Hello, NAME!"} (NAME defaults to `Stranger`); name=bad: 400 {"error": ...}.
    GET /events?count=N
        200 text/event-stream, chunked: N events, i from 1 to N, each one chunk
        `id: i\\nevent: tick\\ndata: {"index": i}\\n\\n`; then the response ends.
    POST /form
        A multipart/form-data body (parts `metadata`, JSON, and `file`, with a filename), parsed in
        constant memory: 200 {"parts": [{"name", "filename" (null when absent), "contentType" (the part's
        Content-Type, null when absent), "size", "sha256" (lowercase hex)}]} in the order received;
        400 {"error": ...} when the body is not a complete form.
    GET|HEAD /download?size=N
        200 application/octet-stream with Content-Length N, then (GET only) N bytes, byte i being
        i % 251, written 64 KiB at a time as fast as the socket takes them: a client that does not read
        stalls the writer, which is what memory-bound tests rely on.
    POST /upload
        Reads the body: 200 {"bytes", "sha256" (lowercase hex), "chunked": it came with
        Transfer-Encoding: chunked}.
    POST /echo
        Full duplex: 200 application/octet-stream, chunked, with the head sent at once, then every piece
        of the request body written back as one chunk as soon as it is read; ends when the body does.
    POST /login
        200 {"ok": true} with three Set-Cookie fields: `session=abc; Path=/; HttpOnly`,
        `theme=dark; Path=/`, `lang=en; Path=/`.
    GET /slow?delay=SECONDS
        Waits SECONDS (a float), then 200 {"message": "slow"}.
    POST /flaky?key=K&failures=F
        Reads the whole body every time. The key's first F requests: 503 with Retry-After: 0 and an
        empty body; later ones: 200 {"attempts": the key's requests so far, this one included, "bytes":
        this request's body bytes}.
    GET /stats?key=K
        200 {"attempts", "lastBodyBytes"}: what /flaky counted for K (zeros for an unknown key).
    GET /openapi.yaml
        The document itself (Tests/OpenAPIFixture/openapi.yaml), `application/yaml`; not an operation of it.
"""

import hashlib
import json
import math
import os
import signal
import socketserver
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# python-multipart (PyPI), for /form only: the server starts without it, and /form then answers 500.
try:
    import python_multipart as multipart_parser  # 0.0.13 and later
except ImportError:  # pragma: no cover
    try:
        import multipart as multipart_parser  # older releases of python-multipart
        import multipart.multipart  # noqa: F401 (absent from the unrelated package of the same name)
    except ImportError:
        multipart_parser = None

CHUNK = 65536
# One period of the /download pattern more than a chunk, so that any chunk is one slice of it.
PATTERN = memoryview(bytes(i % 251 for i in range(CHUNK + 251)))
DOCUMENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "OpenAPIFixture", "openapi.yaml")
COOKIES = ["session=abc; Path=/; HttpOnly", "theme=dark; Path=/", "lang=en; Path=/"]

STOPPING = threading.Event()
FLAKY_LOCK = threading.Lock()
FLAKY = {}  # key: [attempts, last body bytes]


class BadRequest(Exception):
    """A request the server answers 400 (then closes the connection when its body cannot be framed)."""


class Body:
    """The request body, read as the route asks: Content-Length or chunked (trailers read and dropped).

    `read` returns what one read of the socket brings (at most `limit` bytes), so a route can answer each
    piece as it arrives (/echo), and b"" once the body has ended."""

    def __init__(self, rfile, headers):
        self.rfile = rfile
        self.received = 0
        self.done = False
        self.remaining = 0  # of the current chunk, or of the Content-Length
        codings = [coding.strip().lower() for coding in ",".join(headers.get_all("Transfer-Encoding") or []).split(",")
                   if coding.strip()]
        self.chunked = bool(codings)
        if codings and codings != ["chunked"]:
            raise BadRequest(f"unsupported Transfer-Encoding {codings}")
        if not self.chunked:
            lengths = set(value.strip() for value in headers.get_all("Content-Length") or [])
            if len(lengths) > 1 or any(not value.isdigit() for value in lengths):
                raise BadRequest(f"bad Content-Length {sorted(lengths)}")
            self.remaining = int(lengths.pop()) if lengths else 0
            self.done = self.remaining == 0

    def read(self, limit=CHUNK):
        if self.done:
            return b""
        if self.chunked and self.remaining == 0:
            self._next_chunk()
            if self.done:
                return b""
        # read1: what is buffered or one recv, never waiting for `limit` bytes (the echo must not wait).
        data = self.rfile.read1(min(limit, self.remaining))
        if not data:
            raise ConnectionError("the request body ended early")
        self.remaining -= len(data)
        self.received += len(data)
        if self.remaining == 0:
            if self.chunked:
                if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                    raise BadRequest("a chunk did not end with CRLF")
            else:
                self.done = True
        return data

    def _next_chunk(self):
        line = self.rfile.readline(CHUNK)
        if not line:
            raise ConnectionError("the request body ended early")
        size = line.split(b";", 1)[0].strip()
        if not size or any(c not in b"0123456789abcdefABCDEF" for c in size):
            raise BadRequest(f"bad chunk size line {line!r}")
        self.remaining = int(size, 16)
        if self.remaining == 0:
            while True:  # the trailer section, up to its empty line
                line = self.rfile.readline(CHUNK)
                if not line:
                    raise ConnectionError("the request body ended in its trailers")
                if line in (b"\r\n", b"\n"):
                    break
            self.done = True

    def drain(self):
        """Reads the rest of the body; returns its length and SHA-256 (of what this call read)."""
        digest = hashlib.sha256()
        count = 0
        while data := self.read():
            digest.update(data)
            count += len(data)
        return count, digest.hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "CurlewOpenAPITest/1"
    disable_nagle_algorithm = True  # each event or echoed chunk goes out at once

    def version_string(self):
        return self.server_version

    def log_message(self, format, *args):
        pass  # stderr is what a test shows when the server fails: keep it for errors

    def do_GET(self):
        self.dispatch()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def dispatch(self):
        self.responded = False
        target = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(target.query, keep_blank_values=True))
        try:
            self.body = Body(self.rfile, self.headers)
        except BadRequest as error:
            self.close_connection = True  # the body's end is unknown
            self.send_json(400, {"error": str(error)})
            return
        methods = ROUTES.get(target.path)
        route = methods.get(self.command) if methods else None
        try:
            if route is None:
                self.body.drain()
                if methods is None:
                    self.send_json(404, {"error": f"no route {target.path}"})
                else:
                    self.send_json(405, {"error": f"{self.command} {target.path}"},
                                   [("Allow", ", ".join(sorted(methods)))])
                return
            route(self, query)
            self.body.drain()
        except (KeyError, ValueError, BadRequest) as error:
            if self.responded:
                self.close_connection = True  # the answer is half written: the connection cannot go on
                return
            try:
                self.body.drain()
            except BadRequest:
                self.close_connection = True
            message = f"missing query parameter {error}" if isinstance(error, KeyError) else str(error)
            self.send_json(400, {"error": message})
        except ConnectionError:
            self.close_connection = True  # the client went away (or the body broke off)

    def send_response(self, code, message=None):
        self.responded = True
        super().send_response(code, message)

    def send_json(self, status, value, headers=()):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, field in headers:
            self.send_header(name, field)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def start_chunked(self, content_type, headers=()):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        for name, field in headers:
            self.send_header(name, field)
        self.end_headers()  # writes the head now: a streamed answer starts before its body

    def write_chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n" % len(data) + bytes(data) + b"\r\n")

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")


def route_greet(handler, query):
    handler.body.drain()
    name = query.get("name", "Stranger")
    if name == "bad":
        handler.send_json(400, {"error": "the name `bad` is refused"})
    else:
        handler.send_json(200, {"message": f"Hello, {name}!"})


def count_parameter(query, name):
    value = int(query[name])
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def route_events(handler, query):
    count = count_parameter(query, "count")
    handler.body.drain()
    handler.start_chunked("text/event-stream", [("Cache-Control", "no-cache")])
    for index in range(1, count + 1):
        handler.write_chunk(f"id: {index}\nevent: tick\ndata: {json.dumps({'index': index})}\n\n".encode())
    handler.end_chunked()


class FormPart:
    """One part as the parser reports it, hashed as its bytes come."""

    def __init__(self):
        self.headers = {}
        self.field = bytearray()
        self.value = bytearray()
        self.size = 0
        self.sha256 = hashlib.sha256()

    def report(self):
        disposition = self.headers.get("content-disposition")
        options = multipart_parser.multipart.parse_options_header(disposition)[1] if disposition else {}

        def text(key):
            return options[key].decode("utf-8", "backslashreplace") if key in options else None

        content_type = self.headers.get("content-type")
        return {"name": text(b"name") or "", "filename": text(b"filename"),
                "contentType": content_type.decode("latin-1") if content_type is not None else None,
                "size": self.size, "sha256": self.sha256.hexdigest()}


def route_form(handler, query):
    if multipart_parser is None:
        handler.body.drain()
        handler.send_json(500, {"error": "python-multipart is not installed (make test-deps)"})
        return
    kind, options = multipart_parser.multipart.parse_options_header(handler.headers.get("Content-Type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise BadRequest(f"not multipart/form-data with a boundary: {handler.headers.get('Content-Type')!r}")
    parts = []
    state = {"ended": False}

    def part_begin():
        parts.append(FormPart())

    def header_field(data, start, end):
        parts[-1].field += data[start:end]

    def header_value(data, start, end):
        parts[-1].value += data[start:end]

    def header_end():
        part = parts[-1]
        part.headers[bytes(part.field).decode("latin-1").lower()] = bytes(part.value)
        part.field, part.value = bytearray(), bytearray()

    def part_data(data, start, end):
        parts[-1].size += end - start
        parts[-1].sha256.update(data[start:end])

    def ended():
        state["ended"] = True

    parser = multipart_parser.MultipartParser(
        boundary, {"on_part_begin": part_begin, "on_header_field": header_field, "on_header_value": header_value,
                   "on_header_end": header_end, "on_part_data": part_data, "on_end": ended})
    error = None
    while data := handler.body.read():
        if error is None:
            try:
                parser.write(data)
            except Exception as failure:  # the parser's errors: keep reading the body, then answer 400
                error = f"{type(failure).__name__}: {failure}"
    if error is None:
        try:
            parser.finalize()
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
    if error is None and not state["ended"]:
        error = "the body ended before the closing boundary"
    if error is not None:
        raise BadRequest(error)
    handler.send_json(200, {"parts": [part.report() for part in parts]})


def route_download(handler, query):
    size = count_parameter(query, "size")
    handler.body.drain()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/octet-stream")
    handler.send_header("Content-Length", str(size))
    handler.end_headers()
    if handler.command == "HEAD":
        return
    offset = 0
    while offset < size:
        count = min(CHUNK, size - offset)
        start = offset % 251
        handler.wfile.write(PATTERN[start:start + count])  # blocks while the client does not read
        offset += count


def route_upload(handler, query):
    count, digest = handler.body.drain()
    handler.send_json(200, {"bytes": count, "sha256": digest, "chunked": handler.body.chunked})


def route_echo(handler, query):
    handler.start_chunked("application/octet-stream")
    while data := handler.body.read():
        handler.write_chunk(data)
    handler.end_chunked()


def route_login(handler, query):
    handler.body.drain()
    handler.send_json(200, {"ok": True}, [("Set-Cookie", cookie) for cookie in COOKIES])


def route_slow(handler, query):
    delay = float(query["delay"])
    if not math.isfinite(delay) or delay < 0:
        raise ValueError("delay must be a finite number of seconds, not negative")
    handler.body.drain()
    STOPPING.wait(delay)  # a daemon thread: never holds the process up when it exits
    handler.send_json(200, {"message": "slow"})


def route_flaky(handler, query):
    key = query["key"]
    failures = count_parameter(query, "failures")
    count, _ = handler.body.drain()  # whole, every time: a retried body must arrive complete
    with FLAKY_LOCK:
        record = FLAKY.setdefault(key, [0, 0])
        record[0] += 1
        record[1] = count
        attempts = record[0]
    if attempts <= failures:
        handler.send_response(503)
        handler.send_header("Retry-After", "0")
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    else:
        handler.send_json(200, {"attempts": attempts, "bytes": count})


def route_stats(handler, query):
    key = query["key"]
    handler.body.drain()
    with FLAKY_LOCK:
        attempts, last = FLAKY.get(key, [0, 0])
    handler.send_json(200, {"attempts": attempts, "lastBodyBytes": last})


def route_document(handler, query):
    handler.body.drain()
    with open(DOCUMENT, "rb") as file:
        data = file.read()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/yaml")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


ROUTES = {
    "/greet": {"GET": route_greet},
    "/events": {"GET": route_events},
    "/form": {"POST": route_form},
    "/download": {"GET": route_download, "HEAD": route_download},
    "/upload": {"POST": route_upload},
    "/echo": {"POST": route_echo},
    "/login": {"POST": route_login},
    "/slow": {"GET": route_slow},
    "/flaky": {"POST": route_flaky},
    "/stats": {"GET": route_stats},
    "/openapi.yaml": {"GET": route_document},
}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def server_bind(self):
        # HTTPServer's own asks for the host's FQDN, a DNS look-up that can stall start-up.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that went away
        super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(json.dumps({"port": server.server_address[1]}), flush=True)

    def stop(*_):
        STOPPING.set()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch_stdin():
        while sys.stdin.buffer.read1(4096):
            pass
        stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()

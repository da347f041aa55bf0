#!/usr/bin/env python3
"""Curlew benchmark suite: every client on the same workloads against one nginx on loopback.

Runs clients interleaved (A B C D, rotated each round) so drift hits all alike, then writes
BENCHMARKS.md (tables, ratios to the C limit and to async-http-client) and benchmarks.png.

usage: run.py [--smoke] [--rounds N] [--out DIR] [--workloads a,b] [--clients a,b] [--baseline GIT-REF]

The file workloads (download-file-256m[-fsync|-progress], upload-file-256m, gzip-json-64m) run on the
bare engine against the C client (and `gzip -1`), with their files in the run's temp folder; their
targets are checked in a "Targets (issue 15)" table.

The provider's file tasks (issue 16) run on the provider (`curlew`): multipart-upload-1g sends a 1 GiB
sparse file (`truncate -s 1G` in the run's temp folder, 64 MiB in smoke runs) as one multipart/form-data
file part (`.uploadMultipart`) to nginx, which discards it, against the curl tool's
`curl -s -o /dev/null -F file=@FILE;type=application/octet-stream URL` (`curl-F`, run and timed by this
script, its peak RSS read from /proc); download-destination-256m downloads the 256 MiB file through a
target's `.downloadDestination` closure against the C client writing a file as in download-file-256m.
Their targets (rate against the reference, the provider's peak RSS over its idle RSS) are checked in a
"Targets (issue 16)" table.

Server-sent events (issue 17) run on the engine's `CurlSession.events(for:)` (`curlew-engine`, the
bench-sse binary) and on a C libcurl client parsing the stream in its write callback (`c-libcurl`,
c-client/sse.c): sse-10k-h1 and sse-10k-h2 open 10,000 event streams at once on one session (1,000 in
smoke runs) against nginx pacing a pre-generated 60-event file (5 in smoke runs) at one 100-byte event per
second with `limit_rate`, over HTTP/1.1 and over HTTP/2 (TLS, `http2_max_concurrent_streams` SSE_H2_STREAMS);
each stream must deliver every event, ids 1…60 in order. They run once (in the first round) whatever
--rounds says. sse-parse-rate reads one 200 MiB stream of 100–200-byte data lines (20 MiB in smoke runs) at
full speed. Their figures (events per stream, RSS per open stream, loop CPU per event, connections,
events/s and CPU per event) are checked in a "Targets (issue 17)" table.

The generated OpenAPI client (issue 31): the client swift-openapi-generator made from
Tests/OpenAPIFixture/openapi.yaml (Curlew's OpenAPIFixture product), in the bench-openapi binary, on Curlew's
`CurlewTransport` (`openapi-curlew`) and on swift-openapi-async-http-client's `AsyncHTTPClientTransport`
(`openapi-ahc`), interleaved: openapi-get-1 and openapi-get-64 call `getGreeting` (nginx's `/greet`, a fixed
JSON message) at small-get-1's and small-get-64's concurrency and counts; openapi-download-256m calls
`download` (nginx's `/download`: the 256 MiB file `/big` serves) and reads the `HTTPBody` chunk by chunk,
never collecting it. Only these two clients run them, and they run nothing else; a "Generated OpenAPI
client (issue 31)" section puts the transports side by side. Not in smoke runs (bench-openapi needs
async-http-client, which the smoke build leaves out).

Instructions per request (callgrind, the difference of runs at 4,000 and 12,000 requests) are counted on
small-get-1, json-16, post-4k and https-get-64; on small-get-1 also for `curlew-header` (the provider sending
the `Authorization` line that `curlew-chain`'s authentication middleware adds, from the target's headers),
so the chain's own cost is the difference between the two (issue 32: within 5%). Futex calls, all system
calls (strace -f -c) and context switches (getrusage, the clients' `csw` figure) per request are counted
the same way on small-get-1 and small-get-64 for Curlew, the C client and async-http-client.

--baseline builds Curlew's benchmark client from another commit too and runs it as `curlew@REF` and
`curlew-engine@REF` beside the current tree's, interleaved, on the buffered and streamed exchanges
(`BASELINE_WORKLOADS`), with callgrind on every instruction workload (the engine at 1 in flight only):
before/after figures from one run, in the report of a full run.
"""
import argparse, json, os, platform, random, resource, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = free_port()
TLS_PORT = free_port()
H2_PORT = free_port()
STREAM_PORT = None  # stream_server.py's, once started
SSE_H2_PORT = free_port()
OPENAPI_GREETING = '{"message":"Hello, Stranger!"}'
SMALL = '{"id":1,"name":"curlew","tags":["fast","safe"],"active":true,"score":99.5,"note":"small body for benches"}'
INSTRUCTION_WORKLOADS = ["small-get-1", "json-16", "post-4k", "https-get-64"]
# Each instruction workload's full request count (callgrind runs it at 4,000 and 12,000 requests).
FULL_REQUESTS = {"small-get-1": 20000, "json-16": 40000, "post-4k": 40000, "https-get-64": 100000, "small-get-64": 100000}
# Futex calls, all system calls and context switches per request (strace, `getrusage`): the client's own
# threads only, the difference of runs at two counts.
SYSCALL_WORKLOADS = ["small-get-1", "small-get-64"]
WORKLOADS = ["small-get-1", "small-get-64", "json-16", "json-16-decoded", "post-4k", "download-256m", "concurrent-10k", "queued-10k",
             "https-get-1", "https-get-64", "tls-new-conn", "tls-new-conn-noresume", "h2-get-64", "h2-500",
             "stream-download-256m", "stream-upload-256m", "h2-upload-slow-known", "h2-upload-slow-unknown",
             "download-file-256m", "download-file-256m-fsync", "download-file-256m-progress", "upload-file-256m", "gzip-json-64m",
             "multipart-upload-1g", "download-destination-256m", "sse-10k-h1", "sse-10k-h2", "sse-parse-rate",
             "openapi-get-1", "openapi-get-64", "openapi-download-256m"]
H2_WORKLOADS = {"h2-get-64", "h2-500"}
# The workloads a baseline build (`--baseline`) runs beside the current one: the buffered and streamed
# exchanges every Curlew client since issue 13 knows (later workloads need the current client's code).
BASELINE_WORKLOADS = {"small-get-1", "small-get-64", "json-16", "json-16-decoded", "post-4k", "download-256m",
                      "concurrent-10k", "queued-10k", "https-get-1", "https-get-64", "tls-new-conn",
                      "tls-new-conn-noresume", "h2-get-64", "h2-500", "stream-download-256m", "stream-upload-256m"}
# Against Tests/Servers/stream_server.py over TLS (a server that reads request bodies at a set pace).
STREAM_WORKLOADS = {"h2-upload-slow-known", "h2-upload-slow-unknown"}
# Streamed workloads the peers sit out (their streaming APIs are not what this suite compares).
STREAMING_ONLY = {"stream-download-256m", "stream-upload-256m"} | STREAM_WORKLOADS
STREAMING_CLIENTS = {"curlew", "curlew-engine", "c-libcurl"}
# The provider with a retry and an authentication middleware installed: what the chain costs per
# request, on the small GETs only (elsewhere it would repeat the provider's figures).
CHAIN_CLIENT = "curlew-chain"
CHAIN_WORKLOADS = {"small-get-1", "small-get-64"}
# The provider sending the `Authorization` line the chain's authentication middleware adds, from the
# target's headers: the chain's cost is its difference to this client (issue 32: within 5%).
HEADER_CLIENT = "curlew-header"
# The provider with metrics recorded into the cheapest backend (one atomic add per record): what
# telemetry costs per request, on the same small GETs.
METRICS_CLIENT = "curlew-metrics"
TLS_WORKLOADS = {"https-get-1", "https-get-64", "tls-new-conn", "tls-new-conn-noresume"} | H2_WORKLOADS | STREAM_WORKLOADS
# URLSession on Linux cannot trust a custom CA, so it sits the HTTPS workloads out.
NO_TLS_CLIENTS = {"urlsession"}
# Files, request compression and progress (issue 15): the engine's APIs (`CurlSession.download`,
# `downloadWithProgress`, `RequestBody.file`, `TransferOptions.requestCompression`), so the bare engine
# runs them against the C client, or against `gzip -1` (GZIP_CLIENT, run by this script) for the
# compressed upload. Each workload names the clients that run it.
GZIP_CLIENT = "gzip-1"
# Multipart upload and downloads through the provider (issue 16): the provider's file tasks
# (`.uploadMultipart`, `.downloadDestination`), so the provider (`curlew`) runs them: the multipart upload
# against the curl command-line tool's `-F` (CURL_FORM_CLIENT, run by this script), the download against
# the C client writing a file as in download-file-256m.
CURL_FORM_CLIENT = "curl-F"
FILE_WORKLOADS = {
    "download-file-256m": {"curlew-engine", "c-libcurl"},
    "download-file-256m-fsync": {"curlew-engine", "c-libcurl"},
    # Compared with download-file-256m's curlew-engine (progress off): the cost of observing progress.
    "download-file-256m-progress": {"curlew-engine"},
    "upload-file-256m": {"curlew-engine", "c-libcurl"},
    # c-libcurl: libcurl with zlib level 1 (gzip wrapper) in its READFUNCTION, for reference.
    "gzip-json-64m": {"curlew-engine", "c-libcurl", GZIP_CLIENT},
    "multipart-upload-1g": {"curlew", CURL_FORM_CLIENT},
    "download-destination-256m": {"curlew", "c-libcurl"},
}
# Clients that are commands run and timed by this script, not benchmark binaries.
COMMAND_CLIENTS = {GZIP_CLIENT, CURL_FORM_CLIENT}
# Clients that run only the event-stream workloads (a provider's `events(for:)` in bench-sse).
SSE_ONLY_CLIENTS = {"curlew-provider"}
# What a workload's "× C limit" column divides by, when not the C client.
REFERENCE = {"gzip-json-64m": GZIP_CLIENT, "multipart-upload-1g": CURL_FORM_CLIENT}
# `make bench-smoke` runs the plain file download and upload (one 256 MiB request each: about a second
# together, with the upload file made first) and leaves out the synced download (the disk's speed), the
# progress variant and the compressed upload (the JSON document takes a second to make); name them with
# --workloads to smoke them. The provider's download through `.downloadDestination` (one 256 MiB request
# per client) and the multipart upload (a 64 MiB file in smoke runs) stay in: a few tenths of a second.
NOT_IN_SMOKE = {"download-file-256m-fsync", "download-file-256m-progress", "gzip-json-64m"}
# The generated OpenAPI client (issue 31), bench-openapi's workloads, run by its two clients only (and those
# run nothing else): the client on Curlew's `CurlewTransport` and on `AsyncHTTPClientTransport`. Reported in
# a section of their own, not in the requests table or the chart. bench-openapi links async-http-client,
# which the smoke build leaves out: not in smoke runs.
OPENAPI_WORKLOADS = ["openapi-get-1", "openapi-get-64", "openapi-download-256m"]
OPENAPI_CLIENTS = {"openapi-curlew": "curlew", "openapi-ahc": "ahc"}
NOT_IN_SMOKE |= set(OPENAPI_WORKLOADS)
# Server-sent events (issue 17): the engine's `CurlSession.events(for:)` and a provider's `events(for:)` (bench-sse) and the C client
# parsing in its write callback (c-client/sse.c). Each workload names the clients that run it; their
# figures are their own (events, not requests), shown in the issue 17 table, not the requests table.
SSE_WORKLOADS = {
    "sse-10k-h1": {"curlew-engine", "curlew-provider", "c-libcurl"},
    "sse-10k-h2": {"curlew-engine", "curlew-provider", "c-libcurl"},
    "sse-parse-rate": {"curlew-engine", "c-libcurl"},
}
# The paced workloads take a minute each: one run (the first round), and in smoke runs Curlew only.
SSE_ONCE = {"sse-10k-h1", "sse-10k-h2"}
SSE_SMOKE_CLIENTS = {"sse-10k-h1": {"curlew-engine"}, "sse-10k-h2": {"curlew-engine"}}
SSE_STREAMS, SSE_SMOKE_STREAMS = 10_000, 1_000
SSE_EVENTS, SSE_SMOKE_EVENTS = 60, 5
# Every paced event is exactly this long, and nginx sends this many bytes per second per stream: one event
# a second. Over HTTP/2 nginx counts each DATA frame's 9-byte header against `limit_rate` too (measured:
# with 100, every tenth second carried no event), hence 109 there.
SSE_EVENT_BYTES = 100
SSE_H2_RATE = SSE_EVENT_BYTES + 9
# nginx's own default, stated: the engine infers it and opens ⌈10,000 / 128⌉ = 79 connections.
SSE_H2_STREAMS = 128
SSE_PARSE_SIZE, SSE_PARSE_SMOKE_SIZE = 200 << 20, 20 << 20
# Filled by make_sse_files: the parse file's events and data bytes (what both clients must count).
SSE_PARSE_EXPECTED = {}
# Filled by build: each SSE client's binary.
SSE_COMMANDS = {}
JSON_SIZE = 64 << 20
UPLOAD_SIZE = 256 << 20
MULTIPART_SIZE = 1 << 30
# Smoke runs send a 64 MiB file instead (the clients take the length from the file): they check that
# the path works, in a tenth of a second, not its figures.
MULTIPART_SMOKE_SIZE = 64 << 20
MULTIPART_FILE = "multipart-1g.bin"


def users_json():
    users = [{"id": i, "login": f"user{i:03d}", "name": f"User Number {i}", "email": f"user{i}@example.com",
              "admin": i % 7 == 0, "score": round(i * 1.25, 2), "tags": ["a", "b"] if i % 2 else ["c"]} for i in range(121)]
    return json.dumps(users, separators=(",", ":"))


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo "
         "sierra tango uniform victor whiskey xray yankee zulu network request response session stream buffer socket "
         "header status client server cache proxy route token refresh retry timeout connect handshake certificate "
         "upload download progress transfer compress gzip deflate encode decode payload record account customer order "
         "invoice product price amount currency shipping address street city country region postal phone email "
         "message comment review rating title summary description created updated deleted active pending closed "
         "open archived draft published the a of and to in is it for on with as at by from this that be are was").split()
CITIES = ["Amsterdam", "Berlin", "Chicago", "Dublin", "Edinburgh", "Frankfurt", "Geneva", "Helsinki", "Istanbul", "Jakarta",
          "Kyoto", "Lisbon", "Madrid", "Nairobi", "Oslo", "Prague"]


def make_json_file(path, size=JSON_SIZE):
    """A JSON document of exactly `size` bytes, like an API's export: an array of customer records (URLs
    with the id, names, emails, dates, an address, tags, a sentence), trailing spaces to fill the size.
    `gzip -1` makes it about 6x smaller. Built from 4,096 record bodies, so it takes a second."""
    rng = random.Random(15)
    pool = []
    for _ in range(4096):
        first, last = rng.choice(WORDS).title(), rng.choice(WORDS).title()
        record = {
            "name": f"{first} {last}", "email": f"{first.lower()}.{last.lower()}@example.com",
            "active": rng.random() < 0.8, "status": rng.choice(["active", "pending", "closed", "archived"]),
            "score": rng.randrange(0, 1000) / 10, "balance": rng.randrange(0, 100000) / 100,
            "created": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z",
            "address": {"street": f"{rng.randrange(1, 200)} {rng.choice(WORDS).title()} Street", "city": rng.choice(CITIES), "country": "NL"},
            "tags": rng.sample(WORDS[:24], rng.randrange(1, 4)),
            "note": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12))),
        }
        pool.append(json.dumps(record, separators=(",", ":"))[1:])
    parts, written, i = ["["], 1, 0
    while True:
        piece = ("" if i == 0 else ",") + (
            f'{{"id":{i},"url":"https://api.example.com/v1/customers/{i}","orders_url":"https://api.example.com/v1/customers/{i}/orders",'
            f'"avatar_url":"https://cdn.example.com/avatars/{i}.png","type":"Customer","verified":false,') + pool[rng.randrange(len(pool))]
        if written + len(piece) + 1 > size:
            break
        parts.append(piece)
        written += len(piece)
        i += 1
    parts.append("]" + " " * (size - written - 1))
    with open(path, "w") as f:
        f.write("".join(parts))


def make_files(work, workloads, env, smoke=False):
    """The file workloads' files, on the temp dir's file system: the 256 MiB upload (written, so it is in
    the page cache as a file one just made would be), the 64 MiB JSON document, the 1 GiB multipart
    upload (sparse: `truncate -s 1G`, taking no disk; read once, so its zeroed pages are in the page cache
    before the first client sends it, not made while it does), the downloads' folder."""
    downloads = os.path.join(work, "downloads")
    os.makedirs(downloads, exist_ok=True)
    env["BENCH_FILE_DIR"] = downloads
    if "upload-file-256m" in workloads:
        path = os.path.join(work, "upload-256m.bin")
        block = random.Random(15).randbytes(1 << 20)
        with open(path, "wb") as f:
            for _ in range(UPLOAD_SIZE >> 20):
                f.write(block)
        env["BENCH_UPLOAD_FILE"] = path
    if "gzip-json-64m" in workloads:
        path = os.path.join(work, "customers.json")
        make_json_file(path)
        env["BENCH_JSON_FILE"] = path
    if "multipart-upload-1g" in workloads:
        path = os.path.join(work, MULTIPART_FILE)
        with open(path, "wb") as f:
            f.truncate(MULTIPART_SMOKE_SIZE if smoke else MULTIPART_SIZE)
        # The first read of a hole zero-fills page-cache pages (about 1.5 s for 1 GiB here, 3× a warm send).
        with open(path, "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass
        env["BENCH_MULTIPART_FILE"] = path
    # Written back now, not during the first round's downloads.
    os.sync()
    return downloads


def remove_files(work):
    for name in ("upload-256m.bin", "customers.json", MULTIPART_FILE):
        try:
            os.unlink(os.path.join(work, name))
        except OSError:
            pass
    shutil.rmtree(os.path.join(work, "downloads"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, "sse"), ignore_errors=True)


def paced_event(number):
    """Event `number` of the paced file: `id: N`, one data line, exactly SSE_EVENT_BYTES long."""
    head = f"id: {number}\ndata: "
    body = f'{{"seq":{number},"pad":"'
    fill = SSE_EVENT_BYTES - len(head) - len(body) - len('"}') - 2
    event = head + body + "x" * fill + '"}\n\n'
    assert len(event) == SSE_EVENT_BYTES
    return event


def make_sse_files(work, workloads, smoke):
    """The event-stream files nginx serves from `{work}/sse/`: paced.sse (SSE_EVENTS events of
    SSE_EVENT_BYTES, ids 1…N, paced by nginx) and parse.sse (the parse-rate stream). parse.sse is an
    LLM-like stream of 100–200-byte data lines: mostly one `data:` line per event, every 8th event two
    (joined with LF), every 5th with an `event:` type, every 10th with an `id:`, a `: keep-alive` comment
    every 50 events; LF line ends. Built from 4,096 pre-made JSON payloads, so it takes a second or two."""
    folder = os.path.join(work, "sse")
    os.makedirs(folder, exist_ok=True)
    events = SSE_SMOKE_EVENTS if smoke else SSE_EVENTS
    with open(os.path.join(folder, "paced.sse"), "w") as f:
        f.write("".join(paced_event(n) for n in range(1, events + 1)))
    if "sse-parse-rate" not in workloads:
        return
    size = SSE_PARSE_SMOKE_SIZE if smoke else SSE_PARSE_SIZE
    rng = random.Random(17)
    pool = []
    for i in range(4096):
        length = rng.randrange(100, 201)
        text = " ".join(rng.choice(WORDS) for _ in range(40))
        line = f'{{"id":"chatcmpl-{i:05d}","object":"chat.completion.chunk","delta":{{"content":"{text}'
        pool.append(line[:length - 3] + '"}}')
    parts, written, count, data_bytes, n = [], 0, 0, 0, 0
    while True:
        n += 1
        lines = [pool[rng.randrange(4096)]] + ([pool[rng.randrange(4096)]] if n % 8 == 0 else [])
        event = (": keep-alive\n" if n % 50 == 0 else "") + ("event: delta\n" if n % 5 == 0 else "") + \
            (f"id: {n}\n" if n % 10 == 0 else "") + "".join(f"data: {line}\n" for line in lines) + "\n"
        if written + len(event) > size:
            break
        parts.append(event)
        written += len(event)
        count += 1
        data_bytes += sum(len(line) for line in lines) + len(lines) - 1
    with open(os.path.join(folder, "parse.sse"), "w") as f:
        f.write("".join(parts))
    SSE_PARSE_EXPECTED.update(events=count, data_bytes=data_bytes, bytes=written, file=os.path.join(folder, "parse.sse"))


def sse_header_length(port):
    """The length of nginx's response head for paced.sse (HTTP/1.1), read from the unpaced location: the
    paced location lets exactly that many bytes through before pacing (`limit_rate_after`), so the first
    event goes out with the head and each next one a second later."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(b"GET /sse/full/paced.sse HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                raise RuntimeError("nginx closed before the end of the head")
            received += chunk
    return received.index(b"\r\n\r\n") + 4


def pace_sse(work):
    """Sets the HTTP/1.1 paced location's `limit_rate_after` to nginx's head length and reloads nginx;
    checks that the head and the first event then arrive at once and the second a second later."""
    path = os.path.join(work, "nginx.conf")
    head = sse_header_length(PORT)
    with open(path) as f:
        conf = f.read()
    with open(path, "w") as f:
        f.write(conf.replace("limit_rate_after 0; # h1-paced", f"limit_rate_after {head}; # h1-paced"))
    with open(os.path.join(work, "nginx.pid")) as f:
        master = f.read().strip()

    def workers():
        return set(subprocess.run(["pgrep", "-P", master], capture_output=True, text=True).stdout.split())

    old = workers()
    subprocess.run(["nginx", "-c", path, "-p", work, "-s", "reload"], check=True)
    # The reload is done when the old worker has gone and a new one runs.
    for _ in range(100):
        time.sleep(0.1)
        now = workers()
        if now and not now & old:
            break
    with socket.create_connection(("127.0.0.1", PORT)) as connection:
        began = time.monotonic()
        connection.sendall(b"GET /sse/paced/paced.sse HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        received, arrivals = b"", []
        while len(arrivals) < 2:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
            while len(received) >= head + SSE_EVENT_BYTES * (len(arrivals) + 1):
                arrivals.append(time.monotonic() - began)
    if len(arrivals) < 2:
        raise RuntimeError(f"nginx sent fewer than two events of paced.sse: events at {arrivals}")
    if arrivals[0] > 0.5 or not 0.8 < arrivals[1] - arrivals[0] < 1.2:
        # A loaded machine can delay a probe; the workloads still check every event.
        print(f"warning: nginx's pacing of paced.sse looks off (first two events at {arrivals[0]:.2f} s and {arrivals[1]:.2f} s)")
    return head


def sse_command(client, workload, smoke, env):
    """The arguments of an SSE client's run: the paced workloads' URL, stream count, events per stream and
    (HTTP/2) the CA file; the parse rate's URL and what the file holds."""
    if workload == "sse-parse-rate":
        return [SSE_COMMANDS[client], "parse", f"http://127.0.0.1:{PORT}/sse/full/parse.sse",
                str(SSE_PARSE_EXPECTED["events"]), str(SSE_PARSE_EXPECTED["data_bytes"]), SSE_PARSE_EXPECTED["file"]]
    count, events = (SSE_SMOKE_STREAMS, SSE_SMOKE_EVENTS) if smoke else (SSE_STREAMS, SSE_EVENTS)
    if workload == "sse-10k-h2":
        return [SSE_COMMANDS[client], "streams", f"https://127.0.0.1:{SSE_H2_PORT}/sse/paced/paced.sse", str(count), str(events),
                env["BENCH_CA_FILE"]]
    return [SSE_COMMANDS[client], "streams", f"http://127.0.0.1:{PORT}/sse/paced/paced.sse", str(count), str(events)]


def sse_figures(client, workload, smoke, env, out):
    """Runs one SSE client; its JSON figures, with the connections nginx accepted meanwhile (also appended
    to `{out}/sse-results.jsonl`, with every figure the client reported)."""
    before = accepts()
    try:
        # The provider's streams run the same binary through a provider's `events(for:)`.
        run_env = dict(env, BENCH_SSE_CLIENT="provider") if client == "curlew-provider" else env
        result = subprocess.run(sse_command(client, workload, smoke, run_env), capture_output=True, text=True, env=run_env,
                                timeout=600)
    except subprocess.TimeoutExpired:
        return {"valid": False, "first_error": "timed out after 600 s"}
    line = next((l for l in result.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        return {"valid": False, "first_error": (result.stderr or "no output").strip()[-300:]}
    figures = json.loads(line)
    figures["connections"] = accepts() - 1 - before
    figures["valid"] = result.returncode == 0 and figures.get("valid", False)
    with open(os.path.join(out, "sse-results.jsonl"), "a") as f:
        f.write(json.dumps(dict(figures, workload=workload, date=time.strftime("%Y-%m-%d %H:%M:%S"))) + "\n")
    return figures


def gzip_figures(workload, scale, env):
    """`gzip -1 -c FILE > /dev/null`, timed, as many times as the clients send the file: what the
    compressed upload's input rate is held to (its figures shaped like a client's)."""
    path = env["BENCH_JSON_FILE"]
    return command_figures(GZIP_CLIENT, workload, ["gzip", "-1", "-c", path], max(1, int(4 * scale)), os.path.getsize(path), env)


def curl_form_figures(workload, base, env):
    """`curl -s -o /dev/null -F file=@FILE;type=application/octet-stream URL`, timed, once (as the
    provider sends the file): what the multipart upload is held to. `-w` prints the status, checked."""
    path = env["BENCH_MULTIPART_FILE"]
    command = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", f"file=@{path};type=application/octet-stream",
               f"{base}/upload"]
    return command_figures(CURL_FORM_CLIENT, workload, command, 1, os.path.getsize(path), env, expect_output="200")


def command_figures(client, workload, command, requests, size, env, expect_output=None):
    """Runs `command` `requests` times one after the other, timed, each moving `size` bytes; its figures
    shaped like a client's (wall time per run as the latency, CPU from wait4, peak RSS from /proc). With
    `expect_output`, the command's standard output must be that."""
    latencies, cpu, peaks = [], 0.0, [0]
    start = time.monotonic()
    for _ in range(requests):
        began = time.monotonic()
        process = subprocess.Popen(command, stdout=subprocess.PIPE if expect_output is not None else subprocess.DEVNULL, env=env)
        # The command's own peak RSS, read from /proc while it runs (wait4's ru_maxrss would count this
        # script's, which the child had before its exec).
        done = threading.Event()
        watcher = threading.Thread(target=watch_peak_rss, args=(process.pid, done, peaks, os.path.basename(command[0])))
        watcher.start()
        _, status, usage = os.wait4(process.pid, 0)
        latencies.append(time.monotonic() - began)
        done.set()
        watcher.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
        output = process.stdout.read().decode(errors="replace").strip() if process.stdout else None
        if process.stdout:
            process.stdout.close()
        if process.returncode != 0:
            return {"valid": False, "first_error": f"{command[0]} exited with {process.returncode}"}
        if expect_output is not None and output != expect_output:
            return {"valid": False, "first_error": f"{command[0]} printed {output!r}, expected {expect_output!r}"}
    peak = max(peaks)
    seconds = time.monotonic() - start
    latencies.sort()
    return {"client": client, "workload": workload, "requests": requests, "errors": 0, "seconds": seconds,
            "rps": requests / seconds, "mibps": requests * size / seconds / 1048576,
            "p50_us": latencies[len(latencies) // 2] * 1e6, "p99_us": latencies[int(len(latencies) * 0.99)] * 1e6,
            "cpu_us_per_request": cpu * 1e6 / requests, "cpu_percent": cpu / seconds * 100, "peak_rss_kib": peak,
            "connections": 0, "valid": True}


def watch_peak_rss(pid, done, peaks, name):
    """Appends the highest VmHWM of process `pid` seen until `done` is set or the process is gone."""
    highest = 0
    while not done.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                status = f.read()
        except OSError:
            break
        # Only once it runs the command `name` (before its exec the child shares this script's memory);
        # a zombie has no VmHWM line any more.
        if status.startswith(f"Name:\t{name[:15]}\n"):
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    highest = max(highest, int(line.split()[1]))
        done.wait(0.01)
    peaks.append(highest)


def runs_workload(client, workload):
    """Whether `client` runs `workload` (the peers, the chain client and baselines sit some out)."""
    if workload in SSE_WORKLOADS:
        return client in SSE_WORKLOADS[workload]
    if workload in OPENAPI_WORKLOADS or client in OPENAPI_CLIENTS:
        return workload in OPENAPI_WORKLOADS and client in OPENAPI_CLIENTS
    if client in SSE_ONLY_CLIENTS:
        return False
    if client in COMMAND_CLIENTS or workload in FILE_WORKLOADS:
        return client in FILE_WORKLOADS.get(workload, ())
    if client == "c-libcurl" and workload == "json-16-decoded":
        return False  # the C limit has no JSON decoder
    if workload in TLS_WORKLOADS and client in NO_TLS_CLIENTS:
        return False
    # The peers sit them out; a baseline runs them as the client it was built from (`curlew@REF`).
    if workload in STREAMING_ONLY and client.split("@")[0] not in STREAMING_CLIENTS:
        return False
    if client in (CHAIN_CLIENT, HEADER_CLIENT, METRICS_CLIENT) and workload not in CHAIN_WORKLOADS:
        return False
    # A baseline runs what the current build runs, but for workloads added after it (its binary does not
    # know them: see `BASELINE_WORKLOADS`).
    if "@" in client and workload not in BASELINE_WORKLOADS:
        return False
    return True


def make_certificates(work):
    """Test-time certificates (never committed): the CA every client trusts and nginx's leaf."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "Tests", "Servers", "tls_fixtures.py"), os.path.join(work, "tls")],
                         capture_output=True, text=True, check=True)
    files = json.loads(out.stdout)["files"]
    return files["ca"], files["leaf"], files["leaf.key"]


def start_nginx(work):
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    with open(os.path.join(work, "users.json"), "w") as f:
        f.write(users_json())
    with open(os.path.join(work, "big"), "wb") as f:
        f.truncate(256 * 1024 * 1024)
    # Read once, as the multipart file is: the first read of a hole zero-fills page-cache pages, which
    # made whichever client ran first in round 1 of the 256 MiB downloads about half as fast.
    with open(os.path.join(work, "big"), "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
    os.chmod(work, 0o755)
    ca, cert, key = make_certificates(work)
    conf = f"""
worker_processes 1;
worker_rlimit_nofile 65536;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
events {{ worker_connections 20480; }}
http {{
  access_log off;
  sendfile on;
  client_body_temp_path {work}/tmp/body; proxy_temp_path {work}/tmp/proxy; fastcgi_temp_path {work}/tmp/fcgi;
  uwsgi_temp_path {work}/tmp/uwsgi; scgi_temp_path {work}/tmp/scgi;
  keepalive_requests 100000000; keepalive_timeout 300s;
  server {{
    listen 127.0.0.1:{PORT} backlog=16384;
    root {work};
    location = /small {{ default_type application/json; return 200 '{SMALL}'; }}
    location = /users.json {{ default_type application/json; }}
    location = /big {{ default_type application/octet-stream; }}
    location = /post {{ client_body_buffer_size 64k; echo_read_request_body; echo ok; }}
    location = /upload {{ client_max_body_size 0; default_type text/plain; return 200 'ok'; }}
    location = /upload-read {{ client_max_body_size 0; default_type text/plain; echo_read_request_body; echo -n ok; }}
    location = /slow {{ default_type application/json; echo_sleep 1; echo '{{"ok":true}}'; }}
    location = /fast {{ default_type application/json; echo '{{"ok":true}}'; }}
    location = /status {{ stub_status; }}
    # The generated OpenAPI client (issue 31): `getGreeting` (the generated code checks the content type)
    # and `download` (the 256 MiB file /big serves), whatever the query.
    location = /greet {{ default_type application/json; return 200 '{OPENAPI_GREETING}'; }}
    location = /download {{ default_type application/octet-stream; alias {work}/big; }}
    # Server-sent events (issue 17): paced.sse at one event a second per stream (pace_sse sets
    # limit_rate_after to the head's length, so the head and the first event go out at once), the
    # parse-rate stream at full speed. One cached descriptor for the file, not one per stream.
    location /sse/paced/ {{
      alias {work}/sse/;
      types {{ text/event-stream sse; }}
      sendfile off; postpone_output 0; output_buffers 1 8k; open_file_cache max=16 inactive=600s;
      limit_rate {SSE_EVENT_BYTES};
      limit_rate_after 0; # h1-paced
    }}
    location /sse/full/ {{ alias {work}/sse/; types {{ text/event-stream sse; }} }}
  }}
  server {{
    listen 127.0.0.1:{TLS_PORT} ssl backlog=16384;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:TLS:10m;
    ssl_session_tickets on;
    root {work};
    location = /small {{ default_type application/json; return 200 '{SMALL}'; }}
  }}
  server {{
    listen 127.0.0.1:{H2_PORT} ssl http2 backlog=16384;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3;
    http2_max_concurrent_streams 256;
    root {work};
    location = /small {{ default_type application/json; return 200 '{SMALL}'; }}
    location = /upload {{ client_max_body_size 0; default_type text/plain; return 200 'ok'; }}
    location = /upload-read {{ client_max_body_size 0; default_type text/plain; echo_read_request_body; echo -n ok; }}
  }}
  # Server-sent events over HTTP/2 (issue 17): nginx's default stream limit, stated.
  server {{
    listen 127.0.0.1:{SSE_H2_PORT} ssl http2 backlog=16384;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3;
    http2_max_concurrent_streams {SSE_H2_STREAMS};
    location /sse/paced/ {{
      alias {work}/sse/;
      types {{ text/event-stream sse; }}
      sendfile off; postpone_output 0; output_buffers 1 8k; open_file_cache max=16 inactive=600s;
      limit_rate {SSE_H2_RATE};
      limit_rate_after 0;
    }}
  }}
}}
"""
    path = os.path.join(work, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    subprocess.run(["nginx", "-c", path, "-p", work], check=True)
    time.sleep(0.3)
    return ca, cert, key


def start_stream_server(cert, key):
    """Tests/Servers/stream_server.py over TLS, for the slow-reading HTTP/2 upload workloads."""
    global STREAM_PORT
    script = os.path.join(ROOT, "Tests", "Servers", "stream_server.py")
    process = subprocess.Popen([sys.executable, script, "--cert", cert, "--key", key], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    STREAM_PORT = json.loads(process.stdout.readline())["port"]
    return process


def stop_nginx(work):
    try:
        with open(os.path.join(work, "nginx.pid")) as f:
            os.kill(int(f.read().strip()), signal.SIGQUIT)
    except (OSError, ValueError):
        pass


def accepts():
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/status") as response:
        text = response.read().decode()
    return int(text.splitlines()[2].split()[0])


# The harness a baseline is built with: the current one (the clock the timing loop reads alone moved the
# count per request by about 300 instructions between two harnesses).
BASELINE_HARNESS = ("Benchmarks/Sources/BenchCore", "Benchmarks/Sources/BenchShims", "Benchmarks/Sources/bench-curlew")


def build_baseline(ref, out):
    """Builds bench-curlew from commit `ref` in a scratch worktree, with the current harness (the
    timing loop and the clients' code: `BASELINE_HARNESS`), so that a difference is the library's;
    returns its commands."""
    source = os.path.join(out, "baseline-src")
    wanted = subprocess.run(["git", "-C", ROOT, "rev-parse", ref + "^{commit}"], capture_output=True, text=True, check=True).stdout.strip()
    present = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(["git", "-C", source, "status", "--porcelain"], capture_output=True, text=True).stdout.splitlines()
    # A worktree already at that commit is kept, with its build: the next run builds only what changed.
    if present != wanted or any(not line[3:].startswith(BASELINE_HARNESS) for line in changed):
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", source], capture_output=True)
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", source, ref], check=True)
    for folder in BASELINE_HARNESS:
        shutil.rmtree(os.path.join(source, folder), ignore_errors=True)
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(source, folder))
    bench = os.path.join(source, "Benchmarks")
    subprocess.run(["swift", "build", "-c", "release", "--product", "bench-curlew", "--static-swift-stdlib"], cwd=bench, check=True)
    binary = os.path.join(bench, ".build", "release", "bench-curlew")
    return {f"curlew@{ref}": [binary, "curlew"], f"curlew-engine@{ref}": [binary, "curlew-engine"]}


def build(smoke, out):
    # Every Swift client links the Swift runtime statically, as Swift server deployments do
    # (`--static-swift-stdlib`): peak RSS then counts the client, not a dozen shared Swift libraries.
    static = ["--static-swift-stdlib"]
    # The clients' own modules are compiled afresh every time (their sources touched): after a change to
    # the layout of a Curlew type, an incremental build can keep a client compiled against the old layout
    # (seen: a crash reading a 16-byte RequestBody as 48 bytes), and its figures would be wrong without
    # failing. (Deleting their build folders instead breaks SwiftPM's cached build plan.)
    for client in ("bench-curlew", "bench-peers", "bench-sse", "bench-openapi"):
        os.utime(os.path.join(HERE, "Sources", client, "main.swift"))
    subprocess.run(["swift", "build", "-c", "release", "--disable-build-manifest-caching", "--product", "bench-curlew"] + static, cwd=HERE, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--disable-build-manifest-caching", "--product", "bench-sse"] + static, cwd=HERE, check=True)
    if not smoke:
        subprocess.run(["swift", "build", "-c", "release", "--disable-build-manifest-caching", "--product", "bench-peers"] + static, cwd=HERE, check=True)
        subprocess.run(["swift", "build", "-c", "release", "--disable-build-manifest-caching", "--product", "bench-openapi"] + static, cwd=HERE, check=True)
    os.makedirs(out, exist_ok=True)
    subprocess.run(["gcc", "-O2", "-o", os.path.join(out, "bench-c"), os.path.join(HERE, "c-client", "bench.c"), "-lcurl", "-lz"], check=True)
    subprocess.run(["gcc", "-O2", "-o", os.path.join(out, "bench-sse-c"), os.path.join(HERE, "c-client", "sse.c"), "-lcurl"], check=True)
    release = os.path.join(HERE, ".build", "release")
    SSE_COMMANDS.update({"curlew-engine": os.path.join(release, "bench-sse"), "curlew-provider": os.path.join(release, "bench-sse"),
                         "c-libcurl": os.path.join(out, "bench-sse-c")})
    commands = {
        "curlew": [os.path.join(release, "bench-curlew"), "curlew"],
        CHAIN_CLIENT: [os.path.join(release, "bench-curlew"), CHAIN_CLIENT],
        HEADER_CLIENT: [os.path.join(release, "bench-curlew"), HEADER_CLIENT],
        METRICS_CLIENT: [os.path.join(release, "bench-curlew"), METRICS_CLIENT],
        "curlew-engine": [os.path.join(release, "bench-curlew"), "curlew-engine"],
        "curlew-provider": [os.path.join(release, "bench-sse")],  # the event-stream workloads only
        "c-libcurl": [os.path.join(out, "bench-c")],
        GZIP_CLIENT: [GZIP_CLIENT],  # run by gzip_figures
        CURL_FORM_CLIENT: [CURL_FORM_CLIENT],  # run by curl_form_figures
    }
    if not smoke:
        commands["async-http-client"] = [os.path.join(release, "bench-peers"), "ahc"]
        commands["urlsession"] = [os.path.join(release, "bench-peers"), "urlsession"]
        commands.update({client: [os.path.join(release, "bench-openapi"), transport] for client, transport in OPENAPI_CLIENTS.items()})
    return commands


def run_one(command, workload, scale, env):
    if command == [GZIP_CLIENT]:
        return gzip_figures(workload, scale, env)
    if command == [CURL_FORM_CLIENT]:
        before = accepts()
        figures = curl_form_figures(workload, f"http://127.0.0.1:{PORT}", env)
        figures["connections"] = accepts() - 1 - before
        return figures
    if workload in STREAM_WORKLOADS:
        base = f"https://127.0.0.1:{STREAM_PORT}"
    elif workload in H2_WORKLOADS:
        base = f"https://127.0.0.1:{H2_PORT}"
    elif workload in TLS_WORKLOADS:
        base = f"https://127.0.0.1:{TLS_PORT}"
    else:
        base = f"http://127.0.0.1:{PORT}"
    counts_connections = workload not in STREAM_WORKLOADS
    before = accepts() if counts_connections else 0
    result = subprocess.run(command + [workload, base, str(scale)], capture_output=True, text=True, env=env, timeout=900)
    after = accepts() - 1 if counts_connections else 1  # the status request itself
    line = next((l for l in result.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        return {"valid": False, "first_error": (result.stderr or "no output").strip()[-300:]}
    figures = json.loads(line)
    figures["connections"] = after - before
    figures["valid"] = result.returncode == 0 and figures.get("errors", 1) == 0
    return figures


def base_url(workload):
    """The server a workload runs against."""
    if workload in STREAM_WORKLOADS:
        return f"https://127.0.0.1:{STREAM_PORT}"
    if workload in H2_WORKLOADS:
        return f"https://127.0.0.1:{H2_PORT}"
    if workload in TLS_WORKLOADS:
        return f"https://127.0.0.1:{TLS_PORT}"
    return f"http://127.0.0.1:{PORT}"


def syscalls(command, env, workload, counts=(4000, 12000)):
    """Futex calls and all system calls per request (strace -f -c over the client's threads) and context
    switches per request (the client's own `csw` figure, getrusage, in a run without strace, which would add
    its own): the difference of runs at two request counts divided by the extra requests."""
    if shutil.which("strace") is None:
        return None
    full = FULL_REQUESTS[workload]
    figures = []
    for count in counts:
        arguments = [workload, base_url(workload), str(count / full)]
        with tempfile.NamedTemporaryFile(prefix="curlew-strace-") as trace:
            traced = subprocess.run(["strace", "-f", "-c", "-o", trace.name] + command + arguments,
                                    capture_output=True, text=True, env=env, timeout=900)
            summary = open(trace.name).read()
        plain = subprocess.run(command + arguments, capture_output=True, text=True, env=env, timeout=900)
        line = next((l for l in plain.stdout.splitlines() if l.startswith("{")), None)
        if traced.returncode != 0 or plain.returncode != 0 or line is None:
            return None
        futex = total = 0
        for row in summary.splitlines():
            # % time, seconds, usecs/call, calls, [errors,] syscall
            parts = row.split()
            if len(parts) >= 5 and parts[-1] in ("futex", "total"):
                calls = int(parts[3])
                if parts[-1] == "futex":
                    futex = calls
                else:
                    total = calls
        figures.append((futex, total, json.loads(line).get("csw", 0)))
    extra = counts[1] - counts[0]
    return {name: (figures[1][i] - figures[0][i]) / extra for i, name in enumerate(("futex", "syscalls", "csw"))}


def instructions(command, env, out, workload="small-get-1", counts=(4000, 12000), repeats=3):
    """Instructions per request: callgrind at two request counts, the difference divided by the extra
    requests (start-up cancels out). The median of `repeats` such differences: thread scheduling under
    valgrind moves the totals by a few percent from run to run."""
    if shutil.which("valgrind") is None:
        return None
    binary = command[0]
    stripped = os.path.join(out, os.path.basename(binary) + ".stripped")
    subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
    full = FULL_REQUESTS[workload]
    differences = []
    for _ in range(repeats):
        totals = []
        for count in counts:
            result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", stripped] + command[1:] +
                                    [workload, base_url(workload), str(count / full)],
                                    capture_output=True, text=True, env=env, timeout=3600)
            total = next((int(l.split(":")[-1].strip().replace(",", "")) for l in result.stderr.splitlines() if "Collected :" in l), None)
            if total is None or result.returncode != 0:
                return None
            totals.append(total)
        differences.append((totals[1] - totals[0]) / (counts[1] - counts[0]))
    return statistics.median(differences)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="seconds, tiny counts, Curlew and C only")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--report", action="store_true", help="rewrite BENCHMARKS.md and the chart from the last run's saved figures")
    parser.add_argument("--workloads", help="comma-separated workloads (default: all)")
    parser.add_argument("--clients", help="comma-separated clients (default: all)")
    parser.add_argument("--baseline", help="also run Curlew's clients built from this git ref")
    args = parser.parse_args()
    workloads = args.workloads.split(",") if args.workloads else WORKLOADS
    if args.smoke and not args.workloads:
        workloads = [w for w in WORKLOADS if w not in NOT_IN_SMOKE]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(WORKLOADS)}")
    saved = os.path.join(args.out, "results.json")
    if args.report:
        with open(saved) as f:
            data = json.load(f)
        results = {tuple(k.split("|")): v for k, v in data["results"].items()}
        counts = {tuple(k.split("|")): v for k, v in data["counts"].items()}
        write_report(results, counts, [tuple(i) for i in data["invalid"]], data["clients"], data["rounds"])
        return
    # 10,000 streams need 10,000 sockets in the client (and nginx): every child gets the hard limit.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    scale = 0.01 if args.smoke else 1.0
    rounds = 1 if args.smoke else args.rounds
    commands = build(args.smoke, args.out)
    if args.clients:
        commands = {name: command for name, command in commands.items() if name in args.clients.split(",")}
    if args.baseline:
        commands.update(build_baseline(args.baseline, args.out))
    partial = bool(args.workloads or args.clients)
    work = tempfile.mkdtemp(prefix="curlew-bench-")
    env = dict(os.environ, BENCH_USERS_LENGTH=str(len(users_json())))
    results = {}
    invalid = []
    ca, cert, key = start_nginx(work)
    env["BENCH_CA_FILE"] = ca
    stream_server = start_stream_server(cert, key) if any(w in STREAM_WORKLOADS for w in workloads) else None
    downloads = make_files(work, workloads, env, smoke=args.smoke) if any(w in FILE_WORKLOADS for w in workloads) else None
    if any(w in SSE_WORKLOADS for w in workloads):
        make_sse_files(work, workloads, args.smoke)
        if "sse-10k-h1" in workloads:
            pace_sse(work)
    try:
        clients = list(commands)
        for round_index in range(rounds):
            for workload in workloads:
                if workload in SSE_ONCE and round_index > 0:
                    continue  # a minute each: one run
                order = clients[round_index % len(clients):] + clients[:round_index % len(clients)]
                for client in order:
                    if not runs_workload(client, workload):
                        continue
                    if workload in SSE_WORKLOADS:
                        if args.smoke and client not in SSE_SMOKE_CLIENTS.get(workload, SSE_WORKLOADS[workload]):
                            continue
                        figures = sse_figures(client, workload, args.smoke, env, args.out)
                        results.setdefault((workload, client), []).append(figures)
                        status = "ok" if figures["valid"] else "INVALID " + figures.get("first_error", "")
                        print(f"round {round_index + 1} {workload:16} {client:18} {figures.get('events', 0):10,} events "
                              f"{figures.get('events_per_second', 0):12,.0f} events/s  {status}", flush=True)
                        if not figures["valid"]:
                            invalid.append((workload, client, figures.get("first_error", "")))
                        continue
                    figures = run_one(commands[client], workload, scale, env)
                    if downloads:
                        # The clients delete each file they download; this catches what a failed run left.
                        for name in os.listdir(downloads):
                            os.unlink(os.path.join(downloads, name))
                    results.setdefault((workload, client), []).append(figures)
                    status = "ok" if figures["valid"] else "INVALID " + figures.get("first_error", "")
                    print(f"round {round_index + 1} {workload:16} {client:18} {figures.get('rps', 0):10.0f} req/s {figures.get('mibps', 0):9.1f} MiB/s  {status}", flush=True)
                    if not figures["valid"]:
                        invalid.append((workload, client, figures.get("first_error", "")))
        counts = {}
        if not args.smoke and not args.no_callgrind:
            for workload in [w for w in INSTRUCTION_WORKLOADS if w in workloads]:
                for client in clients:
                    if client not in commands or not os.path.isfile(commands[client][0]):
                        continue  # not a client binary (`gzip-1` and `curl-F` are timed by run.py itself)
                    if client in OPENAPI_CLIENTS or client in SSE_ONLY_CLIENTS:
                        continue  # bench-openapi and bench-sse run their own workloads only
                    if (workload in TLS_WORKLOADS and client in NO_TLS_CLIENTS) or (client in (CHAIN_CLIENT, HEADER_CLIENT) and workload not in CHAIN_WORKLOADS):
                        continue
                    ours = client.startswith("curlew") or client == "c-libcurl"
                    if workload != "small-get-1" and (not ours or client == METRICS_CLIENT or client.startswith("curlew-engine@")):
                        continue
                    # The peers once: their counts are far from the targets, and under valgrind they are slow.
                    repeats = 3 if ours else 1
                    counts[(workload, client)] = instructions(commands[client], env, args.out, workload, repeats=repeats)
                    print(f"instructions per request, {workload}, {client}: {counts[(workload, client)]}", flush=True)
            for workload in [w for w in SYSCALL_WORKLOADS if w in workloads]:
                for client in ("curlew", "curlew-engine", "c-libcurl", "async-http-client"):
                    if client in commands:
                        figures = syscalls(commands[client], env, workload)
                        counts[(workload, client + " syscalls")] = figures
                        print(f"system calls per request, {workload}, {client}: {figures}", flush=True)
    finally:
        stop_nginx(work)
        remove_files(work)
        if stream_server:
            stream_server.kill()
    if args.smoke:
        if invalid:
            print("benchmark smoke run FAILED:", invalid)
            sys.exit(1)
        print(f"benchmark smoke run: {len(results)} client/workload pairs valid")
        return
    if partial:
        # A partial or before/after run: print its table, leave BENCHMARKS.md alone.
        if any(w not in SSE_WORKLOADS and w not in OPENAPI_WORKLOADS for w in workloads):
            print("\n".join(table(results, clients, workloads)))
        openapi = openapi_lines(results)
        if openapi:
            print("\n".join([""] + openapi))
        targets = target_lines(results)
        if targets:
            print("\n".join([""] + targets))
        for (workload, client), count in counts.items():
            if client.endswith(" syscalls"):
                print(f"system calls per request, {workload}, {client[:-9]}: {count}")
            else:
                print(f"instructions per request, {workload}, {client}: {count:,.0f}" if count else f"{workload} {client}: n/a")
        return
    with open(saved, "w") as f:
        json.dump({"results": {"|".join(k): v for k, v in results.items()}, "counts": {"|".join(k): v for k, v in counts.items()},
                   "invalid": invalid, "clients": clients, "rounds": args.rounds}, f)
    write_report(results, counts, invalid, clients, args.rounds)


def draw_chart(chart, decoded, path):
    """Left: requests/s relative to the C limit per workload. Right: the decoded-JSON workload relative to
    async-http-client + JSONDecoder (the C limit has no decoder)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: chart not regenerated")
        return
    # The workloads some client runs beside the C client (not the slow-reading server's, nor those
    # compared with something else: progress with the plain download, the compressed upload with gzip).
    names = [w for w in WORKLOADS if w != "json-16-decoded" and w not in STREAM_WORKLOADS and w not in REFERENCE
             and w != "download-file-256m-progress" and w not in SSE_WORKLOADS and w not in OPENAPI_WORKLOADS]
    fig, (ax, right) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [5, 1.3]})
    width = 0.8 / max(1, len(chart))
    for i, (client, values) in enumerate(sorted(chart.items())):
        ax.bar([x + i * width for x in range(len(names))], [values.get(n) or 0 for n in names], width, label=client)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + width * (len(chart) - 1) / 2 for x in range(len(names))], names, rotation=15)
    ax.set_ylabel("requests/s ÷ C libcurl limit")
    ax.legend()
    clients = sorted(decoded)
    right.bar(range(len(clients)), [decoded[c] for c in clients], color=[f"C{sorted(chart).index(c)}" if c in chart else "grey" for c in clients])
    right.axhline(1.0, color="black", linewidth=0.8)
    right.set_xticks(range(len(clients)), clients, rotation=60, fontsize=8)
    right.set_title("json-16-decoded", fontsize=9)
    right.set_ylabel("requests/s ÷ async-http-client + JSONDecoder")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def median_of(runs, key):
    values = [r[key] for r in runs if r.get("valid") and key in r]
    return (statistics.median(values), min(values), max(values)) if values else (None, None, None)


def table(results, clients, workloads):
    """Markdown rows: requests/s, ratios, latency, CPU (process and Curlew's loop thread), connections."""
    lines = ["| workload | client | req/s (min–max) | × C limit | × async-http-client | MiB/s | p50 µs | p99 µs | CPU µs/req | CPU % | loop CPU µs/req | idle RSS MiB | peak RSS MiB | connections |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for workload in [w for w in workloads if w not in SSE_WORKLOADS and w not in OPENAPI_WORKLOADS]:
        c_rps = median_of(results.get((workload, REFERENCE.get(workload, "c-libcurl")), []), "rps")[0]
        ahc_rps = median_of(results.get((workload, "async-http-client"), []), "rps")[0]
        for client in clients:
            runs = results.get((workload, client))
            if not runs:
                continue
            rps, low, high = median_of(runs, "rps")
            if rps is None:
                lines.append(f"| {workload} | {client} | invalid | | | | | | | | |")
                continue
            loop = median_of(runs, "loop_cpu_us_per_request")[0]
            idle = median_of(runs, "idle_rss_kib")[0]
            percent = median_of(runs, "cpu_percent")[0]
            cells = [f"{rps:,.0f} ({low:,.0f}–{high:,.0f})", f"{rps / c_rps:.2f}" if c_rps else "", f"{rps / ahc_rps:.2f}" if ahc_rps else "",
                     f"{median_of(runs, 'mibps')[0]:,.1f}",
                     f"{median_of(runs, 'p50_us')[0]:,.0f}", f"{median_of(runs, 'p99_us')[0]:,.0f}",
                     f"{median_of(runs, 'cpu_us_per_request')[0]:,.1f}", f"{percent:,.1f}" if percent is not None else "",
                     f"{loop:,.1f}" if loop is not None else "",
                     f"{idle / 1024:,.1f}" if idle is not None else "",
                     f"{median_of(runs, 'peak_rss_kib')[0] / 1024:,.1f}", f"{median_of(runs, 'connections')[0]:,.0f}"]
            lines.append(f"| {workload} | {client} | " + " | ".join(cells) + " |")
    return lines


def target_lines(results):
    """Issues 15's and 16's targets, each with its figures from this run and whether it holds (Markdown
    tables, one per issue)."""
    def mibps(workload, client):
        return median_of(results.get((workload, client), []), "mibps")[0]

    def ratio_row(target, workload, client, reference, minimum, note=""):
        """`minimum` None: a measurement without a target."""
        ours, theirs = mibps(workload, client), mibps(workload, reference)
        if ours is None or theirs is None:
            return None
        ratio = ours / theirs
        holds = "(measured)" if minimum is None else "yes" if ratio >= minimum else "no"
        return f"| {target} | {ours:,.1f} vs {theirs:,.1f} MiB/s = {ratio:.2f}×{note} | {holds} |"

    def growth(workload, client, limit_mib, reference=None):
        """`limit_mib` None: a measurement without a target. `reference`: a client whose peak RSS is shown beside."""
        runs = [r for r in results.get((workload, client), []) if r.get("valid") and r.get("idle_rss_kib") is not None]
        if not runs:
            return None
        grown = statistics.median((r["peak_rss_kib"] - r["idle_rss_kib"]) / 1024 for r in runs)
        peak = statistics.median(r["peak_rss_kib"] / 1024 for r in runs)
        idle = statistics.median(r["idle_rss_kib"] / 1024 for r in runs)
        theirs = median_of(results.get((workload, reference), []), "peak_rss_kib")[0] if reference else None
        beside = f"; {reference}'s peak {theirs / 1024:,.1f}" if theirs is not None else ""
        if limit_mib is None:
            return f"| …its peak RSS over its idle RSS | +{grown:,.1f} MiB (peak {peak:,.1f}, idle {idle:,.1f}{beside}) | (measured) |"
        return (f"| …its peak RSS ≤ idle + {limit_mib} MiB | +{grown:,.1f} MiB (peak {peak:,.1f}, idle {idle:,.1f}{beside}) "
                f"| {'yes' if grown <= limit_mib else 'no'} |")

    engine = "curlew-engine"

    def progress_row():
        # Paired by round (the two run one after the other, so the machine's drift cancels): the median of
        # the rounds' ratios.
        plain, observed = mibps("download-file-256m", engine), mibps("download-file-256m-progress", engine)
        pairs = [(o["mibps"], p["mibps"]) for o, p in zip(results.get(("download-file-256m-progress", engine), []),
                                                          results.get(("download-file-256m", engine), []))
                 if o.get("valid") and p.get("valid")]
        if not pairs:
            return None
        ratio = statistics.median(o / p for o, p in pairs)
        updates = median_of(results.get(("download-file-256m-progress", engine), []), "progress_updates_per_request")[0]
        seen = f"; {updates:,.0f} updates per download" if updates is not None else ""
        return (f"| …observed through `downloadWithProgress`, every update read: within 3% of the download without progress "
                f"| {observed:,.1f} vs {plain:,.1f} MiB/s; median of the rounds' ratios {ratio:.3f}×{seen} | {'yes' if ratio >= 0.97 else 'no'} |")

    rows = [
        ratio_row("256 MiB downloaded to a file (`download(_:to:)`) ≥ 0.9× the C client writing with write(2) and renaming",
                  "download-file-256m", engine, "c-libcurl", 0.9),
        growth("download-file-256m", engine, 16),
        ratio_row("…with `syncsBeforeMove` (fsync the file, then the folder), against the C client doing the same",
                  "download-file-256m-fsync", engine, "c-libcurl", None),
        progress_row(),
        ratio_row("256 MiB uploaded from a file (`RequestBody.file`) ≥ 0.9× the C client reading it in `READFUNCTION`",
                  "upload-file-256m", engine, "c-libcurl", 0.9),
        ratio_row("64 MiB JSON file uploaded gzipped at level 1 (`requestCompression: .gzip(level: 1)`): input rate ≥ 0.9× `gzip -1 -c file > /dev/null`",
                  "gzip-json-64m", engine, GZIP_CLIENT, 0.9,
                  f" (libcurl + zlib level 1 in `READFUNCTION`: {zlib:,.1f})" if (zlib := mibps("gzip-json-64m", "c-libcurl")) else ""),
    ]
    rows = [row for row in rows if row]
    lines = []
    if rows:
        lines += ["## Targets (issue 15: files, request compression, progress)", "",
                  "The bare engine (these are its APIs); MiB/s are medians over the rounds. The files are on the file system "
                  "of the run's temp folder; each download is deleted after it is checked. In the table above, "
                  "gzip-json-64m's “× C limit” is relative to `gzip -1` (its MiB/s count the uncompressed input).", "",
                  "| target | figure | holds |", "| --- | --- | --- |"] + rows
    provider = "curlew"
    rows = [
        ratio_row("1 GiB sparse file uploaded as one multipart/form-data file part (`.uploadMultipart`, `provider.request`) "
                  "≥ 0.9× `curl -F file=@FILE;type=application/octet-stream`",
                  "multipart-upload-1g", provider, CURL_FORM_CLIENT, 0.9),
        growth("multipart-upload-1g", provider, 32, reference=CURL_FORM_CLIENT),
        ratio_row("256 MiB downloaded through a target's `.downloadDestination` closure (`provider.request`) "
                  "≥ 0.9× the C client writing with write(2) and renaming",
                  "download-destination-256m", provider, "c-libcurl", 0.9),
        growth("download-destination-256m", provider, None, reference="c-libcurl"),
    ]
    rows = [row for row in rows if row]
    if rows:
        lines += ([""] if lines else []) + [
            "## Targets (issue 16: multipart upload, downloads through the provider)", "",
            "The provider (`curlew`: these are its target tasks); MiB/s are medians over the rounds and count the file's "
            "bytes (the multipart framing, a few hundred bytes, is left out). The multipart file is sparse "
            "(`truncate -s 1G`) in the run's temp folder; nginx discards the body. In the table above, "
            "multipart-upload-1g's “× C limit” is relative to `curl -F`. Idle RSS: the client set up, before its first "
            "request; peak RSS: VmHWM at the end (`curl -F`'s read from /proc while it runs).", "",
            "| target | figure | holds |", "| --- | --- | --- |"] + rows
    sse = sse_lines(results)
    if sse:
        lines += ([""] if lines else []) + sse
    return lines


def openapi_lines(results):
    """Issue 31's section (Markdown): the generated client on Curlew's transport and on async-http-client's,
    side by side, with Curlew's figure over async-http-client's."""
    ours, theirs = "openapi-curlew", "openapi-ahc"

    def figure(workload, client, key):
        return median_of(results.get((workload, client), []), key)

    def row(workload, label, key, show, scale=1.0, spread=False):
        """One figure of both transports; `show` formats a value, `spread` adds the rounds' min–max."""
        cells, values = [], []
        for client in (ours, theirs):
            value, low, high = figure(workload, client, key)
            if value is None:
                cells.append("invalid" if results.get((workload, client)) else "")
                values.append(None)
                continue
            cells.append(show(value * scale) + (f" ({show(low * scale)}–{show(high * scale)})" if spread else ""))
            values.append(value)
        ratio = f"{values[0] / values[1]:.2f}×" if None not in values and values[1] else ""
        return f"| {label} | " + " | ".join(cells) + f" | {ratio} |"

    def number(decimals):
        return lambda value: f"{value:,.{decimals}f}"

    lines = []
    for workload in OPENAPI_WORKLOADS:
        if not any(results.get((workload, client)) for client in (ours, theirs)):
            continue
        if workload == "openapi-download-256m":
            lines += [row(workload, f"{workload}: MiB/s", "mibps", number(1), spread=True),
                      row(workload, "…CPU ms per 256 MiB", "cpu_us_per_request", number(0), scale=1e-3),
                      row(workload, "…chunks the `HTTPBody` yields per 256 MiB", "chunks_per_request", number(0)),
                      row(workload, "…idle RSS MiB", "idle_rss_kib", number(1), scale=1 / 1024),
                      row(workload, "…peak RSS MiB", "peak_rss_kib", number(1), scale=1 / 1024)]
        else:
            lines += [row(workload, f"{workload}: req/s", "rps", number(0), spread=True),
                      row(workload, "…CPU µs/req", "cpu_us_per_request", number(1)),
                      row(workload, "…p50 µs", "p50_us", number(0)),
                      row(workload, "…p99 µs", "p99_us", number(0))]
    if not lines:
        return []
    return ["## Generated OpenAPI client (issue 31)", "",
            "The client swift-openapi-generator made from Tests/OpenAPIFixture/openapi.yaml, the same generated `Client` "
            "on two transports (one binary, bench-openapi, interleaved): Curlew's `CurlewTransport` on a `CurlSession` "
            "configured as the `curlew` rows' sessions, and swift-openapi-async-http-client's `AsyncHTTPClientTransport` "
            "on an `HTTPClient` configured as the `async-http-client` rows'. openapi-get-N: `getGreeting` (nginx's fixed "
            "JSON message, decoded) with N in flight, small-get-N's request counts; openapi-download-256m: `download`, "
            "256 MiB read from the `HTTPBody` chunk by chunk and dropped. Medians over the rounds (min–max); CPU is the "
            "process's user + system time; idle RSS is VmRSS before the first request, peak RSS VmHWM at the end. "
            "For CPU, latency and RSS, lower is better.", "",
            "| workload · figure | Curlew (`CurlewTransport`) | async-http-client (`AsyncHTTPClientTransport`) | Curlew ÷ async-http-client |",
            "| --- | ---: | ---: | ---: |"] + lines


def sse_lines(results):
    """Issue 17's figures and targets (Markdown): the paced streams, the parse rate."""
    def runs(workload, client):
        return [r for r in results.get((workload, client), []) if r.get("valid") is not None and "events" in r]

    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    lines = []
    paced = [(w, c) for w in ("sse-10k-h1", "sse-10k-h2") for c in ("curlew-engine", "curlew-provider", "c-libcurl") if runs(w, c)]
    targets = []
    if paced:
        lines += ["| workload | client | streams × events | events received | every stream all events, in order | all open after s (first event p50 · p90) | "
                  "first→last event s (min–max) | largest gap s | RSS idle → open MiB | RSS per open stream KiB | "
                  "loop CPU ns/event (steady) | CPU ns/event (steady) | connections (client peak · nginx accepted) |",
                  "| --- | --- | --- | --- | --- | ---: | --- | ---: | --- | ---: | --- | --- | --- |"]
        for workload, client in paced:
            r = runs(workload, client)[0]
            per_stream = r["expected_events"] // max(1, r["streams"])
            complete = r["valid"] and r["wrong_streams"] == 0 and r["failed_streams"] == 0
            loop = (f"{r['loop_cpu_ns_per_event']:,.0f} ({r['steady_loop_cpu_ns_per_event']:,.0f})"
                    if "loop_cpu_ns_per_event" in r else "")
            steady = f" ({r['steady_cpu_ns_per_event']:,.0f})" if "steady_cpu_ns_per_event" in r else ""
            middle = r.get("mid_rss_kib") or r.get("open_rss_kib", 0)
            ramp = (f" ({r['first_event_p50_seconds']:.1f} · {r['first_event_p90_seconds']:.1f})"
                    if "first_event_p50_seconds" in r else "")
            peak = f"{r['peak_open_connections']:,}" if "peak_open_connections" in r else "–"
            lines.append(
                f"| {workload} | {client} | {r['streams']:,} × {per_stream} | {r['events']:,} of {r['expected_events']:,} "
                f"({r['fewest_events']}–{r['most_events']} per stream) | {'yes' if complete else 'no'} "
                f"({r['wrong_streams']} wrong, {r['failed_streams']} failed) | {r['all_open_seconds']:.1f}{ramp} | "
                f"{r['min_span_seconds']:.2f}–{r['max_span_seconds']:.2f} | {r['largest_gap_seconds']:.2f} | "
                f"{r['idle_rss_kib'] / 1024:,.1f} → {middle / 1024:,.1f} | {r['rss_per_stream_kib']:,.1f} | {loop} | "
                f"{r['cpu_ns_per_event']:,.0f}{steady} | {peak} · {r.get('connections', 0):,} |")
            if client == "curlew-engine":
                transport = "HTTP/2" if workload.endswith("h2") else "HTTP/1.1"
                targets.append(f"| {r['streams']:,} streams × {per_stream} events over {transport}: every stream receives every event, "
                               f"ids 1…{per_stream} in order | {r['events']:,} of {r['expected_events']:,}; fewest per stream "
                               f"{r['fewest_events']} | {'yes' if complete else 'no'} |")
                targets.append(f"| …RSS per open stream ≤ 32 KiB ({transport}) | {r['rss_per_stream_kib']:,.1f} KiB "
                               f"({r['idle_rss_kib'] / 1024:,.1f} → {middle / 1024:,.1f} MiB) | {'yes' if r['rss_per_stream_kib'] <= 32 else 'no'} |")
                if "loop_cpu_ns_per_event" in r:
                    targets.append(f"| …loop CPU per event ({transport}) | {r['loop_cpu_ns_per_event']:,.0f} ns over the run, "
                                   f"{r['steady_loop_cpu_ns_per_event']:,.0f} ns with every stream open | (measured) |")
                if workload.endswith("h2"):
                    fit = -(-r["streams"] // SSE_H2_STREAMS)
                    targets.append(f"| …connections against `http2_max_concurrent_streams {SSE_H2_STREAMS}`: ⌈{r['streams']:,} / "
                                   f"{SSE_H2_STREAMS}⌉ = {fit} | client peak {r.get('peak_open_connections', 0):,}, "
                                   f"opened {r.get('connections_opened', 0):,}; nginx accepted {r.get('connections', 0):,} | "
                                   f"{'yes' if r.get('peak_open_connections', 10**9) <= fit else 'no'} |")
    parse = {c: [r for r in runs("sse-parse-rate", c) if r.get("valid")] for c in ("curlew-engine", "c-libcurl")}
    if any(parse.values()):
        lines += ([""] if lines else []) + [
            "| sse-parse-rate | events | events/s (min–max) | × C | CPU ns/event | loop CPU ns/event | parser alone ns/event | MiB/s of data | peak RSS MiB | rounds |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        c_rate = median(r["events_per_second"] for r in parse["c-libcurl"])
        for client, rs in parse.items():
            if not rs:
                continue
            rate = median(r["events_per_second"] for r in rs)
            loop = median(r.get("loop_cpu_ns_per_event") for r in rs)
            alone = median(r.get("parser_ns_per_event") for r in rs)
            lines.append(
                f"| {client} | {rs[0]['events']:,} | {rate:,.0f} ({min(r['events_per_second'] for r in rs):,.0f}–"
                f"{max(r['events_per_second'] for r in rs):,.0f}) | {rate / c_rate:.2f} | "
                f"{median(r['cpu_ns_per_event'] for r in rs):,.0f} | {f'{loop:,.0f}' if loop is not None else ''} | "
                f"{f'{alone:,.0f}' if alone is not None else ''} | "
                f"{median(r['mibps'] for r in rs):,.1f} | {median(r['peak_rss_kib'] for r in rs) / 1024:,.1f} | {len(rs)} |"
                if c_rate else f"| {client} | {rs[0]['events']:,} | {rate:,.0f} | | | | | | | {len(rs)} |")
        ours = median(r["events_per_second"] for r in parse["curlew-engine"])
        if ours and c_rate:
            ratio = ours / c_rate
            ns = median(r["cpu_ns_per_event"] for r in parse["curlew-engine"])
            c_ns = median(r["cpu_ns_per_event"] for r in parse["c-libcurl"])
            targets.append(f"| One stream of 100–200-byte data lines: Curlew's parsed events/s ≥ 0.8× the C client parsing and copying each event "
                           f"| {ours:,.0f} vs {c_rate:,.0f} events/s = {ratio:.2f}×; CPU {ns:,.0f} vs {c_ns:,.0f} ns/event "
                           f"| {'yes' if ratio >= 0.8 else 'no'} |")
    if not lines:
        return []
    return ["## Targets (issue 17: server-sent events)", "",
            "Each paced stream is nginx serving a 60-event file (ids 1…60, 100 bytes each) at one event a second "
            f"(`limit_rate {SSE_EVENT_BYTES}`; over HTTP/2 `limit_rate {SSE_H2_RATE}`, nginx counting the DATA frame "
            f"headers, and `http2_max_concurrent_streams {SSE_H2_STREAMS}`). RSS per open stream: VmRSS when half the "
            "events have arrived (every stream open) minus VmRSS before the first stream, over the streams. Steady: from "
            "the moment every stream has its first event to the end. Loop CPU: the engine's loop thread (its CPU clock). "
            "sse-parse-rate: one stream of the pre-generated file at full speed; CPU ns/event is the process's user + "
            "system time over the events; “parser alone” is the same file parsed from memory in 16 KiB chunks on one "
            "thread (`EventStreamParser` / the C parser), after the run.", ""] + \
        lines + ["", "| target | figure | holds |", "| --- | --- | --- |"] + targets


def write_report(results, counts, invalid, clients, rounds):
    machine = f"{platform.node()} · {os.cpu_count()} cores · {platform.platform()} · " + \
        subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    lines = ["# Benchmarks", "", f"Machine: {machine}  ", f"Date: {time.strftime('%Y-%m-%d')}  ",
             f"Command: `make bench` ({rounds} interleaved rounds; medians with min–max)", ""]
    lines += ["| workload | client | req/s (min–max) | × C limit | × async-http-client | MiB/s | p50 µs | p99 µs | CPU µs/req | CPU % | idle RSS MiB | peak RSS MiB | connections |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    chart = {}
    decoded = {}
    for workload in [w for w in WORKLOADS if w not in SSE_WORKLOADS and w not in OPENAPI_WORKLOADS]:
        c_rps = median_of(results.get((workload, REFERENCE.get(workload, "c-libcurl")), []), "rps")[0]
        ahc_rps = median_of(results.get((workload, "async-http-client"), []), "rps")[0]
        for client in clients:
            runs = results.get((workload, client))
            if not runs:
                continue
            rps, low, high = median_of(runs, "rps")
            if rps is None:
                lines.append(f"| {workload} | {client} | invalid | | | | | | | | |")
                continue
            ratio_c = f"{rps / c_rps:.2f}" if c_rps else ""
            ratio_ahc = f"{rps / ahc_rps:.2f}" if ahc_rps else ""
            if workload not in REFERENCE:
                chart.setdefault(client, {})[workload] = rps / c_rps if c_rps else None
            if workload == "json-16-decoded" and ahc_rps:
                decoded[client] = rps / ahc_rps
            mib = median_of(runs, "mibps")[0]
            p50 = median_of(runs, "p50_us")[0]
            p99 = median_of(runs, "p99_us")[0]
            cpu = median_of(runs, "cpu_us_per_request")[0]
            rss = median_of(runs, "peak_rss_kib")[0]
            idle = median_of(runs, "idle_rss_kib")[0]
            percent = median_of(runs, "cpu_percent")[0]
            conns = median_of(runs, "connections")[0]
            idle_cell = f"{idle / 1024:,.1f}" if idle is not None else ""
            percent_cell = f"{percent:,.1f}" if percent is not None else ""
            lines.append(f"| {workload} | {client} | {rps:,.0f} ({low:,.0f}–{high:,.0f}) | {ratio_c} | {ratio_ahc} | {mib:,.1f} | {p50:,.0f} | {p99:,.0f} | {cpu:,.1f} | {percent_cell} | {idle_cell} | {rss / 1024:,.1f} | {conns:,.0f} |")
    targets = target_lines(results)
    if targets:
        lines += [""] + targets
    openapi = openapi_lines(results)
    if openapi:
        lines += [""] + openapi
    if counts:
        lines += ["", "## Instructions per request (callgrind: difference of runs at 4,000 and 12,000 requests; median of 3 for Curlew and C, one run for the peers)", "",
                  "| workload | client | instructions | × C limit |", "| --- | --- | ---: | ---: |"]
        for (workload, client), count in counts.items():
            if client.endswith(" syscalls"):
                continue
            c_count = counts.get((workload, "c-libcurl"))
            if count is None:
                lines.append(f"| {workload} | {client} | n/a | |")
            else:
                ratio = f"{count / c_count:.2f}" if c_count else ""
                lines.append(f"| {workload} | {client} | {count:,.0f} | {ratio} |")
        header = counts.get(("small-get-1", HEADER_CLIENT))
        chain = counts.get(("small-get-1", CHAIN_CLIENT))
        if header and chain:
            lines += ["", f"The installed chain (retry + authentication) over the provider sending the same `Authorization` line: "
                      f"{chain:,.0f} against {header:,.0f} instructions, {(chain / header - 1) * 100:+.1f}% (issue 32: within 5%)."]
        rows = [(w, c[:-9], f) for (w, c), f in counts.items() if c.endswith(" syscalls") and f]
        if rows:
            lines += ["", "## System calls and context switches per request (strace -f -c and getrusage over the client's threads: difference of runs at 4,000 and 12,000 requests)", "",
                      "| workload | client | futex calls | all system calls | context switches |", "| --- | --- | ---: | ---: | ---: |"]
            lines += [f"| {w} | {c} | {f['futex']:.2f} | {f['syscalls']:.2f} | {f['csw']:.2f} |" for w, c, f in rows]
    if invalid:
        lines += ["", "## Invalid runs", ""] + [f"- {w} / {c}: {e}" for w, c, e in invalid]
    lines += ["", "![Requests per second relative to the C limit](benchmarks.png)", ""]
    report = os.path.join(ROOT, "BENCHMARKS.md")
    history = ""
    if os.path.exists(report):
        with open(report) as f:
            text = f.read()
        if "\n## History" in text:
            history = text[text.index("\n## History"):]
    with open(report, "w") as f:
        f.write("\n".join(lines) + history)
    draw_chart(chart, decoded, os.path.join(ROOT, "benchmarks.png"))
    print(f"wrote {report}")


if __name__ == "__main__":
    main()

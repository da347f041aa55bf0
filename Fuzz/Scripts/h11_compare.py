#!/usr/bin/env python3
"""Compares Curlew's response-head parser with Python's h11 over a fuzzing corpus.

Produce the dump first (one JSON line per input; see the header of
Fuzz/Sources/FuzzResponseHead/FuzzResponseHead.swift):

    FUZZ_HEAD_DUMP=/tmp/head-dump.jsonl .build-fuzz/release/FuzzResponseHead -runs=0 CORPUS_DIR...

then (`pip install h11`):

    python3 Fuzz/Scripts/h11_compare.py /tmp/head-dump.jsonl [--libcurl PATH]... [--fuzzer BINARY]

Each input is fed to h11 as a client that sent `GET /` and now receives the response: the bytes, then
EOF, and events are read until the final Response (InformationalResponse heads are collected), an
error, or the end. The outcomes are compared:

- agree-accept: both took the head, with the same final status, interim codes, fields (names
  compared lowercased, values as h11 strips them, Content-Length collapsed as h11 does) and body
  framing (chunked, a length, or up to the connection's end);
- agree-reject: both refused it (a Curlew input that ends before its head does counts as refused, as
  h11 refuses one at EOF);
- differ: anything else, put into a class by the first feature of the input that explains it.

The fuzz target cuts its input into lines at LF, each kept with its line end, as libcurl's header
callback delivers them. libcurl validates and normalises some things before Curlew sees a line, so
for each class a representative input can be served to real libcurl (`--libcurl PATH`, repeatable, a
libcurl shared library loaded with ctypes in a child process): a one-shot server on 127.0.0.1 sends the
raw bytes and closes, and the report shows libcurl's result and the lines its header callback got. With
`--fuzzer` those lines are run through Curlew again (dump mode), which is what Curlew really sees.
"""

import argparse
import ast
import collections
import ctypes
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading

try:
    import h11
except ImportError:  # pragma: no cover
    sys.exit("h11_compare.py needs h11: pip install h11")

# MARK: - h11's view


def h11_outcome(raw):
    """What h11 makes of `raw` as the response to a GET."""
    conn = h11.Connection(our_role=h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "example.com")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(raw)
    interim = []
    eof = False
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if eof:
                    return {"verdict": "incomplete", "interim": interim}
                conn.receive_data(b"")
                eof = True
                continue
            if isinstance(event, h11.InformationalResponse):
                interim.append(event.status_code)
                continue
            if isinstance(event, h11.Response):
                return {
                    "verdict": "accepted",
                    "status": event.status_code,
                    "version": event.http_version.decode("latin-1"),
                    "reason": event.reason,
                    "interim": interim,
                    "fields": [(bytes(n), bytes(v)) for n, v in event.headers.raw_items()],
                }
            # ConnectionClosed, PAUSED (a 101 without an upgrade proposal) or anything else.
            return {"verdict": "rejected", "error": f"unexpected event {event!r}", "interim": interim}
    except h11.ProtocolError as error:
        return {"verdict": "rejected", "error": str(error), "interim": interim}


# MARK: - Comparison


def normalised(fields, from_h11):
    """(lowercased name, value bytes) pairs, Content-Length collapsed and Transfer-Encoding lowercased as h11 does."""
    result = []
    seen_length = None
    for field in fields:
        name, value = field[0], field[1]
        if not from_h11:
            # Curlew's value bytes when the dump has them (a value that is not UTF-8 keeps its bytes).
            name = name.encode("utf-8")
            value = bytes.fromhex(field[2]) if len(field) > 2 else value.encode("utf-8")
        name = name.lower()
        value = value.strip(b" \t")
        if name == b"content-length":
            value = value.split(b",")[0].strip()
            if seen_length is not None and seen_length == value:
                continue
            seen_length = value
        elif name == b"transfer-encoding":
            value = value.lower()
        result.append((name, value))
    return result


def compare(curlew, h11_result):
    """'agree-accept', 'agree-reject' or 'differ'."""
    c_accept = curlew["verdict"] == "accepted"
    h_accept = h11_result["verdict"] == "accepted"
    if not c_accept and not h_accept:
        return "agree-reject"
    if c_accept != h_accept:
        return "differ"
    if curlew["status"] != h11_result["status"] or curlew["interim"] != h11_result["interim"]:
        return "differ"
    if normalised(curlew["fields"], False) != normalised(h11_result["fields"], True):
        return "differ"
    if "chunked" in curlew and curlew_framing(curlew) != h11_framing(h11_result):
        return "differ"
    return "agree-accept"


def curlew_framing(curlew):
    """How the engine frames the body of an accepted head: chunked, a length, or up to the connection's end."""
    if curlew["chunked"]:
        return "chunked"
    return "close" if curlew["contentLength"] is None else curlew["contentLength"]


def h11_framing(result):
    """The same for h11 (which refuses a Transfer-Encoding other than chunked)."""
    fields = dict(normalised(result["fields"], True))
    if b"transfer-encoding" in fields:
        return "chunked"
    return int(fields[b"content-length"]) if b"content-length" in fields else "close"


# MARK: - Classes of difference

# The input is cut as the fuzz target cuts it: at LF, each line with its line end.


def curlew_lines(raw):
    lines = []
    start = 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end + 1
        lines.append(raw[start:end])
        start = end
    return lines


STRICT_STATUS = re.compile(rb"HTTP/[0-9](\.[0-9])? [0-9]{3}( |$)")
TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+$")
H11_LINE = re.compile(r"^(illegal status line|illegal header line): bytearray\((b['\"].*['\"])\)$", re.S)


def status_code_of(line):
    """The code of a status line Curlew's parser takes, or None."""
    if not STRICT_STATUS.match(line):
        return None
    index = line.index(b" ") + 1
    return int(line[index:index + 3])


def heads(raw):
    """The heads as Curlew's parser sees them, up to the final one: [(status line, [field lines], blank line)],
    each line without its line end, and the line (with its end) that closed the head, or None. Blank lines
    before a head are skipped, as the parser skips them."""
    result = []
    current = None
    for line in curlew_lines(raw):
        content = line.rstrip(b"\r\n")
        if current is None:
            if content:
                current = (content, [])
            continue
        if content:
            current[1].append(content)
            continue
        result.append((current[0], current[1], line))
        code = status_code_of(current[0])
        if code is None or not (100 <= code < 200) or code == 101:
            return result
        current = None
    if current is not None:
        result.append((current[0], current[1], None))
    return result


def status_line_class(line):
    """Why h11 refuses a status line Curlew takes (h11 wants HTTP/d.d, SP, three digits, [SP reason])."""
    if line.endswith(b"\r"):
        return "extra CR before the line end"
    version = line[5:line.index(b" ")] if b" " in line else b""
    if b"." not in version:
        return "version without a minor digit (HTTP/2 NNN, HTTP/3, HTTP/1)"
    if any(b < 0x20 and b != 0x09 or b == 0x7F for b in line) or b"\x0b" in line or b"\x0c" in line:
        return "control characters in the reason phrase"
    return "status line variant h11 refuses"


def field_line_class(line):
    """Why h11 refuses a field line (after its obs-fold unfolding)."""
    if line[:1] == b"\r":
        return "line starting with CR (after another line's LF)"
    if line.endswith(b"\r"):
        return "extra CR before the line end"
    colon = line.find(b":")
    if colon < 0:
        return "field line without a colon"
    name, value = line[:colon], line[colon + 1:]
    if not name:
        return "empty field name"
    if not TOKEN.match(name):
        if TOKEN.match(name.rstrip(b" \t")):
            return "whitespace between field name and colon"
        if TOKEN.match(name.lstrip(b" \t")):
            return "whitespace before a field name"
        return "invalid characters in a field name"
    if b"\r" in value:
        return "bare CR inside a value"
    if b"\x00" in value:
        return "NUL in a value"
    return "VT or FF in a value"


def h11_rejection_class(raw, error):
    """The class of a head Curlew takes and h11 refuses, from h11's error (which names the line it refused)."""
    match = H11_LINE.match(error)
    if match:
        line = ast.literal_eval(match.group(2))  # the repr of the bytes h11 quotes
        if match.group(1) == "illegal status line":
            return status_line_class(line)
        # h11 unfolds obs-fold before it checks lines: a folded line shows the fold's space.
        parsed = heads(raw)
        folded = any(field[:1] in (b" ", b"\t") for _, fields, _ in parsed for field in fields)
        kind = field_line_class(line)
        return kind + (" (in a folded line)" if folded and kind.startswith("field line without") else "")
    if error.startswith("continuation line at start of headers"):
        return "whitespace before the first field line"
    if error.startswith("no response line received"):
        return "blank lines before the status line"
    if error.startswith("peer unexpectedly closed connection"):
        # h11 never found the blank line that ended the head for Curlew.
        ends = [end for _, _, end in heads(raw) if end is not None]
        if ends and not ends[-1].endswith(b"\n"):
            return "head ended by a last line without LF"
        if ends and ends[-1].count(b"\r") > 1:
            return "blank line with extra CRs"
        return "head end h11 does not see"
    if "status_code should be in range" in error:
        return "status code below 100"
    if error.startswith("unexpected event") or "_SWITCH_UPGRADE" in error:
        return "101 without an upgrade request"
    if error.startswith("Only Transfer-Encoding: chunked"):
        return "Transfer-Encoding other than chunked"
    if error.startswith("multiple Transfer-Encoding"):
        return "two Transfer-Encoding fields"
    if error.startswith("conflicting Content-Length"):
        return "Content-Length list h11 refuses"
    if error.startswith("bad Content-Length"):
        return "Content-Length h11 refuses"
    return "other: " + error[:60]


def field_difference_class(raw, curlew, h11_result):
    """Why two accepted heads differ."""
    final = heads(raw)[-1]
    folded = any(field[:1] in (b" ", b"\t") for field in final[1])
    if curlew["status"] != h11_result["status"]:
        return "different status"
    if curlew["interim"] != h11_result["interim"]:
        return "different interim heads"
    ours = normalised(curlew["fields"], False)
    theirs = normalised(h11_result["fields"], True)
    if ours == theirs:
        framing = f"body framing: Curlew {curlew_framing(curlew)}, h11 {h11_framing(h11_result)}"
        return framing + (" (a folded Transfer-Encoding)" if folded else "")
    if len(ours) != len(theirs):
        return "a field left out by Curlew" if len(ours) < len(theirs) else "a field Curlew has and h11 not"
    for (name, value), (their_name, their_value) in zip(ours, theirs):
        if name != their_name:
            return "different field names"
        if value == their_value:
            continue
        if any(b < 0x20 and b != 0x09 or b == 0x7F for b in their_value):
            return "control characters in a value (Curlew: space, h11 keeps them)"
        if value.decode("utf-8", "replace") == their_value.decode("utf-8", "replace"):
            return "obs-text not valid UTF-8 in a value (Curlew's String has U+FFFD, h11 keeps the bytes)"
        if folded and their_value.startswith(value) and len(value) < len(their_value):
            return "obs-fold: Curlew drops the continuation, h11 joins it"
        return "different values"
    return "unexplained"


def classify(raw, curlew, h11_result):
    """(who accepts, class) of a difference."""
    if curlew["verdict"] == "accepted" and h11_result["verdict"] == "accepted":
        return "both accept, differ", field_difference_class(raw, curlew, h11_result)
    if curlew["verdict"] == "accepted":
        return "Curlew accepts, h11 rejects", h11_rejection_class(raw, h11_result["error"])
    side = "h11 accepts, Curlew " + ("does not see the end" if curlew["verdict"] == "incomplete" else "rejects")
    message = curlew.get("message", "")
    if "two different Content-Length" in message:
        return side, "two different Content-Length values"
    if "invalid Content-Length" in message:
        return side, "Content-Length Curlew refuses (a list, or more than 18 digits)"
    if curlew.get("code") == "headersTooLarge":
        return side, "head larger than Curlew's limit (h11 checks its limit on incomplete heads only)"
    if "status line" in message:
        return side, "status line Curlew refuses"
    if curlew["verdict"] == "rejected":
        return side, "other: " + message[:60]
    return side, "head end Curlew does not see"


# MARK: - libcurl's view


def serve_once(payload):
    """A server on 127.0.0.1 that answers one connection with `payload` and closes it. Returns its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run():
        connection, _ = listener.accept()
        connection.settimeout(2)
        request = b""
        try:
            while b"\r\n\r\n" not in request:
                piece = connection.recv(4096)
                if not piece:
                    break
                request += piece
            connection.sendall(payload)
        except OSError:
            pass
        connection.shutdown(socket.SHUT_WR)
        connection.close()
        listener.close()

    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()[1]


def probe_child(library, transfer_decoding):
    """Child process: reads JSON lines of hex inputs on stdin, serves each to libcurl, prints JSON results."""
    curl = ctypes.CDLL(library)
    curl.curl_easy_init.restype = ctypes.c_void_p
    curl.curl_version.restype = ctypes.c_char_p
    curl.curl_easy_strerror.restype = ctypes.c_char_p
    callback_type = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)
    version = curl.curl_version().decode()
    for line in sys.stdin:
        raw = bytes.fromhex(json.loads(line)["input"])
        port = serve_once(raw)
        headers, body = [], []

        def on_header(data, size, count, _):
            headers.append(ctypes.string_at(data, size * count))
            return size * count

        def on_body(data, size, count, _):
            body.append(ctypes.string_at(data, size * count))
            return size * count

        header_callback, body_callback = callback_type(on_header), callback_type(on_body)
        easy = ctypes.c_void_p(curl.curl_easy_init())
        error = ctypes.create_string_buffer(256)
        setopt = curl.curl_easy_setopt
        setopt(easy, 10002, f"http://127.0.0.1:{port}/".encode())  # CURLOPT_URL
        setopt(easy, 20079, header_callback)  # CURLOPT_HEADERFUNCTION
        setopt(easy, 20011, body_callback)  # CURLOPT_WRITEFUNCTION
        setopt(easy, 10010, error)  # CURLOPT_ERRORBUFFER
        setopt(easy, 155, ctypes.c_long(3000))  # CURLOPT_TIMEOUT_MS
        setopt(easy, 157, ctypes.c_long(1 if transfer_decoding else 0))  # CURLOPT_HTTP_TRANSFER_DECODING
        code = curl.curl_easy_perform(easy)
        status = ctypes.c_long(0)
        curl.curl_easy_getinfo(easy, 0x200002, ctypes.byref(status))  # CURLINFO_RESPONSE_CODE
        http_version = ctypes.c_long(0)
        curl.curl_easy_getinfo(easy, 0x20002E, ctypes.byref(http_version))  # CURLINFO_HTTP_VERSION
        curl.curl_easy_cleanup(easy)
        print(json.dumps({
            "libcurl": version.split()[0],
            "code": code,
            "error": error.value.decode("latin-1") or curl.curl_easy_strerror(code).decode(),
            "status": status.value,
            "version": {0: "none", 1: "1.0", 2: "1.1", 3: "2", 30: "3"}.get(http_version.value, str(http_version.value)),
            "headers": b"".join(headers).hex(),
            "body": b"".join(body).hex(),
        }), flush=True)


def probe(library, inputs, transfer_decoding=True):
    """libcurl's results for the hex `inputs`, from a child process that loads `library`."""
    child = subprocess.run(
        [sys.executable, __file__, "--probe-child", library] + ([] if transfer_decoding else ["--no-transfer-decoding"]),
        input="".join(json.dumps({"input": item}) + "\n" for item in inputs),
        capture_output=True, text=True, timeout=60 + 5 * len(inputs))
    if child.returncode != 0:
        sys.exit(f"libcurl probe failed: {child.stderr}")
    return [json.loads(line) for line in child.stdout.splitlines()]


def curlew_on(fuzzer, inputs):
    """Curlew's dump records for the hex `inputs`, run once each by the fuzz target in dump mode."""
    with tempfile.TemporaryDirectory() as directory:
        for index, item in enumerate(inputs):
            with open(os.path.join(directory, f"input-{index:04}"), "wb") as file:
                file.write(bytes.fromhex(item))
        dump = os.path.join(directory, "dump.jsonl")
        environment = dict(os.environ, FUZZ_HEAD_DUMP=dump, SWIFT_BACKTRACE="enable=no", ASAN_OPTIONS="detect_leaks=0")
        files = [os.path.join(directory, f"input-{index:04}") for index in range(len(inputs))]
        subprocess.run([fuzzer] + files, env=environment, capture_output=True, check=True)
        by_input = {}
        with open(dump) as file:
            for line in file:
                record = json.loads(line)
                by_input[record["input"]] = record
        return [by_input.get(item) for item in inputs]


# MARK: - Report


def shown(data, limit=160):
    """`data`'s repr, cut to `limit` characters."""
    text = repr(data)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(data)} bytes)"


def short(record):
    if record is None:
        return "(no record)"
    if record["verdict"] == "accepted":
        fields = ", ".join(f"{field[0]}: {field[1]!r}" for field in record["fields"])
        return f"accepted {record['status']} [{fields}]"[:160]
    if record["verdict"] == "rejected":
        return f"rejected {record.get('code', '')}: {record.get('message', record.get('error', ''))}"[:160]
    return record["verdict"]


def h11_short(result):
    if result["verdict"] == "accepted":
        fields = ", ".join(f"{n.decode('latin-1')}: {v.decode('latin-1')!r}" for n, v in result["fields"])
        return f"accepted {result['status']} [{fields}]"[:160]
    return f"{result['verdict']}: {result.get('error', '')}"[:160]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", nargs="?", help="the FUZZ_HEAD_DUMP file")
    parser.add_argument("--libcurl", action="append", default=[], help="a libcurl shared library to probe each class's example with")
    parser.add_argument("--fuzzer", help="the FuzzResponseHead binary, to run what libcurl delivered through Curlew")
    parser.add_argument("--extra", help="a file of hex inputs (one a line, # comments) to probe with libcurl as well")
    parser.add_argument("--json", help="write every difference (input, class, both outcomes) to this file")
    parser.add_argument("--probe-child", help=argparse.SUPPRESS)
    parser.add_argument("--no-transfer-decoding", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.probe_child:
        return probe_child(arguments.probe_child, not arguments.no_transfer_decoding)
    if not arguments.dump:
        parser.error("the dump file is needed")

    records = {}
    with open(arguments.dump) as file:
        for line in file:
            record = json.loads(line)
            records.setdefault(record["input"], record)  # the same input twice (seed and corpus) counts once
    counts = collections.Counter()
    classes = collections.OrderedDict()
    differences = []
    for item, curlew in records.items():
        raw = bytes.fromhex(item)
        result = h11_outcome(raw)
        outcome = compare(curlew, result)
        counts[outcome] += 1
        if outcome != "differ":
            continue
        key = classify(raw, curlew, result)
        entry = classes.setdefault(key, {"count": 0, "example": None})
        entry["count"] += 1
        if entry["example"] is None or len(item) < len(entry["example"][0]):
            entry["example"] = (item, curlew, result)
        differences.append({"input": item, "side": key[0], "class": key[1], "curlew": short(curlew), "h11": h11_short(result)})

    print(f"inputs compared: {len(records)} (distinct)")
    for name in ("agree-accept", "agree-reject", "differ"):
        print(f"  {name}: {counts[name]}")
    print()
    print("| who accepts | class | count |")
    print("| --- | --- | ---: |")
    for (side, name), entry in sorted(classes.items(), key=lambda pair: (pair[0][0], -pair[1]["count"])):
        print(f"| {side} | {name} | {entry['count']} |")
    print()
    examples = []
    for (side, name), entry in sorted(classes.items(), key=lambda pair: (pair[0][0], -pair[1]["count"])):
        item, curlew, result = entry["example"]
        examples.append(item)
        print(f"## {side}: {name} ({entry['count']})")
        print(f"  input:  {shown(bytes.fromhex(item))}")
        print(f"  Curlew: {short(curlew)}")
        print(f"  h11:    {h11_short(result)}")
    if arguments.extra:
        with open(arguments.extra) as file:
            extra = [line.split("#")[0].strip() for line in file]
        extra = [item for item in extra if item]
        for item in extra:
            raw = bytes.fromhex(item)
            result = h11_outcome(raw)
            print(f"## extra: {shown(raw)}")
            print(f"  h11:    {h11_short(result)}")
        examples += extra
    for library in arguments.libcurl:
        print()
        results = probe(library, examples)
        delivered = curlew_on(arguments.fuzzer, [r["headers"] for r in results]) if arguments.fuzzer else [None] * len(results)
        print(f"# libcurl {results[0]['libcurl'] if results else library}: what each example's server reply gives")
        for item, result, again in zip(examples, results, delivered):
            print(f"  input:    {shown(bytes.fromhex(item))}")
            print(f"    curl:   code {result['code']} ({result['error']}), status {result['status']}, version {result['version']}")
            print(f"    header callback got: {shown(bytes.fromhex(result['headers']))}")
            if again is not None:
                print(f"    Curlew on those lines: {short(again)}")
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump(differences, file, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Curlew's multipart bodies read by a second parser: python-multipart (issue 33).

Runs the FuzzMultipart target once over each input of the corpus directories given (by default
Fuzz/Corpus/FuzzMultipart) with FUZZ_MULTIPART_DUMP set, so that it writes, for each accepted form, the
body Curlew encoded and its Content-Type, and what the parts must be (FuzzMultipart's oracle has already
checked them against multipart-kit). Each body is then parsed with python-multipart's `MultipartParser`
and its `parse_options_header`, and each part compared: bytes, name and file name as sent (Curlew
escapes `"`, CR, LF as %22, %0D, %0A, as WHATWG's form encoding does; python-multipart decodes no
percent escapes, so it must give back the escaped form), Content-Type.

Disagreements are sorted into the known differences of reading, each explained below, and anything
else (`unexplained`, which is a failure: exit status 1):

- `backslash`: a name or file name holding `\\`. Curlew sends it as it is, as browsers do (WHATWG escapes
  only `"`, CR and LF); python-multipart reads the quoted value as an RFC 2045 quoted-string, where `\\`
  escapes the next character: `\\\\` comes back as one backslash, and a value ending in `\\` takes its
  closing quote as escaped (the value runs on into the next parameter).
- `ie-path`: a file name starting `X:\\` or `\\\\` once unescaped: python-multipart keeps what follows the
  last backslash (a workaround for Internet Explorer sending a whole Windows path).

Usage: Fuzz/Scripts/multipart_compare.py [--binary PATH] [--keep DIR] [CORPUS_DIR ...]
Needs: pip install python-multipart
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

from python_multipart.multipart import MultipartParser, parse_options_header

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dump(binary, inputs, directory):
    """Runs the target once over each input, dumping into `directory`."""
    env = dict(os.environ, FUZZ_MULTIPART_DUMP=directory, SWIFT_BACKTRACE="enable=no", ASAN_OPTIONS="detect_leaks=0")
    for start in range(0, len(inputs), 256):
        batch = inputs[start : start + 256]
        run = subprocess.run([binary, *batch], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{binary} failed on one of {len(batch)} inputs:\n{run.stderr[-3000:]}")


def parse(body, boundary):
    """The parts python-multipart reads: headers (raw bytes) and data."""
    parts = []
    header = {}
    state = {"ended": False}

    def begin():
        parts.append({"headers": [], "data": bytearray()})

    def field(data, start, end):
        header.setdefault("name", bytearray()).extend(data[start:end])

    def value(data, start, end):
        header.setdefault("value", bytearray()).extend(data[start:end])

    def header_end():
        parts[-1]["headers"].append((bytes(header.get("name", b"")), bytes(header.get("value", b""))))
        header.clear()

    def data(data, start, end):
        parts[-1]["data"].extend(data[start:end])

    def end():
        state["ended"] = True

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": begin,
            "on_header_field": field,
            "on_header_value": value,
            "on_header_end": header_end,
            "on_part_data": data,
            "on_end": end,
        },
    )
    parser.write(body)
    parser.finalize()
    return parts, state["ended"]


def explain(kind, want, got, header_as_sent):
    """The known difference of reading that explains a parameter python-multipart read otherwise, if one
    does. Only when the header's bytes are exactly those Curlew must send: then the difference is in the
    reading, not the bytes."""
    if not header_as_sent:
        return None
    name, filename = (None if want[key] is None else want[key].encode() for key in ("name_wire", "filename_wire"))
    value = name if kind == "name" else filename
    if value is not None and b"\\" in value:
        # python-multipart's reading of a quoted-string's escapes, then of Internet Explorer's paths.
        unescaped = value.replace(b"\\\\", b"\\").replace(b'\\"', b'"')
        if kind == "filename" and (unescaped[1:3] == b":\\" or unescaped[:2] == b"\\\\") and got == unescaped.split(b"\\")[-1]:
            return "ie-path"
        if got == unescaped or (kind == "name" and value.endswith(b"\\")):
            return "backslash"
    # A name ending in a backslash: its closing quote read as escaped, the file name taken into it.
    if kind == "filename" and name.endswith(b"\\") and got is None:
        return "backslash"
    return None


def compare(record, body):
    """The disagreements for one body: (kind, detail, explanation or None)."""
    found = []
    _, options = parse_options_header(record["content_type"])
    boundary = options.get(b"boundary")
    if boundary != record["boundary"].encode():
        return [("boundary", f"{boundary!r} for {record['boundary']!r}", None)]
    try:
        parts, ended = parse(body, boundary)
    except Exception as error:  # python-multipart's parse errors
        return [("parse", repr(error), None)]
    if not ended:
        found.append(("end", "the parser never reached the closing delimiter", None))
    if len(parts) != len(record["parts"]):
        return found + [("count", f"{len(parts)} parts for {len(record['parts'])}", None)]
    for index, (part, want) in enumerate(zip(parts, record["parts"])):
        if bytes(part["data"]) != bytes.fromhex(want["data_hex"]):
            found.append(("data", f"part {index}: {len(part['data'])} bytes for {len(want['data_hex']) // 2}", None))
        headers = {name.lower(): value for name, value in part["headers"]}
        raw = headers.get(b"content-disposition", b"")
        sent = b'form-data; name="' + want["name_wire"].encode() + b'"'
        if want["filename_wire"] is not None:
            sent += b'; filename="' + want["filename_wire"].encode() + b'"'
        if raw != sent:
            found.append(("disposition", f"part {index}: {raw!r} for {sent!r}", None))
        disposition, params = parse_options_header(raw)
        if disposition != b"form-data":
            found.append(("disposition", f"part {index}: {disposition!r}", None))
        for kind in ("name", "filename"):
            wire = want[f"{kind}_wire"]
            expected = None if wire is None else wire.encode()
            got = params.get(kind.encode())
            if got != expected:
                detail = f"part {index}: {kind} {got!r} for {expected!r}"
                found.append((kind, detail, explain(kind, want, got, raw == sent)))
        # python-multipart skips the spaces a header value starts with (as multipart-kit does).
        expected_type = None if want["content_type"] is None else want["content_type"].encode().lstrip(b" ")
        if headers.get(b"content-type") != expected_type:
            found.append(("content-type", f"part {index}: {headers.get(b'content-type')!r} for {expected_type!r}", None))
    return found


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--binary", default=os.path.join(ROOT, ".build-fuzz/release/FuzzMultipart"))
    arguments.add_argument("--keep", help="dump into this directory (kept) instead of a temporary one")
    arguments.add_argument("--verbose", action="store_true", help="print every disagreement, explained ones too")
    arguments.add_argument("corpus", nargs="*", default=[os.path.join(ROOT, "Fuzz/Corpus/FuzzMultipart")])
    options = arguments.parse_args()

    inputs = sorted(
        os.path.join(directory, name)
        for directory in options.corpus
        for name in os.listdir(directory)
        if os.path.isfile(os.path.join(directory, name))
    )
    with tempfile.TemporaryDirectory(prefix="fuzzmp-dump-") as temporary:
        directory = options.keep or temporary
        os.makedirs(directory, exist_ok=True)
        dump(options.binary, inputs, directory)
        records = sorted(name[: -len(".json")] for name in os.listdir(directory) if name.endswith(".json"))
        refused = agree = unchecked = 0
        kinds = Counter()
        unexplained = []
        for stem in records:
            with open(os.path.join(directory, stem + ".json"), encoding="utf-8") as file:
                record = json.load(file)
            if "refused" in record:
                refused += 1
                continue
            if not record["kept_apart"]:
                # A file part holding the boundary the caller chose: Curlew cannot check a file's bytes
                # before sending them (documented); the body has no parts to compare.
                unchecked += 1
                continue
            with open(os.path.join(directory, stem + ".body"), "rb") as file:
                body = file.read()
            found = compare(record, body)
            if not found:
                agree += 1
                continue
            for kind, detail, explanation in found:
                kinds[explanation or "unexplained"] += 1
                if explanation is None or options.verbose:
                    print(f"{stem}: {kind}: {detail} [{explanation or 'unexplained'}]")
            if any(explanation is None for _, _, explanation in found):
                unexplained.append(stem)
        bodies = len(records) - refused - unchecked
        print(
            f"{len(inputs)} inputs, {len(records)} distinct: {refused} refused by Curlew, {unchecked} with a file "
            f"holding the chosen boundary (not compared), {bodies} bodies; "
            f"{agree} agree with python-multipart, {bodies - agree} disagree"
        )
        for kind, count in sorted(kinds.items()):
            print(f"  {kind}: {count} disagreement(s)")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compare how Curlew follows a redirect with the WHATWG URL Standard (ada-url), over a FuzzURL corpus.

Runs the FuzzURL binary once over every input (file arguments: each input runs once, nothing is written
to the corpus) with FUZZ_URL_DUMP set, reads the JSON lines its redirect inputs write (base URL,
Location, Curlew's resolution, the URL Curlew follows or null when it refuses, libcurl's own
CURLINFO_REDIRECT_URL, the fuzz target's RFC 3986 transcription), resolves each Location against its
base with ada-url, and reports agreement counts and difference classes with an example of each.

    pip install ada-url
    python3 Fuzz/Scripts/url_compare.py [--binary .build-fuzz/release/FuzzURL] [corpus dir or file ...]

Offline: nothing is fetched. Differences are expected (Curlew follows RFC 3986 through libcurl, not
WHATWG); the script classifies them, it does not fail on them.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

try:
    import ada_url
except ImportError:
    sys.exit("url_compare.py needs ada-url: pip install ada-url")


def run_binary(binary, paths):
    """Runs every input once with the dump on; returns the dumped records."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, name) for name in os.listdir(path) if not name.startswith("."))
        else:
            files.append(path)
    with tempfile.TemporaryDirectory() as directory:
        env = dict(os.environ, FUZZ_URL_DUMP=directory, SWIFT_BACKTRACE="enable=no", ASAN_OPTIONS="detect_leaks=0")
        # In batches: an argument list of many thousands of paths may pass the system's limit.
        for start in range(0, len(files), 2000):
            result = subprocess.run(
                [binary] + files[start:start + 2000], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if result.returncode != 0:
                sys.exit("FuzzURL failed:\n" + result.stderr.decode(errors="replace")[-2000:])
        dump = os.path.join(directory, "FuzzURL.jsonl")
        if not os.path.exists(dump):
            return len(files), []
        # One record per (base, Location): libFuzzer runs the first file twice, and inputs differing
        # only in the options byte (status, method) resolve alike.
        records = {}
        with open(dump, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                records.setdefault((record["base"], record["location"]), record)
        return len(files), list(records.values())


def whatwg_follows(base, location):
    """The URL a WHATWG client follows (http or https), or None when it refuses."""
    try:
        joined = ada_url.join_url(base, location)
    except ValueError:
        return None
    scheme = joined.split(":", 1)[0]
    return joined if scheme in ("http", "https") else None


def whatwg_reading(url):
    """`url` as a WHATWG parser serialises it, or None."""
    try:
        return ada_url.normalize_url(url)
    except ValueError:
        return None


def upper_escapes(url):
    """`url` with the hex digits of its escapes in upper case (`%c3%a9` and `%C3%A9` are one URL)."""
    return None if url is None else re.sub(r"%[0-9a-fA-F]{2}", lambda match: match.group(0).upper(), url)


def unescaped(url):
    """Escapes decoded (for comparing URLs that differ only in which bytes are escaped)."""
    return urllib.parse.unquote(url, errors="surrogateescape").replace("+", " ")


def difference_class(record, whatwg):
    """Why Curlew and WHATWG differ on `record`: the first feature of the input that explains it."""
    location = record["location"]
    base = record["base"]
    follows = record["follows"]
    if whatwg_reading(base) is None:
        return "base URL WHATWG refuses (host code points, IDNA, one slash; libcurl took it)"
    if "\\" in location:
        return "backslash (WHATWG: a slash in http(s) URLs; libcurl: a path byte)"
    if re.search(r"[\t\n\r]", location):
        return "tab or newline (WHATWG strips them; libcurl refuses)"
    if re.search(r"[\x00-\x1f\x7f]", location):
        return "other control characters (WHATWG escapes them; libcurl refuses)"
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:(?!//)", location) or re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:///", location):
        return "scheme without exactly two slashes (WHATWG: relative for the same scheme; libcurl: 1 or 3 slashes as 2)"
    if location.startswith("///"):
        return "network path with an empty host (libcurl reads three slashes as two)"
    if re.match(r"^[0-9+.\-][A-Za-z0-9+.\-]*:", location):
        return "scheme starting with a digit or sign (libcurl 7.88: a scheme, refused; WHATWG: a path)"
    if " " in location:
        return "spaces (libcurl: %20 in a relative path, + in its query, refused in an absolute URL; WHATWG: %20)"
    if any(ord(c) > 0x7F for c in location):
        return "non-ASCII (libcurl: raw in absolute URLs, %xx in relative ones; WHATWG: %XX, IDNA for hosts)"
    if follows is not None and whatwg is not None:
        if unescaped(follows) == unescaped(whatwg):
            return "escaping only (which bytes are %XX-escaped, hex case)"
        if follows.lower() == whatwg.lower():
            return "letter case only"
    if re.search(r"%2e|%2E", location):
        return "escaped dot segments (%2e: WHATWG removes them, libcurl keeps them)"
    if "//" in re.sub(r"^[A-Za-z][A-Za-z0-9+.\-]*://", "", location).lstrip("/") or "//" in base.split("://", 1)[-1]:
        return "empty path segments (libcurl drops some, WHATWG keeps them)"
    if re.search(r"(^|/)\.\.?(/|$|\?|#)", location):
        return "dot segments"
    if re.match(r"^(([A-Za-z][A-Za-z0-9+.\-]*:)?//)", location):
        return "host syntax (IPv4 forms, host code points, ports, userinfo)"
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build-fuzz/release/FuzzURL")
    parser.add_argument("--examples", type=int, default=1, help="examples shown per class")
    parser.add_argument("paths", nargs="*", default=["Fuzz/Corpus/FuzzURL"])
    arguments = parser.parse_args()

    inputs, records = run_binary(arguments.binary, arguments.paths)
    counts = collections.Counter()
    classes = collections.Counter()
    examples = collections.defaultdict(list)
    corrections = collections.Counter()
    correction_examples = {}

    for record in records:
        whatwg = whatwg_follows(record["base"], record["location"])
        follows = record["follows"]
        if record["curlew"] != record["libcurl"]:
            location = record["location"]
            if location.strip(" \t") == "":
                kind = "empty (libcurl reports no redirect; resolved, the base's parent path)"
            elif location.startswith("#"):
                kind = "fragment-only (libcurl before 8.8: the base's parent path)"
            elif "#" in record["base"]:
                kind = "base with a fragment (libcurl 7.88 resolves into it: `?q` and `x` against `/a#f/g`)"
            elif unescaped(record["libcurl"] or "") == unescaped(record["curlew"] or ""):
                kind = "escaping only (the path resolved apart from its query)"
            else:
                kind = "query or fragment after a path (libcurl 7.88: `./?q` and `../?q` lose the last slash)"
            corrections[kind] += 1
            correction_examples.setdefault(kind, record)
        if follows is None and whatwg is None:
            counts["both refuse"] += 1
            continue
        if follows == whatwg:
            counts["same URL"] += 1
            continue
        if follows is not None and whatwg is not None and upper_escapes(whatwg_reading(follows)) == upper_escapes(whatwg):
            counts["same URL as a WHATWG parser reads Curlew's"] += 1
            continue
        if follows is None:
            outcome = "Curlew refuses, WHATWG follows"
        elif whatwg is None:
            outcome = "Curlew follows, WHATWG refuses"
        else:
            outcome = "different URLs"
        counts[outcome] += 1
        kind = (outcome, difference_class(record, whatwg))
        classes[kind] += 1
        if len(examples[kind]) < arguments.examples:
            examples[kind].append((record, whatwg))

    print(f"inputs run: {inputs}; distinct (base, Location) pairs of redirect inputs: {len(records)}")
    for name in ["same URL", "same URL as a WHATWG parser reads Curlew's", "both refuse",
                 "different URLs", "Curlew follows, WHATWG refuses", "Curlew refuses, WHATWG follows"]:
        print(f"  {name}: {counts[name]}")
    agreeing = counts["same URL"] + counts["same URL as a WHATWG parser reads Curlew's"] + counts["both refuse"]
    if records:
        print(f"  agreement: {agreeing}/{len(records)} ({100 * agreeing / len(records):.1f}%)")
    print("\ndifference classes:")
    for (outcome, kind), count in sorted(classes.items(), key=lambda item: -item[1]):
        print(f"  {count:6}  {outcome}: {kind}")
        for record, whatwg in examples[(outcome, kind)]:
            print(f"            base {record['base']!r} + Location {record['location']!r}")
            print(f"            Curlew {record['follows']!r}, WHATWG {whatwg!r}")
    print("\nwhere Curlew corrects libcurl's own CURLINFO_REDIRECT_URL (RFC 3986 §5.2.2):")
    for kind, count in sorted(corrections.items(), key=lambda item: -item[1]):
        record = correction_examples[kind]
        print(f"  {count:6}  {kind}: base {record['base']!r} + {record['location']!r}: "
              f"libcurl {record['libcurl']!r}, Curlew {record['curlew']!r}")


if __name__ == "__main__":
    main()

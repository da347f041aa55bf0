#!/usr/bin/env python3
"""Checks that Sources/NameCheck/NameCheck.swift names every public top-level type of Curlew's products.

Run by `make examples` after the examples are built: the modules' public interfaces are read from that
build with swift-symbolgraph-extract, and every type that is not deprecated must appear in NameCheck.swift
(which compiles only if each is unambiguous beside Hummingbird, NIO and async-http-client). Prints the
missing names and exits 1 if there are any.
"""
import glob
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(EXAMPLES)
BUILD = os.path.join(EXAMPLES, ".build", "debug")
MODULES = ["Curlew", "CurlewEngine", "CurlewOpenAPI", "CurlewServiceLifecycle", "CurlewTesting"]
KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"}


def public_types(output):
    # The C modules the Swift ones import are found through the module maps SwiftPM wrote or the packages ship.
    maps = glob.glob(os.path.join(BUILD, "*.build", "module.modulemap"))
    maps += glob.glob(os.path.join(EXAMPLES, ".build", "checkouts", "*", "Sources", "*", "include", "module.modulemap"))
    flags = [f"-Xcc -fmodule-map-file={m}" for m in maps]
    names = {}
    for module in MODULES:
        command = (
            ["swift", "symbolgraph-extract", "-module-name", module, "-I", os.path.join(BUILD, "Modules"),
             "-I", os.path.join(REPO, "Sources", "CCurl"), "-I", os.path.join(REPO, "Sources", "CZlib"),
             "-target", f"{platform.machine()}-unknown-linux-gnu", "-minimum-access-level", "public", "-output-dir", output]
            + " ".join(flags).split()
        )
        subprocess.run(command, check=True)
        with open(os.path.join(output, f"{module}.symbols.json")) as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            if len(symbol["pathComponents"]) != 1 or symbol["kind"]["identifier"] not in KINDS:
                continue
            deprecated = any(
                entry.get("isUnconditionallyDeprecated") or "deprecated" in entry
                for entry in symbol.get("availability", []))
            if not deprecated:
                names[symbol["pathComponents"][0]] = module
    return names


def main():
    with open(os.path.join(EXAMPLES, "Sources", "NameCheck", "NameCheck.swift")) as file:
        source = file.read()
    with tempfile.TemporaryDirectory() as output:
        names = public_types(output)
    missing = sorted(f"{module}.{name}" for name, module in names.items() if not re.search(rf"\b{name}\b", source))
    print(f"NameCheck.swift names {len(names) - len(missing)} of the {len(names)} public types of {', '.join(MODULES)}")
    if missing:
        print("missing: " + ", ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

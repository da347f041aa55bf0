#!/usr/bin/env python3
"""The soak (issue 33): `make soak` runs this by hand, never in CI.

Starts nginx (HTTP/1.1, HTTPS and HTTP/2, as `make bench` configures it) and a hostile server on loopback,
runs the `soak` executable (Sources/soak) for SOAK_REQUESTS requests through one session (at most
SOAK_SECONDS; SOAK_ONLY=<scenario>[,<scenario>…] runs those alone) and reads its samples, taken between rounds
when nothing is in flight, then after SOAK_REST quiet seconds. After the warm-up (the first fifth of the
requests) the descriptors other than sockets and the threads other than Swift's task pool must not
change, the pool must keep within libdispatch's bound and have no worker left while idle, no connection
may be counted that is not a socket, the pooled easy handles must stay within the workers' number, and
the resident memory and the heap's bytes in use (glibc's count, apart from what malloc keeps free) may
each grow by at most 10%. Writes the samples to Benchmarks/out/soak.jsonl, the verdict to stdout and a
plot to soak.png (matplotlib).
"""
import json
import os
import random
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (nginx's configuration and certificates, shared with `make bench`)

REQUESTS = int(os.environ.get("SOAK_REQUESTS", "1000000"))
SECONDS = int(os.environ.get("SOAK_SECONDS", "3600"))
CONCURRENCY = int(os.environ.get("SOAK_CONCURRENCY", "16"))
PER_ROUND = int(os.environ.get("SOAK_PER_ROUND", "500"))
# Quiet seconds after the last round before a last sample: libdispatch retires a task-pool worker idle for 5 s.
REST = int(os.environ.get("SOAK_REST", "8"))
BINARY = os.environ.get("SOAK_BINARY", os.path.join(HERE, ".build", "release", "soak"))
OUT = os.path.join(HERE, "out")


class Hostile(socketserver.BaseRequestHandler):
    """Reads one request head and misbehaves as its `mode` says (see Scenarios.hostile)."""

    def handle(self):
        connection = self.request
        connection.settimeout(10)
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                try:
                    data = connection.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buffer += data
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            mode = int(line.split("mode=", 1)[1].split()[0]) if "mode=" in line else 4
            if mode == 0:
                return
            if mode == 1:
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Le")
                return
            if mode == 2:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                return
            if mode == 3:
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                return
            if mode == 5:
                connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n")
                return
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
            # A moment later the server drops the connection the client keeps in its pool.
            if random.random() < 0.5:
                time.sleep(0.001)
                return


class HostileServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def make_files(work):
    sse = os.path.join(work, "sse")
    os.makedirs(sse, exist_ok=True)
    with open(os.path.join(sse, "soak.sse"), "w") as f:
        f.write("retry: 1\n\n" + "".join(f"id: {n}\ndata: event {n}\n\n" for n in range(1, 5)))
    upload = os.path.join(work, "upload.bin")
    with open(upload, "wb") as f:
        f.write(os.urandom(256 * 1024))
    return upload


def pool_workers(sample):
    """libdispatch's workers for Swift's default task pool (com.apple.root.default-qos, as /proc cuts it)."""
    return len([name for name in sample.get("threadNames", []) if name.endswith("default-qos")])


def own_threads(sample):
    """Threads other than libdispatch's workers, which run Swift's task pool (named com.apple.root.*-qos*):
    the loop thread, the process's main thread and libcurl's resolver threads."""
    return len([name for name in sample.get("threadNames", []) if "qos" not in name])


def thread_names(pid):
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass  # the thread ended while being listed
    return names


def mean(values):
    return sum(values) / len(values)


def phases(records):
    """The samples under load, the one at rest (the process's own, when it wakes from the quiet spell; None
    without one), the warm-up's last sample, the samples after it, and how many make a fifth of those."""
    rest = next((s for s in records if s.get("atRest")), None)
    load = [s for s in records if not s.get("atRest")]
    # The warm-up: the first fifth of the requests sent (the run may have stopped at SOAK_SECONDS), while
    # connections, handles and malloc's arenas settle.
    warm = next(s for s in load if s["requests"] >= load[-1]["requests"] // 5)
    after = [s for s in load if s["round"] >= warm["round"]]
    return load, rest, warm, after, max(1, len(after) // 5)


def verdict(records, idle):
    """The checks the issue names, on the samples after the warm-up, the one at rest, and the threads read
    from outside while the process was idle."""
    load, rest, warm, after, fifth = phases(records)
    end = load[-1]
    steady = after + ([rest] if rest else [])
    cpus = os.cpu_count() or 1
    checks = {
        # Swift's task pool is libdispatch's: its monitor (once a second) adds a worker when it finds fewer
        # workers running than CPUs while work waits (one blocked on a lock, or in free() on another
        # thread's arena), up to twice the CPUs, and keeps it while work keeps coming. So the pool is
        # checked against that bound and, after a quiet spell, against the warm-up; the other threads
        # (main, the loop thread, libcurl's resolvers) must stay equal.
        "threads other than the task pool's equal": len({own_threads(s) for s in steady}) == 1,
        f"task-pool workers within libdispatch's bound (2 × {cpus} CPUs)": all(pool_workers(s) <= 2 * cpus for s in after),
        "at rest, no more threads than after the warm-up": rest is None or rest["threads"] <= warm["threads"],
        "idle, no task-pool worker left and the other threads as under load":
            idle is None or (pool_workers(idle) == 0 and own_threads(idle) == own_threads(end)),
        "descriptors other than sockets equal": len({s["fds"] - s["sockets"] for s in steady}) == 1,
        # Sockets beyond connections: libcurl's threaded resolver holds a socket pair per lookup in flight.
        "no connection counted that is not a socket": all(s["openConnections"] <= s["sockets"] for s in after),
        "easy handles bounded (pooled at a sample ≤ workers)": all(s["pooledHandles"] <= CONCURRENCY for s in after),
        "nothing in flight at a sample": all(s["activeTransfers"] == 0 and s["queuedTransfers"] == 0 for s in after),
        "no body bytes held at a sample": all(s["bufferedBytes"] == 0 for s in after),
        # RSS moves by ±7% between samples with what malloc keeps free: the last fifth's mean against the
        # first fifth's after the warm-up, as for the heap.
        "RSS within +10% (mean of the last fifth against the first after the warm-up)":
            mean([s["rssKiB"] for s in after[-fifth:]]) <= mean([s["rssKiB"] for s in after[:fifth]]) * 1.10,
        # What the resident size is made of: bytes in live allocations, apart from what malloc keeps free
        # (about 2 MiB, moving by ±15% between samples). Under load it includes each worker's malloc cache
        # (glibc's tcache counts as in use), so a worker the pool adds steps it up by ~180 KiB; at rest the
        # retired workers have given theirs back. A byte kept per request would add 1 MB over a million.
        "heap in use at rest within +10% of the first fifth's mean after the warm-up":
            rest is None or rest["heapInUseKiB"] <= mean([s["heapInUseKiB"] for s in after[:fifth]]) * 1.10,
    }
    return checks


def plot(samples, warm, rest, idle, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    x = [s["requests"] / 1e6 for s in samples]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot(x, [s["rssKiB"] / 1024 for s in samples], label="resident (RSS)")
    axes[0].plot(x, [s["heapInUseKiB"] / 1024 for s in samples], label="heap in use")
    axes[0].plot(x, [s["heapFreeKiB"] / 1024 for s in samples], label="heap kept free by malloc")
    axes[0].set_ylim(bottom=0)
    axes[0].set_title("memory (MiB)")
    axes[0].legend(fontsize=8)
    axes[1].plot(x, [s["fds"] for s in samples], label="open descriptors")
    axes[1].plot(x, [s["openConnections"] for s in samples], label="open connections")
    axes[1].plot(x, [s["threads"] for s in samples], label="threads")
    if rest:
        axes[1].scatter([rest["requests"] / 1e6], [rest["threads"]], marker="x", color="black",
                        label=f"threads after {REST} s at rest")
    if idle:
        axes[1].scatter([samples[-1]["requests"] / 1e6], [len(idle["threadNames"])], marker="o", facecolors="none",
                        edgecolors="black", label="threads while idle (read from outside)")
    axes[1].set_ylim(bottom=0)
    axes[1].set_title("descriptors, connections, threads")
    axes[1].legend(fontsize=8)
    axes[2].plot(x, [s["handlesCreated"] for s in samples], label="easy handles created")
    axes[2].plot(x, [s["pooledHandles"] for s in samples], label="easy handles pooled")
    axes[2].set_ylim(bottom=0)
    axes[2].set_title("libcurl easy handles")
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.axvline(warm["requests"] / 1e6, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xlabel("requests (millions)")
    fig.suptitle("Soak: one session, samples between rounds (dashed: end of warm-up)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def report(records, summary, idle):
    """Prints the figures and the checks, draws the plot; returns whether every check held."""
    samples, rest, warm, after, fifth = phases(records)
    checks = verdict(records, idle)
    if summary:
        print(json.dumps({"requests": summary["requests"], "seconds": round(summary["seconds"], 1),
                          "byScenario": summary["byScenario"], "secondsByScenario": {k: round(v, 1) for k, v in summary["secondsByScenario"].items()}, "longestByScenario": {k: round(v, 3) for k, v in summary["longestByScenario"].items()}, "errors": summary["errors"],
                          "unexpected": summary["unexpected"], "examples": summary["unexpectedExamples"]}, indent=1))
    for label, s in (("start", samples[0]), ("after warm-up", warm), ("end", samples[-1])) + ((("at rest", rest),) if rest else ()):
        print(f"{label:>14}: {s['requests']:>9,} requests, {s['seconds']:7.1f} s, fds {s['fds']}, threads "
              f"{s['threads']} (task pool {s['threads'] - own_threads(s)}, default-QoS workers {pool_workers(s)}), RSS {s['rssKiB']:,} KiB, heap in use {s['heapInUseKiB']:,} KiB, "
              f"free {s['heapFreeKiB']:,} KiB, open connections {s['openConnections']}, handles created "
              f"{s['handlesCreated']}, pooled {s['pooledHandles']}, connections opened {s['connectionsOpened']:,}")
    for key, label in (("rssKiB", "RSS"), ("heapInUseKiB", "heap in use"), ("heapFreeKiB", "heap kept free")):
        first, last = mean([s[key] for s in after[:fifth]]), mean([s[key] for s in after[-fifth:]])
        print(f"{label}, mean of the first and last fifth after the warm-up ({fifth} samples each): "
              f"{first:,.0f} and {last:,.0f} KiB ({(last / first - 1) * 100:+.1f}%)")
    if rest and "rssAfterTrimKiB" in rest:
        print(f"at rest, after malloc_trim gave back the free pages it could: RSS {rest['rssAfterTrimKiB']:,} KiB")
    if idle:
        print(f"{'idle':>14}: threads {len(idle['threadNames'])} ({', '.join(sorted(idle['threadNames']))}), read from outside "
              f"{idle['seconds']} s into the quiet spell")
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    plot(samples, warm, rest, idle, os.path.join(run.ROOT, "soak.png"))
    return all(checks.values())


def main():
    # `soak.py --verdict FILE`: the checks and the plot again, from a run's samples.
    if len(sys.argv) == 3 and sys.argv[1] == "--verdict":
        records = [json.loads(line) for line in open(sys.argv[2])]
        samples = [r for r in records if "round" in r]
        summary = next((r for r in records if r.get("summary")), None)
        idle = next((r for r in records if r.get("idle")), None)
        return 0 if report(samples, summary, idle) else 1
    work = tempfile.mkdtemp(prefix="curlew-soak-")
    ca, _, _ = run.start_nginx(work)
    upload = make_files(work)
    hostile = HostileServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=hostile.serve_forever, daemon=True).start()
    configuration = {
        "http": f"http://127.0.0.1:{run.PORT}", "https": f"https://localhost:{run.TLS_PORT}",
        "h2": f"https://localhost:{run.H2_PORT}", "hostile": f"http://127.0.0.1:{hostile.server_address[1]}",
        "caFile": ca, "uploadFile": upload, "requests": REQUESTS, "seconds": SECONDS,
        "concurrency": CONCURRENCY, "perRound": PER_ROUND, "only": os.environ.get("SOAK_ONLY"),
        "restSeconds": REST,
    }
    path = os.path.join(work, "soak.json")
    with open(path, "w") as f:
        json.dump(configuration, f)
    os.makedirs(OUT, exist_ok=True)
    samples, summary, idle = [], None, None
    try:
        process = subprocess.Popen([BINARY, path], stdout=subprocess.PIPE, text=True)
        with open(os.path.join(OUT, "soak.jsonl"), "w") as log:
            for line in process.stdout:
                log.write(line)
                record = json.loads(line)
                if record.get("summary"):
                    summary = record
                    continue
                if record.get("resting"):
                    # Read the threads from outside a second before the quiet spell ends: inside, a sample
                    # needs a worker of the pool it counts.
                    time.sleep(max(REST - 1, 0))
                    idle = {"idle": True, "seconds": max(REST - 1, 0), "threadNames": thread_names(process.pid)}
                    log.write(json.dumps(idle) + "\n")
                    continue
                samples.append(record)
                if record["round"] % 20 == 0:
                    print(f"{record['requests']:>9,} requests {record['seconds']:7.1f} s  fds {record['fds']} "
                          f"threads {record['threads']} rss {record['rssKiB'] // 1024} MiB heap {record['heapInUseKiB'] // 1024} MiB "
                          f"connections {record['openConnections']} handles {record['handlesCreated']}", flush=True)
        code = process.wait()
    finally:
        run.stop_nginx(work)
        hostile.shutdown()
    if summary is None or len(samples) < 3:
        print("the soak stopped early")
        return 1
    held = report(samples, summary, idle)
    return 0 if code == 0 and held else 1


if __name__ == "__main__":
    sys.exit(main())

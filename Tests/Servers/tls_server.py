#!/usr/bin/env python3
"""Curlew test server: HTTPS/1.1 on 127.0.0.1, a free port, reporting what TLS negotiated.

Started by the tests (see Tests/CurlewTestSupport/TLSTestServer.swift) and by
Tests/Servers/check_fixtures.sh. Standard library only.

On start it prints exactly one line, `{"port": N}`, to stdout, and never writes to stdout again. It
exits when stdin reaches end of file (so a test process that dies never leaves it running), on
SIGTERM, or on SIGINT. Errors go to stderr, and only with --verbose (or when it cannot start).

Every request is answered 200 with a JSON body:

    {"method": "GET", "path": "/x?y", "tls_version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384",
     "alpn": "http/1.1" | null, "sni": "localhost" | null, "session_reused": false,
     "client_cert_cn": "curlew-test-client" | null, "connection": 1, "connections": 1,
     "request": 1, "body_length": 0}

`connection` numbers this TCP connection (from 1, in accept order), `connections` is how many have
been accepted so far, `request` counts requests on this connection (keep-alive works). A request whose
path is `/close` (query allowed) is answered with `Connection: close` and the connection is closed,
so the client's next request opens a new connection (and may resume the TLS session).

A query parameter `delay=MS` (any path) makes the server wait that many milliseconds before it answers,
so that requests overlap. `--redirect PATH=URL` (repeatable) answers requests for PATH (query ignored)
with `302 Found`, `Location: URL` and an empty body instead of the JSON report.
"""

import argparse
import http.server
import json
import os
import signal
import socket
import socketserver
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse

VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cert", required=True, help="PEM certificate, optionally followed by its chain")
    parser.add_argument("--key", required=True, help="PEM private key (unencrypted)")
    parser.add_argument("--chain", help="PEM intermediates sent after --cert")
    parser.add_argument("--client-ca", help="PEM CA(s) to verify client certificates with (asks for one)")
    parser.add_argument(
        "--require-client-cert",
        action="store_true",
        help="with --client-ca: refuse clients without a valid certificate (default: optional)",
    )
    parser.add_argument("--tls-min", choices=sorted(VERSIONS), help="lowest TLS version accepted")
    parser.add_argument("--tls-max", choices=sorted(VERSIONS), help="highest TLS version accepted")
    parser.add_argument(
        "--alpn", action="append", help="ALPN protocol to advertise (repeatable); default: no ALPN"
    )
    parser.add_argument(
        "--session-tickets",
        choices=["on", "off"],
        default="on",
        help="off: no tickets (TLS 1.3: no resumption; TLS 1.2: session-ID resumption still works)",
    )
    parser.add_argument(
        "--no-resumption",
        action="store_true",
        help="a fresh TLS context per connection, so no session can ever be resumed",
    )
    parser.add_argument(
        "--abort-failed-handshakes",
        action="store_true",
        help="close at once after a failed handshake (the client may see a reset instead of the alert)",
    )
    parser.add_argument(
        "--redirect",
        action="append",
        default=[],
        metavar="PATH=URL",
        help="answer requests for PATH (query ignored) with 302 and Location: URL (repeatable)",
    )
    parser.add_argument("--verbose", action="store_true", help="log connections and errors to stderr")
    arguments = parser.parse_args()
    arguments.redirects = {}
    for entry in arguments.redirect:
        path, separator, url = entry.partition("=")
        if not separator or not path.startswith("/") or not url:
            parser.error("--redirect takes PATH=URL, PATH starting with /: %r" % entry)
        arguments.redirects[path] = url
    return arguments


class Settings:
    """Builds the server's TLS contexts from the command line."""

    def __init__(self, arguments):
        self.arguments = arguments
        self.certificate_file = arguments.cert
        self.combined = None
        if arguments.chain:
            # load_cert_chain takes one file: the certificate followed by its intermediates.
            with open(arguments.cert, "rb") as certificate, open(arguments.chain, "rb") as chain:
                data = certificate.read().rstrip(b"\n") + b"\n" + chain.read()
            handle, self.combined = tempfile.mkstemp(prefix="curlew-tls-chain-", suffix=".pem")
            with os.fdopen(handle, "wb") as output:
                output.write(data)
            self.certificate_file = self.combined
        self.shared = self.make_context()

    def make_context(self):
        arguments = self.arguments
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate_file, arguments.key)
        if arguments.tls_min:
            context.minimum_version = VERSIONS[arguments.tls_min]
        if arguments.tls_max:
            context.maximum_version = VERSIONS[arguments.tls_max]
        if arguments.client_ca:
            context.load_verify_locations(cafile=arguments.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED if arguments.require_client_cert else ssl.CERT_OPTIONAL
        if arguments.alpn:
            context.set_alpn_protocols(arguments.alpn)
        if arguments.session_tickets == "off":
            context.options |= ssl.OP_NO_TICKET
            context.num_tickets = 0
        context.sni_callback = record_server_name
        return context

    def context(self):
        return self.make_context() if self.arguments.no_resumption else self.shared

    def remove_temporary_files(self):
        combined, self.combined = self.combined, None
        if combined:
            try:
                os.unlink(combined)
            except OSError:
                pass


server_names = {}
server_names_lock = threading.Lock()


def record_server_name(ssl_socket, server_name, _context):
    with server_names_lock:
        server_names[id(ssl_socket)] = server_name
    return None


def common_name(certificate):
    if not certificate:
        return None
    for relative_name in certificate.get("subject", ()):
        for key, value in relative_name:
            if key == "commonName":
                return value
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "CurlewTLSTestServer/1"
    sys_version = ""

    def setup(self):
        super().setup()
        self.requests_on_connection = 0

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("tls_server: %s - %s\n" % (self.address_string(), format % args))

    def respond(self):
        self.requests_on_connection += 1
        length = int(self.headers.get("Content-Length") or 0)
        body_length = 0
        while body_length < length:
            chunk = self.rfile.read(min(65536, length - body_length))
            if not chunk:
                break
            body_length += len(chunk)
        path, _, query = self.path.partition("?")
        delay = urllib.parse.parse_qs(query).get("delay")
        if delay:
            time.sleep(int(delay[-1]) / 1000)
        location = self.server.redirects.get(path)
        if location is not None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        connection = self.request
        info = self.server.info_for(connection)
        close = path == "/close"
        payload = {
            "method": self.command,
            "path": self.path,
            "tls_version": connection.version(),
            "cipher": connection.cipher()[0] if connection.cipher() else None,
            "alpn": connection.selected_alpn_protocol(),
            "sni": info["sni"],
            "session_reused": connection.session_reused,
            "client_cert_cn": common_name(connection.getpeercert()),
            "connection": info["id"],
            "connections": self.server.connection_count(),
            "request": self.requests_on_connection,
            "body_length": body_length,
        }
        body = json.dumps(payload).encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = respond


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Connections are wrapped in the handler's thread, so a slow handshake never blocks accept().
    request_queue_size = 128

    def __init__(self, settings, verbose, abort_failed_handshakes, redirects):
        self.settings = settings
        self.redirects = redirects
        self.verbose = verbose
        self.abort_failed_handshakes = abort_failed_handshakes
        self.lock = threading.Lock()
        self.accepted = 0
        self.connections = {}
        super().__init__(("127.0.0.1", 0), Handler)

    def get_request(self):
        raw, address = self.socket.accept()
        with self.lock:
            self.accepted += 1
            number = self.accepted
        raw.settimeout(30)
        return (raw, number), address

    def verify_request(self, request, client_address):
        return True

    def process_request_thread(self, request, client_address):
        raw, number = request
        try:
            connection = self.settings.context().wrap_socket(
                raw, server_side=True, do_handshake_on_connect=False
            )
        except (ssl.SSLError, OSError) as error:
            if self.verbose:
                sys.stderr.write("tls_server: connection %d failed: %s\n" % (number, error))
            raw.close()
            return
        try:
            connection.do_handshake()
        except (ssl.SSLError, OSError) as error:
            if self.verbose:
                sys.stderr.write("tls_server: connection %d handshake failed: %s\n" % (number, error))
            self.close_after_failed_handshake(connection)
            return
        with server_names_lock:
            sni = server_names.pop(id(connection), None)
        with self.lock:
            self.connections[id(connection)] = {"id": number, "sni": sni}
        try:
            self.finish_request(connection, client_address)
        except Exception as error:  # noqa: BLE001 - a test server logs and drops the connection
            if self.verbose:
                sys.stderr.write("tls_server: connection %d failed: %r\n" % (number, error))
        finally:
            with self.lock:
                self.connections.pop(id(connection), None)
            self.shutdown_request(connection)

    def close_after_failed_handshake(self, connection):
        """Closes a connection whose handshake failed (the alert is already sent).

        By default gracefully: FIN, then read what the client still sends until it closes. A TLS 1.3
        client finishes its handshake before the server judges its certificate and sends its request
        at once; closing with that request unread would make the kernel send a reset, and the client
        would see either the alert or the reset depending on timing. --abort-failed-handshakes closes
        at once, reset and all, as a hasty server would.
        """
        if not self.abort_failed_handshakes:
            try:
                connection.shutdown(socket.SHUT_WR)
                connection.settimeout(2)
                while connection.recv(65536):
                    pass
            except OSError:
                pass
        connection.close()

    def info_for(self, connection):
        with self.lock:
            return self.connections.get(id(connection), {"id": 0, "sni": None})

    def connection_count(self):
        with self.lock:
            return self.accepted

    def shutdown_request(self, request):
        if isinstance(request, tuple):
            request = request[0]
        if isinstance(request, ssl.SSLSocket):
            # Send close_notify, as real servers do: OpenSSL marks a TLS 1.2 session not resumable
            # when its connection ends without one.
            try:
                request.settimeout(1)
                request = request.unwrap()
            except (OSError, ValueError):
                pass
        try:
            request.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        request.close()

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)


def main():
    arguments = parse_arguments()
    try:
        settings = Settings(arguments)
        server = Server(settings, arguments.verbose, arguments.abort_failed_handshakes, arguments.redirects)
    except (OSError, ssl.SSLError, ValueError) as error:
        sys.stderr.write("tls_server: cannot start: %s\n" % error)
        return 1

    def stop(*_):
        settings.remove_temporary_files()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    sys.stdout.write(json.dumps({"port": server.server_address[1]}) + "\n")
    sys.stdout.flush()
    # Serve until stdin closes: the parent exited, crashed or asked us to stop.
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    stop()


if __name__ == "__main__":
    sys.exit(main())

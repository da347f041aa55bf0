#!/usr/bin/env bash
# Curlew — proves every TLS fixture with the `curl` command line tool (and Python's own TLS client for
# session resumption), against Tests/Servers/tls_server.py on loopback. Run by hand, not by the tests:
#
#     Tests/Servers/check_fixtures.sh
#
# Needs python3 with `cryptography`, openssl and curl. Prints one row per case — exit code, curl's
# %{ssl_verify_result}, HTTP status, what the server reported, curl's error message — checks each
# against what curl 7.88.1 with OpenSSL 3.0 was observed to do, and exits 1 if any case differs.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/curlew-check-fixtures.XXXXXX")
SERVER_PID=""
failures=0

cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT

python3 "$here/tls_fixtures.py" "$work/certs" >"$work/manifest.json" || exit 1
# F_<name> for every file (dots become underscores), PIN_<name>, PASSWORD.
eval "$(python3 - "$work/manifest.json" <<'EOF'
import json, shlex, sys
manifest = json.load(open(sys.argv[1]))
for name, path in manifest["files"].items():
    print("F_%s=%s" % (name.replace(".", "_"), shlex.quote(path)))
for name, pin in manifest["pins"].items():
    print("PIN_%s=%s" % (name, shlex.quote(pin)))
print("PASSWORD=%s" % shlex.quote(manifest["client_key_password"]))
EOF
)"

# start_server ARGS…: runs tls_server.py as a coprocess and sets PORT.
start_server() {
    stop_server
    coproc SERVER { exec python3 "$here/tls_server.py" "$@" 2>>"$work/server.log"; }
    SERVER_PID=$SERVER_PID
    local line
    if ! IFS= read -r -t 10 line <&"${SERVER[0]}"; then
        echo "tls_server.py did not start: $*" >&2
        cat "$work/server.log" >&2
        exit 1
    fi
    PORT=$(sed 's/[^0-9]//g' <<<"$line")
    SERVER_LABEL="$*"
}

# stop_server: closes the server's stdin (its signal to exit) and waits for it.
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        local input=${SERVER[1]:-}
        [ -n "$input" ] && eval "exec ${input}>&-"
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}

# report BODY_FILE: what the server reported for each request, compactly.
report() {
    python3 - "$1" <<'EOF'
import json, sys
seen = []
for line in open(sys.argv[1], errors="replace"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    seen.append("[%s conn=%s req=%s resumed=%s cn=%s alpn=%s]" % (
        e["tls_version"], e["connection"], e["request"], e["session_reused"], e["client_cert_cn"], e["alpn"]))
print(" ".join(seen))
EOF
}

# check NAME EXPECTED_EXIT EXPECTED_VERIFY CURL_ARGS…  (EXPECTED_VERIFY "-" skips that check)
# Bodies and curl's -w line (after each URL) go to one file; the last -w line is the last transfer's.
check() {
    local name=$1 want_exit=$2 want_verify=$3
    shift 3
    setsid -w timeout 20 curl -q -sS --noproxy '*' --max-time 10 \
        -w '\ncheck-fixtures %{ssl_verify_result} %{http_code}\n' "$@" >"$work/body" 2>"$work/stderr" </dev/null
    local exit_code=$?
    local verify="" http=""
    read -r _ verify http < <(grep '^check-fixtures ' "$work/body" | tail -n 1)
    local message
    message=$(grep -m1 '^curl: ' "$work/stderr" | sed 's/^curl: //')
    local status="ok"
    if [ "$exit_code" != "$want_exit" ] || { [ "$want_verify" != "-" ] && [ "$verify" != "$want_verify" ]; }; then
        status="DIFFERS (expected exit $want_exit, verify $want_verify)"
        failures=$((failures + 1))
    fi
    printf '%-52s exit %-3s verify %-3s http %-3s %s\n' "$name" "$exit_code" "${verify:--}" "${http:--}" "$status"
    local seen
    seen=$(report "$work/body")
    [ -n "$seen" ] && printf '    server: %s\n' "$seen"
    [ -n "$message" ] && printf '    curl:   %s\n' "$message"
}

echo "curl: $(curl --version | head -n 1)"
echo "python: $(python3 -c 'import ssl, sys; print(sys.version.split()[0], ssl.OPENSSL_VERSION)')"
echo

echo "== Server certificates (server TLS 1.3 unless noted)"
start_server --cert "$F_leaf_chain" --key "$F_leaf_key"
URL="https://localhost:$PORT/"
IPURL="https://127.0.0.1:$PORT/"
check "leaf, --cacert ca" 0 0 --cacert "$F_ca" "$URL"
check "leaf, --cacert ca, https://127.0.0.1 (IP SAN)" 0 0 --cacert "$F_ca" "$IPURL"
check "leaf, --capath ca.hashed" 0 0 --capath "$F_ca_hashed" "$URL"
check "leaf, --capath ca.hashed, --cacert other_ca" 0 0 --cacert "$F_other_ca" --capath "$F_ca_hashed" "$URL"
check "leaf, system trust store only (unknown issuer)" 60 20 "$URL"
check "leaf, --cacert other_ca (untrusted)" 60 20 --cacert "$F_other_ca" "$URL"
check "leaf, --cacert intermediate (not its issuer)" 60 20 --cacert "$F_intermediate" "$URL"
check "leaf, --cacert missing file" 77 1 --cacert "$work/missing.pem" "$URL"
check "leaf, --capath empty dir, --cacert other_ca" 60 20 --cacert "$F_other_ca" --capath "$work" "$URL"
check "leaf, -k (no verification)" 0 - -k "$URL"
check "pin leaf, --cacert ca" 0 0 --cacert "$F_ca" --pinnedpubkey "$PIN_leaf" "$URL"
check "pin leaf, -k (pinning without verification)" 0 - -k --pinnedpubkey "$PIN_leaf" "$URL"
check "pin intermediate (not the leaf's key)" 90 0 --cacert "$F_ca" --pinnedpubkey "$PIN_intermediate" "$URL"
check "pin ca (only the leaf's key is pinned)" 90 0 --cacert "$F_ca" --pinnedpubkey "$PIN_ca" "$URL"
check "pin intermediate;leaf (any of a list)" 0 0 --cacert "$F_ca" --pinnedpubkey "$PIN_intermediate;$PIN_leaf" "$URL"
check "pin leaf, but unknown issuer (verification first)" 60 20 --cacert "$F_other_ca" --pinnedpubkey "$PIN_leaf" "$URL"
check "TLS 1.2 max on the client" 0 0 --cacert "$F_ca" --tls-max 1.2 "$URL"

start_server --cert "$F_leaf_via_intermediate_chain" --key "$F_leaf_via_intermediate_key"
check "leaf_via_intermediate + chain, --cacert ca" 0 0 --cacert "$F_ca" "https://localhost:$PORT/"
check "  same, --capath ca.hashed" 0 0 --capath "$F_ca_hashed" "https://localhost:$PORT/"
check "  same, pin intermediate (chain key, not leaf)" 90 0 --cacert "$F_ca" --pinnedpubkey "$PIN_intermediate" \
    "https://localhost:$PORT/"
check "  same, pin leaf_via_intermediate" 0 0 --cacert "$F_ca" --pinnedpubkey "$PIN_leaf_via_intermediate" \
    "https://localhost:$PORT/"
start_server --cert "$F_leaf_via_intermediate" --key "$F_leaf_via_intermediate_key" --chain "$F_intermediate"
check "leaf_via_intermediate, server --chain intermediate" 0 0 --cacert "$F_ca" "https://localhost:$PORT/"
start_server --cert "$F_leaf_via_intermediate" --key "$F_leaf_via_intermediate_key"
check "leaf_via_intermediate WITHOUT chain, --cacert ca" 60 20 --cacert "$F_ca" "https://localhost:$PORT/"
check "  same, --cacert intermediate only (partial chain)" 0 0 --cacert "$F_intermediate" "https://localhost:$PORT/"

start_server --cert "$F_self_signed" --key "$F_self_signed_key"
check "self_signed, --cacert ca" 60 18 --cacert "$F_ca" "https://localhost:$PORT/"
check "self_signed, --cacert self_signed (trusted directly)" 0 0 --cacert "$F_self_signed" "https://localhost:$PORT/"

start_server --cert "$F_expired" --key "$F_expired_key"
check "expired, --cacert ca" 60 10 --cacert "$F_ca" "https://localhost:$PORT/"
check "expired, -k" 0 - -k "https://localhost:$PORT/"

start_server --cert "$F_not_yet_valid" --key "$F_not_yet_valid_key"
check "not_yet_valid, --cacert ca" 60 9 --cacert "$F_ca" "https://localhost:$PORT/"

start_server --cert "$F_wrong_host" --key "$F_wrong_host_key"
check "wrong_host (other.example), https://localhost" 60 1 --cacert "$F_ca" "https://localhost:$PORT/"
check "wrong_host, https://127.0.0.1" 60 1 --cacert "$F_ca" "https://127.0.0.1:$PORT/"
check "wrong_host, --resolve other.example (right name)" 0 0 --cacert "$F_ca" \
    --resolve "other.example:$PORT:127.0.0.1" "https://other.example:$PORT/"
check "wrong_host, -k" 0 - -k "https://localhost:$PORT/"

echo
echo "== TLS versions and ALPN"
start_server --cert "$F_leaf" --key "$F_leaf_key" --tls-max 1.2
check "server --tls-max 1.2" 0 0 --cacert "$F_ca" "https://localhost:$PORT/"
check "server --tls-max 1.2, client --tlsv1.3" 35 1 --cacert "$F_ca" --tlsv1.3 "https://localhost:$PORT/"
start_server --cert "$F_leaf" --key "$F_leaf_key" --tls-min 1.3
check "server --tls-min 1.3, client --tls-max 1.2" 35 1 --cacert "$F_ca" --tls-max 1.2 "https://localhost:$PORT/"
start_server --cert "$F_leaf" --key "$F_leaf_key" --alpn http/1.1
check "server --alpn http/1.1, client offers h2" 0 0 --cacert "$F_ca" --http2 "https://localhost:$PORT/"

echo
echo "== Client certificates (server --client-ca ca)"
for version in 1.3 1.2; do
    start_server --cert "$F_leaf" --key "$F_leaf_key" --client-ca "$F_ca" --require-client-cert --tls-max "$version"
    URL="https://localhost:$PORT/"
    if [ "$version" = 1.3 ]; then
        # TLS 1.3: the client's handshake is done before the server judges its certificate; the
        # server's alert arrives when curl reads the response.
        check "TLS $version required, no client cert" 56 0 --cacert "$F_ca" "$URL"
        check "TLS $version required, client_untrusted" 56 0 --cacert "$F_ca" \
            --cert "$F_client_untrusted" --key "$F_client_untrusted_key" "$URL"
    else
        check "TLS $version required, no client cert" 35 1 --cacert "$F_ca" "$URL"
        check "TLS $version required, client_untrusted" 35 1 --cacert "$F_ca" \
            --cert "$F_client_untrusted" --key "$F_client_untrusted_key" "$URL"
    fi
    check "TLS $version required, client" 0 0 --cacert "$F_ca" --cert "$F_client" --key "$F_client_key" "$URL"
done
URL="https://localhost:$PORT/"  # the last round's server: TLS 1.2, client certificate required
# OpenSSL completes a server's chain from its trust store: with --client-ca ca it sends leaf + ca.
check "server with --client-ca, system trust only" 60 19 "$URL"
check "client, encrypted key, --pass" 0 0 --cacert "$F_ca" --cert "$F_client" --key "$F_client_key_encrypted" \
    --pass "$PASSWORD" "$URL"
check "client, encrypted key, wrong --pass" 58 1 --cacert "$F_ca" --cert "$F_client" \
    --key "$F_client_key_encrypted" --pass wrong "$URL"
check "client, encrypted key, no --pass (no terminal)" 58 1 --cacert "$F_ca" --cert "$F_client" \
    --key "$F_client_key_encrypted" "$URL"
check "client cert with another certificate's key" 58 1 --cacert "$F_ca" --cert "$F_client" \
    --key "$F_leaf_key" "$URL"
check "client cert file missing" 58 1 --cacert "$F_ca" --cert "$work/missing.pem" --key "$F_client_key" "$URL"
start_server --cert "$F_leaf" --key "$F_leaf_key" --client-ca "$F_ca"
check "optional client cert, none sent" 0 0 --cacert "$F_ca" "https://localhost:$PORT/"
check "optional client cert, client" 0 0 --cacert "$F_ca" --cert "$F_client" --key "$F_client_key" \
    "https://localhost:$PORT/"
check "optional client cert, client_untrusted" 56 0 --cacert "$F_ca" \
    --cert "$F_client_untrusted" --key "$F_client_untrusted_key" "https://localhost:$PORT/"

echo
echo "== TLS 1.3 client-certificate refusal by a server that closes at once (--abort-failed-handshakes)"
# The client's handshake is complete when the server refuses its certificate; with the client's request
# unread the server's close becomes a reset, which curl may meet before it reads the alert.
start_server --cert "$F_leaf" --key "$F_leaf_key" --client-ca "$F_ca" --require-client-cert --abort-failed-handshakes
for i in $(seq 20); do
    curl -q -sS --noproxy '*' --max-time 10 --cacert "$F_ca" -o /dev/null "https://localhost:$PORT/" 2>&1 </dev/null |
        sed -e 's/^curl: //' -e 's/, errno 0$//'
done | sort | uniq -c | sed 's/^ */    /'
echo "    (20 runs, no client certificate; not checked: the split varies)"

echo
echo "== Session resumption: one curl run, /close makes the second URL use a new connection"
resumption() {
    local label=$1 want=$2
    shift 2
    start_server --cert "$F_leaf" --key "$F_leaf_key" "$@"
    check "$label" 0 0 --cacert "$F_ca" "https://localhost:$PORT/close" "https://localhost:$PORT/again"
    local reused
    reused=$(python3 -c 'import json,sys; print([json.loads(l)["session_reused"] for l in open(sys.argv[1]) if l.startswith("{")][-1])' "$work/body")
    if [ "$reused" != "$want" ]; then
        printf '    DIFFERS: second connection resumed=%s, expected %s\n' "$reused" "$want"
        failures=$((failures + 1))
    fi
}
resumption "TLS 1.3, tickets on" True
resumption "TLS 1.3, --session-tickets off" False --session-tickets off
resumption "TLS 1.2, tickets on" True --tls-max 1.2
resumption "TLS 1.2, --session-tickets off (session IDs)" True --tls-max 1.2 --session-tickets off
resumption "TLS 1.3, --no-resumption" False --no-resumption
resumption "TLS 1.2, --no-resumption" False --tls-max 1.2 --no-resumption
start_server --cert "$F_leaf" --key "$F_leaf_key"
check "two curl runs (no shared session cache)" 0 0 --cacert "$F_ca" "https://localhost:$PORT/close"
check "  second run" 0 0 --cacert "$F_ca" "https://localhost:$PORT/again"
check "keep-alive: two URLs, one connection" 0 0 --cacert "$F_ca" "https://localhost:$PORT/a" "https://localhost:$PORT/b"

echo
echo "== Session resumption with Python's ssl client (two connections, session= of the first)"
for max in 1.3 1.2; do
    start_server --cert "$F_leaf" --key "$F_leaf_key" --tls-max "$max"
    python3 - "$PORT" "$F_ca" "$max" <<'EOF'
import json, socket, ssl, sys
port, ca, version = int(sys.argv[1]), sys.argv[2], sys.argv[3]
context = ssl.create_default_context(cafile=ca)

def get(session=None):
    with socket.create_connection(("127.0.0.1", port)) as raw:
        with context.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
            tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := tls.recv(65536):
                data += chunk
            # TLS 1.3 tickets arrive after the handshake, so take the session after reading.
            return json.loads(data.split(b"\r\n\r\n", 1)[1]), tls.session, tls.session_reused

first, session, _ = get()
second, _, client_side = get(session)
print("%-52s server: first resumed=%s, second resumed=%s (client says %s)" % (
    "python ssl, TLS " + version, first["session_reused"], second["session_reused"], client_side))
sys.exit(0 if second["session_reused"] and not first["session_reused"] else 1)
EOF
    [ $? -eq 0 ] || failures=$((failures + 1))
done
stop_server

echo
if [ "$failures" -eq 0 ]; then
    echo "All cases behaved as recorded."
else
    echo "$failures case(s) differed from what was recorded."
    exit 1
fi

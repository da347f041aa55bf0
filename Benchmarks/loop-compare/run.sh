#!/usr/bin/env bash
# Curlew — runs the loop comparison (loopcompare.c) and the engine at 64 and 10,000 in flight against
# nginx on loopback, in a separate process with its own file-descriptor budget.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
command -v nginx >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light; }
mkdir -p "$work/tmp" "$here/out"
port=18190
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $work/nginx.pid;
error_log $work/error.log warn;
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
events { worker_connections 20000; }
http {
  access_log off;
  client_body_temp_path $work/tmp/body; proxy_temp_path $work/tmp/proxy; fastcgi_temp_path $work/tmp/fcgi;
  uwsgi_temp_path $work/tmp/uwsgi; scgi_temp_path $work/tmp/scgi;
  keepalive_requests 10000000; keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$port backlog=16384;
    location /small { default_type application/json; return 200 '{"id":1,"name":"curlew","tags":["fast","safe"],"active":true,"score":99.5,"note":"small body for benches"}'; }
    location /slow { default_type application/json; echo_sleep 1; echo '{"ok":true}'; }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"
sleep 0.3
gcc -O2 -o "$here/out/loopcompare" "$here/loopcompare.c" -lcurl
(cd "$here/.." && swift build -c release --product engine-load >/dev/null)
engine="$here/../.build/release/engine-load"
for round in 1 2 3; do
  for mode in poll socket; do "$here/out/loopcompare" $mode "http://127.0.0.1:$port/small" 64 200000; done
  "$engine" "http://127.0.0.1:$port/small" 64 200000
done
for mode in poll socket; do
  "$here/out/loopcompare" $mode "http://127.0.0.1:$port/slow" 64 640
  "$here/out/loopcompare" $mode "http://127.0.0.1:$port/slow" 10000 10000
done
"$engine" "http://127.0.0.1:$port/slow" 64 640
"$engine" "http://127.0.0.1:$port/slow" 10000 10000
"$engine" "http://127.0.0.1:$port/slow" 10000 30000

# Sourced by the measurement scripts (footprint.sh, profile-vs-wrk.sh): the nginx target they
# measure against, one worker serving /healthz on loopback.
#
# start_nginx DIR WORKER_CONNECTIONS BACKLOG [CPU]: starts nginx with its files under DIR (pinned
# to CPU when given) and waits until it answers; sets SRV (its pid), PORT and URL.
start_nginx() {
  local dir=$1 conns=$2 backlog=$3 cpu=${4:-}
  PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  mkdir -p "$dir/nginx/logs" "$dir/nginx/tmp"
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log warn;
events { worker_connections $conns; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path $dir/nginx/tmp/body; proxy_temp_path $dir/nginx/tmp/proxy;
  fastcgi_temp_path $dir/nginx/tmp/fcgi; uwsgi_temp_path $dir/nginx/tmp/uwsgi; scgi_temp_path $dir/nginx/tmp/scgi;
  server {
    listen 127.0.0.1:$PORT backlog=$backlog;
    location /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
  }
}
CONF
  local pin=()
  [[ -n $cpu ]] && pin=(taskset -c "$cpu")
  "${pin[@]}" nginx -p "$dir/nginx/" -e "$dir/nginx/logs/error.log" -c "$dir/nginx.conf" -g 'daemon off;' &
  SRV=$!
  URL="http://127.0.0.1:$PORT/healthz"
  for _ in $(seq 50); do curl -fsS -o /dev/null "$URL" 2>/dev/null && return 0; sleep 0.1; done
  echo "nginx on $URL did not answer" >&2
  return 1
}

#!/usr/bin/env bash
# A/B of two builds of the Node host (docs/performance.md): both run at once, pinned to core 0, each on its own
# fresh database; autocannon (core 1) alternates short runs between them, and each run's CPU per
# request is read from /proc. Alternating cancels most of the drift of a shared machine, which
# moves one-after-the-other runs by more than the changes measured. Prints min and median per build.
#
#   node scripts/build-node.mjs && cp dist/node/main.js dist/node/ab-b.js        # the build to test
#   git worktree add /tmp/base HEAD && ln -s "$PWD/node_modules" /tmp/base/node_modules
#   (cd /tmp/base && node scripts/build-node.mjs) && cp /tmp/base/dist/node/main.js dist/node/ab-a.js
#   KIND=bearer scripts/bench/ab.sh dist/node/ab-a.js dist/node/ab-b.js          # KIND: live, bearer, cookie
#
# The builds stay in dist/node: they import their packages from node_modules, found from there.
#
# ROUNDS (8) runs of RUN_SECONDS (3) each per build.
set -euo pipefail
cd "$(dirname "$0")/../.."
KIND=${KIND:-live}
ROUNDS=${ROUNDS:-8}
SECONDS_PER_RUN=${RUN_SECONDS:-3}
PASSWORD='Adm#1passWord'
WORK=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

start() { # build port
  AUTH_BIND_PORT=$2 AUTH_LOG_LEVEL=INFO AUTH_ACCESS_LOG_LEVEL=INFO LIBSQL_URL="file:$WORK/$2.db" \
    AUTH_BOOTSTRAP_ADMIN_LOGIN=admin AUTH_BOOTSTRAP_ADMIN_PASSWORD="$PASSWORD" \
    SESSION_SECRET_KEY=ab-benchmark-session-key-0123456789abcdef \
    taskset -c 0 node "$1" >"$WORK/$2.log" 2>&1 &
  PIDS+=($!)
}

base() { echo "http://127.0.0.1:$1/api/auth"; }
url() { if [ "$KIND" = live ]; then echo "$(base "$1")/health/live"; else echo "$(base "$1")/v4/users/me"; fi; }

credential() { # port: the header every request of the run sends
  local port=$1
  for _ in $(seq 100); do curl -sf "$(base "$port")/health/live" >/dev/null && break; sleep 0.2; done
  case $KIND in
    bearer)
      local token
      token=$(curl -s -u "admin:$PASSWORD" -H 'content-type: application/json' -d '{"name":"ab"}' \
        "$(base "$port")/v4/users/me/tokens" | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
      echo "Authorization: Bearer $token" ;;
    cookie)
      local cookie
      cookie=$(curl -s -c - -H 'content-type: application/json' -H "Origin: http://127.0.0.1:$port" \
        -d "{\"login\":\"admin\",\"password\":\"$PASSWORD\"}" "$(base "$port")/v3/login" |
        awk '/\t/ {print $6"="$7}' | paste -sd';' -)
      echo "Cookie: $cookie" ;;
    live) echo "X-Bench: ab" ;;
    *) echo "KIND must be live, bearer or cookie" >&2; exit 2 ;;
  esac
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # pid port header: CPU µs per request of one run
  local before after n
  before=$(cpu_ticks "$1")
  n=$(taskset -c 1 npx autocannon -c 10 -d "$SECONDS_PER_RUN" --json -H "$3" "$(url "$2")" 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)["2xx"]))')
  after=$(cpu_ticks "$1")
  [ "$n" -gt 0 ] || { echo "no 2xx answer from port $2 (see $WORK/$2.log)" >&2; exit 1; }
  echo $(( (after - before) * 10000000 / n / 1000 )) # ticks of 10 ms
}

summary() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "min %d, median %d", a[1], a[int((NR+1)/2)]}'; }

start "$1" 18401
start "$2" 18402
header_a=$(credential 18401)
header_b=$(credential 18402)
for port in 18401 18402; do # warm-up
  header=$([ $port = 18401 ] && echo "$header_a" || echo "$header_b")
  taskset -c 1 npx autocannon -c 10 -d 2 -H "$header" "$(url $port)" >/dev/null 2>&1
done
A=()
B=()
for _ in $(seq "$ROUNDS"); do
  A+=("$(run "${PIDS[0]}" 18401 "$header_a")")
  B+=("$(run "${PIDS[1]}" 18402 "$header_b")")
done
echo "$KIND, CPU µs per request over $ROUNDS alternating runs of ${SECONDS_PER_RUN} s:"
echo "  $1: $(summary "${A[@]}")  [${A[*]}]"
echo "  $2: $(summary "${B[@]}")  [${B[*]}]"

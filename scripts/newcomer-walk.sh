#!/usr/bin/env bash
# A newcomer's walk: what README.md tells someone with a fresh clone to do, done by a script.
# In a temporary directory: clone this checkout's committed HEAD, `npm ci && npm start` as the README
# says (with this machine's own PATH and Node: an unsupported Node goes through
# scripts/with-supported-node.mjs), take the demo key from the banner, walk "A first batch"
# (docs/examples/me.sh, first-batch.sh, start-batch.sh) until the batch is completed, the operator
# CLI's batch lifecycle on a second batch, a Ctrl-C and a restart (the first batch and its results
# still there), then `npm test -- test/domain` (the README's test command with a path filter, so
# the walk shows the second command works without the whole suite's 5 minutes).
# Prints `ok: <step> (<seconds>)` per step, or `FAIL: <step>: <why>` and exits 1 on the first failure.
# Usage: bash scripts/newcomer-walk.sh        KEEP=1 keeps the temporary directory (clone and logs).
set -uo pipefail

root=$(git rev-parse --show-toplevel) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/newcomer-walk.XXXXXX")
repo=$tmp/repo
server_pid=''
walk_start=$SECONDS
step_start=$SECONDS
# A newcomer's shell has none of these: the walk runs on the embedded database, in the clone's ./data.
unset DATABASE_URL TEST_DATABASE_URL ADMIN_TOKEN DATA_DIR CLI_SERVER_URL HOST

stop_server() { # $1: seconds to wait after SIGINT; sets $stopped to the exit status, or to why not
  local pid=$server_pid deadline=$((SECONDS + $1))
  stopped=''
  [ -n "$pid" ] || return 0
  server_pid=''
  kill -INT -- "-$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    stopped="still running $1 s after SIGINT (killed)"
    return 0
  fi
  wait "$pid" 2>/dev/null
  stopped=$?
  # What was left in the group (the launcher's child, the server) must be gone too.
  if pgrep -g "$pid" >/dev/null 2>&1; then
    kill -KILL -- "-$pid" 2>/dev/null
    stopped="npm exited ($stopped) but left processes behind (killed)"
  fi
}

cleanup() {
  [ -n "$server_pid" ] && stop_server 20
  if [ "${KEEP:-}" = 1 ]; then echo "kept: $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() {
  echo "ok: $1 ($((SECONDS - step_start)) s)"
  step_start=$SECONDS
}
fail() { # $1 step, $2 why, $3 optional log file whose tail helps
  echo "FAIL: $1: $2"
  if [ -n "${3:-}" ] && [ -f "$3" ]; then
    echo "--- last lines of $3:"
    tail -n 25 "$3"
  fi
  exit 1
}

# One field of the JSON on stdin, by a dotted path (any Node parses JSON, 20 included).
json() {
  node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      try { let v = JSON.parse(s); for (const k of process.argv[1].split(".")) v = v == null ? undefined : v[k];
        process.stdout.write(v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v)); }
      catch { process.exit(1); }
    });' "$1"
}

start_server() { # $1 log file, $2 the command line
  # Under job control it gets its own process group and keeps SIGINT (a non-interactive shell
  # starts a background command with SIGINT ignored), so Ctrl-C can be sent as a terminal does.
  set -m
  (cd "$repo" && exec bash -c "$2") >"$1" 2>&1 &
  server_pid=$!
  set +m
}

wait_for() { # $1 step, $2 log, $3 seconds, $4 grep -E pattern that must appear in the log
  local deadline=$((SECONDS + $3))
  until grep -qE "$4" "$2" 2>/dev/null; do
    kill -0 "$server_pid" 2>/dev/null || { wait "$server_pid"; local s=$?; server_pid=''; fail "$1" "exited ($s) before printing the banner" "$2"; }
    [ $SECONDS -lt $deadline ] || fail "$1" "no banner within $3 s" "$2"
    sleep 0.5
  done
}

cli() { (cd "$repo" && npm run -s cli -- "$@" --json 2>>"$tmp/cli.log"); }

batch_status() { curl -s --max-time 30 "$BASE/call-batches/$1" -H "Authorization: Bearer $KEY" | json data.status; }

echo "newcomer walk in $tmp ($(node --version) first on PATH: $(command -v node))"

# --- a fresh clone and the first command
git clone -q "$root" "$repo" 2>"$tmp/clone.log" || fail clone "git clone failed" "$tmp/clone.log"
ok "clone of $(git -C "$repo" rev-parse --short HEAD)"

port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
[ -n "$port" ] || fail port "no free port"
export PORT=$port
export BASE=http://127.0.0.1:$port/api/v1/public

# README's first command, as written (npm ci takes 20-90 s from the registry).
start_server "$tmp/start-1.log" 'npm ci && npm start'
wait_for "npm ci && npm start" "$tmp/start-1.log" 600 '^Lost the API key\? npm run cli -- keys create acc_'
ACCOUNT=$(sed -n 's/^Demo account created: \(acc_[^ ]*\)\. Its API key (shown once, keep it):$/\1/p' "$tmp/start-1.log")
KEY=$(sed -n 's/^  \(sk_[^ ]*\)$/\1/p' "$tmp/start-1.log" | head -n 1)
[ -n "$ACCOUNT" ] || fail "npm ci && npm start" "no 'Demo account created: acc_…' line in the banner" "$tmp/start-1.log"
[ -n "$KEY" ] || fail "npm ci && npm start" "no '  sk_…' key line in the banner" "$tmp/start-1.log"
grep -qF "curl -s http://127.0.0.1:$port/api/v1/public/me -H 'Authorization: Bearer $KEY'" "$tmp/start-1.log" ||
  fail "npm ci && npm start" "the banner's curl line does not name http://127.0.0.1:$port and the key" "$tmp/start-1.log"
launcher=$(grep -m1 -o '^Node v[0-9.]* is not supported here.*running under Node v[0-9.]*' "$tmp/start-1.log" || true)
installed=$(grep -m1 -o '^added [0-9]* packages in .*' "$tmp/start-1.log")
ok "npm ci && npm start: ${installed:-no npm ci summary line}, $(grep -c 'EBADENGINE Unsupported engine' "$tmp/start-1.log") EBADENGINE warnings; banner with demo account $ACCOUNT and its key on port $port${launcher:+ (launcher: $launcher)}"
export KEY

# --- README "A first batch"
me=$(cd "$repo" && bash docs/examples/me.sh)
[ "$(echo "$me" | json data.account_id)" = "$ACCOUNT" ] || fail "me" "docs/examples/me.sh answered: ${me:0:300}"
ok "me: $ACCOUNT"

created=$(cd "$repo" && bash docs/examples/first-batch.sh)
BATCH=$(echo "$created" | sed -n 's/^BATCH=//p')
[ -n "$BATCH" ] || fail "first batch" "no BATCH= line; docs/examples/first-batch.sh printed: ${created:0:400}"
first_json=$(echo "$created" | head -n 1)
[ "$(echo "$first_json" | json data.status)" = pending ] || fail "first batch" "the create did not answer status pending: ${first_json:0:400}"
[ "$(echo "$first_json" | json data.accepted_contacts)" = 20 ] || fail "first batch" "not 20 contacts accepted: ${first_json:0:400}"
s=$(batch_status "$BATCH")
[ "$s" = paused ] || fail "first batch" "a manual batch should read paused before its start, reads '$s'"
ok "first batch: $BATCH, 20 accepted, pending then paused"

started=$(cd "$repo" && BATCH=$BATCH bash docs/examples/start-batch.sh)
[ "$(echo "$started" | json status_code)" = 200 ] || fail "start batch" "docs/examples/start-batch.sh answered: ${started:0:300}"
ok "start batch"

deadline=$((SECONDS + 300))
while s=$(batch_status "$BATCH"); [ "$s" != completed ]; do
  case $s in cancelled | failed) fail "first batch runs" "status $s" ;; esac
  [ $SECONDS -lt $deadline ] || fail "first batch runs" "not completed within 300 s (status '$s')" "$tmp/start-1.log"
  sleep 1
done
detail=$(curl -s "$BASE/call-batches/$BATCH" -H "Authorization: Bearer $KEY")
counts="completed $(echo "$detail" | json data.completed), failed $(echo "$detail" | json data.failed), cancelled $(echo "$detail" | json data.cancelled)"
results=$(curl -s "$BASE/call-batches/$BATCH/results?limit=200" -H "Authorization: Bearer $KEY")
result_count=$(echo "$results" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data.items.length))')
[ "$result_count" = 20 ] || fail "first batch runs" "20 results expected, got '$result_count': ${results:0:300}"
ok "first batch runs to completed: $counts; 20 results"

# --- the operator CLI (docs/operations.md): list/show, then a second batch's lifecycle
cli batches list --account "$ACCOUNT" | grep -qF "\"$BATCH\"" || fail "cli batches list" "$BATCH not listed" "$tmp/cli.log"
ok "cli batches list"
s=$(cli batches show "$BATCH" --account "$ACCOUNT" | json batch.status)
[ "${s,,}" = completed ] || fail "cli batches show" "status '$s'" "$tmp/cli.log"
ok "cli batches show: $s"

{ echo contact_id,phone_number; for i in $(seq 30 49); do echo "c-$i,+14155550$((100 + i))"; done; } >"$tmp/contacts.csv"
out=$(cli batches create --account "$ACCOUNT" --agent "Demo Agent" --version v1 --csv "$tmp/contacts.csv" --start manual --concurrency 1)
BATCH2=$(echo "$out" | json batchId)
[ -n "$BATCH2" ] || fail "cli batches create --start manual" "no batch id in: ${out:0:300}" "$tmp/cli.log"
s=$(batch_status "$BATCH2")
[ "$s" = paused ] || fail "cli batches create --start manual" "reads '$s', paused expected"
ok "cli batches create --start manual: $BATCH2 reads paused"

lifecycle() { # $1 command, $2 the REST statuses expected after it (docs/dispatch.md "States"), a regex
  cli batches "$1" "$BATCH2" --account "$ACCOUNT" >/dev/null || fail "cli batches $1" "exit $?" "$tmp/cli.log"
  local s
  s=$(batch_status "$BATCH2")
  [[ $s =~ ^($2)$ ]] || fail "cli batches $1" "reads '$s', $2 expected"
  ok "cli batches $1: $s"
}
lifecycle start 'queued|running'
lifecycle pause paused
lifecycle resume 'queued|running'
lifecycle cancel cancelled

# --- Ctrl-C, then a second `npm start` on the same data
stop_server 60
[ "$stopped" = 0 ] || [ "$stopped" = 130 ] || fail "stop (SIGINT)" "$stopped" "$tmp/start-1.log"
grep -q 'shutting down' "$tmp/start-1.log" || fail "stop (SIGINT)" "no 'shutting down' log line" "$tmp/start-1.log"
! grep -qE '"level":(50|60)' "$tmp/start-1.log" || fail "stop (SIGINT)" "error lines in the log: $(grep -m1 -E '"level":(50|60)' "$tmp/start-1.log" | cut -c1-300)"
ok "stop (SIGINT): npm exited $stopped (Ctrl-C's 128+2), 'shutting down' logged, no error line"

start_server "$tmp/start-2.log" 'npm start'
wait_for "restart" "$tmp/start-2.log" 300 '^Lost the API key\? '
grep -qF "Call batch service on http://127.0.0.1:$port " "$tmp/start-2.log" || fail restart "no 'Call batch service on http://127.0.0.1:$port' line" "$tmp/start-2.log"
grep -qxF "Lost the API key? npm run cli -- keys create $ACCOUNT" "$tmp/start-2.log" || fail restart "no 'Lost the API key? npm run cli -- keys create $ACCOUNT' line" "$tmp/start-2.log"
! grep -q '^Demo account created' "$tmp/start-2.log" || fail restart "a second demo account was created" "$tmp/start-2.log"
ok "restart: banner with the URL and the keys create line for $ACCOUNT"
s=$(batch_status "$BATCH")
[ "$s" = completed ] || fail "after restart" "$BATCH reads '$s'"
n=$(curl -s "$BASE/call-batches/$BATCH/results?limit=200" -H "Authorization: Bearer $KEY" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data.items.length))')
[ "$n" = 20 ] || fail "after restart" "20 results expected, got '$n'"
ok "after restart: $BATCH completed with its 20 results, the demo key still works"
stop_server 60
[ "$stopped" = 0 ] || [ "$stopped" = 130 ] || fail "stop (SIGINT) after restart" "$stopped" "$tmp/start-2.log"
! grep -qE '"level":(50|60)' "$tmp/start-2.log" || fail "stop (SIGINT) after restart" "error lines in the log: $(grep -m1 -E '"level":(50|60)' "$tmp/start-2.log" | cut -c1-300)"
ok "stop (SIGINT) after restart: exited $stopped"

# --- the second command, filtered to one directory
(cd "$repo" && npm test -- test/domain) >"$tmp/npm-test.log" 2>&1 || fail "npm test -- test/domain" "exit $?" "$tmp/npm-test.log"
ok "npm test -- test/domain: $(sed 's/\x1b\[[0-9;]*m//g' "$tmp/npm-test.log" | grep -E '^ +(Test Files|Tests) ' | tr -s ' ' | sed 's/^ //' | paste -sd, - | sed 's/,/, /')"

echo "walk done in $((SECONDS - walk_start)) s"

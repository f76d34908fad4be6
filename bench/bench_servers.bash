# SPDX-License-Identifier: BSL-1.0
# shellcheck shell=bash
# Sourced by the bench/run_* scripts (bench/run_semaphore_bench for now; run_lock_bench and
# run_cluster_bench still carry their own copy of the same pieces): installs what is missing,
# builds bench targets in build-bench/, starts redis-servers of their own on free loopback ports
# (temp dirs, stopped by PID on exit) and offers the helpers the scripts share.
# The sourcing script sets `prog` (its name, for messages) and `root` (the repository) first.

say() { printf '\n== %s\n' "$*"; }
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }

# install_bench_deps NODE-PACKAGE...: scripts/setup, node and npm, and `npm install` in bench/node
# when one of the named packages is missing from its node_modules.
install_bench_deps() {
    "$root/scripts/setup"
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "$prog: installing nodejs and npm"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update
        apt-get install -y --no-install-recommends nodejs npm
    fi
    node_dir=$root/bench/node
    local pkg
    for pkg in "$@"; do
        if [[ ! -d $node_dir/node_modules/$pkg ]]; then
            echo "$prog: npm install in bench/node ($pkg is missing)"
            (cd "$node_dir" && timeout 600 npm install --no-audit --no-fund)
            break
        fi
    done
}

# build_bench TARGET...: the targets in build-bench/ (RelWithDebInfo, tests and examples off), never build/.
build_bench() {
    build=$root/build-bench
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$build" --target "$@" -- -j2
}

work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-$prog-XXXXXX")
pids=()
server_pids=()
ports=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
rcli() {
    local port=$1
    shift
    timeout 60 redis-cli -h 127.0.0.1 -p "$port" "$@"
}

# start_server I: starts server I on a free port in its own dir; sets ports[I] and server_pids[I]
# and adds its PID to pids.
start_server() {
    local i=$1 dir=$work/redis-$1 attempt port pid
    mkdir -p "$dir"
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 40000))
        [[ " ${ports[*]} " == *" $port "* ]] && continue
        port_free "$port" || continue
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
            --daemonize no --logfile "$dir/redis.log" &
        pid=$!
        pids+=("$pid")
        for _ in $(seq 100); do
            [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]] && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        if [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; then
            ports[i]=$port
            server_pids[i]=$pid
            return 0
        fi
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    echo "$prog: could not start redis-server $i; its log:" >&2
    cat "$dir/redis.log" >&2 || true
    exit 1
}

flush_all() {
    local port
    for port in "${ports[@]}"; do
        [[ $(rcli "$port" FLUSHALL SYNC) == OK ]] || { echo "$prog: FLUSHALL failed on $port" >&2; exit 1; }
    done
}

# rb_rate PORT ARGS...: runs redis-benchmark (bounded by -n and a timeout), prints requests/s.
rb_rate() {
    local port=$1 out rate
    shift
    if ! out=$(timeout 300 redis-benchmark -h 127.0.0.1 -p "$port" --csv "$@" 2>/dev/null); then
        echo "$prog: redis-benchmark $* failed or ran out of time" >&2
        exit 1
    fi
    # "test","rps","avg_latency_ms",...  then  "<command>","<rps>",...
    rate=$(printf '%s\n' "$out" | awk -F'","' 'NR > 1 && NF > 1 { r = $2 } END { print r }')
    [[ $rate =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$prog: cannot parse redis-benchmark output: $out" >&2; exit 1; }
    echo "$rate"
}

# cpu_idle: the idle share (%) of all CPUs over the next 2 s (anything else running skews every figure).
cpu_idle() {
    local _ u n s i w x y z t1 i1
    read -r _ u n s i w x y z _ </proc/stat
    t1=$((u + n + s + i + w + x + y + z)) i1=$i
    sleep 2
    read -r _ u n s i w x y z _ </proc/stat
    echo $((100 * (i - i1) / (u + n + s + i + w + x + y + z - t1)))
}

# jget FILE FIELD...: fields of a one-line JSON report, space-separated.
jget() {
    node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
             console.log(process.argv.slice(2).map((k) => r[k]).join(" "));' "$@"
}

# target DESCRIPTION CONDITION-FOR-AWK: a PASS or FAIL line.
target() {
    if awk "BEGIN { exit !($2) }"; then echo "   PASS  $1"; else echo "   FAIL  $1"; fi
}

# children_cpu_us VAR: sets VAR to the CPU time (user + sys, in microseconds) that this shell's
# finished children (and theirs, once waited for) have used so far: a client's CPU, read before
# and after it runs. A variable, not output: `times` must run in this shell, and a command
# substitution's fork starts counting from zero.
children_cpu_us() {
    times >"$work/times"
    printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
                                          printf "%.0f", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000000 }' "$work/times")"
}

# servers_cpu_ticks N: the CPU time (utime + stime, in clock ticks) servers 0 .. N-1 have used so far.
servers_cpu_ticks() {
    local total=0 i
    for ((i = 0; i < $1; i++)); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/${server_pids[i]}/stat")))
    done
    echo "$total"
}

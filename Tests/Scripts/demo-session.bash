# Sourced by demo-smoke and install-smoke: runs `campusfs demo` the way a newcomer does, in a session of its own,
# runs every command it tells the user to try, and interrupts it with Ctrl-C (SIGINT). The caller sets $work (a
# temporary directory it removes) and $mountpoint, and calls demo_cleanup from its EXIT trap.

# Isolated XDG directories under $work: the demo's profile and state never touch the real home.
demo_isolate() {
    export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" \
        XDG_STATE_HOME="$work/state" XDG_RUNTIME_DIR="$work/run"
}

demo_pid=""
demo_fail() {
    echo "$(basename "$0"): $*" >&2
    cat "$work/demo.log" >&2
    exit 1
}

# Starts the given command (Scripts/demo, or campusfs demo) and waits until it says the mount is ready.
demo_start() {
    setsid "$@" >"$work/demo.log" 2>&1 &
    demo_pid=$!
    for _ in $(seq 600); do
        grep -q "is mounted at" "$work/demo.log" && break
        kill -0 "$demo_pid" 2>/dev/null || demo_fail "$* exited before mounting"
        sleep 0.5
    done
    grep -q " $mountpoint fuse.campusfs" /proc/mounts || demo_fail "nothing mounted at $mountpoint"
}

# The commands the demo printed after "Try, in another terminal:", one a line.
demo_printed_commands() {
    sed -n '/^Try, in another terminal:$/,/^Press Ctrl-C/{/^  /s/^  //p}' "$work/demo.log"
}

# Runs each printed command as a user pastes it into a shell: each must succeed and print something.
demo_try_printed_commands() {
    local line output count=0
    while IFS= read -r line; do
        output=$(timeout 30 bash -c "$line" 2>&1) || demo_fail "the printed command failed: $line"$'\n'"$output"
        [[ -n $output ]] || demo_fail "the printed command printed nothing: $line"
        count=$((count + 1))
    done < <(demo_printed_commands)
    ((count >= 3)) || demo_fail "the demo printed $count commands to try, expected ls, find and status"
}

# Ctrl-C to the demo's session: it must exit within 10 s, unmount and say so.
demo_interrupt() {
    kill -INT -- "-$demo_pid"
    for _ in $(seq 100); do
        kill -0 "$demo_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$demo_pid" 2>/dev/null && demo_fail "the demo still runs 10 s after Ctrl-C"
    demo_pid=""
    grep -q " $mountpoint fuse" /proc/mounts && demo_fail "Ctrl-C left a mount at $mountpoint"
    grep -q "unmounted $mountpoint" "$work/demo.log" || demo_fail "the demo did not say it unmounted"
}

# Kills only the demo this script started and lazily unmounts what it may have left behind.
demo_cleanup() {
    [[ -n $demo_pid ]] && kill -- "-$demo_pid" 2>/dev/null || true
    grep -q " $mountpoint fuse" /proc/mounts && fusermount3 -u -z "$mountpoint" || true
}

#!/bin/sh
# Run every test binary in BUILD/tests and add up their results.
# Each test prints "N passed, N failed" as its last line; this prints the total.
# Tests named test_window_* need a display and run under xvfb-run.
# The tests named in TEST_BESIDE (default test_gpu_passes, the longest: a
# GL program on llvmpipe that writes no files, then test_cpu_solver, so that
# the two lanes take about as long: in a clean clone's `make test` on a
# 2-core machine those two took 391 + 94 s and the others' times add up to
# 409 s) start first and run beside the others, one at a time, so that CI's
# 2 cores overlap them; their results are reported at the end.
# TEST_BESIDE= runs everything in turn.
# Usage: tests/run.sh BUILD [name-filter]
B=${1:-build}
filter=${2:-}
beside=${TEST_BESIDE-test_gpu_passes test_cpu_solver}
tp=0; tf=0; broken=""
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

is_beside() {
    for n in $beside; do [ "$n" = "$1" ] && return 0; done
    return 1
}

# run_one PATH: its output into $logs/NAME, its exit status and seconds beside
run_one() {
    t=$1; name=$(basename "$t"); log="$logs/$name"
    t0=$(date +%s)
    case "$name" in
        test_window_*) SMOKEMORPH_BIN="$B/smokemorph" xvfb-run -a -s "-screen 0 1024x768x24 -noreset" "$t" >"$log" 2>&1; rc=$? ;;
        *) SMOKEMORPH_BIN="$B/smokemorph" SMOKEMORPH_BUILD="$B" "$t" >"$log" 2>&1; rc=$? ;;
    esac
    echo "$rc $(( $(date +%s) - t0 ))" >"$log.rc"
}

# report NAME: its FAIL and SKIP lines and its count, added to the totals
report() {
    name=$1; log="$logs/$name"
    read -r rc secs <"$log.rc"
    echo "== $name"
    grep -E '^(FAIL|SKIP)' "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    incomplete=0
    [ -z "$last" ] && incomplete=1
    # a crash after the summary line, or a non-zero exit with nothing failed
    [ "$rc" -ne 0 ] && [ "${last#* passed, }" = "0 failed" ] && incomplete=1
    if [ $incomplete -eq 1 ]; then
        echo "   $name exited $rc without a result line; last output:"
        tail -n 15 "$log" | sed 's/^/   | /'
        broken="$broken $name"
        tf=$((tf + 1))
    else
        p=${last%% passed*}; f=${last#* passed, }; f=${f%% failed*}
        tp=$((tp + p)); tf=$((tf + f))
        echo "   $last ($secs s)"
    fi
}

selected() {
    for t in "$B"/tests/test_*; do
        case "$t" in *.o|*.d) continue ;; esac
        [ -x "$t" ] || continue
        name=$(basename "$t")
        [ -n "$filter" ] && case "$name" in *"$filter"*) ;; *) continue ;; esac
        echo "$t"
    done
}

# the tests beside, one after another in the background
side=""
for t in $(selected); do is_beside "$(basename "$t")" && side="$side $t"; done
pid=""
if [ -n "$side" ]; then
    ( for t in $side; do run_one "$t"; done ) &
    pid=$!
    echo "(running beside the others:$(for t in $side; do printf ' %s' "$(basename "$t")"; done))"
fi
for t in $(selected); do
    name=$(basename "$t")
    is_beside "$name" && continue
    run_one "$t"
    report "$name"
done
if [ -n "$pid" ]; then
    wait "$pid"
    for t in $side; do report "$(basename "$t")"; done
fi
[ -n "$broken" ] && echo "crashed or incomplete:$broken"
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]

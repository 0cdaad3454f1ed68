#!/bin/sh
# Run every test binary in BUILD/tests and add up their results.
# Each test prints "N passed, N failed" as its last line; this prints the total.
# Tests named test_window_* need a display and run under xvfb-run.
# Usage: tests/run.sh BUILD [name-filter]
B=${1:-build}
filter=${2:-}
tp=0; tf=0; broken=""
for t in "$B"/tests/test_*; do
    case "$t" in *.o|*.d) continue ;; esac
    [ -x "$t" ] || continue
    name=$(basename "$t")
    [ -n "$filter" ] && case "$name" in *"$filter"*) ;; *) continue ;; esac
    echo "== $name"
    log=$(mktemp)
    t0=$(date +%s)
    case "$name" in
        test_window_*) SMOKEMORPH_BIN="$B/smokemorph" xvfb-run -a -s "-screen 0 1024x768x24 -noreset" "$t" >"$log" 2>&1; rc=$? ;;
        *) SMOKEMORPH_BIN="$B/smokemorph" SMOKEMORPH_BUILD="$B" "$t" >"$log" 2>&1; rc=$? ;;
    esac
    grep -E '^(FAIL|SKIP)' "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    incomplete=0
    [ -z "$last" ] && incomplete=1
    # a crash after the summary line, or a non-zero exit with nothing failed
    [ $rc -ne 0 ] && [ "${last#* passed, }" = "0 failed" ] && incomplete=1
    if [ $incomplete -eq 1 ]; then
        echo "   $name exited $rc without a result line; last output:"
        tail -n 15 "$log" | sed 's/^/   | /'
        broken="$broken $name"
        tf=$((tf + 1))
    else
        p=${last%% passed*}; f=${last#* passed, }; f=${f%% failed*}
        tp=$((tp + p)); tf=$((tf + f))
        echo "   $last ($(( $(date +%s) - t0 )) s)"
    fi
    rm -f "$log"
done
[ -n "$broken" ] && echo "crashed or incomplete:$broken"
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]

#!/bin/sh
# Run every libFuzzer harness of BUILD (default build-fuzz, made by
# `make fuzz`) for SECONDS each (default 45), two at a time (CI has 2 cores),
# from the committed seed corpus fuzz/corpus/NAME/ (with the dictionary
# fuzz/NAME.dict where there is one). New inputs go to
# BUILD/corpus/NAME/ (the committed corpus is never written); a crash is
# saved as BUILD/artifacts/NAME-crash-..., and its log's tail is printed.
# Exit status 1 when any harness found something.
# SEED (environment, default 1) is libFuzzer's -seed: with a fixed seed a run
# explores the same inputs in the same order, so CI's run is one that can be
# repeated here (a slower machine explores a prefix of it); SEED=0 takes a
# random seed each run, for searching beyond it.
# Usage: [SEED=N] fuzz/run.sh [BUILD] [SECONDS]
B=${1:-build-fuzz}
T=${2:-45}
S=${SEED:-1}
cd "$(dirname "$0")/.." || exit 2
names=""
for f in fuzz/fuzz_*.c; do
    n=$(basename "$f" .c)
    names="$names ${n#fuzz_}"
done
mkdir -p "$B/artifacts"

run_one() {
    name=$1
    mkdir -p "$B/corpus/$name"
    dict=""
    [ -f "fuzz/$name.dict" ] && dict="-dict=fuzz/$name.dict"
    # stdout closed: fuzz_config's --help would print on every run
    "$B/fuzz_$name" -seed="$S" -max_total_time="$T" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=1 $dict \
        -artifact_prefix="$B/artifacts/$name-" "$B/corpus/$name" "fuzz/corpus/$name" \
        >"$B/$name.log" 2>&1
}

fail=""
set -- $names
while [ $# -gt 0 ]; do
    a=$1; shift
    b=""
    if [ $# -gt 0 ]; then b=$1; shift; fi
    run_one "$a" & pa=$!
    if [ -n "$b" ]; then run_one "$b" & pb=$!; fi
    wait $pa || fail="$fail $a"
    if [ -n "$b" ]; then wait $pb || fail="$fail $b"; fi
done

for n in $names; do
    line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$B/$n.log" | tail -n 1)
    echo "fuzz_$n: ${line:-no summary}"
done
if [ -n "$fail" ]; then
    for n in $fail; do
        echo "fuzz_$n FAILED; the end of $B/$n.log:"
        tail -n 30 "$B/$n.log" | sed 's/^/   | /'
    done
    echo "fuzz: findings in:$fail (inputs in $B/artifacts/)"
    exit 1
fi
echo "fuzz: no findings in $T s each"

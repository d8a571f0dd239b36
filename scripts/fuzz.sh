#!/bin/sh
# Builds one libFuzzer target of Fuzz/ (with AddressSanitizer, Swift checks on) and fuzzes it on one
# worker at the lowest priority for SECONDS (wall clock), starting from the committed seeds in
# Fuzz/Corpus/TARGET. New interesting inputs go to Fuzz/.build/corpus/TARGET (kept between runs,
# not committed).
#
# The run continues past a finding: libFuzzer's fork mode (-fork=1) restarts its one child after a
# crash, an out-of-memory or a timeout, and every such input is kept in Fuzz/.build/crashes/TARGET/.
# At the end the script prints one summary line: executions, executions per second, coverage and
# the number of inputs kept in the crash directory, also appended to Fuzz/.build/logs/summary.txt
# (the whole libFuzzer log is in Fuzz/.build/logs/TARGET.log). The status is 1 if an input was kept.
#
#   scripts/fuzz.sh TARGET SECONDS [RUNS] [libFuzzer flags]
#       TARGET: model image flexbuffers metadata numpy automl
#       RUNS:   stop after this many executions instead (SECONDS stays an upper bound)
#   scripts/fuzz.sh image 300
#   scripts/fuzz.sh model 7200 1000000
#   Fuzz/.build/debug/FuzzModel Fuzz/.build/crashes/model/crash-...   # replay one input
set -eu
if [ $# -lt 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS [RUNS] [libFuzzer flags]   (TARGET: model image flexbuffers metadata numpy automl)" >&2
    exit 2
fi
target=$1
seconds=$2
shift 2
runs=-1
case ${1:-} in
    ''|-*) ;;
    *) runs=$1; shift ;;
esac
case $target in
    model) product=FuzzModel ;;
    image) product=FuzzImage ;;
    flexbuffers) product=FuzzFlexBuffers; set -- -max_len=1024 "$@" ;;  # custom options are ~300 bytes
    metadata) product=FuzzMetadata ;;
    numpy) product=FuzzNumpy ;;
    automl) product=FuzzAutoML ;;
    *) echo "scripts/fuzz.sh: unknown target '$target' (model image flexbuffers metadata numpy automl)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../Fuzz"
# SwiftPM keeps this package's build plan while its manifest is unchanged and does not see files
# added to the engine (a dependency by path): without the plan, it plans again from the sources.
rm -f .build/debug.yaml
# -parse-as-library: libFuzzer defines main. The C shims (libjpeg/libpng glue) are instrumented too.
nice -n 19 swift build --product "$product" --disable-index-store \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    -Xcc -fsanitize=fuzzer-no-link,address
mkdir -p ".build/corpus/$target" ".build/crashes/$target" .build/logs
log=".build/logs/$target.log"
kept_before=$(ls ".build/crashes/$target" | wc -l)
# -timeout: an input that runs 25 s (wall clock, at nice 19 on a shared machine) is a hang;
# -rss_limit_mb / -malloc_limit_mb: an input that asks for more is a resource-exhaustion bug.
# -fork=1 with -ignore_*: one child process at a time, restarted after each finding.
status=0
nice -n 19 ".build/debug/$product" \
    -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -runs="$runs" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix=".build/crashes/$target/" "$@" \
    ".build/corpus/$target" "Corpus/$target" > "$log" 2>&1 || status=$?
kept_after=$(ls ".build/crashes/$target" | wc -l)
# Fork mode's status lines read "#EXECS: cov: C ft: F corp: N exec/s: R oom/timeout/crash: A/B/C time: Ts ...".
last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1)
echo "fuzz $target: ${last:-no status line (see Fuzz/$log)}; crash directory: $kept_after inputs ($((kept_after - kept_before)) new); libFuzzer exit $status" \
    | tee -a .build/logs/summary.txt
[ "$kept_after" -eq "$kept_before" ]

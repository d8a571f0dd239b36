#!/bin/sh
# Builds one libFuzzer target of Fuzz/ (with AddressSanitizer, Swift checks on) and fuzzes it for
# SECONDS on one core at the lowest priority, starting from the committed seeds in
# Fuzz/Corpus/TARGET. New interesting inputs go to Fuzz/.build/corpus/TARGET (kept between runs,
# not committed); a crashing input is written to Fuzz/.build/crashes/TARGET/ and the run stops.
#
#   scripts/fuzz.sh TARGET SECONDS      TARGET: model image flexbuffers metadata numpy automl
#   scripts/fuzz.sh image 300
#   Fuzz/.build/debug/FuzzImage Fuzz/.build/crashes/image/crash-...   # replay one input
#
# Extra libFuzzer flags can follow SECONDS (e.g. -max_len=4096).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]   (TARGET: model image flexbuffers metadata numpy automl)" >&2
    exit 2
fi
target=$1
seconds=$2
shift 2
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
# -parse-as-library: libFuzzer defines main. The C shims (libjpeg/libpng glue) are instrumented too.
swift build --product "$product" --disable-index-store \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    -Xcc -fsanitize=fuzzer-no-link,address
mkdir -p ".build/corpus/$target" ".build/crashes/$target"
# -timeout: an input that runs 25 s (wall clock, at nice 19 on a shared machine) is a hang;
# -rss_limit_mb / -malloc_limit_mb: an input that asks for more is a resource-exhaustion bug.
exec nice -n 19 ".build/debug/$product" \
    -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix=".build/crashes/$target/" "$@" \
    ".build/corpus/$target" "Corpus/$target"

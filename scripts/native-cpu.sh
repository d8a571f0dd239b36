#!/bin/sh
# Prints the LLVM name of this machine's CPU (what clang's -march=native resolves to), for an
# opt-in build tuned to it: SWIFTLITE_TARGET_CPU=$(scripts/native-cpu.sh) swift build -c release
clang -march=native -### -x c -c /dev/null 2>&1 | grep -o '"-target-cpu" "[^"]*"' | awk '{print $2}' | tr -d '"'

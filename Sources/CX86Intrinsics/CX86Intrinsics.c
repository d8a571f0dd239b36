// The module is mostly the header in include/, whose inline functions are compiled into the Swift
// code that calls them (with that code's target CPU). This file, compiled for the x86-64 baseline
// whatever the Swift target, holds the one piece of code that must run before any of that: the
// check that this CPU can run the instructions the build targets.

#if defined(__x86_64__) && defined(SWIFTLITE_REQUIRES_X86_64_V3)
#include <cpuid.h>
#include <string.h>
#include <unistd.h>

/// Appends `name` to the list of missing features in `list`.
static void swiftlite_note_missing(char *list, size_t capacity, const char *name) {
    if (list[0] != '\0') strncat(list, ", ", capacity - strlen(list) - 1);
    strncat(list, name, capacity - strlen(list) - 1);
}

/// Runs before `main` and before any Swift code: the engine, Tasks and the CLI are compiled for
/// x86-64-v3 (Package.swift), so LLVM may use AVX2, FMA, BMI1/2, F16C, MOVBE and LZCNT anywhere
/// in them. On a CPU without them the process would die of SIGILL at some later instruction; this
/// stops it first with a message that names what is missing. XGETBV is read only when CPUID
/// reports OSXSAVE (it faults otherwise), and YMM state must be enabled by the OS.
__attribute__((constructor)) static void swiftlite_require_x86_64_v3(void) {
    char missing[160] = "";
    unsigned a = 0, b = 0, c = 0, d = 0;
    __get_cpuid(1, &a, &b, &c, &d);
    const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!avx) swiftlite_note_missing(missing, sizeof missing, "AVX");
    if (!((c >> 12) & 1)) swiftlite_note_missing(missing, sizeof missing, "FMA");
    if (!((c >> 29) & 1)) swiftlite_note_missing(missing, sizeof missing, "F16C");
    if (!((c >> 22) & 1)) swiftlite_note_missing(missing, sizeof missing, "MOVBE");
    if (osxsave && avx) {
        unsigned xcr0, xcr0High;
        __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0High) : "c"(0));
        if ((xcr0 & 0x6) != 0x6) swiftlite_note_missing(missing, sizeof missing, "AVX register state enabled by the OS");
    } else if (avx) {
        swiftlite_note_missing(missing, sizeof missing, "OSXSAVE");
    }
    a = b = c = d = 0;
    __get_cpuid_count(7, 0, &a, &b, &c, &d);
    if (!((b >> 5) & 1)) swiftlite_note_missing(missing, sizeof missing, "AVX2");
    if (!((b >> 3) & 1)) swiftlite_note_missing(missing, sizeof missing, "BMI1");
    if (!((b >> 8) & 1)) swiftlite_note_missing(missing, sizeof missing, "BMI2");
    a = b = c = d = 0;
    __get_cpuid(0x80000001, &a, &b, &c, &d);
    if (!((c >> 5) & 1)) swiftlite_note_missing(missing, sizeof missing, "LZCNT");
    if (missing[0] == '\0') return;
    static const char head[] = "error: SwiftLite is built for x86-64-v3 CPUs (AVX2 and FMA: Intel Haswell, AMD Zen "
                               "and later); this CPU lacks ";
    static const char tail[] = ".\nBuild for this CPU with SWIFTLITE_TARGET_CPU=x86-64 (slow, no vector FMA).\n";
    ssize_t ignored = write(2, head, sizeof head - 1);
    ignored = write(2, missing, strlen(missing));
    ignored = write(2, tail, sizeof tail - 1);
    (void)ignored;
    _exit(78);
}
#endif

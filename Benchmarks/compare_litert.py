"""Latency (and peak memory) of swiftlite next to LiteRT XNNPACK on the same machine, in the same run.

    python Benchmarks/compare_litert.py [--memory | --allocations | --first [--young]] [--markdown] [--avx2]
                                        [--exe LABEL=PATH ...] [MODEL ...]

For each model and for 1 and 2 threads: LiteRT with its default delegate (XNNPACK, num_threads=N)
and `swiftlite bench --threads N` (release build), alternated for ROUNDS rounds (default 5) of RUNS
invocations each (default 20) on random inputs, so that machine noise (the machine is shared) hits
both alike. Prints, per model and thread count, the median over rounds of each runner's per-round
median, the spread of those medians (min-max), and the ratio swiftlite / XNNPACK: the median of the
per-round ratios, with their spread. A round's two runs follow each other within a second or two,
so a ratio of one round compares two runs in the same state of the host; on a host whose virtual
CPU switches between a fast and a slow state for tens of seconds (seen: 1.6 times the time), the
ratio of the two medians would compare runs in different states whenever the runners spent
different numbers of rounds in the slow one. On a calm host the two agree.

Each swiftlite round is a fresh process; LiteRT's interpreter lives in this script's process,
seconds old. On the shared VMs a process's first hundred milliseconds or so have run up to 1.5
times slower at one thread and at two (a plain C loop too, in some starts and not others), so
swiftlite first runs untimed invocations for about WARMUP_MS (default 300; at least 3), counted
from LiteRT's median of the same round.

--exe LABEL=PATH (repeatable): time these swiftlite binaries instead of .build/release/swiftlite,
all alternated with LiteRT in the same rounds (e.g. the default build and a native one); the table
then has a ratio column per binary, and the last binary's time over the first's. NO_BUILD=1 skips
the release build. --markdown prints the table as Markdown, headed by the machine, the date, the
builds' kernels and the rounds, for docs/PERFORMANCE-LOG.md.

--avx2: both runtimes as on a CPU with AVX2 and FMA but without AVX-512 (an AMD Zen 3, an Intel
Haswell to Comet Lake), on this machine: swiftlite with SWIFTLITE_KERNELS=avx2, and LiteRT with the
AVX-512, AVX-VNNI and AMX flags cleared in what its CPU detection reports (the cpuinfo library
inside the wheel's libpywrap_litert_common.so, found through the library's symbol table with `nm`)
before XNNPACK reads them, so that XNNPACK picks its AVX2 kernels (on the AMD Zen 4 this was
written on, its int8 MobileNetV2 then took 2.4 times as long). Latency and --first only.

--memory: instead, the peak resident memory each runner adds over its process baseline (one fresh
process per model and runner: LiteRT loaded in Python after its imports, swiftlite after start-up;
the peak is reset with /proc/self/clear_refs at the baseline).

--first: first inference instead of steady state: per model and thread count, ROUNDS fresh processes
of each runner, each loading and preparing the model (LiteRT: Interpreter + allocate_tensors; swiftlite:
`bench --runs 1 --warmup 0`, its load_prepare_ms) and timing its first invoke; medians and spreads, and
the ratio of the totals (load + prepare + first invoke). With several --exe binaries, each runs in
every round after LiteRT, with its own three columns.

--young (with --first): LiteRT loads in a child forked from its Python process once everything is
imported, so that it too starts from a process a few milliseconds old (swiftlite loads about 20 ms
after it starts, LiteRT after Python's imports, 300 ms or more). On the shared VMs two threads have
run at one thread's speed for the first few hundred milliseconds of a process in some hours and
not in others, in both runtimes. The child's copy-on-write faults add about a millisecond to
LiteRT's load.

--allocations: checks that `invoke` allocates nothing, for 1, 2 and 3 threads: runs
`swiftlite bench` under an LD_PRELOAD malloc counter (compiled here with clang) for 10 and for 110
invocations; the difference is the bench loop's own few array growths (under 20), or 100× any
allocation per invocation.
"""
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")
DEFAULT_MODELS = [
    os.path.join(SHARED, "perf/mobilenet_v2_1.0_224_f32.tflite"),
    os.path.join(SHARED, "perf/mobilenet_v2_1.0_224_int8.tflite"),
    os.path.join(SHARED, "mobilenet_v2_1.0_224_quant.tflite"),
    os.path.join(SHARED, "tf2_mobilenet_v2_1.0_224_ptq.tflite"),
    os.path.join(SHARED, "ssd_mobilenet_v1_coco_quant.tflite"),
    os.path.join(ROOT, "Models/efficientnet_lite0_f32.tflite"),
    os.path.join(ROOT, "Models/efficientnet_lite0_int8.tflite"),
    os.path.join(ROOT, "Models/person_detector_f32.tflite"),
    os.path.join(ROOT, "Models/person_detector_int8.tflite"),
]
THREADS = [1, 2]
ROUNDS = int(os.environ.get("ROUNDS", "5"))
RUNS = int(os.environ.get("RUNS", "20"))
WARMUP_MS = float(os.environ.get("WARMUP_MS", "300"))
EXE = os.path.join(ROOT, ".build", "release", "swiftlite")
# --avx2 and --young (see above): set by main before anything runs.
AVX2 = False
YOUNG = False


# cpuinfo's `struct cpuinfo_x86_isa` (x86-64): one bool per feature, avx2 at byte 28, then avx512f
# (29) to amx_fp16 (52) and the AVX-VNNI forms; `avxvnni` is byte 23. Checked against the machine
# before anything is written.
CPUINFO_AVX2, CPUINFO_AVX512F = 28, 29
CPUINFO_CLEARED = [23] + list(range(29, 56))


def limit_litert_to_avx2():
    """Makes this process's LiteRT see a CPU without AVX-512, AVX-VNNI or AMX (see --avx2).
    Call it after importing ai_edge_litert.interpreter and before creating any interpreter."""
    import ctypes
    import ai_edge_litert.interpreter  # noqa: F401 (loads the library)
    library = os.path.join(os.path.dirname(ai_edge_litert.interpreter.__file__), "libpywrap_litert_common.so")
    symbols = {}
    for line in subprocess.run(["nm", library], check=True, capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] in ("cpuinfo_isa", "cpuinfo_initialize"):
            symbols[fields[2]] = int(fields[0], 16)
    if len(symbols) != 2:
        sys.exit(f"--avx2: {library} has no cpuinfo symbols (a stripped or different wheel)")
    base = None
    for line in open("/proc/self/maps"):
        fields = line.split()
        if len(fields) == 6 and fields[5] == library and base is None:
            base = int(fields[0].split("-")[0], 16) - int(fields[2], 16)
    if base is None:
        sys.exit(f"--avx2: {library} is not mapped in this process")
    if not ctypes.CFUNCTYPE(ctypes.c_bool)(base + symbols["cpuinfo_initialize"])():
        sys.exit("--avx2: cpuinfo_initialize failed")
    isa = (ctypes.c_uint8 * 64).from_address(base + symbols["cpuinfo_isa"])
    flags = proc_cpu_flags()
    if isa[CPUINFO_AVX2] != ("avx2" in flags) or isa[CPUINFO_AVX512F] != ("avx512f" in flags) or "avx2" not in flags:
        sys.exit("--avx2: cpuinfo's feature bytes do not match this machine's flags (another cpuinfo layout?)")
    for index in CPUINFO_CLEARED:
        isa[index] = 0


def litert_interpreter(path, threads):
    from ai_edge_litert.interpreter import Interpreter
    interpreter = Interpreter(model_path=path, num_threads=threads)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interpreter.get_input_details():
        if d["dtype"] == np.float32:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        else:
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])
        interpreter.set_tensor(d["index"], x)
    for _ in range(3):
        interpreter.invoke()
    return interpreter


def litert_round(interpreter, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        interpreter.invoke()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


# `swiftlite bench --warmup` takes at most this many.
MAX_WARMUP_RUNS = 100_000


def warmup_runs(estimate_ms, minimum):
    """Untimed invocations for about WARMUP_MS of a fresh `swiftlite bench` process at `estimate_ms`
    each, at least `minimum`, at most what `bench` accepts (a layer of a few hundred
    multiply-adds, such as a squeeze-and-excitation block's, takes under a microsecond)."""
    return min(MAX_WARMUP_RUNS, max(minimum, math.ceil(WARMUP_MS / max(estimate_ms, 0.0001))))


def swiftlite_round(exe, path, threads, runs, estimate_ms):
    """The median of `runs` timed invocations in a fresh `swiftlite bench` process, after untimed
    ones for about WARMUP_MS (at least 3), counted from `estimate_ms` per invocation."""
    warmup = warmup_runs(estimate_ms, 3)
    out = subprocess.run([exe, "bench", path, "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f}"


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def proc_cpu_flags():
    """The flags of /proc/cpuinfo's first processor (empty where there is no such file)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_flags():
    limit = "; both runtimes limited to AVX2 + FMA (--avx2)" if AVX2 else ""
    flags = proc_cpu_flags()
    return ", ".join(f for f in ["avx2", "fma", "avx512f", "avx512_vnni", "amx_int8"] if f in flags) + limit


def latency(models, exes, markdown):
    kernels = {}
    for label, exe in exes:
        out = subprocess.run([exe, "bench", models[0], "--runs", "1", "--warmup", "0", "--json"],
                             check=True, capture_output=True, text=True).stdout
        k = json.loads(out)["kernels"]
        kernels[label] = f"float {k['float']}, integer {k['integer']}"
    header = (f"{time.strftime('%Y-%m-%d')}, {cpu_name()} ({cpu_flags()}), {os.cpu_count()} cores; "
              f"{ROUNDS} rounds of {RUNS} invocations, runners alternated; ms = median of the per-round medians (min-max); ratio = median of the per-round ratios (min-max)")
    print(("" if not markdown else "") + header)
    for label, k in kernels.items():
        print(f"{'- ' if markdown else ''}{label}: kernels {k}")
    labels = [label for label, _ in exes]
    if markdown:
        columns = ["model", "threads", "LiteRT XNNPACK ms"] + [f"{l} ms" for l in labels] + [f"{l} / XNNPACK" for l in labels]
        if len(labels) > 1:
            columns.append(f"{labels[-1]} / {labels[0]}")
        print()
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
    else:
        print(f"{'model':36s} {'thr':>3s} {'LiteRT XNNPACK ms':>22s} " + " ".join(f"{l + ' ms':>22s} {'ratio':>6s} {'spread':>11s}" for l in labels))
    summary = []
    for path in models:
        for threads in THREADS:
            interpreter = litert_interpreter(path, threads)
            xnn, ours = [], {label: [] for label in labels}
            for _ in range(ROUNDS):
                xnn.append(litert_round(interpreter, RUNS))
                for label, exe in exes:
                    ours[label].append(swiftlite_round(exe, path, threads, RUNS, xnn[-1]))
            del interpreter
            mx = float(np.median(xnn))
            name = os.path.basename(path)
            medians = {label: float(np.median(ours[label])) for label in labels}
            ratios = {label: [o / x for o, x in zip(ours[label], xnn)] for label in labels}
            summary.append((name, threads, mx, medians[labels[0]]))
            if markdown:
                cells = [name, str(threads), f"{mx:.2f} ({spread(xnn)})"]
                cells += [f"{medians[l]:.2f} ({spread(ours[l])})" for l in labels]
                cells += [f"{np.median(ratios[l]):.2f} ({spread(ratios[l])})" for l in labels]
                if len(labels) > 1:
                    pair = [b / a for a, b in zip(ours[labels[0]], ours[labels[-1]])]
                    cells.append(f"{np.median(pair):.2f} ({spread(pair)})")
                print("| " + " | ".join(cells) + " |", flush=True)
            else:
                line = f"{name:36s} {threads:3d} {mx:8.2f} ({spread(xnn):>11s}) "
                line += " ".join(f"{medians[l]:8.2f} ({spread(ours[l]):>11s}) {np.median(ratios[l]):5.2f}x {spread(ratios[l]):>11s}" for l in labels)
                print(line, flush=True)
    print("\nspeed-up from 1 to 2 threads (median ms ratio):")
    for name in dict.fromkeys(s[0] for s in summary):
        rows = {s[1]: s for s in summary if s[0] == name}
        if 1 in rows and 2 in rows:
            print(f"  {name:36s} LiteRT XNNPACK {rows[1][2] / rows[2][2]:4.2f}x   {labels[0]} {rows[1][3] / rows[2][3]:4.2f}x")


LITERT_FIRST = r"""
import os, sys, time, numpy as np
from ai_edge_litert.interpreter import Interpreter
if os.environ.get("COMPARE_AVX2"):
    sys.path.insert(0, os.environ["COMPARE_AVX2"])
    from compare_litert import limit_litert_to_avx2
    limit_litert_to_avx2()
if os.environ.get("COMPARE_YOUNG"):
    # Measure in a child forked now (--young); this process waits and passes on its status.
    child = os.fork()
    if child:
        sys.exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
start = time.perf_counter()
it = Interpreter(model_path=sys.argv[1], num_threads=int(sys.argv[2]))
it.allocate_tensors()
loaded = time.perf_counter()
rng = np.random.default_rng(0)
for d in it.get_input_details():
    x = rng.uniform(-1, 1, d['shape']).astype(np.float32) if d['dtype'] == np.float32 else \
        rng.integers(np.iinfo(d['dtype']).min, np.iinfo(d['dtype']).max + 1, d['shape']).astype(d['dtype'])
    it.set_tensor(d['index'], x)
before = time.perf_counter()
it.invoke()
print((loaded - start) * 1e3, (time.perf_counter() - before) * 1e3)
"""


def first_inference(models, exes, markdown):
    young = "; LiteRT in a forked child (--young)" if YOUNG else ""
    print(f"{time.strftime('%Y-%m-%d')}, {cpu_name()} ({cpu_flags()}); {ROUNDS} fresh processes per runner, alternated{young}; "
          f"ms = median (min-max); " + ", ".join(f"{label}: {exe}" for label, exe in exes))
    columns = ["model", "threads", "LiteRT load + prepare", "LiteRT first invoke"]
    for label, _ in exes:
        columns += [f"{label} load + prepare", f"{label} first invoke", f"{label} total ratio"]
    if markdown:
        print()
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
    for path in models:
        for threads in THREADS:
            lite, ours = [], {label: [] for label, _ in exes}
            for _ in range(ROUNDS):
                env = dict(os.environ)
                if AVX2:
                    env["COMPARE_AVX2"] = os.path.dirname(os.path.abspath(__file__))
                if YOUNG:
                    env["COMPARE_YOUNG"] = "1"
                out = subprocess.run([sys.executable, "-c", LITERT_FIRST, path, str(threads)],
                                     check=True, capture_output=True, text=True, env=env).stdout.split()
                lite.append((float(out[0]), float(out[1])))
                for label, exe in exes:
                    report = json.loads(subprocess.run([exe, "bench", path, "--runs", "1", "--warmup", "0", "--threads",
                                                        str(threads), "--json"], check=True, capture_output=True,
                                                       text=True).stdout)
                    ours[label].append((report["load_prepare_ms"], report["first_invoke_ms"]))
            def cell(values):
                return f"{float(np.median(values)):.1f} ({min(values):.1f}-{max(values):.1f})"
            cells = [os.path.basename(path), str(threads), cell([l[0] for l in lite]), cell([l[1] for l in lite])]
            for label, _ in exes:
                runs = ours[label]
                ratio = [(o[0] + o[1]) / (l[0] + l[1]) for o, l in zip(runs, lite)]
                cells += [cell([o[0] for o in runs]), cell([o[1] for o in runs]), f"{float(np.median(ratio)):.2f} ({spread(ratio)})"]
            print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells), flush=True)


LITERT_MEMORY = r"""
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter
def field(name):
    for line in open('/proc/self/status'):
        if line.startswith(name + ':'): return int(line.split()[1]) * 1024
open('/proc/self/clear_refs', 'w').write('5')
base = field('VmRSS')
it = Interpreter(model_path=sys.argv[1], num_threads=int(sys.argv[2]))
it.allocate_tensors()
rng = np.random.default_rng(0)
for d in it.get_input_details():
    x = rng.uniform(-1, 1, d['shape']).astype(np.float32) if d['dtype'] == np.float32 else \
        rng.integers(np.iinfo(d['dtype']).min, np.iinfo(d['dtype']).max + 1, d['shape']).astype(d['dtype'])
    it.set_tensor(d['index'], x)
for _ in range(10): it.invoke()
print(field('VmHWM') - base)
"""


def memory(models):
    print(f"{'model':36s} {'thr':>3s} {'LiteRT XNNPACK MB':>18s} {'swiftlite MB':>13s}  (peak RSS over the process baseline)")
    for path in models:
        for threads in THREADS:
            litert = int(subprocess.run([sys.executable, "-c", LITERT_MEMORY, path, str(threads)],
                                        check=True, capture_output=True, text=True).stdout)
            out = subprocess.run([EXE, "bench", path, "--runs", "10", "--warmup", "0", "--threads", str(threads), "--json"],
                                 check=True, capture_output=True, text=True).stdout
            ours = json.loads(out)["peak_rss_over_baseline_bytes"]
            print(f"{os.path.basename(path):36s} {threads:3d} {litert / 1e6:18.1f} {ours / 1e6:13.1f}", flush=True)


MALLOC_COUNTER = r"""
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static atomic_long count;
void *malloc(size_t s) { atomic_fetch_add(&count, 1); return __libc_malloc(s); }
void *calloc(size_t n, size_t s) { atomic_fetch_add(&count, 1); return __libc_calloc(n, s); }
void *realloc(void *p, size_t s) { atomic_fetch_add(&count, 1); return __libc_realloc(p, s); }
void *memalign(size_t a, size_t s) { atomic_fetch_add(&count, 1); return __libc_memalign(a, s); }
void *aligned_alloc(size_t a, size_t s) { atomic_fetch_add(&count, 1); return __libc_memalign(a, s); }
int posix_memalign(void **p, size_t a, size_t s) { atomic_fetch_add(&count, 1); *p = __libc_memalign(a, s); return *p ? 0 : 12; }
__attribute__((destructor)) static void report(void) {
    char line[64];
    int n = snprintf(line, sizeof line, "ALLOCATIONS %ld\n", atomic_load(&count));
    write(2, line, n);
}
"""


def allocations(models):
    import shutil
    import tempfile
    clang = shutil.which("clang") or "/opt/swift/usr/bin/clang"
    work = tempfile.mkdtemp()
    source, library = os.path.join(work, "count.c"), os.path.join(work, "count.so")
    with open(source, "w") as f:
        f.write(MALLOC_COUNTER)
    subprocess.run([clang, "-O2", "-shared", "-fPIC", "-o", library, source], check=True)

    def count(path, threads, runs):
        err = subprocess.run([EXE, "bench", path, "--runs", str(runs), "--warmup", "3", "--threads", str(threads)],
                             env=dict(os.environ, LD_PRELOAD=library), check=True, capture_output=True, text=True).stderr
        return int(err.split("ALLOCATIONS")[-1].split()[0])

    failed = False
    for path in models:
        for threads in [1, 2, 3]:
            extra = count(path, threads, 110) - count(path, threads, 10)
            ok = extra < 20
            failed |= not ok
            print(f"{os.path.basename(path):36s} {threads} threads: {extra:5d} allocations over 100 more invocations {'ok' if ok else 'ALLOCATES'}")
    sys.exit(1 if failed else 0)


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__)
        return
    mode = next((a for a in args if a in ("--memory", "--allocations", "--first")), None)
    markdown = "--markdown" in args
    global AVX2, YOUNG
    AVX2 = "--avx2" in args
    YOUNG = "--young" in args
    if YOUNG and mode != "--first":
        sys.exit("--young applies to --first")
    if AVX2:
        if mode in ("--memory", "--allocations"):
            sys.exit("--avx2 applies to latency and --first")
        os.environ["SWIFTLITE_KERNELS"] = "avx2"
        limit_litert_to_avx2()
    exes, rest, i = [], [], 0
    while i < len(args):
        if args[i] == "--exe" and i + 1 < len(args):
            label, _, path = args[i + 1].partition("=")
            exes.append((label, path or label))
            i += 2
            continue
        if args[i] not in ("--memory", "--allocations", "--first", "--young", "--markdown", "--avx2"):
            rest.append(args[i])
        i += 1
    # Before anything runs: a mistyped option or path would otherwise surface as a runner's
    # unreadable output after the build.
    unknown = [a for a in rest if a.startswith("-")]
    if unknown:
        sys.exit(f"compare_litert.py: unknown option {unknown[0]} (--help lists them)")
    missing = [m for m in rest if not os.path.isfile(m)] + [p for _, p in exes if not os.path.isfile(p)]
    if missing:
        sys.exit(f"compare_litert.py: no such file: {missing[0]}")
    if os.environ.get("NO_BUILD") is None and not exes:
        subprocess.run(["swift", "build", "-c", "release", "--product", "swiftlite"], cwd=ROOT, check=True)
    models = rest or DEFAULT_MODELS
    if mode == "--memory":
        memory(models)
    elif mode == "--allocations":
        allocations(models)
    elif mode == "--first":
        first_inference(models, exes or [("swiftlite", EXE)], markdown)
    else:
        latency(models, exes or [("swiftlite", EXE)], markdown)


if __name__ == "__main__":
    main()

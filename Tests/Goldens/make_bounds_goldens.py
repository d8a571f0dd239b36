"""Index-bounds goldens: single-operator models whose kernels index their input by values computed
at prepare (resize samples, pooling windows, slice/pad/gather offsets, transpose strides, split and
concatenation offsets, reduction axes, transposed-convolution windows), driven to the edge sizes
where an off-by-one or a rounded scale would read outside the input: upscales by large non-integer
factors (8 -> 242, 8 -> 191, 3 -> 1000), 1-pixel inputs and outputs, downscales, every
align_corners / half_pixel_centers combination, in float32, int8 and uint8. Ground truth is LiteRT
BUILTIN_REF (tolerance 0: the reference's own arithmetic is matched, float32 TRANSPOSE_CONV
included) → Tests/EngineTests/Fixtures/bounds/FAMILY/.

One exception, recorded per case (`"expected": "clamped"` in the manifest): LiteRT's int8
RESIZE_BILINEAR rounds its scale to 10 fractional bits, and where that puts a sample's lower
index at the input size (8 -> 242: scale 34, position 241 * 34 = 8194, row 8 of 8) the reference
kernel reads outside its input: the bytes it uses are whatever the arena holds next (the output
tensor, in these one-operator models). SwiftLite clamps that index to the last row or column
(ResizeBilinear+Quantized.swift), so for those cases the expected output is computed here by
`resize_bilinear_int8` (TFLite's fixed-point formula with the clamp), after checking that it equals
LiteRT's bytes on every output row and column whose samples LiteRT reads inside its input.

Models are built from scratch with the schema's object API (no TensorFlow):

    python Tests/Goldens/make_bounds_goldens.py
"""
import numpy as np
from ai_edge_litert import schema_py_generated as schema

import golden_io as gio
import make_hostile_models as hm

OUT = gio.FIXTURES_ROOT / "bounds"
T = schema.TensorType
OP = schema.BuiltinOperator
OPTS = schema.BuiltinOptions
NUMPY = {T.FLOAT32: np.float32, T.INT8: np.int8, T.UINT8: np.uint8, T.INT32: np.int32, T.INT64: np.int64}
TYPE_NAMES = {T.FLOAT32: "float32", T.INT8: "int8", T.UINT8: "uint8"}
# One quantization for every quantized tensor: the operators here only move, interpolate or
# compare values, so input and output share it.
SCALE, ZERO_POINT = {T.INT8: (0.05, 3), T.UINT8: (0.04, 120)}, None


# gio.origin also names TensorFlow, which this generator does not use.
ORIGIN = {"generator": "Tests/Goldens/make_bounds_goldens.py",
          "runtime": f"ai-edge-litert {gio.package_version('ai-edge-litert')}",
          "numpy": np.__version__, "resolver": "BUILTIN_REF"}


def quantized(t, type_):
    if type_ in SCALE:
        q = schema.QuantizationParametersT()
        q.scale, q.zeroPoint = [SCALE[type_][0]], [SCALE[type_][1]]
        t.quantization = q
    return t


def single_op(code, options_type, options, inputs, constants, output_types, output_shapes=None):
    """One operator: `inputs` are (shape, type) of the model inputs, `constants` numpy arrays
    (int32/int64) appended as constant inputs. Output shapes are what LiteRT computes unless
    given (LiteRT resizes outputs at allocation; the model then declares the same shapes)."""
    def build(shapes):
        tensors, buffers = [], []
        for i, (shape, type_) in enumerate(inputs):
            tensors.append(quantized(hm.tensor(f"input_{i}", shape, type_=type_), type_))
        for i, value in enumerate(constants):
            type_ = T.INT32 if value.dtype == np.int32 else T.INT64
            buffers.append(hm.buffer(value.astype(value.dtype.newbyteorder("<")).tobytes()))
            tensors.append(hm.tensor(f"constant_{i}", list(value.shape), buffer=len(buffers), type_=type_))
        first_output = len(tensors)
        for i, (shape, type_) in enumerate(zip(shapes, output_types)):
            tensors.append(quantized(hm.tensor(f"output_{i}", shape, type_=type_), type_))
        outs = list(range(first_output, len(tensors)))
        op = hm.operator(0, list(range(first_output)), outs, options_type, options)
        return hm.model(tensors, [op], [code], list(range(len(inputs))), outs, buffers)
    if output_shapes is None:
        probe = gio.make_interpreter(build([[1]] * len(output_types)))
        output_shapes = [list(d["shape"]) for d in probe.get_output_details()]
    return build(output_shapes)


def random_input(rng, shape, type_):
    if type_ == T.FLOAT32:
        return rng.uniform(-4, 4, shape).astype(np.float32)
    info = np.iinfo(NUMPY[type_])
    return rng.integers(info.min, info.max + 1, shape).astype(NUMPY[type_])


# --------------------------------------------------------------------------
# RESIZE_BILINEAR int8: TFLite's fixed-point formula, with SwiftLite's clamp
# --------------------------------------------------------------------------


def fixed_point_samples(n_in, n_out, align, half):
    """TFLite's ComputeInterpolationValuesInteger: (lower, upper, weight) per output index, the
    lower index as TFLite computes it (it can equal n_in)."""
    one = 1024
    scale = (one * n_in + n_out // 2) // n_out
    if align and n_out > 1:
        scale = (one * (n_in - 1) + (n_out - 1) // 2) // (n_out - 1)
    samples = []
    for o in range(n_out):
        p = o * scale + scale // 2 - one // 2 if half else o * scale
        lower = max(int(p / one), 0)  # C++ division truncates toward zero
        upper = min(int((p + one - 1) / one), n_in - 1)
        samples.append((lower, upper, p - one * lower))
    return samples


def resize_bilinear_int8(x, size, align, half):
    """SwiftLite's int8 RESIZE_BILINEAR: TFLite's formula with the lower index clamped to n − 1."""
    _, h, w, _ = x.shape
    rows, columns = fixed_point_samples(h, size[0], align, half), fixed_point_samples(w, size[1], align, half)
    v = x.astype(np.int64)
    out = np.zeros((x.shape[0], size[0], size[1], x.shape[3]), np.int64)
    for oy, (y0, y1, dy) in enumerate(rows):
        y0 = min(y0, h - 1)
        for ox, (x0, x1, dx) in enumerate(columns):
            x0 = min(x0, w - 1)
            s = (v[:, y0, x0] * (1024 - dy) * (1024 - dx) + v[:, y1, x0] * dy * (1024 - dx)
                 + v[:, y0, x1] * (1024 - dy) * dx + v[:, y1, x1] * dy * dx)
            s = s + np.where(s > 0, 1 << 19, -(1 << 19))
            out[:, oy, ox] = np.sign(s) * (np.abs(s) // (1 << 20))
    return out.astype(np.int8)


def float_samples_in_bounds(n_in, n_out, align, half):
    """Whether TFLite's float ComputeInterpolationValues keeps every lower index below n_in."""
    scale = np.float32(n_in) / np.float32(n_out)
    if align and n_out > 1:
        scale = np.float32(n_in - 1) / np.float32(n_out - 1)
    for o in range(n_out):
        p = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5) if half else np.float32(o) * scale
        if int(np.floor(p)) >= n_in:
            return False
    return True


RESIZE_SIZES = [  # (name, input h×w, output h×w)
    ("up_8x3_to_242x2", (8, 3), (242, 2)),      # the fuzzer's rows: int8 lower index 8 of 8
    ("up_3x8_to_2x242", (3, 8), (2, 242)),      # the same along columns
    ("up_8x8_to_191x3", (8, 8), (191, 3)),
    ("up_3x1_to_1000x1", (3, 1), (1000, 1)),
    ("up_1x1_to_7x9", (1, 1), (7, 9)),
    ("up_2x3_to_17x13", (2, 3), (17, 13)),
    ("down_9x7_to_1x1", (9, 7), (1, 1)),
    ("down_13x11_to_4x3", (13, 11), (4, 3)),
    ("same_1x1_to_1x1", (1, 1), (1, 1)),
]
COMBOS = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)
CHANNELS = 2


def resize_cases(family, code, options_class, options_type, types):
    root = OUT / family
    gio.reset_dir(root)
    cases = []
    for size_name, (h, w), (oh, ow) in RESIZE_SIZES:
        for align, half in COMBOS:
            for type_ in types:
                name = f"{size_name}_{'align' if align else 'half' if half else 'plain'}_{TYPE_NAMES[type_]}"
                options = options_class()
                options.alignCorners, options.halfPixelCenters = align, half
                shape = [1, h, w, CHANNELS]
                model = single_op(code, options_type, options, [(shape, type_)],
                                  [np.array([oh, ow], np.int32)], [type_])
                x = random_input(np.random.default_rng(gio.seed_for(f"{family}/{name}")), shape, type_)
                (y,), ops = gio.run_model(model, [x])
                case = {"name": name, "ops": gio.unique_in_order(ops), "tolerance": 0,
                        "description": f"{family.upper()} {h}x{w} -> {oh}x{ow}, align_corners={align}, "
                                       f"half_pixel_centers={half}, {TYPE_NAMES[type_]}"}
                if code == OP.RESIZE_BILINEAR and type_ == T.INT8:
                    rows = fixed_point_samples(h, oh, align, half)
                    columns = fixed_point_samples(w, ow, align, half)
                    bad_rows = [o for o, s in enumerate(rows) if s[0] >= h]
                    bad_columns = [o for o, s in enumerate(columns) if s[0] >= w]
                    clamped = resize_bilinear_int8(x, (oh, ow), align, half)
                    inside = np.ones(y.shape, bool)
                    inside[:, bad_rows] = False
                    inside[:, :, bad_columns] = False
                    assert (clamped[inside] == y[inside]).all(), f"{name}: the formula differs from LiteRT in bounds"
                    if bad_rows or bad_columns:
                        differing = int((clamped != y).sum())
                        case["expected"] = "clamped"
                        case["description"] += (f"; LiteRT reads outside its input at output rows {bad_rows} and "
                                                f"columns {bad_columns} ({differing} of its bytes differ from the "
                                                f"clamped result recorded here)")
                        y = clamped
                elif code == OP.RESIZE_BILINEAR:
                    assert float_samples_in_bounds(h, oh, align, half) and float_samples_in_bounds(w, ow, align, half)
                gio.write_case(root, name, model, [x], [y])
                cases.append(case)
    gio.write_manifest(root, ORIGIN, cases)
    return len(cases)


# --------------------------------------------------------------------------
# Pooling windows, slices, pads, gathers, transposes, splits, reductions
# --------------------------------------------------------------------------


def pool_options(filter_hw, stride_hw, padding):
    o = schema.Pool2DOptionsT()
    o.filterHeight, o.filterWidth = filter_hw
    o.strideH, o.strideW = stride_hw
    o.padding = padding
    return o


def strided_slice_options(begin_mask=0, end_mask=0, shrink=0, ellipsis=0, new_axis=0, offset=False):
    o = schema.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.shrinkAxisMask, o.ellipsisMask, o.newAxisMask, o.offset = (
        begin_mask, end_mask, shrink, ellipsis, new_axis, offset)
    return o


def with_fields(options, **fields):
    for k, v in fields.items():
        setattr(options, k, v)
    return options


def i32(*values):
    return np.array(values, np.int32)


SAME, VALID = schema.Padding.SAME, schema.Padding.VALID
# (family, case name, builtin code, options type, options, input shapes, constants, output count,
#  element types)
INDEX_CASES = [
    # Pooling windows larger than the input, strides larger than the window, 1-pixel inputs.
    ("pool", "max_1x1_window_5x5_same", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((5, 5), (1, 1), SAME), [[1, 1, 1, 3]], [], 1),
    ("pool", "max_4x5_window_7x3_stride_3x4_same", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((7, 3), (3, 4), SAME), [[2, 4, 5, 3]], [], 1),
    ("pool", "max_9x7_window_2x2_stride_5x5_valid", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((2, 2), (5, 5), VALID), [[1, 9, 7, 2]], [], 1),
    ("pool", "max_6x6_window_6x6_valid", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((6, 6), (1, 1), VALID), [[1, 6, 6, 2]], [], 1),
    # Channel counts past the kernels' vector steps (16 + 16 + 5, 16 + 8 + 5), windows cut by the
    # padding, and a fused RELU6 that clamps.
    ("pool", "max_7x6_window_3x3_stride_2_same_37_channels", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((3, 3), (2, 2), SAME), [[1, 7, 6, 37]], [], 1),
    ("pool", "max_6x5_window_2x2_stride_2_valid_29_channels", OP.MAX_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((2, 2), (2, 2), VALID), [[2, 6, 5, 29]], [], 1),
    ("pool", "max_5x5_window_3x2_stride_1_same_relu6_48_channels", OP.MAX_POOL_2D, OPTS.Pool2DOptions,
     lambda: with_fields(pool_options((3, 2), (1, 1), SAME), fusedActivationFunction=schema.ActivationFunctionType.RELU6), [[1, 5, 5, 48]], [], 1),
    ("pool", "average_1x1_window_5x5_same", OP.AVERAGE_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((5, 5), (1, 1), SAME), [[1, 1, 1, 3]], [], 1),
    ("pool", "average_4x5_window_7x3_stride_3x4_same", OP.AVERAGE_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((7, 3), (3, 4), SAME), [[2, 4, 5, 3]], [], 1),
    ("pool", "average_9x7_window_2x2_stride_5x5_valid", OP.AVERAGE_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((2, 2), (5, 5), VALID), [[1, 9, 7, 2]], [], 1),
    ("pool", "average_3x8_window_3x8_stride_9x9_same", OP.AVERAGE_POOL_2D, OPTS.Pool2DOptions, lambda: pool_options((3, 8), (9, 9), SAME), [[1, 3, 8, 2]], [], 1),
    # Slices: begin/end past either end (clamped), negative strides, masks (SwiftLite has no SLICE).
    ("slice", "strided_past_both_ends", OP.STRIDED_SLICE, OPTS.StridedSliceOptions, lambda: strided_slice_options(), [[3, 5, 4]], [i32(-9, -7, 1), i32(9, 70, 3), i32(1, 2, 1)], 1),
    ("slice", "strided_negative_strides", OP.STRIDED_SLICE, OPTS.StridedSliceOptions, lambda: strided_slice_options(), [[3, 5, 4]], [i32(2, 9, -1), i32(-9, -99, -9), i32(-1, -2, -1)], 1),
    ("slice", "strided_masks_and_shrink", OP.STRIDED_SLICE, OPTS.StridedSliceOptions, lambda: strided_slice_options(begin_mask=1, end_mask=4, shrink=2), [[3, 5, 4]], [i32(1, -1, 3), i32(2, 0, 1), i32(1, 1, -1)], 1),
    ("slice", "strided_last_element", OP.STRIDED_SLICE, OPTS.StridedSliceOptions, lambda: strided_slice_options(shrink=7), [[3, 5, 4]], [i32(-1, -1, -1), i32(0, 0, 0), i32(1, 1, 1)], 1),
    # Pads: one side only, a 1-pixel input, MIRROR_PAD at its largest pads.
    ("pad", "pad_1x1_by_3", OP.PAD, OPTS.PadOptions, lambda: schema.PadOptionsT(), [[1, 1, 1, 2]], [i32(0, 0, 3, 3, 0, 4, 0, 0).reshape(4, 2)], 1),
    ("pad", "pad_one_side", OP.PAD, OPTS.PadOptions, lambda: schema.PadOptionsT(), [[2, 3, 4]], [i32(0, 2, 5, 0, 0, 1).reshape(3, 2)], 1),
    ("pad", "mirror_reflect_largest", OP.MIRROR_PAD, OPTS.MirrorPadOptions, lambda: with_fields(schema.MirrorPadOptionsT(), mode=schema.MirrorPadMode.REFLECT), [[1, 3, 4, 2]], [i32(0, 0, 2, 2, 3, 3, 0, 0).reshape(4, 2)], 1),
    ("pad", "mirror_symmetric_largest", OP.MIRROR_PAD, OPTS.MirrorPadOptions, lambda: with_fields(schema.MirrorPadOptionsT(), mode=schema.MirrorPadMode.SYMMETRIC), [[1, 3, 4, 2]], [i32(0, 0, 3, 3, 4, 4, 0, 0).reshape(4, 2)], 1),
    ("pad", "mirror_symmetric_1x1", OP.MIRROR_PAD, OPTS.MirrorPadOptions, lambda: with_fields(schema.MirrorPadOptionsT(), mode=schema.MirrorPadMode.SYMMETRIC), [[1, 1, 1, 2]], [i32(0, 0, 1, 1, 1, 0, 0, 0).reshape(4, 2)], 1),
    # Gathers at the first and last index of each axis, negative axis.
    ("gather", "gather_edges_axis0", OP.GATHER, OPTS.GatherOptions, lambda: with_fields(schema.GatherOptionsT(), axis=0), [[4, 3, 2]], [i32(3, 0, 3, 3, 0)], 1),
    ("gather", "gather_edges_last_axis", OP.GATHER, OPTS.GatherOptions, lambda: with_fields(schema.GatherOptionsT(), axis=-1), [[4, 3, 5]], [i32(4, 0, 4, 2).reshape(2, 2)], 1),
    ("gather", "gather_one_element", OP.GATHER, OPTS.GatherOptions, lambda: with_fields(schema.GatherOptionsT(), axis=1), [[1, 1, 1]], [i32(0, 0, 0)], 1),
    # Transposes of every rank, with 1-sized axes.
    ("layout", "transpose_rank5", OP.TRANSPOSE, OPTS.TransposeOptions, lambda: schema.TransposeOptionsT(), [[2, 1, 3, 4, 2]], [i32(4, 2, 0, 3, 1)], 1),
    ("layout", "transpose_1x1x5", OP.TRANSPOSE, OPTS.TransposeOptions, lambda: schema.TransposeOptionsT(), [[1, 1, 5]], [i32(2, 0, 1)], 1),
    ("layout", "space_to_depth_block_equals_size", OP.SPACE_TO_DEPTH, OPTS.SpaceToDepthOptions, lambda: with_fields(schema.SpaceToDepthOptionsT(), blockSize=3), [[2, 3, 3, 2]], [], 1),
    ("layout", "depth_to_space_to_one_row", OP.DEPTH_TO_SPACE, OPTS.DepthToSpaceOptions, lambda: with_fields(schema.DepthToSpaceOptionsT(), blockSize=2), [[1, 1, 3, 8]], [], 1),
    ("layout", "concatenation_negative_axis", OP.CONCATENATION, OPTS.ConcatenationOptions, lambda: with_fields(schema.ConcatenationOptionsT(), axis=-2), [[2, 1, 3], [2, 4, 3], [2, 1, 3]], [], 1),
    ("layout", "split_into_ones", OP.SPLIT, OPTS.SplitOptions, lambda: with_fields(schema.SplitOptionsT(), numSplits=3), [[2, 3, 2]], "split", 3),
    ("layout", "split_v_inferred_last", OP.SPLIT_V, OPTS.SplitVOptions, lambda: with_fields(schema.SplitVOptionsT(), numSplits=3), [[2, 7, 2]], "split_v", 3),
    # Reductions over first, last and negative axes.
    ("reduce", "arg_max_last_axis_of_1", OP.ARG_MAX, OPTS.ArgMaxOptions, lambda: with_fields(schema.ArgMaxOptionsT(), outputType=T.INT32), [[3, 4, 1]], [i32(-1)], 1),
    ("reduce", "arg_min_first_axis", OP.ARG_MIN, OPTS.ArgMinOptions, lambda: with_fields(schema.ArgMinOptionsT(), outputType=T.INT32), [[5, 2, 3]], [i32(0)], 1),
    ("reduce", "mean_negative_axes", OP.MEAN, OPTS.ReducerOptions, lambda: with_fields(schema.ReducerOptionsT(), keepDims=True), [[2, 3, 4, 2]], [i32(-3, -2)], 1),
    ("reduce", "sum_repeated_axis", OP.SUM, OPTS.ReducerOptions, lambda: with_fields(schema.ReducerOptionsT(), keepDims=False), [[2, 3, 4]], [i32(1, -2, 2)], 1),
    ("reduce", "reduce_max_all_axes", OP.REDUCE_MAX, OPTS.ReducerOptions, lambda: with_fields(schema.ReducerOptionsT(), keepDims=False), [[2, 3, 4]], [i32(0, 1, 2)], 1),
]


def index_cases():
    """Every INDEX_CASES entry in float32, int8 and uint8, where LiteRT's reference resolver
    accepts the type (a type it refuses is skipped and listed)."""
    suites, skipped = {}, []
    for family, name, code, options_type, options, shapes, constants, outputs in INDEX_CASES:
        for type_ in (T.FLOAT32, T.INT8, T.UINT8):
            case_name = f"{name}_{TYPE_NAMES[type_]}"
            if constants == "split":  # SPLIT takes its axis first
                inputs, consts = [], [i32(1)]
            elif constants == "split_v":
                inputs, consts = [], [i32(2, -1, 1), i32(-2)]
            else:
                inputs, consts = None, constants
            arg = code in (OP.ARG_MAX, OP.ARG_MIN)
            out_types = [T.INT32] * outputs if arg else [type_] * outputs
            try:
                if inputs is not None:  # the constant comes before the data input
                    model = split_model(code, options_type, options(), consts, shapes[0], type_, out_types)
                else:
                    model = single_op(code, options_type, options(), [(s, type_) for s in shapes], consts, out_types)
                rng = np.random.default_rng(gio.seed_for(f"{family}/{case_name}"))
                xs = [random_input(rng, s, type_) for s in shapes]
                ys, ops = gio.run_model(model, xs)
            except (RuntimeError, ValueError) as error:
                skipped.append(f"{family}/{case_name}: {str(error).splitlines()[0]}")
                continue
            suites.setdefault(family, []).append((case_name, model, xs, ys, ops, shapes))
    counts = {}
    for family, entries in suites.items():
        root = OUT / family
        gio.reset_dir(root)
        cases = []
        for case_name, model, xs, ys, ops, shapes in entries:
            gio.write_case(root, case_name, model, xs, ys)
            cases.append({"name": case_name, "ops": gio.unique_in_order(ops), "tolerance": 0,
                          "description": f"{ops[0]} of {shapes} at the edges of its indices ({case_name})"})
        gio.write_manifest(root, ORIGIN, cases)
        counts[family] = len(cases)
    return counts, skipped


def split_model(code, options_type, options, constants, shape, type_, out_types):
    """SPLIT (axis, input) and SPLIT_V (input, size_splits, axis): the constants' places differ."""
    def build(shapes):
        tensors, buffers = [], []
        data = quantized(hm.tensor("input", shape, type_=type_), type_)
        consts = []
        for i, value in enumerate(constants):
            buffers.append(hm.buffer(value.astype("<i4").tobytes()))
            consts.append(hm.tensor(f"constant_{i}", list(value.shape), buffer=len(buffers), type_=T.INT32))
        tensors = [data] + consts
        ins = [1, 0] if code == OP.SPLIT else [0, 1, 2]
        first = len(tensors)
        tensors += [quantized(hm.tensor(f"output_{i}", s, type_=t), t) for i, (s, t) in enumerate(zip(shapes, out_types))]
        outs = list(range(first, len(tensors)))
        op = hm.operator(0, ins, outs, options_type, options)
        return hm.model(tensors, [op], [code], [0], outs, buffers)
    probe = gio.make_interpreter(build([[1]] * len(out_types)))
    return build([list(d["shape"]) for d in probe.get_output_details()])


TRANSPOSE_CONV_CASES = [  # (name, input shape, filter [out, h, w, in], output shape, stride h×w, padding)
    ("one_pixel_stride_5_same", [1, 1, 1, 2], [3, 4, 4, 2], [1, 5, 5, 3], (5, 5), SAME),
    ("filter_larger_than_output_valid", [1, 2, 2, 2], [2, 5, 5, 2], [1, 6, 6, 2], (1, 1), VALID),
    ("stride_beyond_filter_same", [1, 3, 2, 1], [2, 2, 2, 1], [1, 12, 8, 2], (4, 4), SAME),
    ("odd_output_same", [1, 3, 3, 2], [2, 3, 3, 2], [1, 5, 6, 2], (2, 2), SAME),
]


def transpose_conv_cases():
    """TRANSPOSE_CONV float32 (inputs: output_shape, weights, input): outputs whose windows stick
    out of the output on every side."""
    root = OUT / "transpose_conv"
    gio.reset_dir(root)
    cases = []
    for name, input_shape, filter_shape, output_shape, (sh, sw), padding in TRANSPOSE_CONV_CASES:
        rng = np.random.default_rng(gio.seed_for(f"transpose_conv/{name}"))
        weights = rng.uniform(-1, 1, filter_shape).astype("<f4")
        tensors = [hm.tensor("output_shape", [4], buffer=1, type_=T.INT32),
                   hm.tensor("weights", filter_shape, buffer=2, type_=T.FLOAT32),
                   hm.tensor("input", input_shape, type_=T.FLOAT32),
                   hm.tensor("output", output_shape, type_=T.FLOAT32)]
        options = schema.TransposeConvOptionsT()
        options.padding, options.strideH, options.strideW = padding, sh, sw
        op = hm.operator(0, [0, 1, 2], [3], OPTS.TransposeConvOptions, options)
        model = hm.model(tensors, [op], [OP.TRANSPOSE_CONV], [2], [3],
                         [hm.buffer(np.array(output_shape, "<i4").tobytes()), hm.buffer(weights.tobytes())])
        x = rng.uniform(-4, 4, input_shape).astype(np.float32)
        ys, ops = gio.run_model(model, [x])
        gio.write_case(root, name, model, [x], ys)
        cases.append({"name": name, "ops": gio.unique_in_order(ops), "tolerance": 0,
                      "description": f"TRANSPOSE_CONV {input_shape} -> {output_shape}, filter {filter_shape}, "
                                     f"stride {sh}x{sw}, {'SAME' if padding == SAME else 'VALID'}"})
    gio.write_manifest(root, ORIGIN, cases)
    return len(cases)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    n = resize_cases("resize_bilinear", OP.RESIZE_BILINEAR, schema.ResizeBilinearOptionsT, OPTS.ResizeBilinearOptions,
                     (T.FLOAT32, T.INT8, T.UINT8))
    m = resize_cases("resize_nearest", OP.RESIZE_NEAREST_NEIGHBOR, schema.ResizeNearestNeighborOptionsT,
                     OPTS.ResizeNearestNeighborOptions, (T.FLOAT32, T.INT8))  # one copying kernel for every type
    counts, skipped = index_cases()
    counts["transpose_conv"] = transpose_conv_cases()
    print(f"resize_bilinear {n} cases, resize_nearest {m}, " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for line in skipped:
        print("skipped (LiteRT refuses):", line)
    print(f"{gio.dir_size(OUT)} bytes")


if __name__ == "__main__":
    main()

"""RESIZE_NEAREST_NEIGHBOR goldens (FPN-style SSD heads upsample with it): float32, full-integer
int8 and uint8-I/O models, with align_corners / half_pixel_centers, up and down, from LiteRT
BUILTIN_REF → Tests/EngineTests/Fixtures/resize_nearest/ (tolerance 0: the op only copies).

    python Tests/Goldens/make_nearest_goldens.py
"""
import numpy as np
import tensorflow as tf

import golden_io as gio

OUT = gio.FIXTURES_ROOT / "resize_nearest"
VARIANTS = [  # (name, input h×w, output h×w, align_corners, half_pixel_centers)
    ("up2x_4x4_to_8x8", (4, 4), (8, 8), False, False),
    ("up_4x5_to_7x9", (4, 5), (7, 9), False, False),
    ("up_4x5_to_7x9_align_corners", (4, 5), (7, 9), True, False),
    ("up_4x5_to_7x9_half_pixel", (4, 5), (7, 9), False, True),
    ("down_8x9_to_3x4", (8, 9), (3, 4), False, False),
    ("down_8x9_to_3x4_half_pixel", (8, 9), (3, 4), False, True),
    ("down_8x9_to_3x4_align_corners", (8, 9), (3, 4), True, False),
]
CHANNELS = 3


def convert(fn, shape, mode, rng):
    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
    if mode != "float32":
        def representative():
            for _ in range(8):
                yield [rng.uniform(-1, 1, shape).astype(np.float32)]
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8 if mode == "int8" else tf.uint8
        converter.inference_input_type = io_type
        converter.inference_output_type = io_type
    return converter.convert()


def main():
    gio.reset_dir(OUT)
    cases = []
    for index, (name, (h, w), (oh, ow), align, half) in enumerate(VARIANTS):
        shape = (1, h, w, CHANNELS)

        @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32)])
        def resize(x, oh=oh, ow=ow, align=align, half=half):
            return tf.compat.v1.image.resize_nearest_neighbor(x, [oh, ow], align_corners=align, half_pixel_centers=half)

        for mode in ["float32", "int8", "uint8io"]:
            rng = np.random.default_rng(1000 + index)
            model = convert(resize, shape, mode, rng)
            detail = gio.input_details(model)[0]
            if mode == "float32":
                x = rng.uniform(-1, 1, shape).astype(np.float32)
            else:
                info = np.iinfo(detail["dtype"])
                x = rng.integers(info.min, info.max + 1, shape).astype(detail["dtype"])
            outputs, ops = gio.run_model(model, [x])
            assert "RESIZE_NEAREST_NEIGHBOR" in ops, ops
            case = f"{name}_{mode}"
            gio.write_case(OUT, case, model, [x], outputs)
            cases.append({"name": case, "ops": gio.unique_in_order(ops), "tolerance": 0,
                          "description": f"RESIZE_NEAREST_NEIGHBOR {h}x{w} -> {oh}x{ow}, align_corners={align}, "
                                         f"half_pixel_centers={half}, {mode}"})
    gio.write_manifest(OUT, gio.origin("Tests/Goldens/make_nearest_goldens.py"), cases)
    print(f"{len(cases)} cases, {gio.dir_size(OUT)} bytes")


if __name__ == "__main__":
    main()

/*
 * CJPEGShim: a small, crash-free front end to libjpeg(-turbo) for SwiftLite.
 *
 * libjpeg reports fatal errors by calling the error manager's error_exit, whose
 * default prints to stderr and calls exit(). Swift cannot use setjmp/longjmp, so
 * this shim installs an error manager that longjmps back into the C function that
 * called libjpeg and turns the failure into a status code plus a message. No
 * libjpeg types appear in this header; the decoder is an opaque handle.
 *
 * Usage (from Swift or C):
 *   swl_jpeg_decoder *d = swl_jpeg_create();
 *   swl_jpeg_info info;
 *   if (swl_jpeg_read_header(d, bytes, count, &info) == SWL_JPEG_OK) {
 *       // check info.width/height/color_space, allocate width*height*3 bytes
 *       swl_jpeg_decode_rgb(d, buffer, size);
 *   }
 *   // on any status other than SWL_JPEG_OK: swl_jpeg_message(d)
 *   swl_jpeg_destroy(d);
 *
 * The input bytes must stay valid and unchanged from swl_jpeg_read_header until
 * swl_jpeg_decode_rgb returns.
 */
#ifndef SWIFTLITE_CJPEGSHIM_H
#define SWIFTLITE_CJPEGSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every call. */
typedef enum swl_jpeg_status {
    SWL_JPEG_OK = 0,
    /* libjpeg reported corrupt or invalid data; swl_jpeg_message says what. */
    SWL_JPEG_CORRUPT = 1,
    /* The data ended before the image did ("Premature end of JPEG file"). */
    SWL_JPEG_TRUNCATED = 2,
    /* The caller's buffer is too small, or the calls came in the wrong order. */
    SWL_JPEG_BAD_CALL = 3,
    /* The colour space cannot be converted to RGB (CMYK, YCCK, unknown). */
    SWL_JPEG_UNSUPPORTED = 4,
    /* libjpeg (or the shim) could not allocate memory. */
    SWL_JPEG_NO_MEMORY = 5
} swl_jpeg_status;

/* Colour space of the encoded data (mirrors libjpeg's J_COLOR_SPACE subset). */
typedef enum swl_jpeg_color_space {
    SWL_JPEG_CS_UNKNOWN = 0,
    SWL_JPEG_CS_GRAYSCALE = 1,
    SWL_JPEG_CS_RGB = 2,
    SWL_JPEG_CS_YCBCR = 3,
    SWL_JPEG_CS_CMYK = 4,
    SWL_JPEG_CS_YCCK = 5,
    SWL_JPEG_CS_OTHER = 6
} swl_jpeg_color_space;

/* What swl_jpeg_read_header learned from the frame header. */
typedef struct swl_jpeg_info {
    unsigned int width;
    unsigned int height;
    int components;                   /* components in the file (1, 3 or 4) */
    swl_jpeg_color_space color_space; /* libjpeg's guess from JFIF/Adobe markers */
    int progressive;                  /* 1 for progressive (SOF2) streams */
    int warnings;                     /* non-fatal libjpeg warnings so far */
} swl_jpeg_info;

typedef struct swl_jpeg_decoder swl_jpeg_decoder;

/* A new decoder, or NULL when memory is exhausted. Free with swl_jpeg_destroy. */
swl_jpeg_decoder *swl_jpeg_create(void);

/*
 * Caps libjpeg's working memory (cinfo->mem->max_memory_to_use) at max_bytes; a
 * stream that needs more (e.g. a progressive image's whole-image coefficient
 * buffers) fails with SWL_JPEG_NO_MEMORY instead of allocating it. Call before
 * swl_jpeg_read_header. 0 means no limit (libjpeg's default).
 */
void swl_jpeg_set_memory_limit(swl_jpeg_decoder *decoder, long max_bytes);

/* Releases all libjpeg state. Accepts NULL. */
void swl_jpeg_destroy(swl_jpeg_decoder *decoder);

/* Reads the JPEG headers from data[0..<size] and fills *info. */
swl_jpeg_status swl_jpeg_read_header(swl_jpeg_decoder *decoder,
                                     const unsigned char *data, size_t size,
                                     swl_jpeg_info *info);

/*
 * Decodes the whole image as interleaved 8-bit RGB, rows top to bottom, into
 * out[0..<out_size], which must hold width*height*3 bytes. Grayscale images are
 * replicated to RGB. Uses libjpeg's default decoding (JDCT_ISLOW, fancy
 * upsampling), the same settings Pillow uses. Data that ends before the scan
 * data does fails with SWL_JPEG_TRUNCATED instead of being padded with gray; a
 * single-scan (baseline) file that lacks only its end-of-image marker decodes, a
 * progressive one fails (missing scans and a missing marker look alike). Scan data
 * that stops short of its last MCU, bad Huffman codes and lost restart markers fail
 * with SWL_JPEG_CORRUPT (libjpeg would make the pixels up). Other libjpeg warnings
 * (e.g. extraneous bytes before a marker) are counted, not fatal, as in Pillow.
 */
swl_jpeg_status swl_jpeg_decode_rgb(swl_jpeg_decoder *decoder,
                                    unsigned char *out, size_t out_size);

/* The message for the last failure ("" if none). Valid until the next call. */
const char *swl_jpeg_message(const swl_jpeg_decoder *decoder);

/* Non-fatal warnings libjpeg reported so far. */
int swl_jpeg_warning_count(const swl_jpeg_decoder *decoder);

#ifdef __cplusplus
}
#endif

#endif /* SWIFTLITE_CJPEGSHIM_H */

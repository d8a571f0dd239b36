/*
 * CPNGShim: crash-free PNG decoding to 8-bit RGB with libpng's full (low-level)
 * API, for SwiftLite.
 *
 * libpng reports errors by longjmp-ing to a jmp_buf set with setjmp, which Swift
 * cannot do; this shim calls setjmp in C and turns every libpng error into a
 * status code plus libpng's message. The decoder is an opaque handle; no libpng
 * types appear here.
 *
 * Why not libpng's simplified API (png_image)? In libpng 1.6.39 (Debian 12, even
 * with the security backports) png_image_finish_read returns scrambled pixels for
 * interlaced 16-bit images read as 8-bit (upstream rewrote that path in 1.6.51 after
 * it was found to overflow the caller's buffer, CVE-2025-65018); it composites alpha
 * onto a background when asked for RGB; and it gamma-converts files whose gAMA chunk
 * is not sRGB's (an 8-bit file tagged gAMA 1.0 comes out with every value changed).
 * The full API does exactly the transforms asked for and nothing else.
 *
 * Usage:
 *   swl_png_decoder *d = swl_png_create();
 *   swl_png_info info;
 *   if (swl_png_read_header(d, bytes, count, &info) == SWL_PNG_OK) {
 *       // check info.width/height, allocate width*height*3 bytes
 *       swl_png_decode_rgb(d, buffer, size);
 *   }
 *   // on any status other than SWL_PNG_OK: swl_png_message(d)
 *   swl_png_destroy(d);
 *
 * The input bytes must stay valid and unchanged until swl_png_decode_rgb returns.
 */
#ifndef SWIFTLITE_CPNGSHIM_H
#define SWIFTLITE_CPNGSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum swl_png_status {
    SWL_PNG_OK = 0,
    /* libpng reported corrupt, invalid or truncated data; swl_png_message says what. */
    SWL_PNG_CORRUPT = 1,
    /* The caller's buffer is too small, or the calls came in the wrong order. */
    SWL_PNG_BAD_CALL = 2,
    /* Memory could not be allocated. */
    SWL_PNG_NO_MEMORY = 3
} swl_png_status;

/* The IHDR fields (color_type uses the PNG specification's codes 0, 2, 3, 4, 6). */
typedef struct swl_png_info {
    unsigned int width;
    unsigned int height;
    int bit_depth;
    int color_type;
    int interlaced;
} swl_png_info;

typedef struct swl_png_decoder swl_png_decoder;

/* A new decoder, or NULL when memory is exhausted. Free with swl_png_destroy. */
swl_png_decoder *swl_png_create(void);

/* Releases all libpng state. Accepts NULL. */
void swl_png_destroy(swl_png_decoder *decoder);

/* Reads the signature and the chunks up to the image data; fills *info. */
swl_png_status swl_png_read_header(swl_png_decoder *decoder, const unsigned char *data,
                                   size_t size, swl_png_info *info);

/*
 * Decodes the image into out[0..<out_size] (at least width*height*3 bytes) as
 * interleaved 8-bit RGB, rows top to bottom, with the stored sample values:
 * palettes and sub-byte gray are expanded, gray is replicated, 16-bit samples
 * keep their high byte, alpha channels and tRNS transparency are dropped (never
 * composited), and no gamma or color-space conversion is done. Adam7 interlacing
 * is undone. Chunks after the last image row are not read.
 */
swl_png_status swl_png_decode_rgb(swl_png_decoder *decoder, unsigned char *out,
                                  size_t out_size);

/* The message for the last failure ("" if none). Valid until the next call. */
const char *swl_png_message(const swl_png_decoder *decoder);

#ifdef __cplusplus
}
#endif

#endif /* SWIFTLITE_CPNGSHIM_H */

/*
 * CPNGShim implementation: libpng decoding whose errors come back as a status code
 * and message. See include/CPNGShim.h.
 *
 * Each public function that calls into libpng first calls setjmp(png_jmpbuf(...));
 * the error callback records libpng's message and longjmps there. Only C frames lie
 * between setjmp and longjmp, and every value that outlives the jump lives in the
 * heap-allocated decoder, so no local needs to be volatile.
 */
#include "CPNGShim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

enum swl_phase {
    PHASE_NEW = 0,      /* created, no header read yet */
    PHASE_HEADER = 1,   /* header read, ready to decode */
    PHASE_DONE = 2,     /* decoded or failed; only destroy remains */
};

struct swl_png_decoder {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t size;
    size_t position;
    png_bytep *rows;           /* row pointers for png_read_image, freed on destroy */
    enum swl_phase phase;
    swl_png_status failure;    /* status to report after a longjmp */
    char message[256];
};

static void set_message(struct swl_png_decoder *d, const char *text) {
    snprintf(d->message, sizeof d->message, "%s", text);
}

/* libpng error: keep its message and jump back to the public entry point. */
static void swl_png_error(png_structp png, png_const_charp message) {
    struct swl_png_decoder *d = png_get_error_ptr(png);
    set_message(d, message != NULL ? message : "libpng error");
    if (d->failure == SWL_PNG_OK) {
        d->failure = SWL_PNG_CORRUPT;
    }
    png_longjmp(png, 1);
}

/* Warnings (bad ancillary chunks and the like) are not failures; stay quiet. */
static void swl_png_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/* Reads from the caller's memory; running out means the file is truncated. */
static void swl_png_read(png_structp png, png_bytep out, size_t length) {
    struct swl_png_decoder *d = png_get_io_ptr(png);
    if (length > d->size - d->position) {
        d->failure = SWL_PNG_CORRUPT;
        png_error(png, "unexpected end of PNG data (the file is truncated)");
    }
    memcpy(out, d->data + d->position, length);
    d->position += length;
}

swl_png_decoder *swl_png_create(void) {
    struct swl_png_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return NULL;
    }
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, swl_png_error, swl_png_warning);
    if (d->png == NULL) {
        free(d);
        return NULL;
    }
    if (setjmp(png_jmpbuf(d->png))) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return NULL;
    }
    d->info = png_create_info_struct(d->png);
    if (d->info == NULL) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return NULL;
    }
    /* The caller enforces its own size limits after reading IHDR; lift libpng's
     * default 1,000,000-pixel width/height limit so both paths report the same. */
    png_set_user_limits(d->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_set_read_fn(d->png, d, swl_png_read);
    d->phase = PHASE_NEW;
    return d;
}

void swl_png_destroy(swl_png_decoder *d) {
    if (d == NULL) {
        return;
    }
    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d->rows);
    free(d);
}

static swl_png_status fail(struct swl_png_decoder *d) {
    d->phase = PHASE_DONE;
    return d->failure == SWL_PNG_OK ? SWL_PNG_CORRUPT : d->failure;
}

swl_png_status swl_png_read_header(swl_png_decoder *d, const unsigned char *data,
                                   size_t size, swl_png_info *info) {
    if (d == NULL || info == NULL || (data == NULL && size > 0)) {
        return SWL_PNG_BAD_CALL;
    }
    if (d->phase != PHASE_NEW) {
        set_message(d, "swl_png_read_header called twice on one decoder");
        return SWL_PNG_BAD_CALL;
    }
    memset(info, 0, sizeof *info);
    d->data = data;
    d->size = size;
    d->position = 0;
    if (setjmp(png_jmpbuf(d->png))) {
        return fail(d);
    }
    png_read_info(d->png, d->info);
    info->width = png_get_image_width(d->png, d->info);
    info->height = png_get_image_height(d->png, d->info);
    info->bit_depth = png_get_bit_depth(d->png, d->info);
    info->color_type = png_get_color_type(d->png, d->info);
    info->interlaced = png_get_interlace_type(d->png, d->info) != PNG_INTERLACE_NONE;
    d->phase = PHASE_HEADER;
    return SWL_PNG_OK;
}

swl_png_status swl_png_decode_rgb(swl_png_decoder *d, unsigned char *out, size_t out_size) {
    if (d == NULL || out == NULL) {
        return SWL_PNG_BAD_CALL;
    }
    if (d->phase != PHASE_HEADER) {
        set_message(d, "swl_png_decode_rgb needs a successful swl_png_read_header first");
        return SWL_PNG_BAD_CALL;
    }
    png_structp png = d->png;
    png_infop info = d->info;
    const png_uint_32 width = png_get_image_width(png, info);
    const png_uint_32 height = png_get_image_height(png, info);
    const size_t stride = (size_t)width * 3;
    if (width == 0 || height == 0 || (size_t)height > out_size / stride) {
        d->phase = PHASE_DONE;
        set_message(d, "output buffer smaller than width*height*3");
        return SWL_PNG_BAD_CALL;
    }
    d->rows = malloc((size_t)height * sizeof *d->rows);
    if (d->rows == NULL) {
        d->phase = PHASE_DONE;
        set_message(d, "out of memory for row pointers");
        return SWL_PNG_NO_MEMORY;
    }
    for (png_uint_32 y = 0; y < height; y++) {
        d->rows[y] = out + (size_t)y * stride;
    }
    if (setjmp(png_jmpbuf(png))) {
        return fail(d);
    }

    const int color_type = png_get_color_type(png, info);
    const int bit_depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);          /* also turns tRNS into alpha ... */
    } else if ((color_type & PNG_COLOR_MASK_COLOR) == 0 && bit_depth < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (bit_depth == 16) {
        png_set_strip_16(png);                /* high byte, as Pillow */
    }
    png_set_strip_alpha(png);                 /* ... which is dropped here */
    if ((color_type & PNG_COLOR_MASK_COLOR) == 0) {
        png_set_gray_to_rgb(png);
    }
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);

    if (png_get_bit_depth(png, info) != 8 || png_get_channels(png, info) != 3 ||
        png_get_rowbytes(png, info) != stride) {
        d->failure = SWL_PNG_CORRUPT;
        png_error(png, "libpng did not produce 8-bit RGB rows");
    }
    png_read_image(png, d->rows);
    d->phase = PHASE_DONE;
    return SWL_PNG_OK;
}

const char *swl_png_message(const swl_png_decoder *d) {
    return d == NULL ? "no decoder" : d->message;
}

/*
 * CJPEGShim implementation: libjpeg decoding whose fatal errors come back as a
 * status code and message instead of exit(). See include/CJPEGShim.h.
 *
 * Each public function that calls into libjpeg first calls setjmp on the jmp_buf
 * in the decoder; the error manager's error_exit formats libjpeg's message and
 * longjmps there. Only C frames lie between setjmp and longjmp, and all state
 * that outlives the jump is in the heap-allocated decoder, so no local needs to
 * be volatile.
 */
#include "CJPEGShim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

enum swl_phase {
    PHASE_NEW = 0,       /* created, no header read yet */
    PHASE_HEADER = 1,    /* header read, ready to decode */
    PHASE_DONE = 2,      /* decoded (or aborted after a failure); nothing more to do */
};

struct swl_error_mgr {
    struct jpeg_error_mgr pub;   /* must be first: libjpeg sees only this part */
    jmp_buf jump;
};

struct swl_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct swl_error_mgr err;
    int created;                 /* jpeg_create_decompress succeeded */
    enum swl_phase phase;
    int decoding;                /* inside swl_jpeg_decode_rgb */
    int hit_eof;                 /* the data ran out while decoding (see swl_emit_message) */
    int multiscan;               /* progressive or multi-scan sequential image */
    swl_jpeg_status failure;     /* status to report after a longjmp */
    char message[JMSG_LENGTH_MAX + 64];
};

static struct swl_jpeg_decoder *decoder_of(j_common_ptr cinfo) {
    return (struct swl_jpeg_decoder *)cinfo->client_data;
}

static void set_message(struct swl_jpeg_decoder *d, const char *text) {
    snprintf(d->message, sizeof d->message, "%s", text);
}

/* Fatal error: record libjpeg's message and jump back to the public entry point. */
static void swl_error_exit(j_common_ptr cinfo) {
    struct swl_jpeg_decoder *d = decoder_of(cinfo);
    char buffer[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buffer);
    set_message(d, buffer);
    d->failure = (cinfo->err->msg_code == JERR_OUT_OF_MEMORY) ? SWL_JPEG_NO_MEMORY
                                                              : SWL_JPEG_CORRUPT;
    longjmp(((struct swl_error_mgr *)cinfo->err)->jump, 1);
}

/*
 * Warnings (msg_level < 0) and trace messages (>= 0). libjpeg's memory source warns
 * "Premature end of JPEG file" when the data runs out and then feeds a fake EOI
 * marker; the entropy decoder then pads missing data with zeros, warning "Corrupt
 * JPEG data: premature end of data segment". Policy:
 * - running out while reading the headers is fatal (SWL_JPEG_TRUNCATED);
 * - in a multi-scan (progressive) image, running out while decoding is fatal too:
 *   a missing EOI cannot be told apart from missing refinement scans;
 * - in a single-scan image, running out while decoding is noted; any warning after
 *   that means image data was missing, which is fatal (SWL_JPEG_TRUNCATED). A file
 *   that lacks only its EOI marker (all scan data present) therefore still decodes;
 * - a scan whose entropy-coded data stops before its last MCU ("premature end of
 *   data segment" at a real marker), a bad Huffman code or a lost restart marker
 *   means pixels would be made up (libjpeg pads them with zeros, which for a
 *   lying header means decoding a whole claimed image out of nothing): fatal
 *   (SWL_JPEG_CORRUPT);
 * - other warnings (e.g. extraneous bytes before a marker, unknown JFIF versions)
 *   are counted and tolerated, as Pillow does.
 */
static void swl_emit_message(j_common_ptr cinfo, int msg_level) {
    struct swl_jpeg_decoder *d = decoder_of(cinfo);
    if (msg_level >= 0) {
        return;
    }
    cinfo->err->num_warnings++;
    const int eof = cinfo->err->msg_code == JWRN_JPEG_EOF;
    if (eof && d->phase == PHASE_HEADER && d->decoding && !d->multiscan) {
        d->hit_eof = 1;
        return;
    }
    if (eof || d->hit_eof) {
        char buffer[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, buffer);
        if (eof) {
            set_message(d, buffer);
        } else {
            snprintf(d->message, sizeof d->message, "Premature end of JPEG file (%s)", buffer);
        }
        d->failure = SWL_JPEG_TRUNCATED;
        longjmp(((struct swl_error_mgr *)cinfo->err)->jump, 1);
    }
    const int code = cinfo->err->msg_code;
    if (code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE || code == JWRN_MUST_RESYNC) {
        char buffer[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, buffer);
        set_message(d, buffer);
        d->failure = SWL_JPEG_CORRUPT;
        longjmp(((struct swl_error_mgr *)cinfo->err)->jump, 1);
    }
}

/* libjpeg's default prints to stderr; a library must stay quiet. */
static void swl_output_message(j_common_ptr cinfo) {
    (void)cinfo;
}

swl_jpeg_decoder *swl_jpeg_create(void) {
    struct swl_jpeg_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return NULL;
    }
    d->cinfo.err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = swl_error_exit;
    d->err.pub.emit_message = swl_emit_message;
    d->err.pub.output_message = swl_output_message;
    d->cinfo.client_data = d;
    if (setjmp(d->err.jump)) {
        /* jpeg_create_decompress failed (out of memory); nothing to destroy. */
        free(d);
        return NULL;
    }
    /* Keeps cinfo.err and cinfo.client_data while zeroing the rest. */
    jpeg_create_decompress(&d->cinfo);
    d->created = 1;
    d->phase = PHASE_NEW;
    return d;
}

void swl_jpeg_set_memory_limit(swl_jpeg_decoder *d, long max_bytes) {
    if (d != NULL && d->created) {
        d->cinfo.mem->max_memory_to_use = max_bytes;
    }
}

void swl_jpeg_destroy(swl_jpeg_decoder *d) {
    if (d == NULL) {
        return;
    }
    if (d->created) {
        /* jpeg_destroy_decompress only frees memory; it cannot raise an error. */
        jpeg_destroy_decompress(&d->cinfo);
    }
    free(d);
}

static swl_jpeg_color_space map_color_space(J_COLOR_SPACE cs) {
    switch (cs) {
    case JCS_UNKNOWN: return SWL_JPEG_CS_UNKNOWN;
    case JCS_GRAYSCALE: return SWL_JPEG_CS_GRAYSCALE;
    case JCS_RGB: return SWL_JPEG_CS_RGB;
    case JCS_YCbCr: return SWL_JPEG_CS_YCBCR;
    case JCS_CMYK: return SWL_JPEG_CS_CMYK;
    case JCS_YCCK: return SWL_JPEG_CS_YCCK;
    default: return SWL_JPEG_CS_OTHER;
    }
}

static swl_jpeg_status fail(struct swl_jpeg_decoder *d) {
    d->phase = PHASE_DONE;
    /* Releases the per-image state; the object itself stays valid for destroy. */
    jpeg_abort_decompress(&d->cinfo);
    return d->failure;
}

swl_jpeg_status swl_jpeg_read_header(swl_jpeg_decoder *d, const unsigned char *data,
                                     size_t size, swl_jpeg_info *info) {
    if (d == NULL || info == NULL || (data == NULL && size > 0)) {
        return SWL_JPEG_BAD_CALL;
    }
    if (d->phase != PHASE_NEW) {
        set_message(d, "swl_jpeg_read_header called twice on one decoder");
        return SWL_JPEG_BAD_CALL;
    }
    memset(info, 0, sizeof *info);
    if (size == 0) {
        set_message(d, "no JPEG data (0 bytes)");
        d->phase = PHASE_DONE;
        return SWL_JPEG_TRUNCATED;
    }
    if (size > (size_t)(unsigned long)-1) {
        set_message(d, "JPEG data larger than libjpeg can address");
        d->phase = PHASE_DONE;
        return SWL_JPEG_BAD_CALL;
    }
    if (setjmp(d->err.jump)) {
        return fail(d);
    }
    jpeg_mem_src(&d->cinfo, data, (unsigned long)size);
    (void)jpeg_read_header(&d->cinfo, TRUE);

    info->width = d->cinfo.image_width;
    info->height = d->cinfo.image_height;
    info->components = d->cinfo.num_components;
    info->color_space = map_color_space(d->cinfo.jpeg_color_space);
    info->progressive = d->cinfo.progressive_mode ? 1 : 0;
    info->warnings = (int)d->err.pub.num_warnings;
    d->phase = PHASE_HEADER;
    return SWL_JPEG_OK;
}

swl_jpeg_status swl_jpeg_decode_rgb(swl_jpeg_decoder *d, unsigned char *out, size_t out_size) {
    if (d == NULL || out == NULL) {
        return SWL_JPEG_BAD_CALL;
    }
    if (d->phase != PHASE_HEADER) {
        set_message(d, "swl_jpeg_decode_rgb needs a successful swl_jpeg_read_header first");
        return SWL_JPEG_BAD_CALL;
    }
    struct jpeg_decompress_struct *cinfo = &d->cinfo;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_RGB:
    case JCS_YCbCr:
        break;
    default:
        d->phase = PHASE_DONE;
        jpeg_abort_decompress(cinfo);
        set_message(d, "only grayscale, YCbCr and RGB JPEGs can be decoded to RGB");
        return SWL_JPEG_UNSUPPORTED;
    }
    const size_t stride = (size_t)cinfo->image_width * 3;
    if (cinfo->image_width == 0 || stride / 3 != cinfo->image_width ||
        (size_t)cinfo->image_height > out_size / stride) {
        d->phase = PHASE_DONE;
        jpeg_abort_decompress(cinfo);
        set_message(d, "output buffer smaller than width*height*3");
        return SWL_JPEG_BAD_CALL;
    }
    if (setjmp(d->err.jump)) {
        return fail(d);
    }
    cinfo->out_color_space = JCS_RGB;
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->do_fancy_upsampling = TRUE;
    cinfo->scale_num = 1;
    cinfo->scale_denom = 1;
    d->multiscan = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
    d->decoding = 1;
    jpeg_start_decompress(cinfo);
    if (cinfo->output_width != cinfo->image_width ||
        cinfo->output_height != cinfo->image_height || cinfo->output_components != 3) {
        set_message(d, "libjpeg chose an unexpected output size");
        d->failure = SWL_JPEG_CORRUPT;
        return fail(d);
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = out + (size_t)cinfo->output_scanline * stride;
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1) {
            /* Only a suspending data source returns 0; the memory source never does. */
            set_message(d, "libjpeg returned no scanline");
            d->failure = SWL_JPEG_CORRUPT;
            return fail(d);
        }
    }
    (void)jpeg_finish_decompress(cinfo);
    d->decoding = 0;
    d->phase = PHASE_DONE;
    return SWL_JPEG_OK;
}

const char *swl_jpeg_message(const swl_jpeg_decoder *d) {
    return d == NULL ? "no decoder" : d->message;
}

int swl_jpeg_warning_count(const swl_jpeg_decoder *d) {
    return d == NULL ? 0 : (int)d->err.pub.num_warnings;
}

/* zerocopy VA bridge: what Python cannot reach behind PyAV's objects.
 *
 * Every struct offset comes from the FFmpeg headers this file is compiled against; the Python
 * loader refuses to use the module unless those are the headers of the FFmpeg actually loaded.
 * The declarations below use opaque types only, so cffi never needs FFmpeg's struct layouts.
 */
#ifndef ZEROCOPY_VABRIDGE_H
#define ZEROCOPY_VABRIDGE_H

#include <stdint.h>

typedef struct AVFrame AVFrame;
typedef struct AVFilterContext AVFilterContext;
typedef struct AVFilterGraph AVFilterGraph;
typedef struct AVCodecContext AVCodecContext;
typedef struct AVBufferRef AVBufferRef;

#define ZCVA_OK 0
#define ZCVA_ERR_NOT_VAAPI_FRAME (-1)  /* frame->format is not AV_PIX_FMT_VAAPI */
#define ZCVA_ERR_NO_FRAMES_CTX (-2)    /* frame has no hw_frames_ctx */
#define ZCVA_ERR_NOT_VAAPI_DEVICE (-3) /* the frames context's device is not VA-API */
#define ZCVA_ERR_NO_MEMORY (-4)
#define ZCVA_ERR_CODEC_OPEN (-5)        /* the codec context is open: hw_device_ctx may no longer change */
#define ZCVA_ERR_CODEC_NO_DEVICE (-6)   /* the codec context has no hw_device_ctx (opened without a hwaccel) */
#define ZCVA_ERR_CODEC_NOT_VAAPI (-7)   /* the codec context's device is not VA-API */
#define ZCVA_ERR_DEVICE_NOT_VAAPI (-8)  /* the device to share is NULL or not VA-API */
#define ZCVA_ERR_CODEC_HAS_FRAMES (-9)  /* the codec context has its own hw_frames_ctx: a device would be ignored */
#define ZCVA_ERR_REGION (-10)           /* the region is empty or not inside the frame's picture */
#define ZCVA_ERR_FFMPEG (-11)           /* FFmpeg refused: its AVERROR is in *averror */

/* Versions: as compiled (headers) and as loaded (the linked libraries). */
unsigned zcva_header_avutil_version(void);
unsigned zcva_header_avfilter_version(void);
unsigned zcva_header_avcodec_version(void);
unsigned zcva_linked_avutil_version(void);
unsigned zcva_linked_avfilter_version(void);
unsigned zcva_linked_avcodec_version(void);
int zcva_pix_fmt_vaapi(void);

/* 1 when the AVFrame's size and format are the ones given: validates a pointer taken from PyAV. */
int zcva_frame_matches(const AVFrame *frame, int width, int height, int format);

/* VASurfaceID of a VA-API frame: (uintptr_t) frame->data[3]. */
int zcva_surface_id(const AVFrame *frame, uint32_t *surface);

/* VADisplay behind a VA-API frame: hw_frames_ctx -> device_ctx -> hwctx -> display. */
int zcva_display(const AVFrame *frame, void **display);

/* Give a buffer source the frame's hw_frames_ctx, size and VAAPI format before the graph is configured.
 * Current FFmpeg refuses a hardware pix_fmt at buffer *init* without hw_frames_ctx, and PyAV initialises
 * the buffer when it creates it: create it with the frame's software format, then call this. */
int zcva_attach_hw_frames(AVFilterContext *buffersrc, const AVFrame *frame);

/* A new reference to the VA-API device (AVHWDeviceContext) behind a VA-API frame: its hw_frames_ctx's
 * device_ref. Keeps the device, so its VADisplay, alive after the frame and its decoder are gone. */
int zcva_device_ref(const AVFrame *frame, AVBufferRef **out);
void zcva_device_unref(AVBufferRef *ref);

/* VADisplay of a VA-API device reference. */
int zcva_device_display(const AVBufferRef *device, void **display);

/* 1 when ctx is an AVCodecContext of the linked libavcodec (its av_class) for a video codec with that
 * codec id (-1: any) and size (-1: any): validates a pointer taken from PyAV. */
int zcva_codec_matches(const AVCodecContext *ctx, int codec_id, int width, int height);

/* Make a not yet opened hwaccel decoder decode on `device` (a VA-API device reference; the codec takes its
 * own): its frames context, so its surfaces, will be created on that device's VADisplay. FFmpeg reads
 * hw_device_ctx only in avcodec_open2 and later, and documents it as fixed from then on. */
int zcva_codec_use_device(AVCodecContext *ctx, const AVBufferRef *device);

/* The crop fields of any AVFrame (software or hardware): out[0..3] = crop_left, top, right, bottom. */
int zcva_frame_crop(const AVFrame *frame, uint64_t out[4]);

/* Push a region of `frame` into a buffer source without touching `frame`: a new reference to the same
 * picture (av_frame_clone: the same buffers, so the same VA surface) whose crop fields also leave out
 * `left`, `top`, `right`, `bottom` pixels of the picture the frame shows (its own crop fields are kept and
 * added to), handed to the buffer source, which owns it from then on. FFmpeg's VA-API filters read a
 * frame's crop fields as their source rectangle (ff_vaapi_vpp_init_params), so scale_vaapi scales the
 * region alone. ZCVA_ERR_REGION when nothing or more than the picture would be left; ZCVA_ERR_FFMPEG
 * with the AVERROR in *averror when the buffer source refuses the frame. */
int zcva_buffersrc_push_region(AVFilterContext *buffersrc, const AVFrame *frame, uint64_t left, uint64_t top,
                               uint64_t right, uint64_t bottom, int *averror);

/* The identity of a VA-API frame's frames context (its hw_frames_ctx->data): frames of one decoder share it. */
int zcva_frames_context_id(const AVFrame *frame, uintptr_t *out);

/* FFmpeg's message for an AVERROR (av_strerror). */
void zcva_error_text(int averror, char *buf, int size);

/* Self-test support: real FFmpeg objects, no hardware. A VA-API device context is allocated but
 * never initialised, its display set to a known value; a frame carries a known surface id (and a one-byte
 * buffer standing for the pool's, so that it is refcounted as decoded frames are). */
AVFrame *zcva_selftest_frame(void *display, uint32_t surface, int width, int height);
int zcva_selftest_frames_refcount(const AVFrame *frame);
AVFilterGraph *zcva_selftest_graph(int width, int height, AVFilterContext **buffersrc, AVFilterContext **sink);
int zcva_selftest_graph_configure(AVFilterGraph *graph);
int zcva_selftest_sink_format(AVFilterContext *sink);
int zcva_selftest_sink_shares_frames(AVFilterContext *sink, const AVFrame *frame);
void zcva_selftest_graph_free(AVFilterGraph *graph);
/* The next frame out of a buffersink (NULL when there is none), for the caller to free. */
AVFrame *zcva_selftest_pull(AVFilterContext *sink);
/* A software frame of that size and format (AV_PIX_FMT_*), with buffers. */
AVFrame *zcva_selftest_soft_frame(int width, int height, int format);
int zcva_pix_fmt_nv12(void);
/* 1 when both frames show the same pixels (the same data pointers, so no copy was made). */
int zcva_selftest_same_data(const AVFrame *a, const AVFrame *b);
void zcva_selftest_frame_free(AVFrame *frame);
/* A device context of type VA-API (vaapi != 0) or DRM, allocated and never initialised. */
AVBufferRef *zcva_selftest_device(int vaapi, void *display);
/* The frame's frames context's own device_ref (borrowed). */
const AVBufferRef *zcva_selftest_frame_device(const AVFrame *frame);
int zcva_selftest_refcount(const AVBufferRef *ref);
/* A rawvideo decoder context of that size, with a reference to `device` (may be NULL) as hw_device_ctx. */
AVCodecContext *zcva_selftest_codec(const AVBufferRef *device, int width, int height);
int zcva_selftest_codec_id(const AVCodecContext *ctx);
int zcva_selftest_codec_open(AVCodecContext *ctx);
/* Give the codec context a reference to the frame's hw_frames_ctx, as an encoder's would have. */
int zcva_selftest_codec_set_frames(AVCodecContext *ctx, const AVFrame *frame);
/* 1 when the codec's hw_device_ctx refers to the same device as `device`. */
int zcva_selftest_codec_device_is(const AVCodecContext *ctx, const AVBufferRef *device);
void zcva_selftest_codec_free(AVCodecContext *ctx);

#endif

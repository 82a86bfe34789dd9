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

#define ZCVA_OK 0
#define ZCVA_ERR_NOT_VAAPI_FRAME (-1)  /* frame->format is not AV_PIX_FMT_VAAPI */
#define ZCVA_ERR_NO_FRAMES_CTX (-2)    /* frame has no hw_frames_ctx */
#define ZCVA_ERR_NOT_VAAPI_DEVICE (-3) /* the frames context's device is not VA-API */
#define ZCVA_ERR_NO_MEMORY (-4)

/* Versions: as compiled (headers) and as loaded (the linked libraries). */
unsigned zcva_header_avutil_version(void);
unsigned zcva_header_avfilter_version(void);
unsigned zcva_linked_avutil_version(void);
unsigned zcva_linked_avfilter_version(void);
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

/* Self-test support: real FFmpeg objects, no hardware. A VA-API device context is allocated but
 * never initialised, its display set to a known value; a frame carries a known surface id. */
AVFrame *zcva_selftest_frame(void *display, uint32_t surface, int width, int height);
int zcva_selftest_frames_refcount(const AVFrame *frame);
AVFilterGraph *zcva_selftest_graph(int width, int height, AVFilterContext **buffersrc, AVFilterContext **sink);
int zcva_selftest_graph_configure(AVFilterGraph *graph);
int zcva_selftest_sink_format(AVFilterContext *sink);
int zcva_selftest_sink_shares_frames(AVFilterContext *sink, const AVFrame *frame);
void zcva_selftest_graph_free(AVFilterGraph *graph);
void zcva_selftest_frame_free(AVFrame *frame);

#endif

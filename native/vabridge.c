#include "vabridge.h"

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vaapi.h>
#include <libavutil/mem.h>

unsigned zcva_header_avutil_version(void) { return LIBAVUTIL_VERSION_INT; }
unsigned zcva_header_avfilter_version(void) { return LIBAVFILTER_VERSION_INT; }
unsigned zcva_linked_avutil_version(void) { return avutil_version(); }
unsigned zcva_linked_avfilter_version(void) { return avfilter_version(); }
int zcva_pix_fmt_vaapi(void) { return AV_PIX_FMT_VAAPI; }

int zcva_frame_matches(const AVFrame *frame, int width, int height, int format)
{
    return frame && frame->width == width && frame->height == height && frame->format == format;
}

static int device_of(const AVFrame *frame, AVHWDeviceContext **device)
{
    if (frame->format != AV_PIX_FMT_VAAPI)
        return ZCVA_ERR_NOT_VAAPI_FRAME;
    if (!frame->hw_frames_ctx)
        return ZCVA_ERR_NO_FRAMES_CTX;
    AVHWFramesContext *frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    if (!frames->device_ctx || frames->device_ctx->type != AV_HWDEVICE_TYPE_VAAPI)
        return ZCVA_ERR_NOT_VAAPI_DEVICE;
    *device = frames->device_ctx;
    return ZCVA_OK;
}

int zcva_surface_id(const AVFrame *frame, uint32_t *surface)
{
    if (frame->format != AV_PIX_FMT_VAAPI)
        return ZCVA_ERR_NOT_VAAPI_FRAME;
    *surface = (uint32_t)(uintptr_t)frame->data[3];
    return ZCVA_OK;
}

int zcva_display(const AVFrame *frame, void **display)
{
    AVHWDeviceContext *device;
    int err = device_of(frame, &device);
    if (err != ZCVA_OK)
        return err;
    *display = ((AVVAAPIDeviceContext *)device->hwctx)->display;
    return ZCVA_OK;
}

int zcva_attach_hw_frames(AVFilterContext *buffersrc, const AVFrame *frame)
{
    if (!frame->hw_frames_ctx)
        return ZCVA_ERR_NO_FRAMES_CTX;
    AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
    if (!par)
        return ZCVA_ERR_NO_MEMORY;
    par->format = frame->format;
    par->width = frame->width;
    par->height = frame->height;
    par->hw_frames_ctx = frame->hw_frames_ctx; /* av_buffersrc_parameters_set takes its own reference */
    int err = av_buffersrc_parameters_set(buffersrc, par);
    av_free(par);
    return err;
}

AVFrame *zcva_selftest_frame(void *display, uint32_t surface, int width, int height)
{
    AVBufferRef *device_ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VAAPI);
    if (!device_ref)
        return NULL;
    AVHWDeviceContext *device = (AVHWDeviceContext *)device_ref->data;
    ((AVVAAPIDeviceContext *)device->hwctx)->display = display;

    AVBufferRef *frames_ref = av_hwframe_ctx_alloc(device_ref);
    av_buffer_unref(&device_ref); /* the frames context holds its own reference */
    if (!frames_ref)
        return NULL;
    AVHWFramesContext *frames = (AVHWFramesContext *)frames_ref->data;
    frames->format = AV_PIX_FMT_VAAPI;
    frames->sw_format = AV_PIX_FMT_NV12;
    frames->width = width;
    frames->height = height;

    AVFrame *frame = av_frame_alloc();
    if (!frame) {
        av_buffer_unref(&frames_ref);
        return NULL;
    }
    frame->format = AV_PIX_FMT_VAAPI;
    frame->width = width;
    frame->height = height;
    frame->hw_frames_ctx = frames_ref;
    frame->data[3] = (uint8_t *)(uintptr_t)surface;
    return frame;
}

int zcva_selftest_frames_refcount(const AVFrame *frame)
{
    return frame->hw_frames_ctx ? av_buffer_get_ref_count(frame->hw_frames_ctx) : 0;
}

AVFilterGraph *zcva_selftest_graph(int width, int height, AVFilterContext **buffersrc, AVFilterContext **sink)
{
    /* As PyAV builds it: the buffer source is created, and initialised, with a software format. */
    char args[128];
    AVFilterGraph *graph = avfilter_graph_alloc();
    if (!graph)
        return NULL;
    snprintf(args, sizeof(args), "video_size=%dx%d:pix_fmt=%d:time_base=1/25:pixel_aspect=1/1", width, height,
             AV_PIX_FMT_NV12);
    if (avfilter_graph_create_filter(buffersrc, avfilter_get_by_name("buffer"), "in", args, NULL, graph) < 0 ||
        avfilter_graph_create_filter(sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL, graph) < 0 ||
        avfilter_link(*buffersrc, 0, *sink, 0) < 0) {
        avfilter_graph_free(&graph);
        return NULL;
    }
    return graph;
}

int zcva_selftest_graph_configure(AVFilterGraph *graph) { return avfilter_graph_config(graph, NULL); }

int zcva_selftest_sink_format(AVFilterContext *sink) { return av_buffersink_get_format(sink); }

int zcva_selftest_sink_shares_frames(AVFilterContext *sink, const AVFrame *frame)
{
    AVBufferRef *ref = av_buffersink_get_hw_frames_ctx(sink);
    return ref && frame->hw_frames_ctx && ref->data == frame->hw_frames_ctx->data;
}

void zcva_selftest_graph_free(AVFilterGraph *graph) { avfilter_graph_free(&graph); }

void zcva_selftest_frame_free(AVFrame *frame) { av_frame_free(&frame); }

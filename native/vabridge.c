#include "vabridge.h"

#include <stdio.h>

#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vaapi.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

unsigned zcva_header_avutil_version(void) { return LIBAVUTIL_VERSION_INT; }
unsigned zcva_header_avfilter_version(void) { return LIBAVFILTER_VERSION_INT; }
unsigned zcva_header_avcodec_version(void) { return LIBAVCODEC_VERSION_INT; }
unsigned zcva_linked_avutil_version(void) { return avutil_version(); }
unsigned zcva_linked_avfilter_version(void) { return avfilter_version(); }
unsigned zcva_linked_avcodec_version(void) { return avcodec_version(); }
int zcva_pix_fmt_vaapi(void) { return AV_PIX_FMT_VAAPI; }

int zcva_frame_matches(const AVFrame *frame, int width, int height, int format)
{
    return frame && frame->width == width && frame->height == height && frame->format == format;
}

static int frames_of(const AVFrame *frame, AVHWFramesContext **out)
{
    if (frame->format != AV_PIX_FMT_VAAPI)
        return ZCVA_ERR_NOT_VAAPI_FRAME;
    if (!frame->hw_frames_ctx)
        return ZCVA_ERR_NO_FRAMES_CTX;
    AVHWFramesContext *frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    if (!frames->device_ref || !frames->device_ctx || frames->device_ctx->type != AV_HWDEVICE_TYPE_VAAPI)
        return ZCVA_ERR_NOT_VAAPI_DEVICE;
    *out = frames;
    return ZCVA_OK;
}

static int device_of(const AVFrame *frame, AVHWDeviceContext **device)
{
    AVHWFramesContext *frames;
    int err = frames_of(frame, &frames);
    if (err == ZCVA_OK)
        *device = frames->device_ctx;
    return err;
}

static int is_vaapi_device(const AVBufferRef *ref)
{
    return ref && ((const AVHWDeviceContext *)ref->data)->type == AV_HWDEVICE_TYPE_VAAPI;
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

int zcva_device_ref(const AVFrame *frame, AVBufferRef **out)
{
    AVHWFramesContext *frames;
    int err = frames_of(frame, &frames);
    if (err != ZCVA_OK)
        return err;
    *out = av_buffer_ref(frames->device_ref);
    return *out ? ZCVA_OK : ZCVA_ERR_NO_MEMORY;
}

void zcva_device_unref(AVBufferRef *ref) { av_buffer_unref(&ref); }

int zcva_device_display(const AVBufferRef *device, void **display)
{
    if (!is_vaapi_device(device))
        return ZCVA_ERR_DEVICE_NOT_VAAPI;
    *display = ((AVVAAPIDeviceContext *)((AVHWDeviceContext *)device->data)->hwctx)->display;
    return ZCVA_OK;
}

int zcva_codec_matches(const AVCodecContext *ctx, int codec_id, int width, int height)
{
    return ctx && ctx->av_class == avcodec_get_class() && ctx->codec_type == AVMEDIA_TYPE_VIDEO &&
           (codec_id < 0 || (int)ctx->codec_id == codec_id) && (width < 0 || ctx->width == width) &&
           (height < 0 || ctx->height == height);
}

int zcva_codec_use_device(AVCodecContext *ctx, const AVBufferRef *device)
{
    if (!is_vaapi_device(device))
        return ZCVA_ERR_DEVICE_NOT_VAAPI;
    if (avcodec_is_open(ctx))
        return ZCVA_ERR_CODEC_OPEN;
    if (!ctx->hw_device_ctx)
        return ZCVA_ERR_CODEC_NO_DEVICE;
    if (!is_vaapi_device(ctx->hw_device_ctx))
        return ZCVA_ERR_CODEC_NOT_VAAPI;
    if (ctx->hw_frames_ctx)
        return ZCVA_ERR_CODEC_HAS_FRAMES;
    if (ctx->hw_device_ctx->data == device->data)
        return ZCVA_OK; /* already on that device */
    AVBufferRef *ref = av_buffer_ref(device);
    if (!ref)
        return ZCVA_ERR_NO_MEMORY;
    av_buffer_unref(&ctx->hw_device_ctx); /* libavcodec owns the reference it holds (avcodec.h, hw_device_ctx) */
    ctx->hw_device_ctx = ref;
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

int zcva_frame_crop(const AVFrame *frame, uint64_t out[4])
{
    out[0] = frame->crop_left;
    out[1] = frame->crop_top;
    out[2] = frame->crop_right;
    out[3] = frame->crop_bottom;
    return ZCVA_OK;
}

int zcva_buffersrc_push_region(AVFilterContext *buffersrc, const AVFrame *frame, uint64_t left, uint64_t top,
                               uint64_t right, uint64_t bottom, int *averror)
{
    /* what the frame shows already: its size less its own crop (a decoder may leave crop_left/top set) */
    uint64_t shown_w = (uint64_t)frame->width, shown_h = (uint64_t)frame->height;
    uint64_t own_w = (uint64_t)frame->crop_left + frame->crop_right;
    uint64_t own_h = (uint64_t)frame->crop_top + frame->crop_bottom;
    *averror = 0;
    if (frame->width <= 0 || frame->height <= 0 || own_w >= shown_w || own_h >= shown_h)
        return ZCVA_ERR_REGION;
    shown_w -= own_w;
    shown_h -= own_h;
    if (left >= shown_w || right >= shown_w || left + right >= shown_w ||
        top >= shown_h || bottom >= shown_h || top + bottom >= shown_h)
        return ZCVA_ERR_REGION;
    AVFrame *region = av_frame_clone(frame); /* refs the buffers and hw_frames_ctx; copies the props */
    if (!region)
        return ZCVA_ERR_NO_MEMORY;
    region->crop_left += left;
    region->crop_top += top;
    region->crop_right += right;
    region->crop_bottom += bottom;
    int err = av_buffersrc_add_frame_flags(buffersrc, region, 0); /* moves the reference in */
    av_frame_free(&region);
    if (err < 0) {
        *averror = err;
        return ZCVA_ERR_FFMPEG;
    }
    return ZCVA_OK;
}

int zcva_frames_context_id(const AVFrame *frame, uintptr_t *out)
{
    AVHWFramesContext *frames;
    int err = frames_of(frame, &frames);
    if (err == ZCVA_OK)
        *out = (uintptr_t)frames;
    return err;
}

void zcva_error_text(int averror, char *buf, int size)
{
    if (av_strerror(averror, buf, (size_t)size) < 0)
        snprintf(buf, (size_t)size, "FFmpeg error %d", averror);
}

AVBufferRef *zcva_selftest_device(int vaapi, void *display)
{
    /* Allocated, never initialised: no vaInitialize, and no free callback, so no vaTerminate on the fake
     * display (only vaapi_device_create installs vaapi_device_free). */
    AVBufferRef *ref = av_hwdevice_ctx_alloc(vaapi ? AV_HWDEVICE_TYPE_VAAPI : AV_HWDEVICE_TYPE_DRM);
    if (ref && vaapi)
        ((AVVAAPIDeviceContext *)((AVHWDeviceContext *)ref->data)->hwctx)->display = display;
    return ref;
}

AVFrame *zcva_selftest_frame(void *display, uint32_t surface, int width, int height)
{
    AVBufferRef *device_ref = zcva_selftest_device(1, display);
    if (!device_ref)
        return NULL;

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
    /* refcounted as a decoder's frames are (their buf[0] holds the pool's surface): av_frame_ref shares it */
    frame->buf[0] = av_buffer_allocz(1);
    if (!frame->buf[0])
        av_frame_free(&frame);
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

AVFrame *zcva_selftest_pull(AVFilterContext *sink)
{
    AVFrame *frame = av_frame_alloc();
    if (frame && av_buffersink_get_frame(sink, frame) < 0)
        av_frame_free(&frame);
    return frame;
}

AVFrame *zcva_selftest_soft_frame(int width, int height, int format)
{
    AVFrame *frame = av_frame_alloc();
    if (!frame)
        return NULL;
    frame->width = width;
    frame->height = height;
    frame->format = format;
    if (av_frame_get_buffer(frame, 0) < 0)
        av_frame_free(&frame);
    return frame;
}

int zcva_pix_fmt_nv12(void) { return AV_PIX_FMT_NV12; }

int zcva_selftest_same_data(const AVFrame *a, const AVFrame *b)
{
    return a->data[0] && a->data[0] == b->data[0] && a->data[1] == b->data[1] && a->buf[0] && b->buf[0] &&
           a->buf[0]->buffer == b->buf[0]->buffer;
}

void zcva_selftest_frame_free(AVFrame *frame) { av_frame_free(&frame); }

const AVBufferRef *zcva_selftest_frame_device(const AVFrame *frame)
{
    return frame->hw_frames_ctx ? ((AVHWFramesContext *)frame->hw_frames_ctx->data)->device_ref : NULL;
}

int zcva_selftest_refcount(const AVBufferRef *ref) { return ref ? av_buffer_get_ref_count(ref) : 0; }

AVCodecContext *zcva_selftest_codec(const AVBufferRef *device, int width, int height)
{
    /* As PyAV leaves a hwaccel decoder after av.open: allocated, a device attached, not opened. */
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_RAWVIDEO);
    AVCodecContext *ctx = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!ctx)
        return NULL;
    ctx->width = width;
    ctx->height = height;
    ctx->pix_fmt = AV_PIX_FMT_NV12;
    if (device && !(ctx->hw_device_ctx = av_buffer_ref(device)))
        avcodec_free_context(&ctx);
    return ctx;
}

int zcva_selftest_codec_id(const AVCodecContext *ctx) { return ctx->codec_id; }

int zcva_selftest_codec_open(AVCodecContext *ctx) { return avcodec_open2(ctx, NULL, NULL); }

int zcva_selftest_codec_set_frames(AVCodecContext *ctx, const AVFrame *frame)
{
    av_buffer_unref(&ctx->hw_frames_ctx);
    ctx->hw_frames_ctx = frame->hw_frames_ctx ? av_buffer_ref(frame->hw_frames_ctx) : NULL;
    return ctx->hw_frames_ctx ? ZCVA_OK : ZCVA_ERR_NO_MEMORY;
}

int zcva_selftest_codec_device_is(const AVCodecContext *ctx, const AVBufferRef *device)
{
    return ctx->hw_device_ctx && device && ctx->hw_device_ctx->data == device->data;
}

void zcva_selftest_codec_free(AVCodecContext *ctx) { avcodec_free_context(&ctx); }

#include <zlib.h>
// inflateInit2 is a macro; this wrapper gives Swift something it can call.
static inline int cdm_inflate_init2(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
// deflateInit2 is a macro too.
static inline int cdm_deflate_init2(z_stream *stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, mem_level, Z_DEFAULT_STRATEGY);
}

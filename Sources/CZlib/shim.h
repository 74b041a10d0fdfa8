#include <zlib.h>
// inflateInit2 is a macro; this wrapper gives Swift something it can call.
static inline int cdm_inflate_init2(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

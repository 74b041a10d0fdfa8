/* The text rules the reference migrations share with Swift and Python (examples/README.md,
** "Text rules"), in C without a Unicode library:
**   - white space: a code point with Unicode's White_Space property (text_is_white_space);
**   - characters: extended grapheme clusters (UAX #29) as Swift's Character counts them
**     (text_prefix_graphemes), with the break classes read off Swift itself (grapheme_tables.h):
**     combining marks, spacing marks, prepended marks, variation selectors, emoji modifiers and
**     zero-width joiner sequences, regional-indicator flag pairs, tag sequences, CR LF, Hangul jamo
**     and syllables. Not covered: Indic conjunct clusters (GB9c), which Swift joins;
**   - NFC: canonical composition of a starter with the marks that directly follow it, pair by
**     pair (nfc_pairs.h, generated from Unicode's data) plus Hangul arithmetic (text_nfc). Input
**     whose marks are out of canonical order, or that needs decomposing first, is not reordered
**     (Python's unicodedata and Swift's NFC do it); the data has none.
** Text is UTF-8; invalid bytes count as one code point each. */
#ifndef CDM_UNICODE_TEXT_H
#define CDM_UNICODE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grapheme_tables.h"
#include "nfc_pairs.h"

/* Decodes the code point at p (n bytes left); *size gets its length in bytes (at least 1). */
static inline uint32_t text_decode(const unsigned char *p, size_t n, size_t *size) {
    unsigned char c = p[0];
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (len > n) len = 1;
    for (size_t i = 1; i < len; i++) if ((p[i] & 0xC0) != 0x80) len = 1;
    *size = len;
    switch (len) {
    case 2: return (uint32_t)(c & 0x1F) << 6 | (p[1] & 0x3F);
    case 3: return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
    case 4: return (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 | (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
    default: return c;
    }
}

static inline size_t text_encode(uint32_t cp, unsigned char *out) {
    if (cp < 0x80) { out[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { out[0] = (unsigned char)(0xC0 | cp >> 6); out[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12); out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)); out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18); out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)); out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Unicode's White_Space property. */
static inline int text_is_white_space(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* ---- Grapheme cluster break properties: the classes read off Swift's Character (grapheme_tables.h)
** plus those UAX #29 fixes by code point (CR, LF, ZWJ, regional indicators, Hangul). */
enum { GB_OTHER, GB_CR, GB_LF, GB_CONTROL, GB_EXTEND, GB_ZWJ, GB_RI, GB_PREPEND, GB_SPACING_MARK, GB_L, GB_V, GB_T, GB_LV,
       GB_LVT, GB_PICTO };

static inline int gb_in(uint32_t c, const uint32_t (*ranges)[2], size_t count) {
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < ranges[mid][0]) hi = mid;
        else if (c > ranges[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

#define GB_IN(c, table) gb_in((c), (table), sizeof(table) / sizeof((table)[0]))

static inline int gb_property(uint32_t c) {
    if (c == 0x0D) return GB_CR;
    if (c == 0x0A) return GB_LF;
    if (c == 0x200D) return GB_ZWJ;
    if (c >= 0x1F1E6 && c <= 0x1F1FF) return GB_RI;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0xA960 && c <= 0xA97C)) return GB_L;
    if ((c >= 0x1160 && c <= 0x11A7) || (c >= 0xD7B0 && c <= 0xD7C6)) return GB_V;
    if ((c >= 0x11A8 && c <= 0x11FF) || (c >= 0xD7CB && c <= 0xD7FB)) return GB_T;
    if (c >= 0xAC00 && c <= 0xD7A3) return (c - 0xAC00) % 28 == 0 ? GB_LV : GB_LVT;
    if (GB_IN(c, GB_CONTROL_RANGES)) return GB_CONTROL;
    if (GB_IN(c, GB_EXTEND_RANGES)) return GB_EXTEND;
    if (GB_IN(c, GB_SPACING_MARK_RANGES)) return GB_SPACING_MARK;
    if (GB_IN(c, GB_PREPEND_RANGES)) return GB_PREPEND;
    if (GB_IN(c, GB_PICTO_RANGES)) return GB_PICTO;
    return GB_OTHER;
}

/* The bytes of the first `characters` grapheme clusters of text (all of it when shorter). */
static inline size_t text_prefix_graphemes(const char *text, size_t length, size_t characters) {
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0, count = 0;
    int previous = -1, ri_run = 0, picto_then_extend = 0;   /* picto_then_extend: ExtPict Extend* so far */
    while (i < length) {
        size_t size;
        int prop = gb_property(text_decode(p + i, length - i, &size));
        int joins;
        if (previous < 0) joins = 0;
        else if (previous == GB_CR && prop == GB_LF) joins = 1;                                              /* GB3 */
        else if (previous == GB_CR || previous == GB_LF || previous == GB_CONTROL) joins = 0;                  /* GB4 */
        else if (prop == GB_CR || prop == GB_LF || prop == GB_CONTROL) joins = 0;                              /* GB5 */
        else if (previous == GB_L && (prop == GB_L || prop == GB_V || prop == GB_LV || prop == GB_LVT)) joins = 1;   /* GB6 */
        else if ((previous == GB_LV || previous == GB_V) && (prop == GB_V || prop == GB_T)) joins = 1;         /* GB7 */
        else if ((previous == GB_LVT || previous == GB_T) && prop == GB_T) joins = 1;                          /* GB8 */
        else if (prop == GB_EXTEND || prop == GB_ZWJ) joins = 1;                                               /* GB9 */
        else if (prop == GB_SPACING_MARK) joins = 1;                                                           /* GB9a */
        else if (previous == GB_PREPEND) joins = 1;                                                            /* GB9b */
        else if (previous == GB_ZWJ && prop == GB_PICTO && picto_then_extend) joins = 1;                       /* GB11 */
        else if (previous == GB_RI && prop == GB_RI && ri_run % 2 == 1) joins = 1;                             /* GB12, GB13 */
        else joins = 0;                                                                                        /* GB999 */
        if (!joins) {
            if (count == characters) break;
            count++;
        }
        /* State for GB11 (ExtPict Extend* ZWJ) and GB12/13 (odd runs of regional indicators). */
        if (prop == GB_PICTO) picto_then_extend = 1;
        else if (prop != GB_EXTEND && !(prop == GB_ZWJ && picto_then_extend)) picto_then_extend = 0;
        if (previous == GB_ZWJ && prop != GB_PICTO) picto_then_extend = 0;
        ri_run = prop == GB_RI ? ri_run + 1 : 0;
        previous = prop;
        i += size;
    }
    return i;
}

/* ---- NFC (see the limits above). */
static inline uint32_t nfc_compose(uint32_t first, uint32_t second) {
    if (first >= 0x1100 && first <= 0x1112 && second >= 0x1161 && second <= 0x1175)         /* Hangul L + V */
        return 0xAC00 + ((first - 0x1100) * 21 + (second - 0x1161)) * 28;
    if (first >= 0xAC00 && first <= 0xD7A3 && (first - 0xAC00) % 28 == 0 && second >= 0x11A8 && second <= 0x11C2)   /* LV + T */
        return first + (second - 0x11A7);
    size_t lo = 0, hi = sizeof NFC_PAIRS / sizeof NFC_PAIRS[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (NFC_PAIRS[mid][0] < first || (NFC_PAIRS[mid][0] == first && NFC_PAIRS[mid][1] < second)) lo = mid + 1;
        else hi = mid;
    }
    return lo < sizeof NFC_PAIRS / sizeof NFC_PAIRS[0] && NFC_PAIRS[lo][0] == first && NFC_PAIRS[lo][1] == second ? NFC_PAIRS[lo][2] : 0;
}

/* The NFC form of text (length bytes) as a new NUL-terminated string (free it); NULL if out of memory. */
static inline char *text_nfc(const char *text, size_t length) {
    unsigned char *out = malloc(2 * length + 1);   /* a composite is never longer than its pair; room to spare */
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0, n = 0, last_start = 0;
    uint32_t last = 0;
    int have_last = 0;
    while (i < length) {
        size_t size;
        uint32_t c = text_decode(p + i, length - i, &size);
        uint32_t composed = have_last ? nfc_compose(last, c) : 0;
        if (composed) {   /* replace the previous code point by the composite (never longer in UTF-8) */
            n = last_start + text_encode(composed, out + last_start);
            last = composed;
        } else {
            last_start = n;
            if (size == 1 && c >= 0x80) out[n++] = p[i];   /* an invalid byte as it is */
            else n += text_encode(c, out + n);
            last = c;
            have_last = 1;
        }
        i += size;
    }
    out[n] = 0;
    return (char *)out;
}

#endif

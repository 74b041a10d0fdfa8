"""The text rules the reference migrations share with Swift and C (examples/README.md, "Text
rules"), in plain Python (the standard library has no grapheme segmentation):

- white space: a code point with Unicode's White_Space property (``is_white_space``; not
  ``str.isspace``, which also takes U+001C–U+001F);
- characters: extended grapheme clusters (UAX #29) for the cases the data has — combining marks,
  variation selectors, emoji modifiers, zero-width joiner sequences, regional-indicator flag
  pairs, tag sequences, CR LF, Hangul jamo and syllables (``prefix_graphemes``), with the same
  property tables as examples/c/unicode_text.h. Not covered: Prepend, SpacingMark and Indic
  conjuncts (Swift's Character covers them all);
- NFC: ``unicodedata.normalize("NFC", …)``.
"""

from __future__ import annotations

import unicodedata

_WHITE_SPACE = frozenset([*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F,
                          0x205F, 0x3000])

(OTHER, CR, LF, CONTROL, EXTEND, ZWJ, RI, L, V, T, LV, LVT, PICTO) = range(13)

_EXTEND = [(0x0300, 0x036F), (0x0483, 0x0489), (0x0591, 0x05BD), (0x05BF, 0x05BF), (0x05C1, 0x05C2), (0x05C4, 0x05C5),
           (0x05C7, 0x05C7), (0x0610, 0x061A), (0x064B, 0x065F), (0x0670, 0x0670), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF),
           (0x200C, 0x200C), (0x20D0, 0x20F0), (0x302A, 0x302F), (0x3099, 0x309A), (0xFE00, 0xFE0F), (0xFE20, 0xFE2F),
           (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F), (0xE0100, 0xE01EF)]
_PICTO = [(0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122), (0x2139, 0x2139),
          (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328), (0x23CF, 0x23CF), (0x23E9, 0x23F3),
          (0x23F8, 0x23FA), (0x24C2, 0x24C2), (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE),
          (0x2600, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50), (0x2B55, 0x2B55),
          (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F),
          (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171), (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A),
          (0x1F1AD, 0x1F1E5), (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A),
          (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA), (0x1F400, 0x1F53D), (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF),
          (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F), (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F),
          (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF),
          (0x1FC00, 0x1FFFD)]


def is_white_space(c: str) -> bool:
    return ord(c) in _WHITE_SPACE


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _property(c: int) -> int:
    if c == 0x0D:
        return CR
    if c == 0x0A:
        return LF
    if c < 0x20 or 0x7F <= c <= 0x9F or c in (0x200B, 0x2028, 0x2029, 0xFEFF):
        return CONTROL
    if c == 0x200D:
        return ZWJ
    if any(a <= c <= b for a, b in _EXTEND):
        return EXTEND
    if 0x1F1E6 <= c <= 0x1F1FF:
        return RI
    if 0x1100 <= c <= 0x115F or 0xA960 <= c <= 0xA97C:
        return L
    if 0x1160 <= c <= 0x11A7 or 0xD7B0 <= c <= 0xD7C6:
        return V
    if 0x11A8 <= c <= 0x11FF or 0xD7CB <= c <= 0xD7FB:
        return T
    if 0xAC00 <= c <= 0xD7A3:
        return LV if (c - 0xAC00) % 28 == 0 else LVT
    if any(a <= c <= b for a, b in _PICTO):
        return PICTO
    return OTHER


def prefix_graphemes(text: str, characters: int) -> str:
    """The first `characters` extended grapheme clusters of text (all of it when shorter)."""
    count = 0
    previous = None
    ri_run = 0
    picto_then_extend = False  # ExtPict Extend* (ZWJ) so far, for GB11
    for i, ch in enumerate(text):
        prop = _property(ord(ch))
        if previous is None:
            joins = False
        elif previous == CR and prop == LF:
            joins = True  # GB3
        elif previous in (CR, LF, CONTROL) or prop in (CR, LF, CONTROL):
            joins = False  # GB4, GB5
        elif previous == L and prop in (L, V, LV, LVT):
            joins = True  # GB6
        elif previous in (LV, V) and prop in (V, T):
            joins = True  # GB7
        elif previous in (LVT, T) and prop == T:
            joins = True  # GB8
        elif prop in (EXTEND, ZWJ):
            joins = True  # GB9
        elif previous == ZWJ and prop == PICTO and picto_then_extend:
            joins = True  # GB11
        elif previous == RI and prop == RI and ri_run % 2 == 1:
            joins = True  # GB12, GB13
        else:
            joins = False
        if not joins:
            if count == characters:
                return text[:i]
            count += 1
        if prop == PICTO:
            picto_then_extend = True
        elif prop != EXTEND and not (prop == ZWJ and picto_then_extend):
            picto_then_extend = False
        if previous == ZWJ and prop != PICTO:
            picto_then_extend = False
        ri_run = ri_run + 1 if prop == RI else 0
        previous = prop
    return text


def graphemes(text: str) -> list:
    """The extended grapheme clusters of text, in order."""
    out = []
    while text:
        cluster = prefix_graphemes(text, 1)
        out.append(cluster)
        text = text[len(cluster):]
    return out


def replace_all(text: str, target: str, replacement: str) -> str:
    """Every occurrence of target replaced, left to right, where an occurrence starts and ends on
    grapheme cluster boundaries (as Swift's String and the engine's
    stringByReplacingOccurrencesOfString:withString: compare whole characters): "Trosa" is
    replaced in "Östra Trosa" but not in "Trosa\u0301" (whose last character is "á")."""
    if not target:
        return text
    clusters = graphemes(text)
    starts = [0]
    for cluster in clusters:
        starts.append(starts[-1] + len(cluster))
    boundaries = set(starts)
    out, k = [], 0
    while k < len(clusters):
        position = starts[k]
        end = position + len(target)
        if text.startswith(target, position) and end in boundaries:
            out.append(replacement)
            k = starts.index(end)
        else:
            out.append(clusters[k])
            k += 1
    return "".join(out)

"""The text rules the reference migrations share with Swift and C (examples/README.md, "Text
rules"), in plain Python (the standard library has no grapheme segmentation):

- white space: a code point with Unicode's White_Space property (``is_white_space``; not
  ``str.isspace``, which also takes U+001C–U+001F);
- characters: extended grapheme clusters (UAX #29) as Swift's Character counts them
  (``prefix_graphemes``), with the break classes read off Swift itself (grapheme_tables.py, the
  same tables as examples/c/grapheme_tables.h): combining, spacing and prepended marks, variation
  selectors, emoji modifiers and zero-width joiner sequences, regional-indicator flag pairs, tag
  sequences, CR LF, Hangul jamo and syllables. Not covered: Indic conjunct clusters (GB9c), which
  Swift joins;
- NFC: ``unicodedata.normalize("NFC", …)``.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

from . import grapheme_tables

_WHITE_SPACE = frozenset(
    [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)

(OTHER, CR, LF, CONTROL, EXTEND, ZWJ, RI, PREPEND, SPACING_MARK, L, V, T, LV, LVT, PICTO) = range(15)


def _in(c: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    k = bisect_right(ranges, (c, 0x10FFFF))
    return k > 0 and ranges[k - 1][0] <= c <= ranges[k - 1][1]


_CLASSES = (
    (grapheme_tables.CONTROL, CONTROL),
    (grapheme_tables.EXTEND, EXTEND),
    (grapheme_tables.SPACING_MARK, SPACING_MARK),
    (grapheme_tables.PREPEND, PREPEND),
    (grapheme_tables.PICTO, PICTO),
)


def is_white_space(c: str) -> bool:
    return ord(c) in _WHITE_SPACE


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _property(c: int) -> int:
    if c == 0x0D:
        return CR
    if c == 0x0A:
        return LF
    if c == 0x200D:
        return ZWJ
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
    for table, prop in _CLASSES:
        if _in(c, table):
            return prop
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
        elif prop == SPACING_MARK:
            joins = True  # GB9a
        elif previous == PREPEND:
            joins = True  # GB9b
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
        text = text[len(cluster) :]
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

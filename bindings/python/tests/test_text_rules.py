"""The reference migrations' character rule (examples/README.md, "Text rules"): Python's
text.prefix_graphemes and C's text_prefix_graphemes split text into the clusters Swift's
Character makes. Tests/Fixtures/text/grapheme-clusters.json holds texts (emoji ZWJ sequences,
flags, tags, combining, spacing and prepended marks, Hangul, controls, random code points) with
the clusters Swift made of them; the Swift suite checks that file against Character itself."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess

import pytest
from conftest import EXAMPLES, ROOT
from reference_migrations.text import graphemes, prefix_graphemes

with open(os.path.join(ROOT, "Tests", "Fixtures", "text", "grapheme-clusters.json"), encoding="utf-8") as _cases:
    CASES = json.load(_cases)


def expected_clusters(case):
    text, clusters, start = case["text"], [], 0
    for size in case["clusters"]:
        clusters.append(text[start : start + size])
        start += size
    return clusters


def test_the_fixture_covers_emoji_sequences_and_marks():
    texts = [case["text"] for case in CASES]
    assert len(CASES) > 300
    assert (
        "\U0001f469\u200d\U0001f4bbx" in texts
        and any("\u093f" in t for t in texts)
        and any("\u0600" in t for t in texts)
    )


def test_python_splits_text_into_the_clusters_swift_makes():
    wrong = [case["text"] for case in CASES if graphemes(case["text"]) != expected_clusters(case)]
    assert wrong == []


def test_python_prefixes_end_on_swift_character_boundaries():
    for case in CASES:
        clusters = expected_clusters(case)
        for count in range(len(clusters) + 2):
            assert prefix_graphemes(case["text"], count) == "".join(clusters[:count]), (case["text"], count)


@pytest.fixture(scope="module")
def c_prefix(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("a C compiler is needed to check examples/c/unicode_text.h")
    folder = tmp_path_factory.mktemp("text-rules")
    source = folder / "prefix.c"
    source.write_text(
        '#include "unicode_text.h"\n'
        "size_t prefix(const char *text, size_t length, size_t characters) {\n"
        "    return text_prefix_graphemes(text, length, characters);\n}\n"
    )
    library = folder / "libprefix.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-I", os.path.join(EXAMPLES, "c"), "-o", str(library), str(source)],
        check=True,
    )
    function = ctypes.CDLL(str(library)).prefix
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t]
    function.restype = ctypes.c_size_t
    return function


def test_c_prefixes_end_on_swift_character_boundaries(c_prefix):
    for case in CASES:
        encoded = case["text"].encode("utf-8")
        clusters = expected_clusters(case)
        for count in range(len(clusters) + 2):
            assert c_prefix(encoded, len(encoded), count) == len("".join(clusters[:count]).encode("utf-8")), (
                case["text"],
                count,
            )

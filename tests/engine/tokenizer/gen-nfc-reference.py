#!/usr/bin/env python3
"""NFC reference strings (Python unicodedata) for the tokenizer's NFC normalizer test."""
import json
import random
import sys
import unicodedata as ud

rng = random.Random(1234)
# Starters, combining marks, precomposed letters, Hangul syllables and jamo, singletons,
# composition exclusions and characters with multi-mark decompositions.
pool = [chr(c) for c in list(range(0x41, 0x5B)) + list(range(0xC0, 0x180)) + list(range(0x300, 0x370))
        + list(range(0x1E00, 0x1F00)) + list(range(0x1F00, 0x2000)) + list(range(0x1100, 0x1113))
        + list(range(0x1161, 0x1176)) + list(range(0x11A8, 0x11C3)) + [0xAC00, 0xAC01, 0xD7A3, 0x212B, 0x2126,
        0x0344, 0x0958, 0x0F73, 0x0F75, 0x0F81, 0x1D15E, 0x1D160, 0x2ADC, 0x0B47, 0x0B3E, 0x0B57, 0x0CC6,
        0x0CC2, 0x0CD5, 0x05B8, 0x05C1, 0x05D0, 0x0591, 0x0652, 0x0627, 0x0653, 0x0654, 0x0655, 0x3099,
        0x304B, 0x309A, 0x30CF, 0x0345, 0x03B1, 0x0313, 0x0342, 0x1100, 0x1161, 0x11A8, 0x20, 0x4E2D]]
cases = []
for _ in range(2000):
    s = ''.join(rng.choice(pool) for _ in range(rng.randint(1, 12)))
    for form in (s, ud.normalize('NFD', s)):
        cases.append({'text': form, 'nfc': ud.normalize('NFC', form)})
with open(sys.argv[1], 'w', encoding='utf-8') as f:
    json.dump({'unicode': ud.unidata_version, 'cases': cases}, f, ensure_ascii=False)

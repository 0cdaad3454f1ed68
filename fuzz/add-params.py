#!/usr/bin/env python3
"""Bring the committed checkpoint seeds (fuzz/corpus/checkpoint/*.smc of the
current version, 3) up to a smokemorph with more method parameters: appends
the new parameters' values after each field's parameters, fixes the header's
size, parameter count and file size and the CRC-32, and writes the step
corpus's copies (fuzz/corpus/step/, a 0 byte first: fuzz_step reads it as
"a checkpoint follows"). Older versions' seeds stay as they are (the reader
refuses them with "written by an older smokemorph").
Usage: python3 fuzz/add-params.py VALUE... (the new parameters' values, in
settings.def's SLOT order; files of fattal runs get 0 for --force-noise)."""
import glob, os, struct, sys, zlib

here = os.path.dirname(os.path.abspath(__file__))
new = [float(v) for v in sys.argv[1:]]
if not new:
    sys.exit(__doc__)
def current(path):
    b = open(path, 'rb').read()
    return b[:8] == b'SMOKECKP' and struct.unpack_from('<I', b, 8)[0] == 3

seeds = [p for p in sorted(glob.glob(os.path.join(here, 'corpus', 'checkpoint', '*.smc'))) if current(p)]
newest = max(struct.unpack_from('<I', open(p, 'rb').read(), 112)[0] for p in seeds)
for path in seeds:
    b = bytearray(open(path, 'rb').read())
    np, nf = struct.unpack_from('<II', b, 112)
    if np != newest:
        continue
    vals = list(new)
    if 'fattal' in os.path.basename(path):
        vals[0] = 0.0
    extra = b''.join(struct.pack('<d', v) for v in vals)
    body = bytes(b[:-4])
    # field 0's parameters end at 120 + 8 np; each further field's block is
    # 96 + 8 np bytes from 120 + 8 np + 64, its parameters at +32
    cuts = [120 + 8 * np]
    f0 = 120 + 8 * np + 64
    for i in range(nf - 1):
        cuts.append(f0 + i * (96 + 8 * np) + 32 + 8 * np)
    out = bytearray()
    last = 0
    for c in cuts:
        out += body[last:c] + extra
        last = c
    out += body[last:]
    np2 = np + len(vals)
    struct.pack_into('<II', out, 112, np2, nf)
    struct.pack_into('<I', out, 12, 120 + 8 * np2 + 64 + (nf - 1) * (96 + 8 * np2))
    struct.pack_into('<Q', out, 16, len(out) + 4)
    out += struct.pack('<I', zlib.crc32(out) & 0xffffffff)
    open(path, 'wb').write(out)
    open(os.path.join(here, 'corpus', 'step', os.path.basename(path)), 'wb').write(b'\0' + out)
    print('%s: %d -> %d parameters, %d bytes' % (os.path.basename(path), np, np2, len(out)))

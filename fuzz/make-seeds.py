#!/usr/bin/env python3
"""Regenerate the committed seed corpus fuzz/corpus/NAME/ (tiny generated
files, no images from elsewhere): PNGs of every colour type and bit depth,
interlaced and not, palette with tRNS, the hostile headers of issue 10; RAW
option bytes; argv lists; round-trip inputs. Usage: python3 fuzz/make-seeds.py"""
import os, struct, zlib

here = os.path.dirname(os.path.abspath(__file__))

def chunk(t, d, length=None):
    l = len(d) if length is None else length
    return struct.pack('>I', l) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)

def png(w, h, bits, ctype, interlace=0, extra=b'', rows=None):
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    rowbytes = (w * ch * bits + 7) // 8
    raw = b''
    for y in range(h):
        raw += b'\0' + bytes(((x * 37 + y * 11) & 0xff) for x in range(rowbytes))
    if interlace:  # pass data for Adam7 is not just rows; a plain stream still exercises the reader
        raw = raw * 2
    ihdr = struct.pack('>IIBBBBB', w, h, bits, ctype, 0, 0, interlace)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + extra +
            chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))

def write(name, sub, data):
    d = os.path.join(here, 'corpus', sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)

# png
for bits in (1, 2, 4, 8, 16):
    write('grey%d.png' % bits, 'png', png(5, 3, bits, 0))
for ctype in (2, 4, 6):
    for bits in (8, 16):
        write('c%d-%d.png' % (ctype, bits), 'png', png(4, 4, bits, ctype))
write('rgba-interlaced.png', 'png', png(9, 9, 8, 6, interlace=1))
plte = chunk(b'PLTE', bytes(range(0, 48)))
write('palette-trns.png', 'png', png(6, 2, 8, 3, extra=plte + chunk(b'tRNS', b'\x00\x80\xff')))
write('grey-text.png', 'png', png(3, 3, 8, 0, extra=chunk(b'tEXt', b'Comment\0hello')))
ihdr = struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0)
write('text-claims-2g.png', 'png',
      b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + struct.pack('>I', 0x7fffffff) + b'tEXtabc')
ihdr = struct.pack('>IIBBBBB', 16384, 16384, 16, 6, 0, 0, 1)
write('huge-interlaced.png', 'png', b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) +
      chunk(b'IDAT', zlib.compress(b'\0' * 64)) + chunk(b'IEND', b''))
write('jpeg.jpg', 'png', b'\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01')

# raw: type, w-1, h-1, invert, then the samples
write('u8-4x4', 'raw', bytes([0, 3, 3, 0]) + bytes(range(0, 160, 10)))
write('u16-2x3', 'raw', bytes([1, 1, 2, 1]) + bytes(range(12)))
write('f32-2x2', 'raw', bytes([2, 1, 1, 0]) + struct.pack('<4f', 0.0, 0.5, 1.5, 3.0))
write('f32-nan', 'raw', bytes([2, 0, 0, 1]) + struct.pack('<f', float('nan')))
write('short', 'raw', bytes([0, 9, 9, 0]) + b'abc')

# config: argv split at NUL
for i, args in enumerate([
        ['--cpu', '--grid', '32', '--steps', '4', 'a.png', 'b.png'],
        ['--headless', '--grid', '640x360', '--dt', '0.02', '--every', '5', '--frames', 'out'],
        ['--raw', '64x64:f32', '--channel', 'a', '--invert', '--max-image-mb', '512', 'x', 'y'],
        ['--force', 'fattal', '--drift', '0.1', '--vb', '10', '--ease-force', '0'],
        ['--size', '1920x1080', '--color', '#ffa040', '--metrics', 'm.csv', '-q'],
        ['--gri', '8', '--bogus', '--', '-x', 'y'],
        ['--window', '100x100', '--keys', 'v', '--steps-per-frame', '3', '--screenshot', 's.png'],
        ['--vcycles', '0', '--jacobi', '10000', '--gather-iters', '7', '--umax', '100', '--sigma', '1']]):
    write('args%d' % i, 'config', b'\0'.join(a.encode() for a in args))

# roundtrip: format, w, h, RGBA flag, then float samples
write('grey8-3x2', 'roundtrip', bytes([0, 2, 1, 0]) + struct.pack('<6f', 0, 0.25, 0.5, 1, -1, 2))
write('rgba16-2x2', 'roundtrip', bytes([1, 1, 1, 1]) +
      struct.pack('<16f', *[i / 15.0 for i in range(16)]))
write('nan-inf', 'roundtrip', bytes([1, 0, 0, 0]) + struct.pack('<f', float('inf')))

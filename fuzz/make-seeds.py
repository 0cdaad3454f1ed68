#!/usr/bin/env python3
"""Regenerate the committed seed corpus fuzz/corpus/NAME/ (tiny generated
files, no images from elsewhere): PNGs of every colour type and bit depth,
interlaced and not, palette with tRNS, the hostile headers of issue 10; RAW
option bytes; argv lists; round-trip inputs; scene files. Usage: python3 fuzz/make-seeds.py"""
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

# scene: JSON scenes (fuzz_scene), good ones and one of each kind of error
scenes = {
    'issue9.json': b"""{ "grid": [256, 256], "dt": 0.01, "vf": 0.5, "frames": "out", "every": 10,
  "fields": [
    { "name": "warm", "color": "#ff4020", "start": "logo.png", "channel": "luma", "invert": false,
      "keys": [ { "step": 600, "target": "word.png" },
                { "step": 1200, "target": "logo.png", "vf": 0.8, "sigma": 0.08 } ],
      "sources": [ { "image": "puff.png", "rate": 0.5, "from": 0, "to": 200 } ] } ] }
""",
    'moving.json': b"""{"grid": 64, "steps": 100, "force": "fattal", "gather": false, "density_scale": "auto",
 "fields": [{"start": "/abs/a.png", "keys": [{"time": 0.5, "target": "b.png",
   "move": {"from": [-0.3, 0.1], "to": [0.3, -0.1]}, "scale": {"from": 0.5, "to": 1.5}}],
   "sources": [{"disc": {"center": [0.5, 0.5], "radius": 0.1}, "rate": 2, "to": 50}]}]}
""",
    'outputs.json': b"""{"frames": "out/s.####.exr", "exr_type": "float", "exr_compression": "piz",
 "exr_velocity": true, "fps": 30, "frame_start": 1001, "size": [320, 240], "background": "203040",
 "alpha": "premultiplied", "metrics": "m.csv", "mass_match": false, "raw": "64x64:f32",
 "fields": [{"start": "a.raw", "keys": [{"target": "b.raw"}]}]}
""",
    'four-fields.json': b"""{"fields": [
 {"name": "a", "start": "a.png", "keys": [{"step": 1, "target": "b.png"}]},
 {"name": "b", "color": "#00ff00", "channel": "a", "invert": true, "start": "b.png", "keys": [{"step": 9, "target": "a.png"}]},
 {"start": "c.png", "keys": [{"step": 3, "target": "d.png"}, {"step": 4, "target": "e.png", "vd": 1, "vg": 0.1}]},
 {"start": "d.png", "keys": [{"target": "e.png"}]}]}
""",
    'bad-range.json': b'{"fields": [{"start": "a", "keys": [{"step": 5, "target": "b", "vf": -1}]}]}\n',
    'bad-order.json': b'{"dt": 0.1, "fields": [{"start": "a", "keys": [{"step": 5, "target": "b"}, {"time": 0.2, "target": "c"}]}]}\n',
    'bad-syntax.json': b'{"grid": [64 64], "fields": []}\n',
    'bad-joint.json': b'{"jacobi": 0, "vcycles": 0, "fields": []}\n',
    # a NUL byte, which jansson skips silently (the first finding: positions went wrong)
    'nul-byte.json': b'{ "grid": [25\0, 256], "fields": [{"start": "a", "color": "#f&4020", "keys": []}]}\n',
}
for name, text in scenes.items():
    write(name, 'scene', text)
# roundtrip, EXR rows (format 2..5: half zip, half piz, float zip, float piz):
# byte 3 bit 0 RGBA, bit 1 a data window inside the frame (bits 2-5 its corner)
odd = [0.0, -0.0, 1.0, 0.333333, 1e-6, 3e-8, -2.5, 65504.0, 65519.0, 70000.0, 1e30,
       float('inf'), float('-inf'), float('nan'), 5.960464477539063e-08, 0.5]
for fmt, name in ((2, 'exr-half-zip'), (3, 'exr-half-piz'), (4, 'exr-float-zip'), (5, 'exr-float-piz')):
    write(name + '-grey-4x4', 'roundtrip', bytes([fmt, 3, 3, 0]) + struct.pack('<16f', *odd))
    write(name + '-rgba-5x3-window', 'roundtrip', bytes([fmt, 4 + 48, 2 + 48, 1 | 2 | (1 << 2) | (1 << 4)]) +
          struct.pack('<60f', *[odd[i % 16] * (1 + i / 64.0) for i in range(60)]))
write('exr-half-piz-rgba-33x17', 'roundtrip', bytes([3, 32, 16, 1]) +
      struct.pack('<%df' % (33 * 17 * 4), *[((i * 7919) % 1000) / 250.0 - 1.0 for i in range(33 * 17 * 4)]))

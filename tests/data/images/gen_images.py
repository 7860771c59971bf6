#!/usr/bin/env python3
"""Writes the image fixtures of tests/dataloader/test_image_decode.cpp.
Deterministic; run once and commit the output. PNGs are assembled here byte
by byte (Python's zlib), so the expected pixels follow from the PNG spec;
the CMYK JPEG goes through libjpeg-turbo's TurboJPEG API (a C compiler and
libturbojpeg0-dev)."""
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(w, h, depth, color_type, raw_rows, interlace=0, extra=b""):
    raw = b"".join(b"\x00" + r for r in raw_rows)  # filter type 0 on every row
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, interlace))
    return out + extra + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# 16-bit grey 2x2: 0x1234 0xABCD / 0xFF00 0x00FF -> high bytes 0x12 0xAB / 0xFF 0x00.
write("grey16_2x2.png", png(2, 2, 16, 0, [struct.pack(">HH", 0x1234, 0xABCD), struct.pack(">HH", 0xFF00, 0x00FF)]))

# 1-bit grey 8x1: bits 10110010 -> 255 0 255 255 0 0 255 0.
write("grey1_8x1.png", png(8, 1, 1, 0, [bytes([0b10110010])]))

# Palette 3x1 with tRNS: entries red, green, blue; alphas 0, 128 (blue has none: 255).
plte = chunk(b"PLTE", b"\xff\x00\x00\x00\xff\x00\x00\x00\xff") + chunk(b"tRNS", b"\x00\x80")
write("palette_trns_3x1.png", png(3, 1, 8, 3, [b"\x00\x01\x02"], extra=plte))


# Adam7-interlaced RGB 3x3: pixel (y, x) = (10 y + x, 100 + x, 200 - y). Each
# pass holds the pixels at its (row, column) offsets and steps.
def adam7(w, h, pixel):
    passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]
    raw = b""
    for y0, x0, ys, xs in passes:
        xs_ = list(range(x0, w, xs))
        if not xs_:
            continue
        for y in range(y0, h, ys):
            raw += b"\x00" + b"".join(pixel(y, x) for x in xs_)
    return raw


pix = lambda y, x: bytes([10 * y + x, 100 + x, 200 - y])
ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 3, 8, 2, 0, 0, 1))
write("adam7_rgb_3x3.png", b"\x89PNG\r\n\x1a\n" + ihdr + chunk(b"IDAT", zlib.compress(adam7(3, 3, pix), 9))
      + chunk(b"IEND", b""))

# CMYK JPEG 16x8, quality 100: left half C,M,Y,K = 200,100,50,255, right half
# 255,255,255,128. Adobe's inverted inks decode to R = C K / 255:
# left (200, 100, 50), right (128, 128, 128), up to JPEG rounding.
C_SRC = r'''
#include <stdio.h>
#include <turbojpeg.h>
int main(int argc, char** argv) {
  unsigned char px[16 * 8 * 4];
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 16; ++x) {
      unsigned char* p = px + (y * 16 + x) * 4;
      if (x < 8) { p[0] = 200; p[1] = 100; p[2] = 50; p[3] = 255; }
      else { p[0] = 255; p[1] = 255; p[2] = 255; p[3] = 128; }
    }
  tjhandle tj = tjInitCompress();
  unsigned char* out = NULL;
  unsigned long size = 0;
  if (tjCompress2(tj, px, 16, 0, 8, TJPF_CMYK, &out, &size, TJSAMP_444, 100, 0) != 0) return 1;
  FILE* f = fopen(argv[1], "wb");
  fwrite(out, 1, size, f);
  fclose(f);
  tjFree(out);
  tjDestroy(tj);
  return 0;
}
'''
cc = shutil.which("cc") or shutil.which("gcc")
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "w.c")
    with open(src, "w") as f:
        f.write(C_SRC)
    exe = os.path.join(tmp, "w")
    subprocess.run([cc, src, "-o", exe, "-lturbojpeg"], check=True)
    subprocess.run([exe, os.path.join(HERE, "cmyk_16x8.jpg")], check=True)
print("wrote", sorted(f for f in os.listdir(HERE) if not f.endswith(".py")))

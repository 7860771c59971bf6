#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/):
small valid files of each format, so the fuzzers start from inputs that get
past the magic numbers and headers. Deterministic; rerun after changing it
and commit the output. Python standard library only (the JPEG seed is
written with stb_image_write through the C compiler when one is present)."""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- safetensors ---------------------------------------------------------
DT = {"F32": ("f", 4), "F64": ("d", 8), "I64": ("q", 8), "I32": ("i", 4), "I8": ("b", 1), "U8": ("B", 1),
      "BOOL": ("?", 1), "F16": ("e", 2), "BF16": ("H", 2)}


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values)."""
    header, body = {}, b""
    for name, dtype, shape, values in tensors:
        code, size = DT[dtype]
        raw = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the reference writer pads the header to 8 bytes
    return struct.pack("<Q", len(h)) + h + body


def seeds_safetensors():
    put("safetensors", "empty.safetensors", safetensors([]))
    put("safetensors", "f32_2x3.safetensors", safetensors([("w", "F32", [2, 3], [0.5, -1, 2, 3.25, 0, 1e-3])]))
    put("safetensors", "scalar_and_empty.safetensors",
        safetensors([("s", "F64", [], [3.0]), ("z", "F32", [0, 4], [])], {"note": "x"}))
    put("safetensors", "all_dtypes.safetensors", safetensors([
        ("a", "F32", [2], [1.0, 2.0]), ("b", "F64", [1], [1.5]), ("c", "I64", [2], [-1, 7]),
        ("d", "I32", [3], [1, 2, 3]), ("e", "I8", [2], [-5, 5]), ("f", "U8", [4], [0, 1, 254, 255]),
        ("g", "BOOL", [2], [True, False]), ("h", "F16", [2], [1.0, -2.0]), ("i", "BF16", [2], [0x3f80, 0xc000]),
    ], {"format": "pt", "k": "v"}))


# ---- checkpoint (safetensors + Ember's metadata) -------------------------
def seeds_checkpoint():
    rng = struct.pack("<QQ", 42, 128)
    base_meta = {
        "format": "ember-checkpoint/1", "ember_version": "0.1.0", "epoch": "2", "step": "40",
        "config": "model:\n  name: mlp\noptim:\n  lr: 0.1\n", "metrics_csv": "epoch,train_loss\n1,0.5\n2,0.25\n",
        "trainer": json.dumps({"best_metric": 0.25, "bad_epochs": 0}),
        "scheduler": json.dumps({"last_epoch": 2, "base_lr.0": 0.1}),
        "optimizer": json.dumps({"param_groups.0.lr": 0.1, "param_groups.0.momentum": 0.9,
                                 "param_groups.0.num_params": 2}),
    }
    tensors = [
        ("model.fc.weight", "F32", [2, 3], [0.1, 0.2, 0.3, -0.1, -0.2, -0.3]),
        ("model.fc.bias", "F32", [2], [0.0, 0.5]),
        ("optim.state.0.momentum_buffer", "F32", [2, 3], [0.0] * 6),
        ("optim.state.1.momentum_buffer", "F32", [2], [0.0, 0.0]),
        ("rng.global", "U8", [16], list(rng)),
    ]
    put("checkpoint", "sgd_momentum.ckpt", safetensors(tensors, base_meta))
    adam = dict(base_meta)
    adam["optimizer"] = json.dumps({"param_groups.0.lr": 0.001, "param_groups.0.betas.0": 0.9,
                                    "param_groups.0.num_params": 1, "param_groups.1.lr": 0.01,
                                    "param_groups.1.num_params": 1})
    adam["epoch"], adam["step"] = "0", "0"
    put("checkpoint", "adam_two_groups.ckpt", safetensors([
        ("model.w", "F32", [2], [1.0, 2.0]), ("model.b", "F32", [1], [0.5]),
        ("optim.state.0.step", "F32", [], [3.0]), ("optim.state.0.exp_avg", "F32", [2], [0.0, 0.1]),
        ("optim.state.1.exp_avg_sq", "F32", [1], [0.01])], adam))
    plain = dict(base_meta)
    plain["optimizer"], plain["scheduler"] = "{}", "{}"
    put("checkpoint", "no_optimizer_state.ckpt", safetensors([("model.w", "F32", [1], [1.0])], plain))


# ---- YAML config ---------------------------------------------------------
def seeds_config():
    cfg_dir = os.path.join(ROOT, "configs")
    for name in sorted(os.listdir(cfg_dir)):
        if name.endswith(".yaml"):
            shutil.copyfile(os.path.join(cfg_dir, name), os.path.join(CORPUS, "config", name))
    put("config", "anchors.yaml",
        "defaults: &d\n  lr: 0.01\n  weight_decay: 0.0\noptim:\n  <<: *d\n  name: sgd\nmodel:\n  name: mlp\n"
        "  hidden: [64, 32]\n")
    put("config", "flow.yaml", "{model: {name: cnn}, optim: {lr: 3e-4}, train: {epochs: 1}}\n")
    put("config", "empty.yaml", "")
    put("config", "quoted.yaml", "model:\n  name: \"mlp\"\nlog:\n  dir: 'runs/a b'\n# comment\n")
    # data.split_file's JSON (fuzz_config feeds every input to both parsers).
    put("config", "split.json", '{"train": [0, 5, 63, 2], "val": [1, 4]}')


# ---- IDX -----------------------------------------------------------------
def idx(code, shape, values, fmt):
    head = bytes([0, 0, code, len(shape)]) + b"".join(struct.pack(">I", s) for s in shape)
    return head + b"".join(struct.pack(">" + fmt, v) for v in values)


def seeds_idx():
    put("idx", "images_u8.idx", idx(0x08, [2, 3, 3], list(range(18)), "B"))
    put("idx", "labels_u8.idx", idx(0x08, [4], [0, 9, 3, 1], "B"))
    put("idx", "i8.idx", idx(0x09, [3], [-128, 0, 127], "b"))
    put("idx", "i16.idx", idx(0x0B, [2, 2], [-300, 300, 0, 1], "h"))
    put("idx", "i32.idx", idx(0x0C, [2], [-70000, 70000], "i"))
    put("idx", "f32.idx", idx(0x0D, [1, 2], [0.5, -2.0], "f"))
    put("idx", "f64.idx", idx(0x0E, [2], [1e100, -0.25], "d"))
    put("idx", "zero_records.idx", idx(0x08, [0, 28, 28], [], "B"))
    put("idx", "images_u8.idx.gz", gzip.compress(idx(0x08, [3, 2, 2], list(range(12)), "B"), mtime=0))


# ---- CSV (label column "label") -----------------------------------------
def seeds_csv():
    put("csv", "numeric.csv", "x1,x2,label\n0.5,1,0\n-1.25,2e-3,1\n3,4,1\n")
    put("csv", "named.csv", "label,height,weight\ncat,0.3,4\ndog,0.6,20\ncat,0.25,3.5\n")
    put("csv", "quoted.csv", "\"a\",\"label\"\n1,\"x\"\n2,\"y\"\n")
    put("csv", "crlf.csv", "f,label\r\n1,0\r\n2,1\r\n")
    put("csv", "one_row.csv", "label,v\n2,-0\n")


# ---- text ("label<TAB>text") ---------------------------------------------
def seeds_text():
    put("text", "reviews.tsv", "pos\tA good film, truly.\nneg\tbad acting and a dull plot\n\npos\tGreat!\n")
    put("text", "one.tsv", "a\tx y z\n")
    put("text", "utf8.tsv", b"fr\tcaf\xc3\xa9 cr\xc3\xa8me\nde\tStra\xc3\x9fe\n")


# ---- images (PNG, BMP, TGA, GIF, JPEG) -----------------------------------
def png(w, h, color_type, rows, palette=None):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + r for r in rows)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0))
    if palette:
        out += chunk(b"PLTE", palette)
    return out + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def bmp24(w, h, pixels):
    row = lambda y: b"".join(pixels[y * w + x] for x in range(w))
    stride = (3 * w + 3) & ~3
    data = b"".join(row(y) + b"\x00" * (stride - 3 * w) for y in range(h))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    return header + info + data


def tga(w, h, pixels, rle=False):
    head = struct.pack("<BBBHHBHHHHBB", 0, 0, 10 if rle else 2, 0, 0, 0, 0, 0, w, h, 24, 0)
    if not rle:
        return head + b"".join(pixels)
    body = b""
    for p in pixels:  # one run per pixel keeps it simple and valid
        body += b"\x80" + p
    return head + body


def gif(w, h, indices, palette):
    """GIF89a with a global colour table; LZW with a clear code every two
    pixels, so every code stays 3 bits wide (min code size 2)."""
    codes = []
    for i in range(0, len(indices), 2):
        codes += [4] + indices[i:i + 2]
    codes.append(5)
    bits, nbits, data = 0, 0, b""
    for c in codes:
        bits |= c << nbits
        nbits += 3
        while nbits >= 8:
            data += bytes([bits & 0xFF])
            bits >>= 8
            nbits -= 8
    if nbits:
        data += bytes([bits & 0xFF])
    out = b"GIF89a" + struct.pack("<HHBBB", w, h, 0x81, 0, 0) + palette
    out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0) + b"\x02" + bytes([len(data)]) + data + b"\x00"
    return out + b"\x3b"


def jpeg_seed(out_path):
    cc = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if not cc or not os.path.exists("/usr/include/stb/stb_image_write.h"):
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "w.c")
        with open(src, "w") as f:
            f.write('#define STB_IMAGE_WRITE_IMPLEMENTATION\n#include <stb/stb_image_write.h>\n'
                    'int main(int c, char** v) { unsigned char p[4*3*3];\n'
                    '  for (int i = 0; i < 36; ++i) p[i] = (unsigned char)(i * 7);\n'
                    '  return !stbi_write_jpg(v[1], 4, 3, 3, p, 80); }\n')
        exe = os.path.join(tmp, "w")
        subprocess.run([cc, "-O0", "-w", src, "-o", exe, "-lm"], check=True)
        subprocess.run([exe, out_path], check=True)
    return True


def seeds_image():
    rgb = [b"\x10\x20\x30", b"\xff\x00\x00", b"\x00\xff\x00", b"\x00\x00\xff", b"\x80\x80\x80", b"\xff\xff\xff"]
    put("image", "rgb_3x2.png", png(3, 2, 2, [b"".join(rgb[0:3]), b"".join(rgb[3:6])]))
    put("image", "grey_2x2.png", png(2, 2, 0, [b"\x00\xff", b"\x80\x40"]))
    put("image", "rgba_1x2.png", png(1, 2, 6, [b"\x01\x02\x03\x04", b"\xff\xfe\xfd\x00"]))
    put("image", "palette_2x1.png", png(2, 1, 3, [b"\x00\x01"], palette=b"\xff\x00\x00\x00\x00\xff"))
    put("image", "rgb_3x2.bmp", bmp24(3, 2, rgb))
    put("image", "rgb_3x2.tga", tga(3, 2, rgb))
    put("image", "rgb_3x2_rle.tga", tga(3, 2, rgb, rle=True))
    put("image", "2x2.gif", gif(2, 2, [0, 1, 2, 3], b"\x00\x00\x00\xff\x00\x00\x00\xff\x00\x00\x00\xff"))
    d = os.path.join(CORPUS, "image")
    if not jpeg_seed(os.path.join(d, "4x3.jpg")):
        print("make_seeds: no C compiler or stb_image_write.h; JPEG seed not written", file=sys.stderr)


def seeds_npy():
    # fuzz_npy's first byte picks the format: even for .npy, odd for .npz.
    src = os.path.join(ROOT, "tests", "data", "npy")
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), "rb") as f:
            put("npy", name, (b"\x01" if name.endswith(".npz") else b"\x00") + f.read())


def seeds_pytorch():
    # torch.save files from tests/data/gen_pt.py (Debian's torch 1.13), the
    # refused ones included; deep_nesting.pt (200 KB) is left to the tests.
    src = os.path.join(ROOT, "tests", "data", "pytorch")
    for name in ["checkpoint.pt", "linear_module.pt", "storage_out_of_range.pt", "huge_memo.pt",
                 "evil_os_system.pt", "checkpoint_legacy.pt", "linear_module_legacy.pt", "evil_legacy.pt"]:
        with open(os.path.join(src, name), "rb") as f:
            put("pytorch", name, f.read())


def seeds_onnx():
    # torch.onnx.export files from tests/data/gen_onnx.py (the small ones;
    # resnet18_narrow, 700 KB, is left to the tests).
    src = os.path.join(ROOT, "tests", "data", "onnx")
    for name in ["mlp.onnx", "cnn_bn.onnx", "lstm.onnx", "gru.onnx", "transformer_opset13.onnx"]:
        with open(os.path.join(src, name), "rb") as f:
            put("onnx", name, f.read())



def seeds_serve():
    # fuzz_serve: the first byte picks the parser (0 JSON, 1 binary extension, 2 CSV predict, 3 image predict).
    v2 = {"inputs": [{"name": "tokens", "shape": [2, 4], "datatype": "INT64", "data": [[1, 2, 3, 0], [4, 5, 6, 7]]},
                     {"name": "lengths", "shape": [2], "datatype": "INT64", "data": [3, 4]},
                     {"name": "x", "shape": [2, 3], "datatype": "FP32", "data": [0.5, -1, 2, 3, 4e-3, 1e30]}],
          "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}
    put("serve", "v2_json", b"\x00" + json.dumps(v2).encode())
    binary = {"inputs": [{"name": "tokens", "shape": [1, 6], "datatype": "INT64", "parameters": {"binary_data_size": 48}},
                         {"name": "lengths", "shape": [1], "datatype": "INT64", "data": [6]},
                         {"name": "x", "shape": [1, 3], "datatype": "FP32", "parameters": {"binary_data_size": 12}}]}
    head = json.dumps(binary).encode()
    tail = struct.pack("<6q", 1, 2, 3, 4, 5, 6) + struct.pack("<3f", 1, 2, 3)
    put("serve", "v2_binary", b"\x01" + struct.pack("<H", len(head)) + head + tail)
    put("serve", "csv_rows", b"\x02" + b"a,b,c\n" + b",".join(b"%d" % i for i in range(16)) + b"\n")
    put("serve", "image_png", b"\x03" + png(4, 4, 0, [bytes([16 * r + c for c in range(4)]) for r in range(4)]))



def main():
    for t in ["safetensors", "checkpoint", "config", "idx", "csv", "text", "image", "npy", "pytorch", "onnx", "serve"]:
        # Overwrites its own files only: former findings live beside them as
        # regression seeds.
        os.makedirs(os.path.join(CORPUS, t), exist_ok=True)
    seeds_safetensors()
    seeds_checkpoint()
    seeds_config()
    seeds_idx()
    seeds_csv()
    seeds_text()
    seeds_image()
    seeds_npy()
    seeds_pytorch()
    seeds_onnx()
    seeds_serve()
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        print("%-12s %d seeds" % (t, len(files)))


if __name__ == "__main__":
    main()

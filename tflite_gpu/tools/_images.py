"""Images for the evaluation tools: listing a folder, decoding (Pillow, or .npy and
binary PPM/PGM without it), and TFLite's preprocessing (central crop, legacy
bilinear resize, normalisation or quantization into the model's input)."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

import numpy as np

from .flags import FlagError

__all__ = ["IMAGE_EXTENSIONS", "list_images", "load_image", "central_crop", "resize_bilinear",
           "input_geometry", "preprocess_image"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".ppm", ".pgm",
                    ".pnm", ".tif", ".tiff", ".npy")


# --------------------------------------------------------------------------- files

def list_images(folder: str) -> List[str]:
    if not os.path.isdir(folder):
        raise FlagError(f"image folder not found: {folder!r}")
    names = sorted(n for n in os.listdir(folder)
                   if n.lower().endswith(IMAGE_EXTENSIONS)
                   and os.path.isfile(os.path.join(folder, n)))
    return [os.path.join(folder, n) for n in names]


def _read_pnm(path: str) -> np.ndarray:
    """Binary PPM (P6) / PGM (P5), 8-bit, without Pillow."""
    with open(path, "rb") as f:
        data = f.read()
    tokens: List[bytes] = []
    pos = 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while pos < len(data) and data[pos:pos + 1] not in (b"\n", b"\r"):
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        tokens.append(data[start:pos])
    pos += 1  # the single whitespace after maxval
    magic, w, h, maxval = tokens[0], int(tokens[1]), int(tokens[2]), int(tokens[3])
    if magic not in (b"P5", b"P6") or maxval > 255:
        raise ValueError(f"{path}: only 8-bit binary P5/P6 images are supported without Pillow")
    c = 3 if magic == b"P6" else 1
    arr = np.frombuffer(data, dtype=np.uint8, count=w * h * c, offset=pos)
    return arr.reshape(h, w, c)


def load_image(path: str) -> np.ndarray:
    """Decode to an HxWx3 uint8 RGB array (Pillow; .npy and P5/P6 without it)."""
    low = path.lower()
    if low.endswith(".npy"):
        arr = np.load(path)
    else:
        try:
            from PIL import Image
        except ImportError:
            Image = None
        if Image is not None:
            with Image.open(path) as im:
                arr = np.asarray(im.convert("RGB"))
        elif low.endswith((".ppm", ".pgm", ".pnm")):
            arr = _read_pnm(path)
        else:
            raise RuntimeError(f"decoding {os.path.basename(path)} needs Pillow "
                               "(pip install pillow); .npy and binary .ppm/.pgm work without")
    arr = np.asarray(arr)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"{path}: expected an HxW or HxWxC image, got shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    elif arr.shape[2] == 4:
        arr = arr[:, :, :3]
    if arr.dtype != np.uint8:
        arr = np.clip(np.round(arr.astype(np.float64)), 0, 255).astype(np.uint8)
    return arr


# --------------------------------------------------------------------------- preprocessing

def central_crop(img: np.ndarray, fraction: float) -> np.ndarray:
    if fraction <= 0 or fraction >= 1:
        return img
    h, w = img.shape[:2]
    ch = max(1, int(round(h * fraction)))
    cw = max(1, int(round(w * fraction)))
    y0 = (h - ch) // 2
    x0 = (w - cw) // 2
    return img[y0:y0 + ch, x0:x0 + cw]


def resize_bilinear(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """TF legacy bilinear resize (align_corners=False, half_pixel_centers=False)."""
    img = np.asarray(img, dtype=np.float32)
    in_h, in_w = img.shape[:2]
    if (in_h, in_w) == (out_h, out_w):
        return img.copy()
    ys = np.arange(out_h, dtype=np.float64) * (in_h / out_h)
    xs = np.arange(out_w, dtype=np.float64) * (in_w / out_w)
    y0 = np.floor(ys).astype(np.int64)
    x0 = np.floor(xs).astype(np.int64)
    y1 = np.minimum(y0 + 1, in_h - 1)
    x1 = np.minimum(x0 + 1, in_w - 1)
    dy = (ys - y0).astype(np.float32)[:, None, None]
    dx = (xs - x0).astype(np.float32)[None, :, None]
    top = img[y0][:, x0] * (1 - dx) + img[y0][:, x1] * dx
    bot = img[y1][:, x0] * (1 - dx) + img[y1][:, x1] * dx
    return top * (1 - dy) + bot * dy


def input_geometry(detail: Dict[str, Any]) -> Tuple[int, int, int]:
    shape = [int(s) for s in detail["shape"]]
    if len(shape) == 4:
        return shape[1], shape[2], shape[3]
    if len(shape) == 3:
        return shape[0], shape[1], shape[2]
    raise ValueError(f"expected an image input [1,H,W,C], got shape {shape}")


def preprocess_image(img: np.ndarray, detail: Dict[str, Any], crop_fraction: float = 0.875,
                     mean: float = 127.5, std: float = 127.5) -> np.ndarray:
    """HxWx3 uint8 -> the input tensor (with batch dimension) for ``detail``."""
    h, w, c = input_geometry(detail)
    x = central_crop(np.asarray(img), crop_fraction)
    x = resize_bilinear(x, h, w)
    if c == 1:
        x = (x[..., 0:1] * 0.299 + x[..., 1:2] * 0.587 + x[..., 2:3] * 0.114)
    elif c != 3:
        raise ValueError(f"model input has {c} channels; images give 1 or 3")
    dt = np.dtype(detail["dtype"])
    shape = tuple(int(s) for s in detail["shape"])
    if dt.kind == "f":
        return ((x - mean) / std).astype(dt).reshape(shape)
    if dt in (np.uint8, np.int8):
        q = detail.get("quantization") or (0.0, 0)
        scale, zp = float(q[0]), int(q[1])
        info = np.iinfo(dt)
        if scale > 0:
            v = np.round((x - mean) / std / scale) + zp
        else:
            v = np.round(x) - (128 if dt == np.int8 else 0)
        return np.clip(v, info.min, info.max).astype(dt).reshape(shape)
    raise ValueError(f"unsupported image input type {dt}")

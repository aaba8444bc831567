"""The encoders of :mod:`attn_studio.animation`, one per format, each writing a stream of checked frames to a
temporary file: MP4 and WebM through imageio-ffmpeg's bundled ffmpeg, GIF with one global palette, APNG
from Pillow's compressed frames. No Qt."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .checks import MAX_GIF_FPS, AnimationError

if TYPE_CHECKING:  # the frames each encoder reads, checked as they come (the writer's)
    from . import _checked_frames


def _even(frame: np.ndarray) -> np.ndarray:
    """The frame with even sides: an odd side gains one row or column of its edge's colour."""
    h, w = frame.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return frame
    return np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")


def _held_frames(fps: float, hold: float) -> int:
    return int(round(hold * fps))


def _png_bytes(frame: np.ndarray, target=None) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    # compress_level 6 is PNG's usual balance; figures (flat colours) compress well at it.
    Image.fromarray(frame, "RGB").save(buffer, format="PNG", compress_level=6)
    data = buffer.getvalue()
    if target is not None:
        Path(target).write_bytes(data)
    return data


# ---------------------------------------------------------------------------------------
# MP4 and WebM: imageio-ffmpeg's bundled ffmpeg


def _ffmpeg(frames: _checked_frames, tmp, *, fps, hold, codec, container, params) -> int:
    import imageio_ffmpeg

    writer = None
    last = None
    try:
        for frame in frames:
            frame = _even(frame)
            if writer is None:
                h, w = frame.shape[:2]
                # macro_block_size=1: the sides are made even above; imageio-ffmpeg would
                # otherwise stretch the frame to a multiple of 16.
                writer = imageio_ffmpeg.write_frames(
                    str(tmp), (w, h), pix_fmt_in="rgb24", pix_fmt_out="yuv420p", fps=fps,
                    codec=codec, quality=None, macro_block_size=1, ffmpeg_log_level="error",
                    output_params=["-f", container, *params])
                writer.send(None)
            writer.send(frame.tobytes())
            last = frame
        if frames.cancelled:
            return 0
        if last is None:
            raise AnimationError("an animation needs at least one frame")
        for _ in range(_held_frames(fps, hold)):
            writer.send(last.tobytes())
        writer.close()
        writer = None
        return frames.count
    finally:
        if writer is not None:
            writer.close()


def _mp4(frames, tmp, *, fps, hold, loop):
    # CRF 20: figures stay crisp (text, 1 px grid lines); +faststart puts the index first so
    # a browser or slide starts playing before the whole file has arrived. The High profile (the
    # level follows from the frame size) is what PowerPoint, Keynote and browsers decode.
    return _ffmpeg(frames, tmp, fps=fps, hold=hold, codec="libx264", container="mp4",
                   params=["-crf", "20", "-preset", "veryfast", "-movflags", "+faststart", "-profile:v", "high"])


def _webm(frames, tmp, *, fps, hold, loop):
    # Constant quality (-b:v 0 with a CRF); "-deadline good -cpu-used 4" keeps VP9 to a few
    # times real time on two cores.
    return _ffmpeg(frames, tmp, fps=fps, hold=hold, codec="libvpx-vp9", container="webm",
                   params=["-crf", "32", "-b:v", "0", "-deadline", "good", "-cpu-used", "4",
                           "-row-mt", "1"])


# ---------------------------------------------------------------------------------------
# GIF: one palette over the whole animation


# Pixels sampled from each frame to build the palette (a stride over rows and columns):
# a figure's colours are in large flat areas, so every other pixel misses none of them.
_PALETTE_STRIDE = 2
_PALETTE_SAMPLE_LIMIT = 4_000_000
_GIF_RAW_BUDGET = 512 << 20  # bytes of frames kept uncompressed while a GIF waits for its palette


def _gif(frames: _checked_frames, tmp, *, fps, hold, loop):
    from PIL import GifImagePlugin, Image

    if fps > MAX_GIF_FPS:
        raise AnimationError(f"a GIF plays at most {MAX_GIF_FPS:g} frames a second (browsers slow faster ones "
                             f"down), not {fps:g}; write .mp4 or .webm for that")
    stored = []
    samples = []
    sampled = 0
    raw_bytes = 0
    shape = None
    for frame in frames:
        shape = frame.shape
        # Kept until the palette is known: as they are up to a memory budget (compressing and
        # decompressing cost a third of a GIF's time), compressed past it (a figure compresses 20–100×).
        if raw_bytes + frame.nbytes <= _GIF_RAW_BUDGET:
            stored.append(frame.copy())  # a copy: a caller may draw the next frame into the same array
            raw_bytes += frame.nbytes
        else:
            stored.append(zlib.compress(frame.tobytes(), 1))
        sample = frame[::_PALETTE_STRIDE, ::_PALETTE_STRIDE].reshape(-1, 3)
        samples.append(sample)
        sampled += len(sample)
        if sampled > _PALETTE_SAMPLE_LIMIT:  # thin the samples out, keep every frame in
            samples = [s[::2] for s in samples]
            sampled = sum(len(s) for s in samples)
    if frames.cancelled:
        return 0
    if not stored:
        raise AnimationError("an animation needs at least one frame")
    palette = _global_palette(np.concatenate(samples))
    nearest = _NearestColour(palette)
    h, w = shape[:2]
    # The file is written here, frame by frame, rather than by Pillow's save_all, which would
    # merge two identical frames into one (the frame count would no longer be the one asked
    # for) and give every frame after the first a colour table of its own.
    header = b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0) + palette.tobytes()
    if loop:
        header += b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00"
    with open(tmp, "wb") as out:
        out.write(header)
        shown = 0  # hundredths of a second shown so far: delays rounded without drifting
        for index, data in enumerate(stored):
            frame = data if isinstance(data, np.ndarray) else np.frombuffer(zlib.decompress(data), np.uint8).reshape(h, w, 3)
            image = Image.fromarray(nearest(frame), "P")
            image.putpalette(palette.tobytes())
            end = (index + 1) / fps + (hold if index == len(stored) - 1 else 0.0)
            delay = max(1, int(round(end * 100)) - shown)
            shown += delay
            # disposal 1: each frame is drawn whole over the last (nothing is left to show through).
            for part in GifImagePlugin.getdata(image, (0, 0), duration=delay * 10, disposal=1):
                out.write(part)
        out.write(b";")
    return len(stored)


def _pack(pixels: np.ndarray) -> np.ndarray:
    """RGB triples as one 24-bit number each (a colour's key)."""
    return (pixels[..., 0].astype(np.uint32) << 16) | (pixels[..., 1].astype(np.uint32) << 8) | pixels[..., 2]


def _global_palette(pixels: np.ndarray) -> np.ndarray:
    """The animation's one palette (``256×3`` ``uint8``): every colour when there are at most 256, else
    median cut over the colours, each weighted by the square root of how often it appears (so a
    colour bar's gradient, a few pixels of each colour, keeps its steps beside the white page)."""
    from PIL import Image

    colours, counts = np.unique(_pack(pixels), return_counts=True)
    rgb_of = lambda keys: np.stack([(keys >> 16) & 255, (keys >> 8) & 255, keys & 255], axis=1).astype(np.uint8)
    if len(colours) <= 256:
        palette = rgb_of(colours)
    else:
        weights = np.ceil(np.sqrt(counts)).astype(np.int64)
        weighted = np.repeat(rgb_of(colours), weights, axis=0)
        strip = Image.fromarray(weighted.reshape(1, -1, 3), "RGB")
        quantised = strip.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        palette = np.asarray(quantised.getpalette()[: 256 * 3], np.uint8).reshape(-1, 3)
        # The page's white and the text's black stay exact whatever median cut averaged them with.
        for colour in ((255, 255, 255), (0, 0, 0)):
            key = (colour[0] << 16) | (colour[1] << 8) | colour[2]
            if np.isin(key, colours) and not (palette == colour).all(axis=1).any():
                nearest = int(np.argmin(((palette.astype(int) - colour) ** 2).sum(axis=1)))
                palette[nearest] = colour
    out = np.zeros((256, 3), np.uint8)
    out[: len(palette)] = palette
    return out


class _NearestColour:
    """Each 24-bit colour's index of its nearest palette colour, looked up in a table of every colour
    (16 MB), filled as colours are first seen: exact nearest (Pillow's quick lookup maps a near-white to
    white's neighbour), and a frame costs one lookup per pixel instead of a sort of its pixels."""

    def __init__(self, palette: np.ndarray):
        self.palette = palette.astype(np.int32)
        self.table = np.zeros(1 << 24, np.uint8)
        self.known = np.zeros(1 << 24, bool)

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        keys = _pack(frame).reshape(-1)
        new = keys[~self.known[keys]]
        if new.size:
            new = np.unique(new)
            rgb = np.stack([(new >> 16) & 255, (new >> 8) & 255, new & 255], axis=1).astype(np.int32)
            for start in range(0, len(new), 4096):  # bounded memory: 4096 colours × 256 at a time
                chunk = rgb[start:start + 4096]
                dist = ((chunk[:, None, :] - self.palette[None, :, :]) ** 2).sum(axis=2)
                self.table[new[start:start + 4096]] = dist.argmin(axis=1).astype(np.uint8)
            self.known[new] = True
        return self.table[keys].reshape(frame.shape[:2])


# ---------------------------------------------------------------------------------------
# APNG: written frame by frame (Pillow compresses each frame's pixels)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png_chunks(png: bytes):
    pos = 8
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        yield kind, png[pos + 8:pos + 8 + length]
        pos += 12 + length


def _apng(frames: _checked_frames, tmp, *, fps, hold, loop):
    # Each frame is compressed by Pillow as a PNG of its own; its IDAT data becomes the
    # APNG's IDAT (first frame) or fdAT chunks. Frames stream to disk, none is kept.
    sequence = 0
    count = 0
    # A frame's delay is a fraction num/den of a second; 1/fps as num/1000 ms is exact enough.
    delay_ms = int(round(1000.0 / fps))
    with open(tmp, "r+b") as out:
        actl_at = None
        last_fctl_at = last_fctl_sequence = None
        for frame in frames:
            png = _png_bytes(frame)
            chunks = list(_png_chunks(png))
            h, w = frame.shape[:2]
            if count == 0:
                out.write(png[:8])
                for kind, data in chunks:
                    if kind == b"IHDR":
                        out.write(_chunk(kind, data))
                actl_at = out.tell()
                out.write(_chunk(b"acTL", struct.pack(">II", 0, 0 if loop else 1)))
            last_fctl_at, last_fctl_sequence = out.tell(), sequence
            out.write(_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, w, h, 0, 0, delay_ms, 1000, 0, 0)))
            sequence += 1
            for kind, data in chunks:
                if kind != b"IDAT":
                    continue
                if count == 0:
                    out.write(_chunk(b"IDAT", data))
                else:
                    out.write(_chunk(b"fdAT", struct.pack(">I", sequence) + data))
                    sequence += 1
            count += 1
        if frames.cancelled:
            return 0
        if count == 0:
            raise AnimationError("an animation needs at least one frame")
        out.write(_chunk(b"IEND", b""))
        # The frame count is known only now: rewrite acTL (same length) and the last frame's
        # delay, lengthened by the hold.
        out.seek(actl_at)
        out.write(_chunk(b"acTL", struct.pack(">II", count, 0 if loop else 1)))
        if hold > 0:
            out.seek(last_fctl_at)
            out.write(_chunk(b"fcTL", struct.pack(">IIIIIHHBB", last_fctl_sequence,
                                                  w, h, 0, 0, min(65535, int(round(delay_ms + hold * 1000))),
                                                  1000, 0, 0)))
    return count


_ENCODERS = {".gif": _gif, ".mp4": _mp4, ".webm": _webm, ".png": _apng}

"""Figures that move: write a sequence of page figures as GIF, MP4, WebM or APNG. No Qt.

The frames are RGB images (``H×W×3`` ``uint8`` NumPy arrays, all the same size) that the
caller draws: the page figure at each value of a sweep, a training run's panel every k steps,
a lecture's pages. This module only encodes them, the way slides and browsers play them:

- GIF: one palette for the whole animation (built from every frame's colours), so a colour
  never flickers from frame to frame; looping unless ``loop=False``.
- MP4: H.264 in yuv420p with even sides (an odd side is padded by one row or column of the
  edge's colour, never stretched), which PowerPoint, Keynote, Google Slides and browsers play.
- WebM: VP9 in yuv420p, same sides.
- APNG (``.png``): lossless RGB frames, looping unless ``loop=False``.

The encoders are imageio-ffmpeg's own bundled ffmpeg binary (no system ffmpeg needed) for
MP4 and WebM, and Pillow for GIF and for each APNG frame's compressed data.

Every file is written atomically: into a temporary file beside the target (named as
:mod:`attn_studio.safe_files` names them, so a killed export's leftover is cleared at the
next start), then renamed over it. An exception, or ``cancelled()`` returning True, removes
the temporary file and leaves nothing (and any older file of that name untouched).
"""

from __future__ import annotations

import io
import math
import os
import re
import shutil
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .safe_files import usual_mode

#: The most frames one animation may have (the figure frames; a held last frame is extra).
MAX_FRAMES = 1000
#: The formats :func:`write_animation` writes, by the target's suffix.
ANIMATION_SUFFIXES = (".gif", ".mp4", ".webm", ".png")
#: The formats :func:`write_frames` writes, one file per frame.
FRAME_FORMATS = ("png", "svg")
#: Largest frame rate and hold accepted: beyond them nothing plays them as asked.
MAX_FPS = 120.0
MAX_HOLD = 60.0
#: Browsers show a GIF frame for at least 2/100 s: a faster GIF would play slower than asked.
MAX_GIF_FPS = 50.0


class AnimationError(ValueError):
    """An animation that cannot be written, with the reason in one line."""


def check_fps(fps) -> float:
    """``fps`` as a float if it is a usable frame rate (0 < fps ≤ 120), else ``AnimationError``."""
    try:
        value = float(fps)
    except (TypeError, ValueError):
        raise AnimationError(f"the frame rate must be a number, not {fps!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise AnimationError(f"the frame rate must be above 0, not {fps!r}")
    if value > MAX_FPS:
        raise AnimationError(f"the frame rate is at most {MAX_FPS:g} frames a second, not {value:g}")
    return value


def check_hold(hold) -> float:
    """``hold`` (seconds the last frame stays) as a float in 0 … 60, else ``AnimationError``."""
    try:
        value = float(hold)
    except (TypeError, ValueError):
        raise AnimationError(f"the hold must be a number of seconds, not {hold!r}") from None
    if not math.isfinite(value) or value < 0:
        raise AnimationError(f"the hold must be 0 seconds or more, not {hold!r}")
    if value > MAX_HOLD:
        raise AnimationError(f"the hold is at most {MAX_HOLD:g} seconds, not {value:g}")
    return value


def check_frame_count(count: int) -> int:
    """``count`` if it is between 1 and :data:`MAX_FRAMES`, else ``AnimationError``."""
    if count < 1:
        raise AnimationError("an animation needs at least one frame")
    if count > MAX_FRAMES:
        raise AnimationError(f"an animation has at most {MAX_FRAMES} frames, not {count}")
    return count


def check_target(path) -> Path:
    """The target of :func:`write_animation` if it can be written, else ``AnimationError``.

    Its suffix must be one of :data:`ANIMATION_SUFFIXES`, its folder must exist and be
    writable, and the path itself must not be a folder or anything but a regular file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in ANIMATION_SUFFIXES:
        raise AnimationError(f"{path.name or path}: an animation is written as "
                             f"{', '.join(ANIMATION_SUFFIXES)}, not {suffix or 'a name without a suffix'}")
    _check_folder(path.parent if str(path.parent) else Path("."), path)
    if path.exists() and not path.is_file():
        raise AnimationError(f"{path} exists and is not a file")
    return path


def _check_folder(folder: Path, shown: Path) -> None:
    if not folder.is_dir():
        raise AnimationError(f"cannot write {shown}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise AnimationError(f"cannot write {shown}: the folder {folder} is not writable")


def write_animation(frames: Iterable[np.ndarray], path, *, fps: float, hold: float = 0.0,
                    loop: bool = True, total: int | None = None,
                    progress: Callable[[int, int | None], None] | None = None,
                    cancelled: Callable[[], bool] | None = None) -> int:
    """Write ``frames`` as an animation at ``path``; returns how many frames were written.

    ``frames`` is any iterable of ``H×W×3`` ``uint8`` arrays of one size (read once, lazily:
    a generator that draws each figure on demand is the usual caller). The suffix of
    ``path`` picks the format (``.gif``, ``.mp4``, ``.webm``, ``.png`` for APNG). ``fps`` is
    the frame rate; the last frame stays on ``hold`` seconds more (GIF and APNG lengthen its
    delay, MP4 and WebM repeat it). ``loop`` makes a GIF or APNG play forever (MP4 and WebM
    loop in the player). ``total``, when known, is checked against :data:`MAX_FRAMES` before
    any frame is drawn and passed to ``progress(i, total)``, called after each frame ``i``
    (1-based). ``cancelled()`` is asked before each frame; when it returns True the export
    stops, nothing is written and 0 is returned.

    Bad input (a suffix, folder, frame rate, hold or frame count refused; frames of different
    sizes or not RGB ``uint8``; no frames at all) raises :class:`AnimationError` and writes
    nothing; so does any other exception, which propagates after the temporary file is gone.
    """
    path = check_target(path)
    fps = check_fps(fps)
    hold = check_hold(hold)
    if total is not None:
        check_frame_count(int(total))
    encoder = _ENCODERS[path.suffix.lower()]
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        stream = _checked_frames(frames, total, progress, cancelled)
        count = encoder(stream, tmp, fps=fps, hold=hold, loop=loop)
        if stream.cancelled:
            raise _Cancelled
        _give_usual_mode(tmp, path)
        _sync(tmp)
        os.replace(tmp, path)
        return count
    except _Cancelled:
        _remove(tmp)
        return 0
    except BaseException:
        _remove(tmp)
        raise


def write_frames(frames: Iterable, folder, fmt: str, *, total: int | None = None,
                 progress: Callable[[int, int | None], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, stem: str = "frame") -> list[Path]:
    """Write each frame as its own numbered file in ``folder``; returns the files written.

    ``fmt`` is ``"png"`` (each frame an ``H×W×3`` ``uint8`` array) or ``"svg"`` (each frame
    the SVG document's text or bytes, drawn by the caller so that text stays text). The files
    are ``frame_0001.png`` … (``stem`` names them), numbered from 1 with as many digits as the
    count needs (at least 4). They are first written into a temporary folder beside
    ``folder`` and moved in only when every frame is done, so a failure or ``cancelled()``
    leaves ``folder`` as it was (an empty list is returned when cancelled).
    """
    fmt = str(fmt).lower().lstrip(".")
    if fmt not in FRAME_FORMATS:
        raise AnimationError(f"frames are written as {' or '.join(FRAME_FORMATS)}, not {fmt!r}")
    if not stem or any(c in stem for c in "/\\\0") or stem.startswith("."):
        raise AnimationError(f"{stem!r} cannot name frame files")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise AnimationError(f"{folder} exists and is not a folder")
    parent = folder.parent if str(folder.parent) else Path(".")
    _check_folder(parent, folder)
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise AnimationError(f"cannot write into {folder}: it is not writable")
    if total is not None:
        check_frame_count(int(total))
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name or 'frames'}.", suffix=".tmp", dir=parent))
    try:
        stream = _checked_frames(frames, total, progress, cancelled, svg=(fmt == "svg"))
        written = []
        for index, frame in enumerate(stream, start=1):
            name = staging / f"{stem}_{index:04d}.{fmt}"
            if fmt == "svg":
                name.write_bytes(frame.encode("utf-8") if isinstance(frame, str) else bytes(frame))
            else:
                _png_bytes(frame, name)
            written.append(name.name)
        if stream.cancelled:
            raise _Cancelled
        if len(written) >= 10_000:  # keep the numbers sortable as text
            raise AnimationError(f"at most {MAX_FRAMES} frames")
        if not folder.exists():
            os.replace(staging, folder)
        else:
            for name in written:
                os.replace(staging / name, folder / name)
            shutil.rmtree(staging, ignore_errors=True)
            # Frames of a longer earlier export of the same name would read as this one's: gone.
            numbered = re.compile(rf"^{re.escape(stem)}_\d{{4,}}\.{fmt}$")
            for old in folder.iterdir():
                if numbered.match(old.name) and old.name not in written and old.is_file():
                    old.unlink()
        return [folder / name for name in written]
    except _Cancelled:
        shutil.rmtree(staging, ignore_errors=True)
        return []
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------------------
# Frames in, checked


class _Cancelled(Exception):
    pass


class _checked_frames:
    """The caller's frames, each checked (shape, dtype, one size), counted and reported."""

    def __init__(self, frames, total, progress, cancelled, svg=False):
        self._frames = iter(frames)
        self._total = total
        self._progress = progress
        self._cancelled = cancelled
        self._svg = svg
        self.size = None
        self.count = 0
        self.cancelled = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._cancelled is not None and self._cancelled():
            self.cancelled = True
            raise StopIteration
        frame = next(self._frames)
        if self.count >= MAX_FRAMES:
            raise AnimationError(f"an animation has at most {MAX_FRAMES} frames")
        if self._svg:
            if not isinstance(frame, (str, bytes, bytearray)):
                raise AnimationError(f"an SVG frame is the document's text, not {type(frame).__name__}")
        else:
            frame = np.asarray(frame)
            if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
                raise AnimationError(f"a frame is an H×W×3 uint8 image, not {frame.dtype} of shape {frame.shape}")
            if frame.shape[0] < 1 or frame.shape[1] < 1:
                raise AnimationError("a frame is at least one pixel")
            if self.size is None:
                self.size = frame.shape[:2]
            elif frame.shape[:2] != self.size:
                raise AnimationError(f"frame {self.count + 1} is {frame.shape[1]}×{frame.shape[0]}, the first was "
                                     f"{self.size[1]}×{self.size[0]}: every frame has one size")
            frame = np.ascontiguousarray(frame)
        self.count += 1
        if self._progress is not None:
            self._progress(self.count, self._total)
        return frame


def _give_usual_mode(tmp, path: Path) -> None:
    # mkstemp makes a private file (0600); an exported animation is an ordinary file.
    os.chmod(tmp, usual_mode(path))


def _sync(tmp) -> None:
    # On disk before the rename, so that a crash never leaves a renamed but empty file.
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())


def _remove(tmp) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


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

"""File helpers shared by every format: transparent compression and atomic output."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

Source = "str | os.PathLike[str] | IO[bytes] | IO[str]"

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
}


def compression_of(head: bytes, name: str = "") -> str | None:
    """Return ``gzip``, ``bz2``, ``xz`` or ``None`` from the first bytes (or the suffix)."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def strip_compression_suffix(name: str) -> str:
    """``trace.swf.gz`` -> ``trace.swf``: the suffix that names the format."""
    for suffix in (".gz", ".bz2", ".xz"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def source_name(source: object) -> str:
    """A printable name for a path or an open file, used in error messages."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def open_binary(source: str | os.PathLike[str] | BinaryIO) -> BinaryIO:
    """Open a path (or wrap an open binary file) for reading, decompressing by content.

    Compression is detected from the magic bytes, never from the file name, so a
    ``.swf`` that is really gzipped still reads.
    """
    if isinstance(source, (str, os.PathLike)):
        raw: BinaryIO = open(source, "rb")
    else:
        raw = source
    peek = _peek(raw, 6)
    kind = compression_of(peek)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.BZ2File(raw, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw, "rb")  # type: ignore[return-value]
    return raw


def _peek(raw: BinaryIO, n: int) -> bytes:
    if hasattr(raw, "peek"):
        return raw.peek(n)[:n]  # type: ignore[attr-defined]
    if raw.seekable():
        pos = raw.tell()
        head = raw.read(n)
        raw.seek(pos)
        return head
    raise TypeError("cannot sniff a non-seekable stream without peek()")


def read_head(source: str | os.PathLike[str] | BinaryIO, size: int = 65536) -> bytes:
    """The first ``size`` decompressed bytes of a file (for format sniffing)."""
    if isinstance(source, (str, os.PathLike)):
        with open_binary(source) as fh:
            return fh.read(size)
    fh = open_binary(source)
    if fh is source and hasattr(source, "peek"):
        return source.peek(size)[:size]  # type: ignore[attr-defined]
    pos = source.tell()
    data = fh.read(size)
    source.seek(pos)
    return data


def open_text(source: str | os.PathLike[str] | BinaryIO, encoding: str = "utf-8") -> IO[str]:
    """Open for reading text, decompressing by content; newlines are kept as they are."""
    return io.TextIOWrapper(open_binary(source), encoding=encoding, newline="")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], text: bool = True) -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    A failure (an exception, a kill) never leaves a half-written file where a good one
    was. The suffix of ``path`` picks the compression: ``.gz``, ``.bz2``, ``.xz``.
    With ``path == "-"`` the data goes to standard output instead.
    """
    if os.fspath(path) == "-":
        import sys

        yield sys.stdout if text else sys.stdout.buffer
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        name = target.name
        if name.endswith(".gz"):
            # mtime=0 keeps gzip output byte-for-byte deterministic.
            raw: IO[bytes] = gzip.GzipFile(tmp, "wb", mtime=0)
        elif name.endswith(".bz2"):
            raw = bz2.BZ2File(tmp, "wb")
        elif name.endswith(".xz"):
            raw = lzma.LZMAFile(tmp, "wb")
        else:
            raw = open(tmp, "wb")
        with raw:
            if text:
                with io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as fh:
                    yield fh
            else:
                yield raw
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def open_output(path: str | os.PathLike[str], text: bool = True) -> IO:
    """Open ``path`` for writing, compressing by suffix (``.gz``, ``.bz2``, ``.xz``).

    gzip output is written with ``mtime=0`` so equal data gives equal bytes. Text mode
    writes UTF-8 with ``\\n`` newlines. (Atomic replacement of the target is done by
    :func:`schedlab.write`, which hands writers a temporary path.)
    """
    name = os.fspath(path)
    if name.endswith(".gz"):
        raw: IO[bytes] = gzip.GzipFile(name, "wb", mtime=0)
    elif name.endswith(".bz2"):
        raw = bz2.BZ2File(name, "wb")
    elif name.endswith(".xz"):
        raw = lzma.LZMAFile(name, "wb")
    else:
        raw = open(name, "wb")
    if text:
        return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
    return raw

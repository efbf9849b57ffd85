"""File input and output shared by every format: the public I/O layer for plugins.

Readers and writers, built-in or third-party, use these helpers so that every
format gets the same behaviour for free:

* **Transparent decompression** (:func:`open_binary`): gzip, bzip2 and xz are
  recognised by their magic bytes, never by the file name. A truncated or corrupt
  compressed file raises :class:`~schedlab.errors.FormatError` naming the file
  (never ``EOFError``, ``zlib.error``, ``lzma.LZMAError`` or a bare ``OSError``).
* **Line ends and byte-order marks** (``normalize=True``, :func:`normalize_text`):
  a leading UTF-8 BOM is dropped and CRLF and lone CR line ends become LF, as
  Python's universal newlines do, so a line-based reader splitting on ``\\n`` reads
  a Windows or classic-Mac file exactly like a Unix one. Line numbers are those of
  the original file (a CRLF pair is one line end).
* **Sniffing** (:func:`read_head`): the first decompressed, normalized bytes.
  A pipe, a named pipe or a device (what can be read only once) is opened once:
  the bytes read for sniffing are kept and :func:`open_binary` of the same path
  reads them again before the rest, without opening it a second time.
* **Atomic output** (:func:`staged_output`, used by :func:`schedlab.write`): the
  writer writes into a hidden ``.NAME.XXXX.part`` beside the target, renamed into
  place only on success. Parts left behind by a killed run are removed on the next
  write of the same target (a part still being written, whose writer holds its
  lock, is left alone). Errors name the target the user gave, never the part.
* **Compressed output** (:func:`open_output`): by suffix (``.gz``, ``.bz2``,
  ``.xz``), gzip with a zero timestamp so equal data gives equal bytes.

This module is public and stable: ``from schedlab.io import open_binary``.
(``schedlab._io``, its former private name, remains as an alias for now.)
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import shutil
import stat
import tempfile
import threading
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from .errors import FormatError

# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names, the
# command line's clean-up of interrupted outputs included, may change.
__all__ = [
    "BOM",
    "check_outputs",
    "compression_of",
    "normalize_text",
    "normalized",
    "open_binary",
    "open_output",
    "read_head",
    "source_name",
    "staged_output",
    "strip_compression_suffix",
]

Source = "str | os.PathLike[str] | IO[bytes] | IO[str]"

#: The UTF-8 byte-order mark, dropped at the start of text by ``normalize``.
BOM = b"\xef\xbb\xbf"

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
}
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")


def compression_of(head: bytes, name: str = "") -> str | None:
    """Return ``gzip``, ``bz2``, ``xz`` or ``None`` from the first bytes of a file."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def strip_compression_suffix(name: str) -> str:
    """``trace.swf.gz`` -> ``trace.swf``: the suffix that names the format."""
    for suffix in _COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def source_name(source: object) -> str:
    """A printable name for a path or an open file, used in error messages."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


# --------------------------------------------------------------------------- errors


def decompression_error(exc: BaseException, name: str, kind: str) -> FormatError | None:
    """The :class:`FormatError` (naming ``name``) for an exception raised while
    decompressing ``kind`` data, or ``None`` if ``exc`` is not about the data (a
    real I/O error such as ``EIO`` keeps its own type)."""
    if isinstance(exc, EOFError):
        why = "the compressed data is truncated"
    elif isinstance(exc, lzma.LZMAError) and "memory usage limit" in str(exc).lower():
        why = (
            f"it needs more than {XZ_MEMLIMIT >> 20} MiB of memory to decompress "
            "(a dictionary larger than any xz preset's)"
        )
        return FormatError(f"not a readable {kind} file: {why}", source=name)
    elif isinstance(exc, (zlib.error, lzma.LZMAError, gzip.BadGzipFile)):
        why = "the compressed data is corrupt"
    elif isinstance(exc, OSError) and exc.errno is None:
        # bz2 ("Invalid data stream") and gzip (bad CRC, bad length) say so with a
        # plain OSError without an errno.
        why = "the compressed data is corrupt"
    else:
        return None
    return FormatError(f"not a valid {kind} file: {why} ({exc})", source=name)


class _Checked(io.BufferedIOBase):
    """A decompressing file whose data errors become a :class:`FormatError` naming
    the file; closing it closes the file underneath when we opened it."""

    def __init__(self, inner: Any, name: str, kind: str, owned: Any = None) -> None:
        super().__init__()
        self._inner, self._label, self._kind, self._owned = inner, name, kind, owned
        self.name = name

    def _fail(self, exc: BaseException) -> None:
        error = decompression_error(exc, self._label, self._kind)
        if error is None:
            raise exc
        raise error from None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._inner.seekable())

    def read(self, size: int | None = -1) -> bytes:
        try:
            return self._inner.read(-1 if size is None else size)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover - _fail always raises

    def read1(self, size: int = -1) -> bytes:
        try:
            return self._inner.read1(size)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover

    def readinto(self, buffer: Any) -> int:
        try:
            return self._inner.readinto(buffer)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return self._inner.readline(-1 if size is None else size)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover

    def peek(self, size: int = 0) -> bytes:
        try:
            return self._inner.peek(size)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._inner.seek(offset, whence)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            self._fail(exc)
            raise  # pragma: no cover

    def tell(self) -> int:
        return self._inner.tell()

    def close(self) -> None:
        if not self.closed:
            try:
                self._inner.close()
            finally:
                if self._owned is not None:
                    self._owned.close()
                super().close()


# --------------------------------------------------------------------------- line ends


def normalize_text(data: bytes, *, strip_bom: bool = True) -> bytes:
    """``data`` without a leading UTF-8 BOM and with CRLF and CR line ends as LF.

    Costs one scan of ``data`` (and a copy only when there is something to change).
    """
    if strip_bom and data.startswith(BOM):
        data = data[len(BOM) :]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


class _Normalizing(io.RawIOBase):
    """A binary file read with :func:`normalize_text` applied on the fly (a CRLF
    pair cut between two reads is still one line end)."""

    def __init__(self, inner: Any, strip_bom: bool, name: str) -> None:
        super().__init__()
        self._inner = inner
        self._at_start = strip_bom
        self._after_cr = False
        self._pending = b""
        self.name = name

    def readable(self) -> bool:
        return True

    def _fill(self, size: int) -> bool:
        """Read and normalize the next piece into ``_pending``; False at the end."""
        while not self._pending:
            data = self._inner.read(max(size, len(BOM)))
            if not data:
                return False
            if self._at_start:
                while len(data) < len(BOM) and BOM.startswith(data):
                    more = self._inner.read(len(BOM) - len(data))
                    if not more:
                        break
                    data += more
                self._at_start = False
                if data.startswith(BOM):
                    data = data[len(BOM) :]
            if self._after_cr and data[:1] == b"\n":
                data = data[1:]
            self._after_cr = False
            if b"\r" in data:
                self._after_cr = data.endswith(b"\r")
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            self._pending = data
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        size = len(view)
        if size == 0 or not self._fill(size):
            return 0
        pending = self._pending
        n = min(size, len(pending))
        view[:n] = pending[:n]
        self._pending = pending[n:] if n < len(pending) else b""
        return n

    def readall(self) -> bytes:
        parts: list[bytes] = []
        while True:
            data = self.read(1 << 22)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def close(self) -> None:
        if not self.closed:
            try:
                closer = getattr(self._inner, "close", None)
                if closer is not None:
                    closer()
            finally:
                super().close()


def normalized(fh: Any, *, strip_bom: bool = True, name: str | None = None) -> BinaryIO:
    """A buffered binary file reading ``fh`` with :func:`normalize_text` applied
    (``strip_bom=False`` for a file read from the middle). Closing it closes ``fh``."""
    label = name if name is not None else source_name(fh)
    raw = _Normalizing(fh, strip_bom, label)
    return io.BufferedReader(raw, buffer_size=1 << 16)  # type: ignore[return-value]


# --------------------------------------------------------------------------- reading


class _Borrowed(io.RawIOBase):
    """A file the caller opened, read through a layer whose ``close()`` leaves it
    open: what :func:`open_binary` returns for a file object may be closed (by a
    ``with`` block, or by the garbage collector) without closing the caller's file."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self._inner = inner

    @property
    def name(self) -> Any:
        return getattr(self._inner, "name", "<stream>")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(getattr(self._inner, "seekable", lambda: False)())

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._inner.read(len(view))
        view[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._inner.seek(offset, whence))

    def tell(self) -> int:
        return int(self._inner.tell())


def open_binary(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    normalize: bool = False,
    name: str | None = None,
) -> BinaryIO:
    """Open a path (or wrap an open binary file) for reading, decompressing by content.

    Compression is detected from the magic bytes, never from the file name, so a
    ``.swf`` that is really gzipped still reads. Corrupt or truncated compressed
    data raises :class:`~schedlab.errors.FormatError` naming the file (``name``,
    else the path or the file's ``name``). ``normalize=True`` (for line-based text
    formats) drops a leading UTF-8 BOM and turns CRLF and CR line ends into LF.

    Closing the returned file closes the file opened for a path; a file object the
    caller passed in is left open (``with open_binary(source) as fh:`` is right for
    both), though read ahead of what was consumed.

    A path that is not a regular file (a pipe such as ``<(zcat t.gz)`` or
    ``/dev/stdin``, a named pipe, a device) whose first bytes :func:`read_head`
    read is not opened again: the file it opened is handed over, and reading
    starts with the bytes the sniffing read, so nothing is lost and a named pipe is
    opened once.
    """
    label = name if name is not None else source_name(source)
    if isinstance(source, (str, os.PathLike)):
        held = _claim(source)  # a pipe whose head was read for sniffing
        if held is None:
            raw: BinaryIO = open(source, "rb")
        else:
            raw = io.BufferedReader(held)  # type: ignore[assignment]
        owned = raw
    else:
        head = _peek(source, 6)
        raw = io.BufferedReader(_Borrowed(source))  # type: ignore[assignment]
        owned = None
    try:
        kind = compression_of(_peek(raw, 6) if owned is not None else head)
        fh: Any = raw
        if kind is not None:
            if kind == "gzip":
                inner: Any = gzip.GzipFile(fileobj=raw, mode="rb")
            elif kind == "bz2":
                inner = bz2.BZ2File(raw, "rb")
            else:
                inner = _xz_reader(raw)
            fh = _Checked(inner, label, kind, owned)
    except BaseException:
        if owned is not None:
            owned.close()
        raise
    if normalize:
        return normalized(fh, name=label)
    return fh  # type: ignore[no-any-return]


#: Memory an xz decompressor may use: a file names its dictionary size (up to
#: 1.5 GiB, or 4 GiB), which every xz preset keeps at 64 MiB or less.
XZ_MEMLIMIT = 256 << 20


def _xz_reader(raw: Any) -> Any:
    """``lzma.LZMAFile(raw)`` whose decompressors stop at :data:`XZ_MEMLIMIT`
    (``LZMAFile`` takes no memory limit)."""
    try:
        from _compression import DecompressReader  # LZMAFile's own reader
    except ImportError:  # pragma: no cover - Python 3.14 moved it
        from compression._common._streams import DecompressReader  # type: ignore

    reader = DecompressReader(
        raw, lzma.LZMADecompressor, trailing_error=lzma.LZMAError, memlimit=XZ_MEMLIMIT
    )
    return io.BufferedReader(reader)


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
    """The first ``size`` decompressed bytes of a file, for format sniffing, with a
    leading BOM dropped and line ends normalized to LF (see :func:`normalize_text`).

    An open file is left at the position where it was. A path that is not a
    regular file (a pipe, a named pipe, a device: it cannot be read twice) is opened
    once and kept open, what was read kept with it, for the next
    :func:`open_binary` of the same path (see :func:`hold`)."""
    if isinstance(source, (str, os.PathLike)):
        held = hold(source)
        if held is not None:
            return held.head(size)
        with open_binary(source) as fh:
            return normalize_text(fh.read(size))
    if compression_of(_peek(source, 6)) is None and hasattr(source, "peek"):
        return normalize_text(source.peek(size)[:size])  # type: ignore[attr-defined]
    pos = source.tell()
    try:
        data = open_binary(source).read(size)
    finally:
        source.seek(pos)
    return normalize_text(data)


# --------------------------------------------------------------------------- pipes


class _Replay(io.RawIOBase):
    """A file that can be read only once (a pipe, a named pipe, a device), opened
    once: what is read from it is kept until :meth:`release`, and every
    :meth:`rewind` reads it again before going on with the file."""

    def __init__(self, raw: Any, name: str) -> None:
        super().__init__()
        self._raw = raw
        self._kept = bytearray()
        self._pos = 0
        self._keeping = True
        self.name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        kept = len(self._kept)
        if self._pos < kept:
            n = min(len(view), kept - self._pos)
            view[:n] = self._kept[self._pos : self._pos + n]
            self._pos += n
            if not self._keeping and self._pos == kept:
                self._kept, self._pos = bytearray(), 0  # replayed: not needed any more
            return n
        n = self._raw.readinto(view)
        if n and self._keeping:
            self._kept += view[:n]
            self._pos += n
        return n or 0

    def rewind(self) -> None:
        """Read again from the first byte."""
        self._pos = 0

    def release(self) -> None:
        """Read from the first byte once more, keeping nothing new: for the reader."""
        self._pos = 0
        self._keeping = False

    def head(self, size: int) -> bytes:
        """The first ``size`` decompressed, normalized bytes (as :func:`read_head`)."""
        self.rewind()
        try:
            fh: Any = io.BufferedReader(_Borrowed(self))
            data = open_binary(fh).read(size)
        finally:
            self.rewind()
        return normalize_text(data)

    def close(self) -> None:
        if not self.closed:
            try:
                self._raw.close()
            finally:
                self._kept = bytearray()
                super().close()


#: Files that are not regular files whose head :func:`read_head` read, with the
#: file it opened, by device and inode (the same pipe under another name, such as
#: ``/dev/stdin`` and ``/proc/self/fd/0``, or ``./fifo`` and ``fifo``, is the same
#: entry; a new pipe behind an old name, ``/dev/fd/63`` of a later command, is not):
#: the next :func:`open_binary` of the file takes it over (see :func:`hold`).
_HELD: dict[tuple[int, int], _Replay] = {}
_HELD_LOCK = threading.Lock()


def _special(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The device and inode of ``path`` when it is neither a regular file nor a
    folder (a pipe, a named pipe, a device, a socket), else None (also when it does
    not exist: opening it says so)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    return st.st_dev, st.st_ino


def hold(path: str | os.PathLike[str]) -> _Replay | None:
    """The held file of ``path`` when it is not a regular file (a pipe, a named
    pipe, a device), opened now if it is not held yet; None for a regular file or
    a folder.

    Sniffing reads the first bytes of a file that the reader then reads from the
    start. A pipe cannot be read twice: opening ``/dev/fd/63`` again goes on after
    what the sniffing read, and a named pipe whose writer is gone blocks in
    ``open()`` for ever. So such a path is opened once, here (a named pipe without
    a writer waits for one, as ``cat`` does), and what is read is kept, until
    :func:`open_binary` takes the file over and reads it from the first byte."""
    ident = _special(path)
    if ident is None:
        return None
    with _HELD_LOCK:
        held = _HELD.get(ident)
        if held is not None and not held.closed:
            return held
    replay = _Replay(open(path, "rb", buffering=0), os.fspath(path))
    with _HELD_LOCK:
        stale = _HELD.get(ident)
        _HELD[ident] = replay
    if stale is not None:
        stale.close()
    return replay


def _claim(path: str | os.PathLike[str]) -> _Replay | None:
    """The held file of ``path`` (see :func:`hold`), rewound to its first byte and
    no longer held; None when there is none."""
    if not _HELD:
        return None
    ident = _special(path)
    if ident is None:
        return None
    with _HELD_LOCK:
        replay = _HELD.pop(ident, None)
    if replay is None or replay.closed:
        return None
    replay.release()
    return replay


def drop_held(path: str | os.PathLike[str]) -> None:
    """Close the held file of ``path``, if any (see :func:`hold`)."""
    replay = _claim(path)
    if replay is not None:
        replay.close()


def is_held(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` has a held file that no :func:`open_binary` took over yet."""
    if not _HELD:
        return False
    ident = _special(path)
    return ident is not None and ident in _HELD


def open_text(source: str | os.PathLike[str] | BinaryIO, encoding: str = "utf-8") -> IO[str]:
    """Open for reading text, decompressing by content; universal newlines (CRLF and
    CR read as ``\\n``) and a leading BOM dropped."""
    return io.TextIOWrapper(open_binary(source, normalize=True), encoding=encoding)


# --------------------------------------------------------------------------- writing

#: Targets whose writing was interrupted (SIGINT/SIGTERM) in this process, for the
#: command line's message; see :func:`interrupted_outputs`.
_INTERRUPTED: list[str] = []

try:  # advisory locks mark a part that is still being written
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not on Windows
    _fcntl = None  # type: ignore[assignment]

_LOCK_NAME = ".lock"


def interrupted_outputs() -> list[str]:
    """The output files whose writing was interrupted in this process (left as they
    were: a previous version stays intact, no partial file is left)."""
    return list(_INTERRUPTED)


def _forget_interrupted() -> None:
    """Empty the list of :func:`interrupted_outputs`: the command line does it as each
    invocation starts (``schedlab.cli.main``), so that one run in a process (a
    notebook's, a test's) reports none of an earlier run's outputs."""
    _INTERRUPTED.clear()


def _check_interrupted() -> None:
    """Raise the SIGTERM or SIGINT that the command line (``schedlab.cli``, when it
    runs) received, should the exception its signal handler raised have been
    swallowed on the way: called before an output is put in place, so that none is
    written after a signal. Nothing happens outside the command line."""
    import sys

    check = getattr(sys.modules.get(f"{__package__}.cli"), "_raise_if_signalled", None)
    if check is not None:
        check()


def _part_prefix(target: Path) -> str:
    return f".{target.name}."


#: Seconds after which a part folder without a lock file counts as stale.
LOCKLESS_GRACE = 60.0


def _older_than(path: Path, seconds: float) -> bool:
    import time

    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return False


def _is_stale(part: Path) -> bool:
    """Whether a ``.part`` left beside a target is not being written any more: its
    writer held an advisory lock on it (a file inside a part folder) while it
    wrote, which the system released when the writer ended, killed or not."""
    lock_path = part / _LOCK_NAME if part.is_dir() else part
    if _fcntl is None:  # pragma: no cover - no advisory locks: by age
        return _older_than(part, 24 * 3600)
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except FileNotFoundError:
        # A part folder without its lock file: made by an older schedlab, by a
        # writer that died before taking the lock, or by one about to take it (so
        # only once it is a minute old).
        return lock_path != part and _older_than(part, LOCKLESS_GRACE)
    except OSError:
        return False
    try:
        _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
    except OSError:
        return False  # held: a live writer
    finally:
        os.close(fd)
    return True


def remove_stale_parts(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the ``.NAME.XXXX.part`` files and folders beside ``target`` that a
    killed run left behind (not those still being written); returns them."""
    path = Path(target)
    removed = []
    prefix = _part_prefix(path)
    try:
        entries = list(os.scandir(path.parent if str(path.parent) else "."))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".part")):
            continue
        middle = name[len(prefix) : -len(".part")]
        if not middle or "." in middle:  # mkstemp's random part has no dot
            continue
        part = path.parent / name
        if not _is_stale(part):
            continue
        with contextlib.suppress(OSError):
            if part.is_dir() and not part.is_symlink():
                shutil.rmtree(part)
            else:
                part.unlink()
            removed.append(part)
    return removed


def _rename_error(exc: OSError, target: Path, part: Path) -> OSError:
    """``exc`` re-targeted at the user's file when it names the temporary part."""
    filename = exc.filename
    if filename is None or str(filename).startswith(str(part)):
        new = OSError(exc.errno, exc.strerror or str(exc), os.fspath(target))
        return new
    return exc


def refuse_overwrite(output: str | os.PathLike[str] | None, *inputs: object) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when ``output`` names the same
    file as one of ``inputs`` (after symbolic and hard links; by absolute path when
    one does not exist yet), or is an existing folder holding one of them: writing it
    would destroy what is being read.
    Standard output (``-``), generator specs and non-paths among ``inputs`` are
    ignored."""
    from .errors import UsageError

    if output is None or os.fspath(output) == "-":
        return
    out = os.fspath(output)
    for source in inputs:
        if not isinstance(source, (str, os.PathLike)) or os.fspath(source) == "-":
            continue
        src = os.fspath(source)
        how = _clash(out, src)
        if how == "same":
            raise UsageError(f"{out}: output would overwrite the input {src}")
        if how == "holds":
            raise UsageError(f"{out}: the output folder holds the input {src}")


def _clash(out: str, other: str) -> str | None:
    """How writing ``out`` would destroy ``other``: ``"same"`` (one file, by any
    name), ``"holds"`` (``out`` is an existing folder holding ``other``), else
    ``None``."""
    try:
        if os.path.samefile(other, out):
            return "same"
    except OSError:
        if os.path.abspath(other) == os.path.abspath(out):
            return "same"
    folder = os.path.realpath(out)
    if os.path.isdir(folder) and os.path.realpath(other).startswith(folder.rstrip(os.sep) + os.sep):
        return "holds"
    return None


def refuse_clobber(
    outputs: Iterable[tuple[str, object]], inputs: Iterable[tuple[str, object]] = ()
) -> None:
    """The one check of every command that writes files: raise
    :class:`~schedlab.errors.UsageError` when one of ``outputs`` (``(option,
    path)`` pairs, e.g. ``("--report", "a.html")``) names the same file as one of
    ``inputs`` (``("IN", "trace.swf")``, ``("--platform", "p.toml")``) or as an
    earlier output of the same run (by any name: see :func:`refuse_overwrite`), or
    is an existing folder holding an input. The one-line message names both
    options. An output whose folder cannot be written (a read-only file system, no
    permission) is refused too, naming the output and its option, before any work.
    ``None``, ``-`` (standard output), generator specs and non-paths are
    ignored; an empty path is an error naming its option."""
    from .errors import UsageError

    def paths(pairs: Iterable[tuple[str, object]]) -> list[tuple[str, str]]:
        return [
            (label, os.fspath(path))  # type: ignore[arg-type]
            for label, path in pairs
            if isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-"
        ]

    sources = paths(inputs)
    earlier: list[tuple[str, str]] = []
    for label, out in paths(outputs):
        if not out.strip():
            raise UsageError(f"{label} {out!r}: give a file name")
        for src_label, src in sources:
            if not os.path.exists(src):  # a generator spec, or a missing input
                continue
            how = _clash(out, src)
            if how == "same":
                raise UsageError(
                    f"{out}: output would overwrite the input {src} "
                    f"({label} and {src_label} name the same file)"
                )
            if how == "holds":
                raise UsageError(
                    f"{out}: the output folder holds the input {src} ({label} and {src_label})"
                )
        for other_label, other in earlier:
            if _clash(out, other) == "same":
                raise UsageError(
                    f"{out}: {label} would overwrite the output of {other_label} "
                    "(they name the same file)"
                )
        earlier.append((label, out))
        _refuse_unwritable(out, label)


def _unwritable_folder(target: str) -> str | None:
    """The folder that keeps ``target`` from being written by
    :func:`staged_output`, or ``None`` when it can be (as far as ``os.access``
    tells): the nearest existing folder above it (where the part is staged and
    missing folders are created) and, when ``target`` is an existing folder, that
    folder too (its files are replaced in it). A device or pipe (``/dev/null``),
    written in place, is not checked."""
    path = Path(os.path.realpath(target)) if os.path.islink(target) else Path(target)
    path = Path(os.path.abspath(path))
    try:
        mode: int | None = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return None
    folders = [path] if mode is not None and stat.S_ISDIR(mode) else []
    above = next((p for p in path.parents if os.path.exists(p)), None)
    if above is not None and above.is_dir():
        folders.insert(0, above)
    for folder in folders:
        if not os.access(folder, os.W_OK | os.X_OK):
            return os.fspath(folder)
    return None


def _refuse_unwritable(out: str, label: str) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when the output ``out`` (given by
    option ``label``) cannot be written because of its folder (read-only file
    system, no permission): ``s.swf: Read-only file system (-o/--output)``, before
    any work, rather than the staged part's name after it."""
    import errno

    from .errors import UsageError

    folder = _unwritable_folder(out)
    if folder is None:
        return
    code = errno.EACCES
    with contextlib.suppress(OSError, AttributeError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            code = errno.EROFS
    parent = os.path.dirname(os.path.abspath(out))
    shown = folder
    if not os.path.isabs(out) and (folder + os.sep).startswith(os.getcwd().rstrip(os.sep) + os.sep):
        shown = os.path.relpath(folder)  # relative as the output was given
    where = "" if folder in (parent, os.path.abspath(out)) else f" in {shown}"
    raise UsageError(f"{out}: {os.strerror(code)}{where} ({label})")


def _name_shape(name: str) -> str:
    """``name`` with every run of digits as ``#``: the shards of one table match.
    A shard of a table (``WORD-NNNNNN.EXT``, six digits or more) is ``*-#.EXT``: a
    previous output may have other tables than the new one."""
    import re

    shape = re.sub(r"[0-9]+", "#", name)
    if re.fullmatch(r"[A-Za-z_]+-[0-9]{6,}\.[A-Za-z0-9.]+", name):
        shape = "*" + shape[shape.index("-") :]
    return shape


def _foreign_entry(folder: Path, staged: Path) -> str | None:
    """The first entry (a relative path) of the existing ``folder`` that the output
    in ``staged`` would not replace: neither a folder the output also has nor a
    regular file named as one the output has at that place (digits aside: another
    shard; any table's shards: see :func:`_name_shape`); ``None`` when every entry
    is such, i.e. ``folder`` is empty or holds a previous output of the same writer."""
    shapes = {_name_shape(p.name) for p in staged.iterdir() if p.is_file() and not p.is_symlink()}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        new = staged / entry.name
        if entry.is_dir(follow_symlinks=False):
            if not new.is_dir() or new.is_symlink():
                return entry.name + "/"
            inner = _foreign_entry(Path(entry.path), new)
            if inner is not None:
                return f"{entry.name}/{inner}"
        elif not entry.is_file(follow_symlinks=False) or _name_shape(entry.name) not in shapes:
            return entry.name
    return None


def _refuse_foreign(shown: Path, folder: Path, staged: Path) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when the existing ``folder`` holds
    something the output in ``staged`` would not replace: schedlab never removes
    files it did not write."""
    foreign = _foreign_entry(folder, staged)
    if foreign is not None:
        from .errors import UsageError

        raise UsageError(
            f"{shown}: the folder holds {foreign!r}, not written by this writer (a folder "
            "is written into only when empty or holding a previous output of the same "
            "writer); remove it or choose another folder"
        )


def _replace_contents(staged: Path, folder: Path) -> None:
    """Make the existing ``folder`` hold what ``staged`` holds, keeping the folder
    itself (it may be the current one): its entries that the new output lacks go
    (:func:`_refuse_foreign` checked that they are a previous output's), the new
    ones are renamed in."""
    names = {p.name for p in staged.iterdir()}
    for entry in os.scandir(folder):
        if entry.name not in names:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    for name in sorted(names):
        new, old = staged / name, folder / name
        new_dir = new.is_dir() and not new.is_symlink()
        if new_dir and old.is_dir() and not old.is_symlink():
            _replace_contents(new, old)
            continue
        if new_dir and (old.is_file() or old.is_symlink()):
            old.unlink()  # a file cannot be replaced by a folder
        os.replace(new, old)


@contextlib.contextmanager
def staged_output(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Stage the writing of ``target``: yields a path inside a hidden part folder
    beside it (``.NAME.XXXX.part/NAME``) for the writer to create, then renames what
    was written into place. On any failure (an exception, SIGINT or SIGTERM) the
    part is removed and ``target`` is left as it was. Stale parts of ``target`` left
    by killed runs are removed first. An :class:`OSError` about the part (e.g.
    ``ENOSPC``), or a :class:`~schedlab.errors.FormatError` naming the staged file,
    is raised naming ``target``.

    A folder (a writer writing several files) replaces an existing folder only when
    that folder is empty or holds nothing but what the new output also has (the same
    file names, digits aside: a previous output of the same writer); the folder
    itself stays and gets the new files. Any other entry is never removed: a
    :class:`~schedlab.errors.UsageError` names it and ``target`` is left as it was.

    A symbolic link is followed: the file it points to is replaced and the link
    stays. An existing ``target`` that is neither a regular file nor a folder (a
    device such as ``/dev/null``, a named pipe, a socket) cannot be replaced by a
    rename: the writer gets ``target`` itself and writes into it directly (an
    ``OSError`` then, e.g. ``ENOSPC`` from ``/dev/full``, names ``target``).
    """
    shown = Path(target)  # what errors name
    path = Path(os.path.realpath(target)) if os.path.islink(target) else shown
    if not path.name or path.name == "..":  # ".", "..": the part goes beside the folder
        path = Path(os.path.abspath(path))
    try:
        mode: int | None = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        try:
            yield path
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(shown)) from None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # a missing folder is created
    except (FileExistsError, NotADirectoryError):
        # a parent is a regular file: say so, not "File exists" about that file
        import errno

        blocker = next(
            (p for p in reversed(path.parents) if p.exists() and not p.is_dir()), path.parent
        )
        raise NotADirectoryError(
            errno.ENOTDIR, f"not a folder: {blocker} is a file", os.fspath(shown)
        ) from None
    except OSError as exc:  # a folder that cannot be created: named as the target
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(shown)) from None
    remove_stale_parts(path)
    try:
        tmpdir = Path(tempfile.mkdtemp(prefix=_part_prefix(path), suffix=".part", dir=path.parent))
    except OSError as exc:  # a read-only or full folder: about the target, not the part
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(shown)) from None
    lock_fd = None
    try:
        if _fcntl is not None:
            lock_fd = os.open(tmpdir / _LOCK_NAME, os.O_WRONLY | os.O_CREAT, 0o600)
            _fcntl.flock(lock_fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        staged = tmpdir / path.name
        try:
            yield staged
            _check_interrupted()  # nothing is written after a SIGINT/SIGTERM
            if staged.is_dir() and path.is_dir() and not path.is_symlink():
                _refuse_foreign(shown, path, staged)
                _replace_contents(staged, path)
            else:
                os.replace(staged, path)
        except OSError as exc:
            raise _rename_error(exc, shown, tmpdir) from None
        except FormatError as exc:
            if exc.source != os.fspath(staged):
                raise
            # A writer's error about what it wrote names the target, not the part.
            raise type(exc)(
                exc.message, source=os.fspath(shown), line=exc.line, path=exc.path,
                field=exc.field,
            ) from None  # fmt: skip
    except BaseException as exc:
        if not isinstance(exc, (Exception, SystemExit, GeneratorExit)):
            _INTERRUPTED.append(os.fspath(shown))  # SIGINT, or SIGTERM via schedlab.cli
        raise
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
        with contextlib.suppress(OSError):
            shutil.rmtree(tmpdir)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], text: bool = True) -> Iterator[IO]:
    """Open ``path`` for writing through :func:`staged_output`: a failure never
    leaves a half-written file where a good one was. The suffix of ``path`` picks
    the compression (``.gz``, ``.bz2``, ``.xz``). With ``path == "-"`` the data goes
    to standard output instead.
    """
    if os.fspath(path) == "-":
        import sys

        yield sys.stdout if text else sys.stdout.buffer
        return
    with staged_output(path) as staged:
        fh = open_output(staged, text=text, name=os.fspath(path))
        try:
            yield fh
        finally:
            fh.close()


class _NamedErrors:
    """Proxy of an output file whose ``OSError`` (e.g. ``ENOSPC``) names ``name``."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner, self._name = inner, name

    def _wrap(self, exc: OSError) -> OSError:
        return OSError(exc.errno, exc.strerror or str(exc), self._name)

    def write(self, data: Any) -> int:
        """Write ``data``."""
        try:
            return self._inner.write(data)
        except OSError as exc:
            raise self._wrap(exc) from None

    def writelines(self, lines: Any) -> None:
        """Write every item of ``lines``."""
        try:
            self._inner.writelines(lines)
        except OSError as exc:
            raise self._wrap(exc) from None

    def flush(self) -> None:
        """Flush buffers."""
        try:
            self._inner.flush()
        except OSError as exc:
            raise self._wrap(exc) from None

    def close(self) -> None:
        """Flush and close."""
        try:
            self._inner.close()
        except OSError as exc:
            raise self._wrap(exc) from None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._inner)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def open_output(path: str | os.PathLike[str], text: bool = True, *, name: str | None = None) -> IO:
    """Open ``path`` for writing, compressing by suffix (``.gz``, ``.bz2``, ``.xz``).

    gzip output is written with ``mtime=0`` so equal data gives equal bytes. Text mode
    writes UTF-8 with ``\\n`` newlines. Errors while writing (``ENOSPC`` ...) name
    ``name`` (default: the path). Inside :func:`schedlab.write`, a writer's path is
    a staged one and :func:`staged_output` names the user's target instead.
    """
    label = os.fspath(path) if name is None else name
    filename = os.fspath(path)
    try:
        if filename.endswith(".gz"):
            raw: io.BufferedIOBase = gzip.GzipFile(filename, "wb", mtime=0)
        elif filename.endswith(".bz2"):
            raw = bz2.BZ2File(filename, "wb")
        elif filename.endswith(".xz"):
            raw = lzma.LZMAFile(filename, "wb")
        else:
            raw = open(filename, "wb")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), label) from None
    out: Any = io.TextIOWrapper(raw, encoding="utf-8", newline="\n") if text else raw
    if name is None:
        return out  # type: ignore[no-any-return]
    return _NamedErrors(out, label)  # type: ignore[return-value]


def check_outputs(
    outputs: Iterable[tuple[str, object]],
    inputs: Iterable[tuple[str, object]] = (),
    *,
    stdout: Iterable[str] = (),
    folders: Iterable[str] = (),
) -> None:
    """The checks of a command's outputs before any work, one line each (exit 2):
    ``-`` where the option (its label in ``outputs``) is not among ``stdout``,
    the options that write to standard output (a file named ``-`` is a trap: write
    ``./-`` for one; the message says "folder" for the options in ``folders``, those
    that write a folder); two outputs to standard output; an output whose parent path
    is a regular file (``x.swf/out.swf: not a folder: x.swf is a file (-o)``);
    then :func:`refuse_clobber` (an output over an input or another output, an
    output whose folder cannot be written). A missing parent folder is fine: it is
    created. Commands, and plugins' commands, call it before reading anything."""
    from .errors import UsageError

    pairs = list(outputs)
    inputs = list(inputs)
    to_stdout = set(stdout)
    folder_options = set(folders)
    on_stdout: str | None = None
    for label, path in [*pairs, *inputs]:
        # No file name holds a NUL: said here, not as the os module's ValueError.
        if isinstance(path, str) and "\0" in path:
            raise UsageError(f"{label} {path!r}: a path cannot hold a NUL character")
    for label, path in pairs:
        if not isinstance(path, (str, os.PathLike)):
            continue
        text = os.fspath(path)
        if text == "-":
            if label not in to_stdout:
                kind = "folder" if label in folder_options else "file"
                raise UsageError(
                    f"{label} -: standard output is not supported here; name a {kind} "
                    f"(./- for a {kind} named -)"
                )
            if on_stdout is not None:
                raise UsageError(
                    f"{on_stdout} - and {label} -: only one output can go to standard output"
                )
            on_stdout = label
            continue
        refuse_file_parent(text, label)
    refuse_clobber(pairs, inputs)


def refuse_file_parent(path: str | os.PathLike[str], label: str, *, folder: bool = False) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when a folder on the way to the
    output ``path`` (given by option ``label``) is a regular file (or anything
    but a folder): ``kth.swf/x.swf: not a folder: kth.swf is a file (-o)``. With
    ``folder``, ``path`` is an output folder and is checked too."""
    from .errors import UsageError

    text = os.fspath(path)
    parents = list(Path(text).parents)[::-1]  # from the outermost
    if folder:
        parents.append(Path(text))
    for parent in parents:
        name = os.fspath(parent)
        if name in ("", ".") or not os.path.lexists(name):
            continue
        if not os.path.isdir(name):
            kind = "is a file" if os.path.isfile(name) else "is not a folder"
            raise UsageError(f"{text}: not a folder: {name} {kind} ({label})")

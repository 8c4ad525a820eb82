"""Input files (``--input-file``): a .npy array of X read safely, and the values a numerics cannot carry.

The header is read before the data, so a file claiming a huge shape is refused without allocating it;
anything that is not a regular file (a folder, a FIFO, a device) is refused without opening it, so a
FIFO never blocks the command.
"""

from __future__ import annotations

import math
import os
import stat
from typing import Any, Mapping

from attnsim.verify.cost import EXACT_KINDS, OBJECT_BYTES, numerics_width, param_int, unit_bits
from attnsim.verify.registry import UsageError

MAX_WEIGHT_BITS = 1 << 20
"""Largest exact softmax weight z**(D·s) a run may meet, in bits (checked against input files)."""


def regular_file(path: str, option: str) -> None:
    """Refuse ``path`` unless it is an existing regular file (checked with ``stat``, nothing is opened)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{option}: no such file {path!r}") from None
    except OSError as exc:
        raise UsageError(f"{option}: cannot read {path!r} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{option}: {path!r} is a folder, not a .npy file")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{option}: {path!r} is not a regular file (a FIFO, socket or device is never read)")


_NPY_DTYPES = "iuf"


def read_npy(path: str, shape: tuple[int, int], option: str = "--input-file") -> Any:
    """The array in the .npy file ``path``, after its header says it is a plain numeric array of ``shape``.

    The header is read first, so a file claiming a huge shape is refused without allocating it; folders,
    empty files, .npz archives, pickles and dtypes that cannot be read exactly (float128, complex) are
    refused with one line naming the path.
    """
    import numpy as np

    if not path or not path.strip():
        raise UsageError(f"{option}: empty path")
    regular_file(path, option)
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            if not head:
                raise UsageError(f"{option}: {path!r} is empty (0 bytes)")
            if head.startswith(b"PK"):
                raise UsageError(f"{option}: {path!r} is a .npz archive; save X alone with numpy.save")
            f.seek(0)
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                file_shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            else:
                file_shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    except UsageError:
        raise
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{option}: cannot read {path!r} as .npy ({exc})") from None
    if dtype.kind not in _NPY_DTYPES or dtype.itemsize > 8 or dtype.hasobject:
        raise UsageError(f"{option}: {path!r} holds dtype {dtype}; expected integers of up to 64 bits or "
                         "float16/32/64")
    if tuple(file_shape) != tuple(shape):
        raise UsageError(f"{option}: {path!r} holds shape {tuple(file_shape)}, expected (N, d) = {tuple(shape)}")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{option}: cannot read {path!r} as .npy ({exc})") from None


def first_unrepresentable(arr: Any, numerics: str, d: int) -> tuple[tuple[int, ...], str] | None:
    """The index of the first value of ``arr`` that ``numerics`` cannot carry through attention, and why.

    Exact kinds: the largest weight z**(D·s), with a score s up to d³·x² (inputs x, weights in [-1, 1]),
    must stay within :data:`MAX_WEIGHT_BITS`. float64: the value itself must be a float64 (integers beyond
    2^53 are not) and d³·x² must not overflow. mp:BITS: integers must fit BITS bits. NaN and inf never.
    """
    import numpy as np

    kind, arg = numerics_width(numerics)
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(flat)
        if bad.any():
            i = int(np.argmax(bad))
            return np.unravel_index(i, arr.shape), f"non-finite value {flat[i]} (NaN/inf are not inputs)"
    mags = np.abs(flat.astype(np.float64))
    cube = float(d) ** 3
    if kind in EXACT_KINDS:
        limit = math.sqrt(MAX_WEIGHT_BITS / (unit_bits(numerics) * cube))
        why = f"scores up to d³·x² make a weight z**(D·s) of more than {MAX_WEIGHT_BITS} bits at D={arg}"
    elif kind == "float64" or kind in ("float", "fixed"):
        limit = math.sqrt(np.finfo(np.float64).max / cube)
        why = "scores up to d³·x² overflow float64"
    else:
        limit = math.inf
        why = ""
    over = mags > limit
    if over.any():
        i = int(np.argmax(over))
        return np.unravel_index(i, arr.shape), f"|{flat[i]}| > {limit:.3g}: {why}"
    width = arg if kind in ("mp", "arb") else (None if kind in EXACT_KINDS else 53)
    if arr.dtype.kind in "iu" and width is not None:
        wide = [abs(v).bit_length() > width for v in flat.tolist()]
        if any(wide):
            i = wide.index(True)
            return np.unravel_index(i, arr.shape), f"{flat[i]} needs more than {width} bits"
    return None


def check_input_file(path: str | None, params: Mapping[str, Any], numerics: str) -> None:
    """Refuse an ``--input-file`` that cannot be read as (N, d) or holds a value ``numerics`` cannot carry."""
    if path is None:
        return
    N, d = param_int(params, "N", default=64), param_int(params, "d", default=4)
    arr = read_npy(path, (N, d))
    bad = first_unrepresentable(arr, numerics, d)
    if bad is not None:
        idx, why = bad
        at = tuple(int(i) for i in idx)
        raise UsageError(f"--input-file: the value at index {at} cannot be used in {numerics}: {why}")


def npy_header_bytes(path: str) -> tuple[tuple[int, ...], float] | None:
    """(shape, bytes once read as exact numbers) that a .npy file's header claims; None without a readable header."""
    import numpy as np

    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape = reader(f)[0]
    except (ValueError, OSError, EOFError):
        return None
    return tuple(shape), float(math.prod(shape)) * OBJECT_BYTES

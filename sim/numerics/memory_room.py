"""How much more memory this process may take: the machine's available memory, and the address-space
limit (``RLIMIT_AS``) less what the process already maps, whichever is smaller.

Exact numerics ask before they build numbers whose size the inputs decide (a softmax weight z**(D·s) has
D·s·log2 z bits, and the scores grow with the inputs and the depth). Past this room an allocation would
fail inside GMP, which ends the process instead of raising; asking first turns it into one error that names
the numerics.
"""

from __future__ import annotations

import os
import resource

from attnsim.sim.numerics.base import NumericsError


def _kib_field(path: str, key: str) -> int | None:
    """The ``key: N kB`` line of a /proc file, in bytes (None where the file or the line is missing)."""
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory() -> int:
    """Bytes the kernel reports as available (``MemAvailable``), or physical memory where that is unknown."""
    available = _kib_field("/proc/meminfo", "MemAvailable:")
    if available is not None:
        return available
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def virtual_size() -> int:
    """Bytes this process maps now (``VmSize``; 0 where unknown)."""
    return _kib_field("/proc/self/status", "VmSize:") or 0


def memory_room() -> int:
    """Bytes this process may still allocate: available memory, capped by the address-space limit left."""
    room = available_memory()
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError, AttributeError):
        return room
    if soft != resource.RLIM_INFINITY:
        room = min(room, soft - virtual_size())
    return max(room, 0)


def refuse_past_room(need: float, what: str) -> None:
    """Refuse, as a NumericsError naming the numerics, exact numbers of ``need`` bytes (``what`` says which) that
    would not fit in :func:`memory_room`."""
    room = memory_room()
    if need > room:
        raise NumericsError(f"{what} would take about {need / 2**20:,.0f} MiB, more than the {room / 2**20:,.0f} MiB "
                            "this run may still use; the values grow too large for exact weights: use mp:BITS or "
                            "float64, or smaller inputs or fewer layers", param="numerics")

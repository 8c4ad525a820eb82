"""Lemma B.4 (anna.lemma_b_4): messages encoded so that the EMA average of up to alpha of them decodes.

An exact-match head hands a receiver the *average* of the values of every sender whose key equals
its query. Lemma B.4 (Sanford, Hsu, Telgarsky 2024, Lemma 3.2) writes each message sparsely into a
wide vector so that every one of up to alpha averaged messages can still be read back. The paper
gives the dimension bound O(alpha^4 Delta log q) but not the code; ours (docs/anna_mpc_to_anna.md):

* A sender id j < q is written in base B (B prime) as d = ceil(log_B q) digits, read as a polynomial
  f_j of degree < d over GF(B). Two different ids agree at fewer than d points.
* The vector has T rows of B buckets of Delta + 3 numbers. In row t the sender writes the block
  (1, j, j^2, payload_1 .. payload_Delta) into bucket f_j(t) mod B; every other entry is 0.
* An average of n encodings holds, per bucket, (c, S1, S2, payload sum) / n for the c senders that
  chose it. c = 1 exactly when S1^2 = c * S2 (Cauchy-Schwarz is tight only for equal ids, and ids
  are distinct): that is the "validity bit" of the paper, computed instead of stored. A valid
  bucket gives the sender S1/c and its payload sum/c.
* With T = (alpha - 1)(d - 1) + 1 rows every message of a set of at most alpha has a row in which no
  other message shares its bucket (each other id covers fewer than d rows), so decoding never
  fails; B is the least prime >= max(2, alpha) with T <= B (T needs T distinct points of GF(B)).
  For alpha = 1 nothing is averaged: one row of one bucket (B = 1), dimension Delta + 3.

The dimension is T B (Delta + 3) = O(alpha^2 Delta log q / log alpha), inside the lemma's bound.
The decoder knows n (the EMA count; equally, 1/n is the first entry of any valid bucket) and raises
:class:`DecodingError` when it finds fewer than n senders: more than alpha messages can make it
fail, never make it return a wrong message.

The EMA output is the exact rational vector sums / count; :func:`decode` takes it in that form
(``sums`` integer, ``count`` the number of averaged encodings) so no rational is ever rounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.relay_plan import ARRAY, INT
from attnsim.sim.errors import AttnsimError

_PAYLOAD_MAX = 2 ** 40


class DecodingError(AttnsimError):
    """An averaged vector held more messages than the code can separate (more than alpha)."""


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % p for p in range(2, int(n ** 0.5) + 1))


def _next_prime(n: int) -> int:
    while not _is_prime(n):
        n += 1
    return n


def code_rows(alpha: Any, digits: Any) -> Any:
    """T = (alpha - 1)(d - 1) + 1: rows enough that each of alpha messages has a row no other shares."""
    return (alpha - 1) * (digits - 1) + 1


def code_width(rows: Any, base: Any, delta: Any) -> Any:
    """The value dimension T B (Delta + 3): T rows of B buckets of (count, id, id^2, Delta payload numbers)."""
    return rows * base * (delta + 3)


def block_head(sender: Any) -> tuple[Any, Any, Any]:
    """The first three numbers a sender writes in each of its buckets: (1, j, j^2)."""
    return 1, sender, sender * sender


def single_sender(ops: Any, c: Any, s1: Any, s2: Any) -> Any:
    """A bucket summing (c, S1, S2) holds one sender's blocks only: c != 0 and S1^2 = c S2 (the equality case
    of Cauchy-Schwarz; the validity bit, computed instead of stored)."""
    return ops.all(c != 0, s1 * s1 == c * s2)


def read_bucket(ops: Any, c: Any, number: Any) -> Any:
    """The sender's id (``number`` = S1) or a payload number of a single-sender bucket: the sum over c."""
    return ops.div(number, c)


def _digits(value: int, base: int, count: int) -> list[int]:
    out = []
    for _ in range(count):
        value, digit = divmod(value, base)
        out.append(digit)
    return out


@dataclass(frozen=True)
class MessageCode:
    """The code for ``senders`` ids, at most ``alpha`` messages averaged, payloads of ``delta`` numbers."""

    senders: int
    alpha: int
    delta: int
    base: int
    digits: int
    rows: int

    @classmethod
    def design(cls, senders: int, alpha: int, delta: int) -> "MessageCode":
        """The smallest code of the module docstring's family for these sizes."""
        require(isinstance(senders, int) and senders >= 1, "q", f"need at least one sender id, got {senders!r}")
        require(isinstance(alpha, int) and alpha >= 1, "alpha", f"must be a positive integer, got {alpha!r}")
        require(isinstance(delta, int) and delta >= 0, "Delta", f"must be a non-negative integer, got {delta!r}")
        if alpha == 1:  # one message is never averaged with another: one bucket, no polynomial needed
            return cls(senders, 1, delta, base=1, digits=1, rows=1)
        base = _next_prime(max(2, alpha))
        while True:
            digits, top = 1, base
            while top < senders:
                digits, top = digits + 1, top * base
            rows = code_rows(alpha, digits)
            if rows <= base:
                return cls(senders, alpha, delta, base, digits, rows)
            base = _next_prime(base + 1)

    @property
    def block(self) -> int:
        """Numbers per bucket: count, id, id squared, payload."""
        return self.delta + 3

    @property
    def width(self) -> int:
        """The value dimension T * B * (Delta + 3)."""
        return code_width(self.rows, self.base, self.delta)

    def bucket(self, sender: int, row: int) -> int:
        """f_sender(row) over GF(B): the bucket the sender writes in that row."""
        acc = 0
        for digit in reversed(_digits(sender, self.base, self.digits)):
            acc = (acc * row + digit) % self.base
        return acc

    @lru_cache(maxsize=None)  # noqa: B019 -- the code is frozen and lives as long as its transformer
    def buckets(self, sender: int) -> tuple[int, ...]:
        """The bucket of ``sender`` in every row (:meth:`bucket`), computed once per sender."""
        return tuple(self.bucket(sender, t) for t in range(self.rows))

    def encode_cells(self, sender: int, payload: list[int]) -> dict[tuple[int, int], np.ndarray]:
        """The non-zero buckets of one message's vector: (row, bucket) -> its first 3 + len(payload) numbers
        (the rest of the bucket is zero)."""
        require(0 <= sender < self.senders, "sender", f"id {sender} is outside 0..{self.senders - 1}")
        require(len(payload) <= self.delta, "Delta",
                f"a payload of {len(payload)} numbers does not fit the code's {self.delta}")
        require(max(map(abs, map(int, payload)), default=0) <= _PAYLOAD_MAX, "payload",
                "numbers must lie within +-2^40 so that sums of q encodings stay exact in int64")
        block = np.array([*block_head(sender), *payload], dtype=np.int64)
        return {(t, b): block for t, b in enumerate(self.buckets(sender))}

    def encode(self, sender: int, payload: list[int]) -> np.ndarray:
        """The value vector of one message (integers, dimension :attr:`width`)."""
        out = np.zeros((self.rows, self.base, self.block), dtype=np.int64)
        for (t, b), block in self.encode_cells(sender, payload).items():
            out[t, b, :len(block)] = block
        return out.reshape(-1)

    def decode(self, sums: np.ndarray, count: int) -> dict[int, list[int]]:
        """Every (sender -> payload) in the average ``sums / count`` of ``count`` encodings."""
        cells = np.asarray(sums).reshape(self.rows, self.base, self.block)
        return self.decode_cells({(t, b): cells[t, b] for t in range(self.rows) for b in range(self.base)}, count)

    def decode_cells(self, cells: dict[tuple[int, int], np.ndarray], count: int) -> dict[int, list[int]]:
        """:meth:`decode` on the non-zero buckets only (absent buckets are zero)."""
        if count == 0:
            return {}
        found: dict[int, list[int]] = {}
        for block in cells.values():
            c, s1, s2 = map(int, block[:3].tolist())
            if not single_sender(INT, c, s1, s2) or read_bucket(INT, c, s1) in found:
                continue
            found[read_bucket(INT, c, s1)] = [read_bucket(INT, c, int(x)) for x in block[3:]] + [0] * (
                self.block - len(block))
        if len(found) != count:
            raise DecodingError(f"alpha: an average of {count} messages decoded to {len(found)} "
                                f"(the code separates at most {self.alpha})")
        return found


    def encode_rows(self, senders: np.ndarray, payloads: np.ndarray) -> np.ndarray:
        """:meth:`encode` of many messages at once, for the one-bucket code (alpha = 1): one row each, cut after
        its 3 + ``payloads.shape[1]`` leading numbers (the rest of the :attr:`width` is zero, as in :meth:`encode`)."""
        require(self.rows == 1 and self.base == 1, "alpha", "encode_rows is for the one-bucket code (alpha = 1)")
        require(payloads.shape[1] <= self.delta, "Delta",
                f"payloads of {payloads.shape[1]} numbers do not fit the code's {self.delta}")
        require(bool((np.abs(payloads) <= _PAYLOAD_MAX).all()), "payload", "numbers must lie within +-2^40")
        out = np.zeros((len(senders), 3 + payloads.shape[1]), dtype=np.int64)
        out[:, 0], out[:, 1], out[:, 2] = block_head(senders)
        out[:, 3:3 + payloads.shape[1]] = payloads
        return out

    def decode_rows(self, sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`decode` of many averages at once (one-bucket code): each row's sender and payload.

        Row i is the average ``sums[i] / counts[i]``, given by its leading numbers (the rest are zero: the
        payloads have ``sums.shape[1] - 3`` numbers); rows with count 0 hold no message. A row that
        averages two or more messages fails the validity test S1^2 = c S2 and raises
        :class:`DecodingError`, as :meth:`decode` does.
        """
        require(self.rows == 1 and self.base == 1, "alpha", "decode_rows is for the one-bucket code (alpha = 1)")
        c, s1, s2 = (sums[:, t] for t in range(3))
        if sums.dtype.kind not in "iu" or max(_peak(s1) ** 2, _peak(c) * _peak(s2)) >= 2 ** 62:
            c, s1, s2 = (col.astype(object) for col in (c, s1, s2))  # products that int64 cannot hold
        bad = (counts > 0) & (~single_sender(ARRAY, c, s1, s2) | (c != counts))
        if bad.any():
            raise DecodingError(f"alpha: an average of {int(counts[bad][0])} messages does not decode "
                                f"(the code separates at most {self.alpha})")
        held = counts > 0
        senders = np.zeros(len(counts), dtype=np.int64)
        payloads = np.zeros((len(counts), sums.shape[1] - 3), dtype=np.int64)
        senders[held] = read_bucket(ARRAY, counts[held], sums[held, 1])
        if bool((counts[held] == 1).all()):  # each held row is one message: its payload as it is
            payloads[held] = sums[held, 3:]
        else:
            payloads[held] = read_bucket(ARRAY, counts[held, None], sums[held, 3:])
        return senders, payloads


def _peak(col: np.ndarray) -> int:
    """The largest magnitude in ``col`` as a Python int (0 when empty)."""
    return int(np.abs(col).max()) if len(col) else 0


def add_cells(total: dict[tuple[int, int], np.ndarray], cells: dict[tuple[int, int], np.ndarray]) -> None:
    """``total += cells`` for sparse vectors whose buckets may be stored with different lengths."""
    for cell, block in cells.items():
        have = total.get(cell)
        if have is None:
            total[cell] = block.copy()
            continue
        if len(have) < len(block):
            have = np.concatenate([have, np.zeros(len(block) - len(have), dtype=have.dtype)])
        have[:len(block)] += block
        total[cell] = have

"""A module fixture's records computed on first use.

xdist spreads a module's parametrized tests over its workers, and each worker builds the module fixture its
tests ask for: a fixture that computes every record up front computes all of them on every such worker, while a
test reads one. :class:`LazyRecords` computes a record when a test first reads it (all of them, in order, for a
test that reads every value)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any


class LazyRecords(Mapping[str, Any]):
    """name -> ``make[name]()``, each called once, when first read."""

    def __init__(self, make: dict[str, Callable[[], Any]]) -> None:
        self._make, self._done = make, {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._done:
            self._done[name] = self._make[name]()
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._make)

    def __len__(self) -> int:
        return len(self._make)

"""The documentation a report cites travels with it: links are relative to the report folder.

The front page links each reconstruction and weakening to its page of ``docs/`` as ``docs/<page>#anchor``;
:func:`copy_cited_docs` copies every page the report links that way into ``<out>/docs/``, with the pages
and pictures those pages link in turn, so that ``report.md`` and ``report.html`` can be moved or shared as
one folder and no link names a path on the machine that wrote them.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

SOURCE_DOCS = Path(__file__).resolve().parents[2] / "docs"
"""The ``docs/`` folder of the source tree attnsim runs from (absent from an installed copy without it)."""

_LINK = re.compile(r"\]\(([^)\s]+)\)")
"""The target of a Markdown link or image, ``[text](target)``."""


def doc_link(page: str) -> str | None:
    """The report's link to ``docs/<page>`` (``page`` may carry ``#anchor``), or None when the source tree has
    no such page to copy."""
    name = page.partition("#")[0]
    return f"docs/{page}" if name and (SOURCE_DOCS / name).is_file() else None


def relative_targets(markdown: str) -> list[str]:
    """The targets of the Markdown's links and images that are paths relative to its folder (no scheme, no
    leading ``/``, no bare ``#anchor``), anchors dropped."""
    out = []
    for target in _LINK.findall(markdown):
        path = target.partition("#")[0]
        if path and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", path) and not path.startswith("/"):
            out.append(path)
    return out


def copy_cited_docs(out: Path, markdown: str) -> list[str]:
    """Copy the ``docs/`` pages ``markdown`` links into ``out/docs/``, and those their own relative links reach
    inside ``docs/``; the names copied, sorted."""
    todo = [t.removeprefix("docs/") for t in relative_targets(markdown) if t.startswith("docs/")]
    done: set[str] = set()
    while todo:
        name = todo.pop()
        source = (SOURCE_DOCS / name).resolve()
        if name in done or not source.is_file() or not source.is_relative_to(SOURCE_DOCS):
            continue
        done.add(name)
        target = out / "docs" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        if source.suffix == ".md":
            here = Path(name).parent
            todo += [str(Path(here, t)) for t in relative_targets(source.read_text(encoding="utf-8"))
                     if not Path(here, t).as_posix().startswith("..")]
    return sorted(done)

"""A report's links are relative to its folder: the docs pages it cites are copied into it, and no link names a
path on the machine that wrote it (:mod:`attnsim.verify.report.doc_links`)."""

from __future__ import annotations

import re
from pathlib import Path

from attnsim.verify.report.doc_links import SOURCE_DOCS, copy_cited_docs, doc_link, relative_targets

HREF = re.compile(r'(?:href|src)="([^"]+)"')


def assert_links_stay_inside(out: Path) -> int:
    """No absolute path in ``report.md`` or ``report.html``; every relative link of either resolves to a file
    inside ``out``. The number of relative links checked."""
    checked = 0
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "file:" not in text and str(out.resolve()) not in text and str(SOURCE_DOCS) not in text, name
        targets = relative_targets(text) if name.endswith(".md") else [
            t.partition("#")[0] for t in HREF.findall(text) if not t.startswith(("#", "data:"))]
        for target in targets:
            assert not target.startswith("/") and ":" not in target.split("/")[0], (name, target)
            path = (out / target).resolve()
            assert path.is_relative_to(out.resolve()) and path.is_file(), (name, target)
            checked += 1
    return checked


def test_a_cited_page_and_what_it_links_are_copied(tmp_path):
    link = doc_link("reconstructions.md#match2-inputs-0-and-m")
    assert link == "docs/reconstructions.md#match2-inputs-0-and-m"
    assert doc_link("no_such_page.md") is None
    page = f"# report\n\nsee [docs/reconstructions.md]({link}), [a heading](#x) and [a site](https://example.org)\n"
    (tmp_path / "report.md").write_text(page)
    (tmp_path / "report.html").write_text(f'<a href="{link}">r</a> <a href="#x">x</a> <img src="data:a">')
    copied = copy_cited_docs(tmp_path, page)
    assert "reconstructions.md" in copied
    for name in copied:  # and each copied page's own relative links land inside the folder, where they exist
        assert (tmp_path / "docs" / name).read_bytes() == (SOURCE_DOCS / name).read_bytes()
    assert assert_links_stay_inside(tmp_path) == 2


def test_an_absolute_link_is_caught(tmp_path):
    (tmp_path / "report.md").write_text(f"[x]({(SOURCE_DOCS / 'api.md').as_uri()})")
    (tmp_path / "report.html").write_text("")
    try:
        assert_links_stay_inside(tmp_path)
    except AssertionError:
        return
    raise AssertionError("a file: link passed")

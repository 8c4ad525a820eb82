"""``report.html``: the report's markdown as one self-contained page, laid out like a paper's appendix.

Markdown is rendered by markdown-it-py (CommonMark plus pipe tables). LaTeX in ``$...$`` and
``$$...$$`` becomes MathML (latex2mathml, offline: the page loads no scripts, fonts or styles from
anywhere), which browsers draw natively. Every heading gets an ``id`` — a claim's heading, which ends
in its id in backticks, gets that id and ``data-claim="<id>"`` — and a table of contents of the
second- and third-level headings follows the front page. Images are read relative to the report folder
and inlined as base64 (``data-src`` keeps the file name).
"""

from __future__ import annotations

import base64
import html
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

_CLAIM = re.compile(r"`([a-z_]+\.[A-Za-z0-9_.]+)`\s*$")
_MATH = re.compile(r"(`+)(.+?)\1|\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_FENCE = re.compile(r"^(```.*?^```[^\n]*$)", re.S | re.M)
_PLACEHOLDER = re.compile(r"ATTNSIMMATH(\d+)Z")
_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

STYLE = """
body { font-family: "Latin Modern Roman", "Computer Modern", Georgia, serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1.2rem; line-height: 1.5; color: #111; }
h1 { font-size: 1.9rem; margin-bottom: 0.3rem; } h2 { border-bottom: 1px solid #bbb; margin-top: 2.4rem; }
h3 { margin-top: 1.8rem; } h4 { margin-top: 1.2rem; }
nav.toc { border: 1px solid #ddd; background: #fafafa; padding: 0.4rem 1.2rem; margin: 1rem 0 2rem; }
nav.toc ol { margin: 0.2rem 0; padding-left: 1.4rem; } nav.toc li { margin: 0.05rem 0; }
nav.toc ol ol { columns: 2; column-gap: 2rem; font-size: 0.9rem; } nav.toc ol ol li { break-inside: avoid; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.88rem; }
th, td { border-top: 1px solid #ccc; border-bottom: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left;
         vertical-align: top; }
thead th { border-top: 2px solid #333; border-bottom: 1.5px solid #333; }
tbody tr:last-child td { border-bottom: 2px solid #333; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 0.85em; background: #f4f4f4; padding: 0 0.2rem; }
pre { background: #f4f4f4; padding: 0.6rem; overflow-x: auto; }
math { font-size: 1.05em; } math[display="block"] { margin: 0.6rem 0; overflow-x: auto; }
figure { margin: 1rem 0; text-align: center; } img { max-width: 100%; height: auto; }
.pass { color: #17702a; font-weight: 600; } .fail { color: #b00020; font-weight: 600; }
.weak { color: #8a5a00; font-weight: 600; }
.front { border: 1px solid #ccd; background: #f7f8fc; padding: 0.2rem 1.2rem 0.6rem; margin: 1rem 0; }
"""


@lru_cache(maxsize=None)
def latex_to_mathml(tex: str, display: bool = False) -> str:
    """MathML for ``tex`` (no namespace attribute: HTML knows ``<math>``); ``display`` for a block.
    Converted once per formula: a report repeats most of its formulas (a quick report: 163 of 367)."""
    from latex2mathml.converter import convert

    out = convert(tex.strip(), display="block" if display else "inline")
    return out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")


def _protect_math(md: str) -> tuple[str, list[str]]:
    """``md`` with every math span replaced by a placeholder word, and the MathML of each."""
    maths: list[str] = []

    def repl(m: re.Match) -> str:
        if m.group(1):  # a code span: left alone
            return m.group(0)
        block = m.group(3) is not None
        maths.append(latex_to_mathml(m.group(3) if block else m.group(4), display=block))
        word = f"ATTNSIMMATH{len(maths) - 1}Z"
        return f"\n\n{word}\n\n" if block else word

    parts = _FENCE.split(md)
    return "".join(p if i % 2 else _MATH.sub(repl, p) for i, p in enumerate(parts)), maths


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, k = base, 2
    while slug in taken:
        slug, k = f"{base}-{k}", k + 1
    taken.add(slug)
    return slug


def _image_src(src: str, base: Path) -> tuple[str, str | None, int | None]:
    """(src to use, the file name kept as ``data-src``, display width in CSS pixels) — the file inlined as
    base64 when it exists; a PNG is shown at the size it was drawn for (its pixels at the plots' dpi)."""
    path = (base / src).resolve()
    if src.startswith("data:") or not path.is_file():
        return src, None, None
    from attnsim.verify.report.plots import DPI

    raw = path.read_bytes()
    width = None
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        width = round(int.from_bytes(raw[16:20], "big") * 96 / DPI)
    data = base64.b64encode(raw).decode()
    return f"data:{_MIME.get(path.suffix.lower(), 'application/octet-stream')};base64,{data}", src, width


def _parser(base: Path) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def image(renderer: Any, tokens: list, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        src, kept, width = _image_src(tok.attrGet("src") or "", base)
        alt = html.escape(tok.content or "")
        extra = f' data-src="{html.escape(kept)}"' if kept else ""
        extra += f' width="{width}"' if width else ""
        return f'<img alt="{alt}"{extra} src="{html.escape(src)}">'

    md.add_render_rule("image", image)
    return md


def _number_headings(tokens: list) -> list[tuple[int, str, str]]:
    """Give every heading an ``id`` (claim headings: the claim id and ``data-claim``); the (level, id,
    inline markdown) of each, for the table of contents."""
    taken: set[str] = set()
    heads = []
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open":
            continue
        text = tokens[i + 1].content
        m = _CLAIM.search(text)
        if m:
            ident = m.group(1)
            taken.add(ident)
            tok.attrSet("data-claim", ident)
        else:
            ident = _slug(_PLACEHOLDER.sub("", text).replace("`", ""), taken)
        tok.attrSet("id", ident)
        heads.append((int(tok.tag[1]), ident, text))
    return heads


def _toc(md: MarkdownIt, heads: list[tuple[int, str, str]]) -> str:
    """An ordered list of links to the level-2 headings, each holding (inside its ``<li>``) the ordered
    list of its level-3 headings."""
    items: list[tuple[str, list[str]]] = []
    for level, ident, text in heads:
        link = f'<a href="#{html.escape(ident)}">{md.renderInline(text)}</a>'
        if level == 2:
            items.append((link, []))
        elif level == 3:
            if not items:
                items.append(("", []))
            items[-1][1].append(f"<li>{link}</li>")
    if not items:
        return ""
    out = ['<nav class="toc" id="contents"><strong>Contents</strong>', "<ol>"]
    for link, children in items:
        inner = "\n".join(["<ol>", *children, "</ol>"]) if children else ""
        out.append(f"<li>{link}{inner}</li>")
    return "\n".join(out + ["</ol>", "</nav>"])


def markdown_to_html(md_text: str, base: Path, toc: bool = False) -> str:
    """The body HTML of ``md_text``; images are read relative to ``base`` and inlined.

    With ``toc``, a table of contents is placed before the first level-2 heading: what precedes it (the
    title and the report's front page) comes first.
    """
    text, maths = _protect_math(md_text)
    md = _parser(base)
    tokens = md.parse(text)
    heads = _number_headings(tokens)
    body = md.renderer.render(tokens, md.options, {})
    if toc and (nav := _toc(md, heads)):
        cut = body.find("<h2")
        body = body[:cut] + nav + "\n" + body[cut:] if cut >= 0 else body + nav
    body = re.sub(r"<p>(ATTNSIMMATH\d+Z)</p>", r"\1", body)
    body = _PLACEHOLDER.sub(lambda m: maths[int(m.group(1))], body)
    body = re.sub(r"<td>pass \((self-consistency|sanity)\)</td>",
                  r'<td><span class="weak">pass (\1)</span></td>', body)
    return re.sub(r"<td>(pass|fail)</td>", r'<td><span class="\1">\1</span></td>', body)


def html_page(md: str, base: Path, title: str = "attnsim report") -> str:
    """A self-contained HTML page of ``md`` with a table of contents."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{markdown_to_html(md, base, toc=True)}\n</body></html>\n")

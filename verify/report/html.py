"""``report.html``: the report's markdown as one self-contained page (plots inlined as base64).

A small converter for the markdown the report and the papers' ``report_section`` hooks write:
headings, paragraphs, pipe tables, bullet and numbered lists, fenced code, images on their own line,
inline code, bold, italics, and LaTeX in ``$...$`` / ``$$...$$`` (shown as code: the page loads no
scripts or fonts from anywhere). A heading that ends in a claim id in backticks gets
``data-claim="<id>"`` so that tools (and our test) can find every claim's section.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

_CLAIM = re.compile(r"`([a-z_]+\.[A-Za-z0-9_.]+)`\s*$")
_IMG = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)\)\s*$")
_ITEM = re.compile(r"^\s*([-*]|\d+\.)\s+")
_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f6f6f6; padding: 0 0.2rem; }
pre { background: #f6f6f6; padding: 0.6rem; overflow-x: auto; }
div.math { overflow-x: auto; margin: 0.4rem 0; }
img { max-width: 100%; }
.pass { color: #17702a; font-weight: 600; } .fail { color: #b00020; font-weight: 600; }
"""


def _inline(text: str) -> str:
    parts = re.split(r"(`[^`]+`|\$[^$]+\$)", text)
    out = []
    for p in parts:
        if len(p) > 1 and p[0] == p[-1] == "`":
            out.append(f"<code>{html.escape(p[1:-1])}</code>")
        elif len(p) > 1 and p[0] == p[-1] == "$":
            out.append(f'<code class="math">{html.escape(p[1:-1])}</code>')
        else:
            s = html.escape(p)
            s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
            s = re.sub(r"(?<![\w])_(.+?)_(?![\w])", r"<em>\1</em>", s)
            s = re.sub(r"\b(pass|fail)\b(?=\s*(\||$))", r'<span class="\1">\1</span>', s)
            out.append(s)
    return "".join(out)


def _image(alt: str, src: str, base: Path) -> str:
    path = (base / src).resolve()
    if src.startswith("data:") or not path.is_file():
        return f'<img alt="{html.escape(alt)}" src="{html.escape(src)}">'
    data = base64.b64encode(path.read_bytes()).decode()
    mime = _MIME.get(path.suffix.lower(), "application/octet-stream")
    return f'<img alt="{html.escape(alt)}" data-src="{html.escape(src)}" src="data:{mime};base64,{data}">'


def _table(rows: list[str]) -> str:
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    head, body = cells[0], [r for r in cells[2:]]
    out = ["<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body]
    return "\n".join(out) + "</tbody></table>"


def markdown_to_html(md: str, base: Path) -> str:
    """The body HTML of ``md``; images are read relative to ``base`` and inlined."""
    lines = md.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre><code>" + html.escape("\n".join(lines[i + 1:j])) + "</code></pre>")
            i = j + 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            level, text = len(m.group(1)), m.group(2).strip()
            cm = _CLAIM.search(text)
            attr = f' data-claim="{html.escape(cm.group(1))}" id="{html.escape(cm.group(1))}"' if cm else ""
            out.append(f"<h{level}{attr}>{_inline(text)}</h{level}>")
            i += 1
        elif line.strip().startswith("$$"):
            j = i
            if not (line.strip().endswith("$$") and len(line.strip()) > 2):
                j = i + 1
                while j < len(lines) and "$$" not in lines[j]:
                    j += 1
            tex = "\n".join(lines[i:j + 1]).strip().strip("$").strip()
            out.append(f'<div class="math"><code>{html.escape(tex)}</code></div>')
            i = j + 1
        elif m := _IMG.match(line.strip()):
            out.append(f"<figure>{_image(m.group(1), m.group(2), base)}</figure>")
            i += 1
        elif line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
        elif _ITEM.match(line):
            tag = "ol" if re.match(r"^\s*\d+\.", line) else "ul"
            items = []
            while i < len(lines) and _ITEM.match(lines[i]):
                items.append(f"<li>{_inline(_ITEM.sub('', lines[i]))}</li>")
                i += 1
            out.append(f"<{tag}>" + "".join(items) + f"</{tag}>")
        else:
            j = i
            while j < len(lines) and lines[j].strip() and not re.match(r"^(#|\||```|\$\$|!\[|\s*[-*]\s|\s*\d+\.\s)",
                                                                        lines[j].lstrip()):
                j += 1
            j = max(j, i + 1)
            out.append("<p>" + _inline(" ".join(lines[i:j])) + "</p>")
            i = j
    return "\n".join(out)


def html_page(md: str, base: Path, title: str = "attnsim report") -> str:
    """A self-contained HTML page of the report's Markdown."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{markdown_to_html(md, base)}\n</body></html>\n")

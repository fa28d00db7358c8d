"""A self-contained HTML page: inline CSS, figures as data: URIs, no
script, and a Content-Security-Policy that forbids the page any network
access.  Every piece of text goes through `esc`; only the builders here
emit markup, so a directory named `<script>` is shown, never run."""

import base64
import html

CSS = """
body { font: 15px/1.45 Georgia, 'DejaVu Serif', serif; max-width: 62em; margin: 2em auto;
       padding: 0 1em; color: #1a1a1a; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 0.6em 0; font: 13px/1.3 'DejaVu Sans Mono', monospace; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: right; vertical-align: top; }
th { background: #f0f0f0; } td.text, th.text { text-align: left; }
caption { caption-side: top; text-align: left; font: italic 14px Georgia, serif; padding: 0.3em 0; }
figure { margin: 1.2em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-style: italic; font-size: 14px; }
.spread { color: #666; font-size: 11px; }
ul.findings li { margin: 0.3em 0; } .rule { font-weight: bold; }
ul.warnings li { color: #8a4b00; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 12px; white-space: pre-wrap; }
"""

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")


def esc(text):
    """Text (anything) as HTML text or attribute value."""
    return html.escape("" if text is None else str(text), quote=True)


class Page:
    def __init__(self, title):
        self.title = title
        self.parts = []

    def add(self, markup):
        """Markup built by this module's helpers."""
        self.parts.append(markup)

    def render(self):
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{esc(self.title)}</title><style>{CSS}</style></head>\n<body>\n"
                + "\n".join(self.parts) + "\n</body></html>\n")


def heading(level, text, anchor=None):
    a = f' id="{esc(anchor)}"' if anchor else ""
    return f"<h{level}{a}>{esc(text)}</h{level}>"


def paragraph(text, cls=None):
    c = f' class="{esc(cls)}"' if cls else ""
    return f"<p{c}>{esc(text)}</p>"


def preformatted(text):
    return f"<pre>{esc(text)}</pre>"


def items(lines, cls=None):
    c = f' class="{esc(cls)}"' if cls else ""
    return f"<ul{c}>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"


def findings(found, cls="findings"):
    """Diagnosis findings: the rule in bold, the text, the points."""
    out = []
    for f in found:
        where = f" [{esc('; '.join(f.points))}]" if f.points else ""
        out.append(f"<li><span class=\"rule\">{esc(f.rule)}</span>: {esc(f.text)}{where}</li>")
    return f"<ul class=\"{esc(cls)}\">" + "".join(out) + "</ul>"


def table(head, rows, caption=None, number=None, text_columns=(0,), anchor=None, cls="data"):
    """head: column titles; rows: lists of cells (text, or (text, small)
    pairs shown as a value with its spread under it)."""
    a = f' id="{esc(anchor)}"' if anchor else ""
    cap = ""
    if caption or number:
        label = f"{number}. " if number else ""
        cap = f"<caption>{esc(label + (caption or ''))}</caption>"

    def cell(tag, i, v):
        cls_ = ' class="text"' if i in text_columns else ""
        if isinstance(v, tuple):
            main, small = v
            return f"<{tag}{cls_}>{esc(main)}<br><span class=\"spread\">{esc(small)}</span></{tag}>"
        return f"<{tag}{cls_}>{esc(v)}</{tag}>"

    thead = "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(head)) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>"
                   for r in rows)
    return f"<table class=\"{esc(cls)}\"{a}>{cap}<thead>{thead}</thead><tbody>{body}</tbody></table>"


def figure(image_bytes, mime, caption, number=None, alt="", anchor=None):
    """An image embedded as a data: URI, with its numbered caption."""
    a = f' id="{esc(anchor)}"' if anchor else ""
    data = base64.b64encode(image_bytes).decode("ascii")
    label = f"{number}. " if number else ""
    return (f"<figure{a}><img src=\"data:{esc(mime)};base64,{data}\" alt=\"{esc(alt or caption)}\">"
            f"<figcaption>{esc(label + caption)}</figcaption></figure>")

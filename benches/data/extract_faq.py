#!/usr/bin/env python3
"""Extract the SQLite FAQ (faq.html) into a JSON question/answer list.

The SQLite documentation is in the public domain (https://sqlite.org/copyright.html).
Debian ships it as the package ``sqlite3-doc``; the FAQ page is installed at
``/usr/share/doc/sqlite3/faq.html``.

Usage:
    python3 extract_faq.py FAQ_HTML OUT_JSON [--package-version VERSION]

    e.g.  python3 benches/data/extract_faq.py \\
              /usr/share/doc/sqlite3/faq.html benches/data/sqlite_faq.json

If --package-version is not given, the version is read with
``dpkg-query -W -f='${Version}' sqlite3-doc`` when that works, else "unknown".

Output format:
    {
      "source": "SQLite FAQ (faq.html, sqlite3-doc VERSION, public domain)",
      "items": [{"n": 1, "anchor": "q1", "question": "...", "answer": "..."}, ...]
    }

"n" is the FAQ's own question number, so it matches the page's "#qN" anchors.
The upstream page has no question 16 (it was retired), so the numbers run
1..28 with 16 missing: 27 items. Question and answer are plain text: tags are
dropped, entities decoded (html.parser's convert_charrefs) and every run of
whitespace, non-breaking spaces included, is folded into one space.

Standard library only.
"""

import argparse
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

ANCHOR_RE = re.compile(r"^q(\d+)$")
QUESTION_PREFIX_RE = re.compile(r"^\((\d+)\)\s*")


def fold(text):
    return " ".join(text.split())


class FaqParser(HTMLParser):
    """Collects text between each <a name="qN"> anchor and the next one.

    Inside an item, text within <b> in the first paragraph is the question;
    everything else is the answer. Collection stops at the </ol> that closes
    the FAQ list (an </ol> seen while no list opened inside the items is open).
    """

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items = []
        self.cur = None  # dict with n, q (list), a (list)
        self.in_bold = 0
        self.question_done = False
        self.list_depth = 0
        self.skip = 0  # inside <script>/<style>
        self.finished = False

    def _close_item(self):
        if self.cur is not None:
            self.items.append(self.cur)
            self.cur = None

    def handle_starttag(self, tag, attrs):
        if self.finished:
            return
        if tag in ("script", "style"):
            self.skip += 1
            return
        if tag == "a":
            name = dict(attrs).get("name") or ""
            m = ANCHOR_RE.match(name)
            if m:
                self._close_item()
                self.cur = {"n": int(m.group(1)), "anchor": name, "q": [], "a": []}
                self.in_bold = 0
                self.question_done = False
                self.list_depth = 0
                return
        if self.cur is None:
            return
        if tag == "b" and not self.question_done:
            self.in_bold += 1
        elif tag in ("ol", "ul"):
            self.list_depth += 1
        # Block-level boundaries become spaces so words do not run together.
        if tag in ("p", "br", "li", "blockquote", "pre", "div", "tr", "td", "th",
                   "ol", "ul", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "table"):
            self._emit(" ")

    def handle_endtag(self, tag):
        if self.finished:
            return
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
            return
        if self.cur is None:
            return
        if tag == "b" and self.in_bold:
            self.in_bold -= 1
            if self.in_bold == 0:
                self.question_done = True
        elif tag in ("ol", "ul"):
            if self.list_depth == 0 and tag == "ol":
                self._close_item()
                self.finished = True
                return
            self.list_depth = max(0, self.list_depth - 1)
        if tag in ("p", "li", "blockquote", "pre", "div", "tr", "td", "th",
                   "ol", "ul", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "table"):
            self._emit(" ")

    def handle_data(self, data):
        if self.finished or self.skip or self.cur is None:
            return
        self._emit(data)

    def _emit(self, text):
        if self.in_bold and not self.question_done:
            self.cur["q"].append(text)
        elif self.question_done:
            self.cur["a"].append(text)
        # Text before the question (should not occur) is dropped.

    def close(self):
        super().close()
        self._close_item()


def package_version():
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "sqlite3-doc"],
            capture_output=True, text=True, check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def extract(html_text):
    p = FaqParser()
    p.feed(html_text)
    p.close()
    items = []
    for it in p.items:
        q = fold("".join(it["q"]))
        m = QUESTION_PREFIX_RE.match(q)
        if m:
            if int(m.group(1)) != it["n"]:
                print(f"warning: anchor q{it['n']} has question number {m.group(1)}",
                      file=sys.stderr)
            q = q[m.end():]
        a = fold("".join(it["a"]))
        if not q or not a:
            print(f"warning: item {it['n']} has an empty question or answer",
                  file=sys.stderr)
        items.append({"n": it["n"], "anchor": it["anchor"], "question": q, "answer": a})
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("faq_html", help="path to faq.html")
    ap.add_argument("out_json", help="where to write the JSON")
    ap.add_argument("--package-version", default=None,
                    help="sqlite3-doc version for the 'source' field")
    args = ap.parse_args()

    with open(args.faq_html, encoding="utf-8") as f:
        items = extract(f.read())
    version = args.package_version or package_version()
    doc = {
        "source": f"SQLite FAQ (faq.html, sqlite3-doc {version}, public domain)",
        "items": items,
    }
    with open(args.out_json, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(items)} items to {args.out_json}", file=sys.stderr)


if __name__ == "__main__":
    main()

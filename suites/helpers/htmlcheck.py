#!/usr/bin/env python3
"""htmlcheck.py — reads a page's DOM as headless Chromium dumped it
(suites/helpers/reportui.bash), for suites/reportui.bats.

  htmlcheck.py links ROOT PAGE DOM
      every href and src of DOM (PAGE's, a path under the report
      directory ROOT) is a relative link to a file under ROOT that exists,
      and an #anchor names an id of its target; no <script> (the report
      needs no JavaScript).  Prints "page REL" for each page it links to
      (the crawl goes on there) and "reportui: PAGE: WHAT" per problem.
  htmlcheck.py names DOM NAME...
      each NAME is the whole text of an element of DOM (a table cell, a
      link): "reportui: NAME is not in the DOM" for each that is not.

Exit 1 when a problem was printed.  Standard library only.
"""

import os
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Dom(HTMLParser):
    """The links, ids, scripts and element texts of one document."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.ids, self.texts, self.scripts = [], set(), set(), 0
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("href", "src"):
            if a.get(k) is not None:
                self.links.append(a[k])
        if a.get("id"):
            self.ids.add(a["id"])
        self.scripts += tag == "script"
        if tag not in VOID:
            self.stack.append([tag, ""])

    def handle_endtag(self, tag):
        if all(t != tag for t, _ in self.stack):
            return          # a stray end tag closes nothing
        while self.stack:
            t, text = self.stack.pop()
            self.texts.add(" ".join(text.split()))
            if self.stack:
                self.stack[-1][1] += text
            if t == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][1] += data


def parse(path):
    d = Dom()
    with open(path, encoding="utf-8", errors="replace") as f:
        d.feed(f.read())
    d.close()
    if d.stack:
        d.handle_endtag(d.stack[0][0])     # what was left open ends here
    return d


def link_problem(root, page, href):
    """(problem or None, target page to crawl or None) for one link."""
    u = urlsplit(href)
    if u.scheme or u.netloc or href.startswith("/"):
        return f"link '{href}' is not a relative link into the report", None
    path = unquote(u.path)
    rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
    if rel.startswith(".."):
        return f"link '{href}' leaves the report directory", None
    full = os.path.join(root, rel)
    if not os.path.isfile(full):
        return f"link '{href}': no file {rel}", None
    if u.fragment and rel.endswith(".html") and u.fragment not in parse(full).ids:
        return f"link '{href}': no id '{u.fragment}' in {rel}", None
    return None, rel if rel.endswith(".html") and rel != page else None


def links(root, page, dom):
    d = parse(dom)
    bad, pages = [], []
    if d.scripts:
        bad.append(f"{d.scripts} <script> element(s): the report must need no JavaScript")
    for href in d.links:
        why, target = link_problem(root, page, href)
        if why:
            bad.append(why)
        elif target and target not in pages:
            pages.append(target)
    for p in pages:
        print(f"page {p}")
    for b in bad:
        print(f"reportui: {page}: {b}")
    return 1 if bad else 0


def names(dom, wanted):
    texts = parse(dom).texts
    missing = [n for n in wanted if n not in texts]
    for n in missing:
        print(f"reportui: '{n}' is not in the DOM (no element has it as its text)")
    return 1 if missing else 0


def main(argv):
    if len(argv) == 4 and argv[0] == "links":
        return links(*argv[1:])
    if len(argv) >= 2 and argv[0] == "names":
        return names(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

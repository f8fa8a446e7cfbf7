#!/usr/bin/env python3
"""Checks a DOM dump of the schedlab page (scripts/e2e) for what a user should see.

The default page is kunpeng920-6426 on v6.8 with CPU 0 chosen. Its domains, bottom-up
after degeneration (NODE and PKG degenerate into MC and NUMA), start CLS 0-3, MC 0-31,
then only NUMA levels from 0-63 up to the whole machine, 0-127. (With this SLIT,
10/16/32/33 from node 0, the distance-32 level 0-95 lies between; which NUMA levels
survive is core's to test, this checks the page shows them.)
"""
import html.parser
import sys

EXPECTED_BOTTOM = [("CLS", "0-3"), ("MC", "0-31"), ("NUMA", "0-63")]
EXPECTED_TOP = ("NUMA", "0-127")


class Page(html.parser.HTMLParser):
    """Collects the text of elements by class, and the CPU buttons."""

    WATCH = {"level-name", "level-span", "error", "cpu", "sub"}

    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, watched class or None)
        self.texts = {k: [] for k in self.WATCH}
        self.selected_cpu = []
        self.options = {}
        self.select_id = None
        self.title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        watched = next((c for c in classes if c in self.WATCH), None)
        if tag == "button" and "selected" in classes:
            self.selected_cpu.append(a.get("data-cpu"))
        if tag == "select":
            self.select_id = a.get("id")
        if tag == "title":
            self.in_title = True
        if tag in ("br", "meta", "link", "input", "img"):
            return
        self.stack.append((tag, watched))
        if watched:
            self.texts[watched].append("")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag == "select":
            self.select_id = None
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        # Text belongs to the innermost watched element.
        for _, watched in reversed(self.stack):
            if watched:
                self.texts[watched][-1] += data
                break


def main():
    dom = open(sys.argv[1], encoding="utf-8").read()
    page = Page()
    page.feed(dom)
    problems = []

    def check(ok, what):
        print(("  ok   " if ok else "  FAIL ") + what)
        if not ok:
            problems.append(what)

    check("schedlab" in page.title, f"page title mentions schedlab (got {page.title!r})")
    check(not page.texts["error"], f"no error messages shown (got {page.texts['error']})")
    check("kunpeng920-6426" in dom, "the default preset kunpeng920-6426 is named")
    cpus = page.texts["cpu"]
    check(len(cpus) == 128, f"the machine drawing has 128 CPU buttons (got {len(cpus)})")
    check(page.selected_cpu == ["0"], f"CPU 0 is the selected CPU (got {page.selected_cpu})")
    levels = list(zip(page.texts["level-name"], page.texts["level-span"]))
    check(levels[:3] == EXPECTED_BOTTOM, f"CPU 0's lowest domains on v6.8 are {EXPECTED_BOTTOM} (got {levels})")
    check(levels[-1:] == [EXPECTED_TOP], f"CPU 0's top domain is {EXPECTED_TOP} (got {levels})")
    names = [n for n, _ in levels]
    check(all(n == "NUMA" for n in names[2:]), f"above MC there are only NUMA levels (got {names})")
    check("v6.8" in dom, "kernel v6.8 is shown")
    check("SD_CLUSTER" in dom, "the CLS level's SD_CLUSTER flag is shown")
    check("panicked" not in dom, "no Rust panic text in the page")

    if problems:
        print(f"{len(problems)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()

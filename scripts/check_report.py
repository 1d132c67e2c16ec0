#!/usr/bin/env python3
"""Renders the course report in headless Chromium and checks what a reader would see.

    scripts/check_report.py REPORT_DIR [FIGURE_ID ...]

Loads REPORT_DIR/index.html in headless Chromium (Debian's chromium; CHROMIUM=... picks
another) and checks, on the page as the browser built it:
  - the console stayed silent: no errors, no messages at all (the page has no scripts);
  - the page loads nothing from elsewhere (every plot is inline);
  - every figure holds a plot, and every data set of every plot drew something;
  - each FIGURE_ID given is on the page.
Exit 0 when all hold, 1 naming each failure, 77 when no Chromium is installed (skipped).

How "drew something" is read: style.gp draws the key opaque, so gnuplot writes each data
set's group (id ..._gnuplot_plot_N) twice: first the data, then again for its key entry.
The first group of each id must hold a drawing element; an empty data set leaves it empty.
"""
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile

DRAWING = {"path", "polygon", "polyline", "rect", "use", "circle", "line"}


class Page(html.parser.HTMLParser):
    """Figures, the plot groups inside them and what each group draws."""

    def __init__(self):
        super().__init__()
        self.figures = {}          # figure id -> {"svgs": n, "groups": {group id: [drawings per copy]}}
        self.external = []         # src/href values that would load something
        self.figure = None
        self.group_stack = []      # (group id or None) for each open <g>

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "xlink:href"):
            value = attrs.get(name)
            if value is not None and not value.startswith("#"):
                self.external.append(value)
        if tag == "figure":
            self.figure = {"svgs": 0, "groups": {}}
            self.figures[attrs.get("id", "figure %d" % (len(self.figures) + 1))] = self.figure
        elif tag == "svg" and self.figure is not None:
            self.figure["svgs"] += 1
        elif tag == "g":
            group = attrs.get("id", "")
            if self.figure is not None and "gnuplot_plot_" in group:
                self.figure["groups"].setdefault(group, []).append(0)
                self.group_stack.append(group)
            else:
                self.group_stack.append(None)
        elif tag in DRAWING:
            self.count_drawing()

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "g":
            self.group_stack.pop()

    def count_drawing(self):
        for group in reversed(self.group_stack):
            if group is not None:
                self.figure["groups"][group][-1] += 1
                return

    def handle_endtag(self, tag):
        if tag == "g" and self.group_stack:
            self.group_stack.pop()
        elif tag == "figure":
            self.figure = None


def render(chromium, page_path):
    """The DOM Chromium built, and the console lines it logged."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--dump-dom",
             "file://" + os.path.abspath(page_path)],
            capture_output=True, text=True, timeout=180)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    if result.returncode != 0 or "<html" not in result.stdout:
        sys.exit("check_report: chromium could not render %s (exit %d): %s"
                 % (page_path, result.returncode, result.stderr.strip()[-500:]))
    return result.stdout, console


def failures(page, console, wanted):
    found = ["console: " + line for line in console]
    found += ["the page loads %s from elsewhere" % value for value in page.external]
    if not page.figures:
        found.append("the page has no figures")
    for figure_id in wanted:
        if figure_id not in page.figures:
            found.append("figure %s is missing" % figure_id)
    for figure_id, figure in page.figures.items():
        if figure["svgs"] != 1 or not figure["groups"]:
            found.append("figure %s holds no plot" % figure_id)
        for group, drawings in sorted(figure["groups"].items()):
            if len(drawings) != 2:
                found.append("figure %s: %s appears %d times, not data then key (is the key still opaque?)"
                             % (figure_id, group, len(drawings)))
            elif drawings[0] == 0:
                found.append("figure %s: data set %s drew nothing" % (figure_id, group.split("gnuplot_plot_")[1]))
    return found


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if len(sys.argv) > 1 else sys.stderr)
        return 0 if len(sys.argv) > 1 else 2
    page_path = os.path.join(sys.argv[1], "index.html")
    if not os.path.isfile(page_path):
        print("check_report: %s is missing (scripts/make_report.py writes it)" % page_path, file=sys.stderr)
        return 1
    chromium = shutil.which(os.environ.get("CHROMIUM", "chromium"))
    if chromium is None:
        print("check_report: skipped: no chromium (make setup installs it)", file=sys.stderr)
        return 77
    dom, console = render(chromium, page_path)
    page = Page()
    page.feed(dom)
    found = failures(page, console, sys.argv[2:])
    for line in found:
        print("check_report: " + line, file=sys.stderr)
    if not found:
        plots = sum(len(f["groups"]) for f in page.figures.values())
        print("check_report: %s: %d figures, %d data sets, all drawn; console silent"
              % (page_path, len(page.figures), plots))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

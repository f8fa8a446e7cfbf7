"""What every journey shares: the check counter, the Page (waits that tolerate Yew's
re-renders), the browser, the scenarios the journeys open (TEACHING, SIMULATE), the
native CLI the page is checked against, axe-core, colour schemes, viewports and the
download hook."""

import base64
import json
import os
import subprocess
import tempfile
import time
import zlib

os.environ["SE_OFFLINE"] = "true"  # before selenium is imported: never fetch drivers

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1400,1100",
]
VIEWPORT = (1400, 1100)


class Results:
    """Counts the checks; prints each as PASS or FAIL."""

    def __init__(self):
        self.passed = 0
        self.failed = []
        self.journey = ""

    def check(self, ok, what):
        ok = bool(ok)
        print(f"  {'PASS' if ok else 'FAIL'} {what}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(f"{self.journey}: {what}")
        return ok


results = Results()
check = results.check


def busy_factor():
    """How oversubscribed this machine is now: the 1-minute load average per CPU, at
    least 1. Wall-clock checks (a link that must not freeze the tab) stretch by it, so a
    CI run sharing 2 cores with other builds does not fail them, while a quiet machine
    is held to the stated limit."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def note(what):
    """An informational line (timings, paths), not a check."""
    print(f"       ({what})", flush=True)


class Page:
    """The page in one browser session, with waits that tolerate Yew's re-renders
    (an element found a moment ago may be gone: that is "not yet", not an error)."""

    RETRY = (StaleElementReferenceException, NoSuchElementException, IndexError)

    def __init__(self, driver, url):
        self.driver = driver
        self.url = url.split("#")[0]

    def open(self, fragment=None):
        """Loads the page afresh, from a shared link's fragment if given."""
        self.driver.get("about:blank")
        self.driver.get(self.url + ("#" + fragment if fragment else ""))

    def all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def count(self, css):
        return len(self.all(css))

    def texts(self, css):
        """The rendered text of every element matching css (as a user reads it)."""
        return [e.text for e in self.all(css)]

    def text(self, css):
        """The first match's text, or None."""
        found = self.texts(css)
        return found[0] if found else None

    def attrs(self, css, name):
        return [e.get_attribute(name) for e in self.all(css)]

    def until(self, fn, timeout=30.0, poll=0.05):
        """Calls fn() until it is truthy and returns that; on timeout returns its last value."""
        last = [None]

        def attempt(_):
            last[0] = fn()
            return last[0]

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=poll,
                                 ignored_exceptions=self.RETRY).until(attempt)
        except TimeoutException:
            return last[0]

    def wait_for(self, css, timeout=30.0, pred=None):
        """Waits until elements match css (and pred(texts) holds); returns their texts,
        or on timeout whatever matched last, for the check to show."""
        last = [[]]

        def attempt():
            t = self.texts(css)
            last[0] = t
            return t if t and (pred is None or pred(t)) else None

        return self.until(attempt, timeout, poll=0.1) or last[0]

    def wait_count(self, css, n, timeout=30.0):
        """Waits until n elements match css; returns how many matched last."""
        last = [0]

        def attempt():
            last[0] = self.count(css)
            return last[0] == n

        self.until(attempt, timeout)
        return last[0]

    def click(self, css):
        found = self.all(css)
        if not found:
            raise NoSuchElementException(f"nothing matches {css}")
        found[0].click()

    def select(self, css, value):
        """Picks the option with this value in a <select>, as a person would."""
        Select(self.driver.find_element(By.CSS_SELECTOR, css)).select_by_value(value)

    def set_input(self, css, value):
        """Types a value into an input as a person would end an edit: value, then change."""
        self.js("const e = document.querySelector(arguments[0]); e.value = arguments[1];"
                "e.dispatchEvent(new Event('change', {bubbles: true}));", css, value)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    @property
    def hash(self):
        return self.js("return location.hash")

    @property
    def html(self):
        """The live DOM, serialised."""
        return self.js("return document.documentElement.outerHTML")

    def screenshot(self, path):
        if not self.driver.save_screenshot(path):
            raise WebDriverException(f"could not write the screenshot {path}")


def chart_series(page):
    """Every line in the Simulate tab's chart, as
    [{"side": "a" | "b", "published": bool, "points": [(x, y), ...], "markers": int}].

    The one place that knows how the chart is drawn. Today: plotters' SVG in
    .sim-chart; a series is a <polyline data-side>, a sweep's model series has a
    <circle data-side> marker per point, and the published numbers are
    polyline.published-line (with data-side).
    """
    raw = page.js("""
        return [...document.querySelectorAll('.sim-chart polyline')].map(p => {
          const side = p.dataset.side || null;
          const published = p.classList.contains('published-line');
          const chart = p.closest('.sim-chart');
          return {
            side: side,
            published: published,
            points: p.getAttribute('points') || '',
            markers: side && !published
              ? chart.querySelectorAll(`circle[data-side="${side}"]`).length : 0,
          };
        })""")
    for s in raw:
        s["points"] = [tuple(float(v) for v in xy.split(",")) for xy in s["points"].split()]
    return raw


def fragment(scenario):
    """core::scenario's v1 encoding: base64url (no padding) of the JSON."""
    raw = json.dumps(scenario, separators=(",", ":")).encode()
    return "v1:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decoded_hash(page):
    """The page's link as JSON text: a v2 fragment is raw deflate, a v1 one plain."""
    h = page.hash.lstrip("#")
    version, _, body = h.partition(":")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return (zlib.decompress(raw, -15) if version == "v2" else raw).decode()
    except (ValueError, zlib.error) as e:
        return f"(not a link: {e})"


# Seed 01's case on kunpeng920-6426: everything busy but CPU2 (in the waker CPU0's
# cluster 0-3) and CPU12 (the wakee's prev, cluster 12-15); 6.6 against 6.6+cluster.
TEACHING = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "wakeup",
    "wake": {"busy": "0-1,3-11,13-127", "waker": 0, "prev": 12, "sync": True,
             "nr_idle_scan": 8, "compare": "6.6+cluster"},
}

# Seed 01's tbench case, short: 4 clients pinned to node 0, 6.6 against 6.6+cluster.
SIMULATE = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "simulate",
    "wake": {"compare": "6.6+cluster"},
    "sim": {"workload": {"kind": "tbench", "clients": 4}, "cpus": "node0",
            "duration_ms": 60, "seed": 1},
}


def cli_json(cfg, *args):
    out = subprocess.run([cfg["cli"], *args, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def native_run(cfg, sim, patches):
    """`schedlab run`'s JSON report for a page's simulation."""
    w = sim["workload"]
    return cli_json(cfg, "run", "--machine", "kunpeng920-6426", "--cpus", sim["cpus"],
                    "--workload", w["kind"], "--threads", str(w["clients"]),
                    "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]),
                    "--warmup", sim.get("warmup", "fifth"), "--patches", patches)


def native(cfg, sim, patches):
    """The digest `schedlab run` gives for a page's simulation."""
    return native_run(cfg, sim, patches)["digest"]


AXE = "tools/node_modules/axe-core/axe.min.js"


def axe_violations(page):
    """axe-core's violations on the page as it is: [(id, impact, nodes, first target)]."""
    if not page.js("return typeof axe !== 'undefined'"):
        with open(AXE, encoding="utf-8") as f:
            page.js(f.read())
    done = page.driver.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => cb(r.violations.map(v => [v.id, v.impact, v.nodes.length,"
        " v.nodes[0].target.join(' ')])), e => cb('axe failed: ' + e));")
    return done


LIGHT_BG = "rgb(246, 247, 249)"  # --bg in static/css/00-colours.css, light and dark
DARK_BG = "rgb(14, 17, 22)"


class emulated_scheme:
    """`with emulated_scheme(page, "dark"):` the system's prefers-color-scheme (CDP)."""

    def __init__(self, page, scheme):
        self.page, self.scheme = page, scheme

    def __enter__(self):
        self.page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": self.scheme}]})

    def __exit__(self, *exc):
        self.page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def page_background(page):
    return page.js("return getComputedStyle(document.body).backgroundColor")


def reopen_in_designer(page, ready):
    """Opens the page's own link in a fresh page with the designer open, as a user
    who shares the design would: first waits past the history's coalescing window,
    so the last edit is in the link, then for the designer's `ready` element."""
    time.sleep(1.2)
    page.open(page.hash.lstrip("#"))
    page.wait_for(".level-name")
    page.click("#open-designer")
    page.wait_for(ready)


def window_frame(driver):
    """The window's size less the page's viewport: what the browser's frame takes.

    Measured by the driver's window size, not the page's outerWidth: below 500 px
    Chromium's outerWidth reads its window floor (500), not the window's width, so
    from a narrow window outerWidth - innerWidth is 110 px too much."""
    size = driver.get_window_size()
    inner = driver.execute_script("return [innerWidth, innerHeight]")
    return size["width"] - inner[0], size["height"] - inner[1]


def set_viewport(page, width, height):
    """Sizes the window so that the page's own viewport is width x height; raises
    (failing the journey) if it does not become that within 5 s."""
    dw, dh = window_frame(page.driver)
    page.driver.set_window_size(width + dw, height + dh)
    got = page.until(lambda: page.js("return [innerWidth, innerHeight]") == [width, height]
                     or None, timeout=5)
    if not got:
        raise AssertionError(f"asked for a {width}x{height} viewport, got "
                             f"{page.js('return [innerWidth, innerHeight]')}")


MOBILE = (390, 844)

# Every button and select drawn, smaller than 40 px (or arguments[0] px) in width or
# height, as [[width, height, description]]; the skip link (off screen until focused) is
# not drawn. arguments[1], if given, says what to measure instead of every button,
# select and summary.
SMALL_TARGETS = """
    return [...document.querySelectorAll(arguments[1] || 'button, select, summary')].filter(e => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.bottom + scrollY > 0 && e.checkVisibility()
        && Math.min(r.width, r.height) < (arguments[0] || 40);
    }).map(e => { const r = e.getBoundingClientRect();
      return [Math.round(r.width), Math.round(r.height),
              e.tagName + '.' + e.className + ' ' + e.textContent.trim().slice(0, 20)]; });"""


# Words broken across two lines in the elements matching arguments[0] (drawn ones):
# a word ends at a space or after a '+' (where a patch set may break), as [word].
BROKEN_WORDS = r"""
    const out = [];
    for (const e of document.querySelectorAll(arguments[0])) {
      if (!e.checkVisibility()) continue;
      const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        for (const m of n.data.matchAll(/[^\s+]+\+?/g)) {
          const r = document.createRange();
          r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
          const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
          if (tops.size > 1) out.push(m[0]);
        }
      }
    }
    return out;"""

# A C arrow ("sd_llc_shared->nr_idle_scan") or a number range ("0-3") broken inside,
# its hyphen on one line and the ">" or digit after it on the next, or a number and
# its unit ("12 ms", "0.61 M events/s") on two lines, in the elements matching
# arguments[0] (drawn ones), as [text]: the wake-up trace broke "->" in a 1280x720
# embed, "0-3" after its hyphen (session 39); the Simulate tab's status line "12" over
# "ms of warm-up" at 1280x720, "0.61" over "M events/s" on a phone (session 40).
BROKEN_JOINS = r"""
    const out = [];
    for (const e of document.querySelectorAll(arguments[0])) {
      if (!e.checkVisibility()) continue;
      // The element's text nodes joined, so that a join split over nodes (a name, then
      // its "->" in a span of its own) is still found; each with its start.
      const nodes = []; let text = '';
      const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) { nodes.push([n, text.length]); text += n.data; }
      const top = k => {
        let i = nodes.length - 1;
        while (i > 0 && (nodes[i][1] > k || nodes[i][1] + nodes[i][0].data.length <= k)) i--;
        const [n, start] = nodes[i];
        const r = document.createRange(); r.setStart(n, k - start); r.setEnd(n, k - start + 1);
        return Math.round(r.getBoundingClientRect().top);
      };
      for (const m of text.matchAll(/(?:[\w.]+|\d)-[>\d]/g)) {
        const dash = m.index + m[0].lastIndexOf('-');
        if (top(dash) !== top(m.index + m[0].length - 1)) out.push(m[0]);
      }
      for (const m of text.matchAll(/\d[\d.,]* (?:M events\/s|MB\/s|ms|µs|ns|s)(?![\w])/g))
        if (top(m.index) !== top(m.index + m[0].length - 1)) out.push(m[0]);
      // A change line's "for B" (a phone broke "+9.31% for" over "B (higher is better)").
      for (const m of text.matchAll(/\bfor B\b/g))
        if (top(m.index) !== top(m.index + m[0].length - 1)) out.push(m[0]);
      // Copied text is the text: no invisible joiner or zero-width space in it.
      if (/[\u2060\u200b]/.test(text)) out.push('an invisible character in ' + text.slice(0, 40));
    }
    return out;"""

# The smallest text drawn in the SVGs matching arguments[0], as the reader sees it: its
# font size times the SVG's scale on the page (a rotated axis title's too), as
# [px, text]; [1000, ''] when none is drawn (a hidden group's text has an empty box).
SMALLEST_SVG_TEXT = """
    let least = [1000, ''];
    for (const t of document.querySelectorAll(arguments[0] + ' text')) {
      const box = t.getBoundingClientRect();
      if (!t.checkVisibility() || !t.textContent.trim() || box.width + box.height === 0) continue;
      const m = t.getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (px < least[0]) least = [Math.round(px * 10) / 10, t.textContent.trim()];
    }
    return least;"""

# Text drawn in the SVGs matching arguments[0] that reaches past the SVG's edges (cut
# there), as [[text, left, top, right, bottom]] relative to the SVG's box.
SVG_TEXT_CUT = """
    const out = [];
    for (const svg of document.querySelectorAll(arguments[0])) {
      const b = svg.getBoundingClientRect();
      for (const t of svg.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (!t.checkVisibility() || !t.textContent.trim() || r.width + r.height === 0) continue;
        if (r.left < b.left - 0.5 || r.top < b.top - 0.5 || r.right > b.right + 0.5 || r.bottom > b.bottom + 0.5)
          out.push([t.textContent.trim(), ...[r.left - b.left, r.top - b.top, r.right - b.left, r.bottom - b.top].map(Math.round)]);
      }
    }
    return out;"""

# Drawn elements matching arguments[0] that reach past the viewport's left or right
# edge, as [[what, left, right]], and the page's width against the viewport's:
# [out, scrollWidth, innerWidth].
OUT_OF_VIEWPORT = """
    const out = [];
    for (const e of document.querySelectorAll(arguments[0])) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      if (r.left < -0.5 || r.right > innerWidth + 0.5)
        out.push([e.tagName + '.' + e.className, Math.round(r.left), Math.round(r.right)]);
    }
    return [out, document.documentElement.scrollWidth, innerWidth];"""


# Drawn canvases with a label column beside their plot (data-gutter: its width, CSS
# px; data-label-right: where its labels end), as [[canvas width, column, labels'
# right end]].
LABEL_COLUMNS = """
    return [...document.querySelectorAll('canvas[data-gutter]')].filter(c => c.checkVisibility()).map(c =>
      [Math.round(c.getBoundingClientRect().width), +c.dataset.gutter, +c.dataset.labelRight]);"""


def label_columns_fit(cols):
    """Whether each label column (LABEL_COLUMNS) leaves at least 60% of its canvas to
    the plot and holds its labels whole (4 px to spare); false with none drawn."""
    return cols != [] and all(g <= 0.4 * w and right <= g - 4 + 0.5 for w, g, right in cols)


# The top of the element matching arguments[0] and the bottom of the one matching
# arguments[1], relative to the viewport's top once the first is scrolled to it, and
# the viewport's height: [top, bottom, height] (CSS px). A view and its controls fit
# one screen when bottom <= height.
SPAN_ON_SCREEN = """
    const a = document.querySelector(arguments[0]), b = document.querySelector(arguments[1]);
    if (!a || !b) return null;
    const t = a.getBoundingClientRect().top;
    return [0, Math.round(b.getBoundingClientRect().bottom - t), innerHeight];"""


# Keys (arguments[0]) with a line holding one key (an item with a swatch) alone after
# a line of three or more whose last key would fit beside it (so the lines could be
# balanced):
# a key's groups are its `.legend-group`s / `.live-legend-group`s, or the key itself
# without them; its items without a swatch (the Simulate key's "The drawing shades
# ... under A | B") are not keys. As [[the group's words, keys per line]]. The
# wake-up's key left "prev" alone on its second line at 1280 px (and at 390), the live
# view's "requeued in place (6.12's delayed task)" on its third (session 39).
LONE_KEYS = """
    const out = [];
    for (const key of document.querySelectorAll(arguments[0])) {
      if (!key.checkVisibility()) continue;
      const groups = key.querySelectorAll('.legend-group, .live-legend-group');
      for (const g of groups.length ? groups : [key]) {
        const lines = [];
        for (const k of g.querySelectorAll('li, .live-key')) {
          if (!k.checkVisibility() || !k.querySelector('.swatch, .live-swatch')) continue;
          const r = k.getBoundingClientRect();
          const last = lines[lines.length - 1];
          if (last && Math.abs(last.top - r.top) < 3) last.keys.push(r); else lines.push({top: r.top, keys: [r]});
        }
        const room = g.getBoundingClientRect().width;
        const lone = lines.some((l, i) => i > 0 && l.keys.length === 1 && lines[i - 1].keys.length >= 3
          && lines[i - 1].keys[lines[i - 1].keys.length - 1].width + 12 + l.keys[0].width <= room);
        if (lone) out.push([g.textContent.trim().replace(/\\s+/g, ' '), lines.map(l => l.keys.length)]);
      }
    }
    return out;"""

# Headings (h2) with a subtitle (.sub) that wraps badly, as [[heading, what]]: a "·"
# in their text on another line than the word after it (left at a line's end), or a
# subtitle on two lines or more though its words are narrower than the heading (on a
# phone "the simulator, A against" over "B").
SUBTITLE_WRAP = """
    const out = [];
    const lines = n => { const r = document.createRange(); r.selectNodeContents(n);
      return [...r.getClientRects()].filter(x => x.width > 0); };
    for (const h of document.querySelectorAll('h2')) {
      const sub = h.querySelector('.sub');
      if (!sub || !h.checkVisibility()) continue;
      const walk = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
      for (let t = walk.nextNode(); t; t = walk.nextNode()) {
        const s = t.textContent;
        for (let i = s.indexOf('·'); i >= 0; i = s.indexOf('·', i + 1)) {
          let j = i + 1;
          while (j < s.length && /\\s/.test(s[j])) j++;
          if (j >= s.length) continue;
          const at = k => { const r = document.createRange(); r.setStart(t, k); r.setEnd(t, k + 1);
            return r.getBoundingClientRect().top; };
          if (Math.abs(at(i) - at(j)) > 2) out.push([h.textContent.trim(), 'a dot ends a line']);
        }
      }
      const rs = lines(sub), tops = new Set(rs.map(r => Math.round(r.top)));
      const words = rs.reduce((a, r) => a + r.width, 0);
      if (tops.size > 1 && words <= h.clientWidth - 20)
        out.push([h.textContent.trim(), `its subtitle takes ${tops.size} lines for ${Math.round(words)} of ${h.clientWidth} px`]);
    }
    return out;"""

# Text fields and selects of one fieldset whose boxes share a row (overlap vertically)
# but not a top edge, as [[id, top, id, top, fieldset]]: a label of two lines over one
# of them pushed it below its neighbours. Checkboxes, radios and sliders are not
# fields here, nor a table's cells.
MISALIGNED_FIELDS = """
    const out = [], name = e => e.id || e.name || e.tagName;
    for (const box of document.querySelectorAll('fieldset')) {
      if (!box.checkVisibility()) continue;
      const rs = [...box.querySelectorAll('input, select, textarea')].filter(e =>
        e.checkVisibility() && !['checkbox', 'radio', 'range', 'hidden'].includes(e.type)
        && e.closest('fieldset') === box && !e.closest('table')).map(e => [e, e.getBoundingClientRect()]);
      for (let i = 0; i < rs.length; i++) for (let j = i + 1; j < rs.length; j++) {
        const [a, ra] = rs[i], [b, rb] = rs[j];
        if (ra.top < rb.bottom && rb.top < ra.bottom && Math.abs(ra.top - rb.top) > 1)
          out.push([name(a), Math.round(ra.top), name(b), Math.round(rb.top), box.className]);
      }
    }
    return out;"""

# The drawn elements matching arguments[0] whose own words (their text, not their
# controls') take more than one line, as [text].
WRAPPED_TEXT = """
    const out = [];
    for (const e of document.querySelectorAll(arguments[0])) {
      if (!e.checkVisibility()) continue;
      const tops = new Set();
      for (const n of e.childNodes) {
        if (n.nodeType === Node.ELEMENT_NODE && n.matches('input, select, textarea, button')) continue;
        const r = document.createRange(); r.selectNodeContents(n);
        for (const x of r.getClientRects()) if (x.width > 0) tops.add(Math.round(x.top));
      }
      if (tops.size > 1) out.push(e.textContent.trim());
    }
    return out;"""

# Drawn controls and text boxes that reach past the left or right edge of the fieldset
# or panel around them, as [[what, left, right, box, box left, box right]].
OUT_OF_BOX = """
    const out = [];
    for (const e of document.querySelectorAll('button, input, select, label, p, code')) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      const box = e.parentElement && e.parentElement.closest('fieldset, .panel');
      if (!box || r.width === 0) continue;
      const b = box.getBoundingClientRect();
      if (r.right > b.right + 0.5 || r.left < b.left - 0.5)
        out.push([e.tagName + ' ' + e.textContent.trim().slice(0, 20), Math.round(r.left), Math.round(r.right),
                  box.tagName + '.' + box.className, Math.round(b.left), Math.round(b.right)]);
    }
    return out;"""


# Downloads are `<a download>` clicks on blob: URLs (web/src/export.rs). The hook
# keeps each click's name and Blob instead of saving a file, so the test reads the
# bytes the user would get (from the Blob itself: the page's CSP, connect-src 'self',
# refuses a fetch of a blob: URL).
DOWNLOAD_HOOK = """
  if (!window.__downloads) {
    window.__downloads = [];
    window.__blobs = {};
    const create = URL.createObjectURL;
    URL.createObjectURL = (b) => { const u = create(b); window.__blobs[u] = b; return u; };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      if (this.download) { window.__downloads.push({name: this.download, href: this.href}); return; }
      return click.call(this);
    };
    URL.revokeObjectURL = () => {};
  }
  window.__downloads.length = 0;
"""


def download(page, selector, timeout=20):
    """Clicks `selector` (a download button) and returns (file name, bytes).

    Raises AssertionError, saying what the button's status line said, when no download
    comes within `timeout` s."""
    page.js(DOWNLOAD_HOOK)
    page.click(selector)
    if not page.until(lambda: page.js("return window.__downloads.length") > 0, timeout=timeout):
        # Every download button sits in a group with its status line beside it.
        said = page.js("const g = document.querySelector(arguments[0])"
                       "  ?.closest('.export-bar, .dmesg-note');"
                       "return g?.querySelector('[role=status]')?.textContent ?? null", selector)
        raise AssertionError(f"clicking {selector} downloaded nothing in {timeout} s "
                             f"(its status line: {said!r})")
    name, href = page.js("const d = window.__downloads[0]; return [d.name, d.href]")
    b64 = page.driver.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "window.__blobs[arguments[0]].arrayBuffer().then(b => {"
        " let s = ''; const u = new Uint8Array(b);"
        " for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode(...u.subarray(i, i + 8192));"
        " cb(btoa(s)); }, e => cb(null));", href)
    return name, base64.b64decode(b64 or "")


def cli_bytes(cfg, *args):
    return subprocess.run([cfg["cli"], *args], check=True, capture_output=True).stdout


def without_wall(text):
    """A run's or sweep's JSON without its wall-clock fields (each side's measurement)."""
    v = json.loads(text)
    for k in ("wall_ms", "events_per_s"):
        v.pop(k, None)
    return v


def start_browser(workdir):
    """Headless Debian Chromium through Debian's chromedriver, with a fresh profile."""
    for path in (CHROMIUM, CHROMEDRIVER):
        # Checked here: a missing driver would send Selenium to look for one elsewhere.
        if not os.access(path, os.X_OK):
            raise FileNotFoundError(f"{path} is not installed (run scripts/setup --all)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='profile-', dir=workdir)}")
    log = os.path.join(workdir, "chromedriver.log")
    service = Service(executable_path=CHROMEDRIVER, service_args=[f"--log-path={log}"])
    driver = webdriver.Chrome(service=service, options=options)
    # --window-size sizes the window, browser frame included; make the page's own
    # viewport 1400x1100, as `chromium --screenshot --window-size` shoots it.
    dw, dh = window_frame(driver)
    driver.set_window_size(VIEWPORT[0] + dw, VIEWPORT[1] + dh)
    return driver

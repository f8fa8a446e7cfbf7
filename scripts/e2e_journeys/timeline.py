"""Journeys of the timeline (A above B, one track per CPU), a clicked wake-up
opened in the explainer, and the Chrome/Perfetto trace download checked against
`schedlab run --trace`."""

import json
import os
import re
import subprocess
import tempfile
import time

from harness import (SIMULATE, VIEWPORT, check, decoded_hash, download, fragment, native_run, note,
                     set_viewport)


# The timeline's run: SIMULATE's (tbench, 4 clients on node 0, 60 ms after a 12 ms
# warm-up, seed 1, 6.6 against 6.6+cluster). dbench starts its clients together after
# its start barrier (about 100 ms in), and the warm-up counts from there: the default
# window is the 2 ms after the warm-up's end (`default_window()`), compared with
# `schedlab run --trace-window` over the same window moved to whole milliseconds.


def sim_args(sim):
    w = sim["workload"]
    return ["--machine", "kunpeng920-6426", "--cpus", sim["cpus"], "--workload", w["kind"],
            "--threads", str(w["clients"]), "--duration-ms", str(sim["duration_ms"]),
            "--seed", str(sim["seed"])]


def cli_trace(cfg, patches, window_ms, cap=500000, sim=None):
    """`schedlab run --trace` of SIMULATE's run (or `sim`'s) under `patches`: (bytes, parsed)."""
    path = os.path.join(tempfile.mkdtemp(prefix="trace-"), "t.json")
    subprocess.run([cfg["cli"], "run", *sim_args(sim or SIMULATE["sim"]), "--patches", patches,
                    "--trace", path, "--trace-window", f"{window_ms[0]}..{window_ms[1]}",
                    "--trace-cap", str(cap)], check=True, capture_output=True)
    with open(path, "rb") as f:
        raw = f.read()
    return raw, json.loads(raw)


def trace_counts(v):
    """A Chrome trace's wake-up flows (s, f), wake slices, sched slices."""
    ev = v["traceEvents"]
    return {
        "flow_starts": sum(1 for e in ev if e.get("ph") == "s"),
        "flow_ends": sum(1 for e in ev if e.get("ph") == "f"),
        "wakes": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                     and e["name"].startswith("wake ")),
        "sched": sum(1 for e in ev if e.get("cat") == "sched" and e.get("ph") == "X"),
    }


def default_window(page, cfg, sim):
    """The timeline's default window, checked: it opens at the end of the warm-up,
    which counts from the benchmark's start (dbench's release, `start_ns` of the
    native runs; the later side's), so it lies after every side's start. Then moved
    to whole milliseconds (`run --trace-window` takes ms) and 2 ms long: (a, b)."""
    got = page.js("return document.querySelector('#timeline-from').value") or ""
    starts = [native_run(cfg, sim, p).get("start_ns") for p in ("6.6", "6.6+cluster")]
    warm_ns = sim["duration_ms"] * 1_000_000 // 5
    want = (max(s or 0 for s in starts) + warm_ns) / 1e6
    try:
        from_ms = float(got)
    except ValueError:
        from_ms = -1.0
    check(all(s and s > 50e6 for s in starts) and abs(from_ms - want) < 1e-6,
          f"the timeline opens after the warm-up, counted from the clients' start (page {got!r} ms; "
          f"the runs start their clients at {starts} ns, + {warm_ns / 1e6} ms of warm-up)")
    a = int(-(-from_ms // 1)) if from_ms >= 0 else 0
    page.set_input("#timeline-from", str(a))
    return a, a + 2


def open_timeline(page, cfg):
    """SIMULATE's run, finished, with its timeline shown; returns the canvas' wake-up
    counts per side and the window (ms)."""
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    window = default_window(page, cfg, SIMULATE["sim"])
    page.click("#timeline-show")
    got = page.until(lambda: page.attrs(".timeline canvas", "data-wakeups"), timeout=120)
    return [int(x) for x in (got or [""])[0].split(",") if x], window


def canvas_point(page, canvas, x, y, click=False):
    """Moves the real pointer to (x, y) CSS px of the timeline's canvas (and clicks
    there): the canvas' scrolling box and the page are scrolled so the point shows,
    and the pointer goes to viewport coordinates (Selenium's element offsets start
    from the element's in-view centre, which moves as the box scrolls)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    left, top = page.js("""const c = arguments[0], box = c.parentElement;
        box.scrollTop = Math.max(0, arguments[2] - box.clientHeight / 2);
        const r0 = c.getBoundingClientRect();
        window.scrollBy(0, r0.top + arguments[2] - innerHeight / 2);
        const r = c.getBoundingClientRect();
        return [r.left, r.top];""", canvas, x, y)
    ab = ActionBuilder(page.driver)
    ab.pointer_action.move_to_location(int(left + x), int(top + y))
    if click:
        ab.pointer_action.click()
    ab.perform()


def view_span(page):
    a, b = (float(x) for x in page.attrs(".timeline canvas", "data-view")[0].split(","))
    return a, b


def timeline(page, cfg):
    """The timeline: A above B on one axis, one track per CPU grouped by node/LLC and
    cluster; its wake-up arrows are the run's (the CLI's trace of the same window has
    as many wake-up flows), and the wheel, the keys and a drag zoom and pan; a click
    on a group's name folds it."""
    from selenium.webdriver.common.action_chains import ActionChains
    t0 = time.time()
    counts, window = open_timeline(page, cfg)
    note(f"run and timeline in {time.time() - t0:.1f} s")
    want = [trace_counts(cli_trace(cfg, p, window)[1])["flow_starts"]
            for p in ("6.6", "6.6+cluster")]
    check(len(counts) == 2 and counts == want and min(want) > 50,
          f"A's and B's arrows are the run's wake-ups in {window[0]}..{window[1]} ms, as `schedlab run --trace` "
          f"counts them (page {counts}, CLI {want})")
    canvas = page.all(".timeline canvas")[0]
    h0 = page.js("return arguments[0].getBoundingClientRect().height", canvas)
    check(h0 > 2 * (32 * 11), f"both sides' 32 CPU tracks are drawn (canvas {h0:.0f} px high)")
    lo, hi = view_span(page)
    check(abs(lo - window[0] * 1e6) < 1 and abs(hi - window[1] * 1e6) < 1,
          f"the view opens on the whole window {window} ms (got {lo:.0f}..{hi:.0f} ns)")
    # Keyboard: focus the canvas (a Tab stop) and zoom, pan, reset.
    page.js("arguments[0].focus()", canvas)
    check(page.js("return document.activeElement === arguments[0]", canvas), "the canvas takes focus")
    ActionChains(page.driver).send_keys("+").perform()
    a, b = view_span(page)
    check(abs((b - a) - (hi - lo) / 2) < 2, f"+ halves the span (got {b - a:.0f} ns)")
    ActionChains(page.driver).send_keys("\ue014").perform()  # ArrowRight
    a2, b2 = view_span(page)
    check(a2 > a and abs((b2 - a2) - (b - a)) < 2, f"→ pans later ({a:.0f} → {a2:.0f})")
    ActionChains(page.driver).send_keys("0").perform()
    check(view_span(page) == (lo, hi), "0 shows the whole window again")
    # The wheel zooms about the pointer (not the page's scroll).
    page.js("""const c = arguments[0], r = c.getBoundingClientRect();
               c.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: r.left + r.width * 0.75,
                 clientY: r.top + 60, bubbles: true, cancelable: true}));""", canvas)
    a, b = view_span(page)
    check(b - a < (hi - lo) * 0.7, f"the wheel zooms in ({b - a:.0f} ns of {hi - lo:.0f})")
    # A drag pans.
    ActionChains(page.driver).move_to_element_with_offset(canvas, 100, 0).click_and_hold() \
        .move_by_offset(-150, 0).release().perform()
    a3, b3 = view_span(page)
    check(a3 > a and abs((b3 - a3) - (b - a)) < 2, f"dragging left pans later ({a:.0f} → {a3:.0f})")
    # Hovering a track shows what runs there (A's CPU 12: below the axis, A's
    # header, node 0's header and three clusters of 4 CPUs with their headers).
    tip_text = "const t = document.querySelector('.timeline-tip'); return t && !t.hidden ? t.textContent : null"
    canvas_point(page, canvas, canvas.size["width"] * 0.6, 22 + 20 + 15 + 3 * (15 + 44) + 15 + 5)
    tip = page.until(lambda: page.js(tip_text), timeout=5)
    # A wake-up arrow crossing CPU 12's track is drawn over it and answers the hover.
    check(tip and ("CPU 12" in tip or re.match(r"wake-up #\d+ \(A ", tip)),
          f"hovering shows the slice or wake-up under the pointer (got {tip!r})")
    # Fold A's first group (its name, in the gutter): its CPUs' rows go.
    canvas_point(page, canvas, 20, 22 + 20 + 7, click=True)
    h1 = page.until(lambda: (lambda h: h if h < h0 - 100 else None)(
        page.js("return arguments[0].getBoundingClientRect().height", canvas)), timeout=5)
    check(h1 and h1 < h0 - 32 * 11 + 20, f"clicking a group's name folds it ({h0:.0f} → {h1} px)")
    canvas_point(page, canvas, 20, 22 + 20 + 7, click=True)  # unfold again
    page.js("arguments[0].focus()", canvas)
    ActionChains(page.driver).send_keys("0", "+", "+", "+", "+").perform()  # 125 µs
    set_viewport(page, 1280, 720)
    try:
        page.js("document.querySelector('.timeline-panel').scrollIntoView()")
        canvas_point(page, canvas, canvas.size["width"] * 0.5, 300)
        time.sleep(0.3)
        page.screenshot(cfg["shot_epyc"].replace(".png", "-timeline-1280.png"))
    finally:
        set_viewport(page, *VIEWPORT)


def explain_sim_wake(page, cfg):
    """Click-to-explain: a wake-up arrow clicked in the timeline opens the Wake-up tab
    on that wake-up, whose decision chooses the simulated CPU, says where it came
    from, offers the state file `schedlab run --capture-wake N` writes, and leads back
    to the hand-set wake-up."""
    from selenium.webdriver.common.action_chains import ActionChains
    page.driver.set_script_timeout(30)
    open_timeline(page, cfg)
    canvas = page.all(".timeline canvas")[0]
    page.js("arguments[0].focus()", canvas)
    ActionChains(page.driver).send_keys("]").perform()  # the one nearest the middle
    xy = page.attrs(".timeline canvas", "data-selected-xy")[0]
    check(xy and page.text(".timeline-selected").startswith("wake-up #"),
          f"] selects a wake-up and says what it was (got {page.text('.timeline-selected')!r})")
    # Zoom in about it until it stands alone, then click it.
    for _ in range(6):
        x, y = (float(v) for v in page.attrs(".timeline canvas", "data-selected-xy")[0].split(","))
        page.js("""const c = arguments[0], r = c.getBoundingClientRect();
                   c.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: r.left + arguments[1],
                     clientY: r.top + arguments[2], bubbles: true, cancelable: true}));""", canvas, x, y)
    x, y = (float(v) for v in page.attrs(".timeline canvas", "data-selected-xy")[0].split(","))
    check(x > 190 + 50, f"the selected wake-up stays in view while zooming about it (x = {x})")
    seq = page.attrs(".timeline canvas", "data-selected-wake")[0]
    cpu = page.attrs(".timeline canvas", "data-selected-cpu")[0]
    side = page.attrs(".timeline canvas", "data-selected-side")[0]
    t0 = time.time()
    canvas_point(page, canvas, x, y, click=True)
    origin = page.wait_for(".sim-wake-origin", timeout=60)
    took = time.time() - t0
    note(f"wake-up #{seq} of side {side} captured and shown in {took:.2f} s")
    got_seq = page.attrs(".sim-wake-origin", "data-wake")
    sim_cpu = page.attrs(".sim-wake-origin", "data-simulated-cpu")
    check(got_seq == [seq] and f"wake-up #{seq} of side {side.upper()}, seed 1" in (origin or [""])[0],
          f"the Wake-up tab says where it came from (clicked #{seq}; got {origin})")
    check(sim_cpu == [cpu], f"the simulated CPU is the record's (record {cpu}, page {sim_cpu})")
    dec = page.wait_for(f'.decision[data-side="{side}"] .chosen-cpu')
    cpu_attr = page.attrs(f'.decision[data-side="{side}"]', "data-cpu")
    check(cpu_attr == [cpu] and dec == [f"CPU {cpu}"],
          f"side {side.upper()}'s decision on the captured state chooses the simulated CPU {cpu} (got {cpu_attr})")
    check(page.count(".trace li.st-enter") > 2 and page.count(".code-view") >= 1,
          "the decision shows its trace and the code view")
    check(page.count('.decision[data-side="a"]') == 1 and page.count('.decision[data-side="b"]') == 1,
          "both sides decide the captured inputs (A/B)")
    check(page.count("#all-idle") == 0, "the hand-set inputs are put away")
    # The state file is the CLI's.
    name, got = download(page, ".sim-wake-save")
    path = os.path.join(tempfile.mkdtemp(prefix="cap-"), "w.json")
    subprocess.run([cfg["cli"], "run", *sim_args(SIMULATE["sim"]),
                    "--patches", "6.6" if side == "a" else "6.6+cluster",
                    "--capture-wake", seq, "--capture-file", path], check=True, capture_output=True)
    with open(path, "rb") as f:
        want = f.read()
    check(got == want and len(got) > 500,
          f"the state file is `schedlab run --capture-wake {seq}`'s bytes ({name}: {len(got)} and {len(want)} bytes)")
    set_viewport(page, 1280, 720)
    try:
        page.js("window.scrollTo(0, 0)")
        time.sleep(0.2)
        page.screenshot(cfg["shot_epyc"].replace(".png", "-sim-wake-1280.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    page.click("#sim-wake-close")
    page.wait_for("#all-idle")
    check(page.count(".sim-wake") == 0, "Back to the hand-set wake-up closes it")


def trace_download(page, cfg):
    """The trace download: side A's Chrome/Perfetto JSON of the whole run parses, is
    `schedlab run --trace`'s bytes, and counts the run's wake-ups, wake-up migrations
    and context switches as the run's report does."""
    page.driver.set_script_timeout(60)
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    page.set_input("#timeline-from", "0")
    page.set_input("#timeline-len", "1000")
    t0 = time.time()
    name, got = download(page, '.trace-download[data-side="a"]', timeout=120)
    note(f"trace of the whole run made in {time.time() - t0:.1f} s, {len(got)} bytes")
    try:
        v = json.loads(got)
    except ValueError as e:
        v = None
        check(False, f"the trace parses as JSON ({e})")
    if v is None:
        return
    check(name.endswith(".json") and "kunpeng920-6426" in name, f"the file name says what it is (got {name})")
    raw, _ = cli_trace(cfg, "6.6", (0, 1000))
    check(got == raw, f"the trace is `schedlab run --trace`'s bytes ({len(got)} and {len(raw)} bytes)")
    c = trace_counts(v)
    ev = v["traceEvents"]
    arg = lambda e, k: (e.get("args") or {}).get(k) is True  # noqa: E731
    m = native_run(cfg, SIMULATE["sim"], "6.6")["metrics"]
    counted = {
        "wakeups": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                       and arg(e, "measured") and not arg(e, "background")),
        "migrations_wakeup": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                                 and arg(e, "measured") and not arg(e, "background") and arg(e, "migrated")),
        "context_switches": sum(1 for e in ev if e.get("cat") == "switch" and arg(e, "measured")
                                and arg(e, "switch")),
    }
    want = {k: m.get(k) for k in counted}
    check(counted == want and want["wakeups"] > 100,
          f"the trace counts the run's wake-ups, wake-up migrations and context switches (trace {counted}, run {want})")
    check(c["flow_starts"] == c["wakes"] == v["otherData"]["wakeups_in_run"] and c["flow_ends"] <= c["flow_starts"]
          and c["sched"] > c["wakes"],
          f"one wake-up flow per wake-up, every one of the run's, and the CPUs' slices ({c}, run {v['otherData']['wakeups_in_run']})")


def timeline_wakeups(page, before=None):
    """The timeline canvas' wake-up counts per side once they differ from `before`."""
    got = page.until(lambda: (lambda v: v if v and v != before else None)(
        (page.attrs(".timeline canvas", "data-wakeups") or [None])[0]), timeout=180)
    return [int(x) for x in (got or "").split(",") if x]


def timeline_source(page, n=2):
    """The panel's `data-source` (per side, stream or rerun) once every side is in."""
    return page.until(lambda: (lambda v: v if v and len(v.split(",")) == n and page.js(
        "return document.querySelector('.timeline-panel').dataset.ms") else None)(
        page.js("return document.querySelector('.timeline-panel').dataset.source")), timeout=180)


# A short sweep of SIMULATE's run: 2 and 4 clients for 20 ms after a 4 ms warm-up
# (from the clients' start). The live view watches 4 (the largest point, handed out
# first); 2 is recorded again on demand.
SWEEP_TIMELINE = dict(SIMULATE, sim={"workload": {"kind": "tbench", "clients": 4}, "cpus": "node0",
                                     "duration_ms": 20, "seed": 1, "sweep": [2, 4]})


def timeline_stream(page, cfg):
    """The timeline draws the window from the record the live view streamed when it
    holds it (no re-run: its arrows are still the CLI trace's), says so, and re-runs
    the side for a sweep point the live view did not watch, picked in the timeline's
    sweep-point menu (whose arrows are then that point's, `--threads 2`)."""
    page.open(fragment(SWEEP_TIMELINE))
    page.wait_for(".sim-status.done", timeout=240, pred=lambda t: "simulations" in t[0])
    options = page.attrs("#timeline-scale option", "value")
    chosen = page.js("return document.querySelector('#timeline-scale').value")
    check(options == ["4", "2"] and chosen == "4",
          f"a sweep's timeline offers each sweep point, the live view's first (got {options}, {chosen})")
    # The window opens on the 2 ms after the warm-up (20 ms runs warm up for 4 from
    # the clients' start), early enough that the live record holds it whatever the
    # stream left out.
    sim4 = dict(SWEEP_TIMELINE["sim"], workload={"kind": "tbench", "clients": 4})
    window = default_window(page, cfg, sim4)
    t0 = time.time()
    page.click("#timeline-show")
    src = timeline_source(page)
    counts = timeline_wakeups(page)
    stream_s = time.time() - t0
    stream_ms = page.js("return document.querySelector('.timeline-panel').dataset.ms")
    check(src == "stream,stream", f"at the watched point both sides come from the live record (got {src!r})")
    text = page.text(".timeline-source") or ""
    check("from the live view's record" in text, f"the panel says where the window came from (got {text!r})")
    want4 = [trace_counts(cli_trace(cfg, p, window, sim=sim4)[1])["flow_starts"]
             for p in ("6.6", "6.6+cluster")]
    check(counts == want4 and min(want4) > 50,
          f"the streamed window's arrows are `run --threads 4 --trace`'s wake-ups (page {counts}, CLI {want4})")
    check(not page.all(".timeline-explain-note"), "at the watched point, arrows open in the Wake-up tab (no note)")
    # Another sweep point: re-run.
    page.select("#timeline-scale", "2")
    t0 = time.time()
    page.click("#timeline-show")
    page.until(lambda: page.js("return document.querySelector('.timeline-panel').dataset.source")
               == "rerun,rerun", timeout=10)
    src2 = timeline_source(page)
    counts2 = timeline_wakeups(page, ",".join(str(c) for c in counts))
    rerun_s = time.time() - t0
    rerun_ms = page.js("return document.querySelector('.timeline-panel').dataset.ms")
    sim2 = dict(SWEEP_TIMELINE["sim"], workload={"kind": "tbench", "clients": 2})
    want2 = [trace_counts(cli_trace(cfg, p, window, sim=sim2)[1])["flow_starts"]
             for p in ("6.6", "6.6+cluster")]
    check(src2 == "rerun,rerun" and counts2 == want2 and want2 != want4,
          f"sweep point 2 is re-run: its arrows are `run --threads 2 --trace`'s (source {src2!r}, "
          f"page {counts2}, CLI {want2})")
    text = page.text(".timeline-source") or ""
    check("re-run" in text, f"the panel says the window was re-run, and why (got {text!r})")
    check(not page.all(".timeline-explain-note"), "off the watched point, no note that clicks open elsewhere")
    note(f"time to the timeline (click to drawn): from the live record {stream_ms} ms "
         f"({stream_s:.2f} s wall), re-run {rerun_ms} ms ({rerun_s:.2f} s wall)")
    check(float(stream_ms or 1e9) < float(rerun_ms or 0),
          f"the streamed window shows sooner than a re-run ({stream_ms} ms against {rerun_ms} ms)")
    sweep_point_wake(page, cfg)


def sweep_point_wake(page, cfg):
    """A wake-up of the timeline at sweep point 2 (not the live view's 4) opens in the
    Wake-up tab captured at 2 clients: the decision chooses the CPU the point's record
    shows, and the link names the point, so opening it captures the same wake-up."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    canvas = page.all(".timeline canvas")[0]
    page.js("arguments[0].focus()", canvas)
    ActionChains(page.driver).send_keys("]").perform()
    seq = page.until(lambda: (page.attrs(".timeline canvas", "data-selected-wake") or [None])[0], timeout=5)
    cpu = page.attrs(".timeline canvas", "data-selected-cpu")[0]
    side = page.attrs(".timeline canvas", "data-selected-side")[0]
    ActionChains(page.driver).send_keys(Keys.ENTER).perform()

    def opened():
        page.wait_for(".sim-wake-origin", timeout=60)
        return (page.attrs(".sim-wake-origin", "data-wake"), page.attrs(".sim-wake-origin", "data-scale"),
                page.attrs(".sim-wake-origin", "data-simulated-cpu"), page.text(".sim-wake-origin") or "")

    wake, scale, sim_cpu, origin = opened()
    check(wake == [seq] and scale == ["2"] and "at 2 clients" in origin,
          f"a wake-up at sweep point 2 opens there (clicked #{seq}; got {wake}, scale {scale}, {origin!r})")
    check(sim_cpu == [cpu], f"its simulated CPU is the point's record's (record {cpu}, page {sim_cpu})")
    dec = page.attrs(f'.decision[data-side="{side}"]', "data-cpu")
    check(dec == [cpu], f"side {side.upper()}'s decision at sweep point 2 chooses the simulated CPU {cpu} (got {dec})")
    page.js("window.scrollTo(0, 0)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-sweep-wake.png"))
    link = json.loads(decoded_hash(page))
    check((link.get("wake") or {}).get("sim", {}).get("scale") == 2,
          f"the link names the sweep point (got {(link.get('wake') or {}).get('sim')})")
    page.open(page.hash.lstrip("#"))
    again = opened()
    check(again[:3] == (wake, scale, sim_cpu),
          f"the link opens the same wake-up at the same point ({again[:3]} against {(wake, scale, sim_cpu)})")

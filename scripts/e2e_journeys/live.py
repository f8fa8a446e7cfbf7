"""The live journey: the machine drawn while a run streams, its markers and arrows
counted against the run's wake-ups, playback controls, fps on epyc9654-2p."""

import time

from harness import (
    LONE_KEYS,
    SIMULATE,
    SPAN_ON_SCREEN,
    VIEWPORT,
    busy_factor,
    check,
    emulated_scheme,
    fragment,
    native,
    native_run,
    note,
    set_viewport,
)


# A short run to play in slow motion: 2 tbench clients on node 0 for 2 ms (plus the
# 0.4 ms warm-up after dbench releases its clients from its start barrier, about
# 100 ms in), 6.6 against 6.6+cluster.
LIVE = dict(SIMULATE, sim={"workload": {"kind": "tbench", "clients": 2}, "cpus": "node0",
                           "duration_ms": 2, "seed": 1})
# The big one: 64 tbench pairs over epyc9654-2p's 384 CPUs.
LIVE_EPYC = {
    "machine": "epyc9654-2p", "patches": "6.6", "view": "simulate",
    "wake": {"compare": "6.6+cluster"},
    "sim": {"workload": {"kind": "tbench", "clients": 64}, "cpus": "all",
            "duration_ms": 20, "seed": 1},
}


def live_attrs(page):
    """The live view's measurements (data-* on .live-view), as a dict of strings."""
    return page.js("const v = document.querySelector('.live-view');"
                   "return v ? Object.assign({}, v.dataset) : {}") or {}


# Every text the live view's live regions (role status, alert or log, or aria-live not
# off) say together, as they change, and how often the seen status line changed:
# window.__liveSaid, window.__liveShown. A MutationObserver sees every change.
WATCH_LIVE = """
  window.__liveSaid = []; window.__liveShown = 0;
  const view = document.querySelector('.live-view');
  let said = null, shown = null;
  const note = () => {
    const now = [...view.querySelectorAll('[role=status], [role=alert], [role=log], [aria-live]')]
      .filter(e => e.getAttribute('aria-live') !== 'off').map(e => e.textContent).join(' | ');
    if (now !== said) { said = now; window.__liveSaid.push(now); }
    const s = view.querySelector('#live-status'), t = s ? s.textContent : '';
    if (t !== shown) { shown = t; window.__liveShown += 1; }
  };
  new MutationObserver(note).observe(view, {subtree: true, childList: true, characterData: true, attributes: true});
  note();
"""


def live(page, cfg):
    """The machine, live: a short run played in slow motion draws frames, one arrow per
    wake-up of the record (as many as the run made, and the measured ones are the
    native CLI's count), a marker per task; stepping plays one wake-up at a time; a
    click on an arrow opens that wake-up in the Wake-up tab, deciding the simulated
    CPU; on epyc9654-2p with 64 pairs it reports the frame rate and draw time."""
    page.open(fragment(LIVE))
    page.wait_for(".sim-status.done", timeout=180)
    page.wait_for("#live-status")
    page.js(WATCH_LIVE)
    # Slow motion: 20 µs of simulated time a frame (index 7 of the speed scale).
    page.js("const s = document.querySelector('#live-speed'); s.value = '7';"
            "s.dispatchEvent(new Event('input', {bubbles: true}));")
    speed = page.text(".live-speed-text")
    check(speed == "20 µs of simulated time per frame", f"the speed scale says its step (got {speed!r})")
    ended = page.until(lambda: (lambda a: a.get("endedA") == "true" and a.get("endedB") == "true" and a)(
        live_attrs(page)), timeout=150)
    a = live_attrs(page)
    note(f"live view after playing the whole record: {a}")
    check(ended, "both sides play to the end of their record")
    # The seen line follows the clock; a screen reader hears only the end.
    said, shown = page.js("return [window.__liveSaid, window.__liveShown]")
    check(shown >= 3 and len(said) <= 2 and "played to the end of the record" in said[-1],
          f"while it played, the status line changed {shown} times and the live region said only "
          f"the end (it said {len(said) - 1} new things: {said[-2:]})")
    frames = int(a.get("frames", "0"))
    t_ms = int(a.get("tNs", "0")) / 1e6
    check(frames >= 60, f"frames were drawn in slow motion ({frames} frames for {t_ms:.3f} ms)")
    native = {"a": native_run(cfg, LIVE["sim"], "6.6"), "b": native_run(cfg, LIVE["sim"], "6.6+cluster")}
    for side in "ab":
        s = side.upper()
        wakes, arrows = int(a.get(f"wakes{s}", -1)), int(a.get(f"arrows{s}", -2))
        run_wakes, feed_wakes = int(a.get(f"runWakeups{s}", -3)), int(a.get(f"feedWakes{s}", -4))
        check(wakes > 20 and wakes == arrows == feed_wakes == run_wakes and a.get(f"skipped{s}") == "0",
              f"{side}: one arrow drawn per wake-up of the run (played {wakes}, arrows {arrows}, "
              f"in the record {feed_wakes}, the run's count {run_wakes})")
        measured = int(a.get(f"measured{s}", -1))
        want = native[side]["metrics"]["wakeups"]
        report = a.get(f"reportWakeups{s}")
        check(measured == want and report == str(want),
              f"{side}: the measured wake-ups played are the report's and the native CLI's "
              f"({measured}, page report {report}, CLI {want})")
        markers, tasks = int(a.get(f"markers{s}", -1)), int(a.get(f"tasks{s}", -2))
        # A CPU shows at most 4 waiting tasks (dbench's start leaves its parent,
        # tbench_srv and a kthread or two on one CPU).
        crowded = int(a.get(f"crowded{s}", -3))
        check(markers + crowded == tasks and markers >= 4 and 0 <= crowded <= 2,
              f"{side}: a marker per task (drawn {markers}, left out on a crowded CPU {crowded}, "
              f"tasks seen {tasks}; 2 tbench pairs are 4 tasks)")

    # One wake-up at a time.
    # At the end it stopped by itself; Play plays again from the start, Pause pauses.
    check(live_attrs(page).get("playing") == "false", "playback stops at the end of the record")
    page.click("#live-play")
    again = page.until(lambda: live_attrs(page).get("playing") == "true", timeout=5)
    page.click("#live-play")
    paused = page.until(lambda: live_attrs(page).get("playing") == "false", timeout=5)
    check(again and paused, "Play plays again, Pause pauses")
    # The start-up (forks, connects, then about 100 ms of clients waiting at dbench's
    # barrier) skips its idle stretches: the view knows the earlier side's release,
    # and from a restart at 20 µs a frame it is past it within seconds (played at
    # 20 µs a frame, 100 ms would take 80 s).
    starts = [native[side].get("start_ns") for side in "ab"]
    check(all(starts) and a.get("startNs") == str(min(starts)),
          f"the live view knows where the benchmark starts its clients (page {a.get('startNs')}, CLI {starts})")
    page.click("#live-restart")
    page.click("#live-play")
    t0 = time.time()
    past = page.until(lambda: (lambda x: x if x.get("startUp") == "false" and int(x.get("tNs", 0)) > 0
                               else None)(live_attrs(page)), timeout=10 * busy_factor())
    took = time.time() - t0
    page.click("#live-play")
    page.until(lambda: live_attrs(page).get("playing") == "false", timeout=5)
    check(past and int(past["tNs"]) >= min(starts),
          f"the start-up skips its idle stretches: past the clients' start at {min(starts) / 1e6:.3f} ms in {took:.1f} s "
          f"(t = {int((past or {}).get('tNs', 0)) / 1e6:.3f} ms)")
    page.click("#live-restart")
    # The restart shows on the next frame: wait for it, so each step is measured
    # against the restarted count, not a stale one.
    restarted = page.until(lambda: (lambda x: x if (x.get("wakesA"), x.get("wakesB")) == ("0", "0")
                                    else None)(live_attrs(page)), timeout=5)
    check(restarted, f"Restart plays from the start again (got {live_attrs(page)})")
    totals = []
    for _ in range(3):
        before = live_attrs(page)
        page.click("#live-step")
        after = page.until(lambda: (lambda x: x if x.get("wakesA") is not None and
                                    (x.get("wakesA"), x.get("wakesB")) !=
                                    (before.get("wakesA"), before.get("wakesB")) else None)(live_attrs(page)),
                           timeout=5) or live_attrs(page)
        totals.append((int(after.get("wakesA", 0)), int(after.get("wakesB", 0))))
    # Each step plays the earliest next wake-up, on both sides when both make it at
    # that instant: the leading side never runs more than one ahead per step.
    check(all(max(t) <= k + 1 <= sum(t) for k, t in enumerate(totals))
          and all(sum(b) > sum(a) for a, b in zip(totals, totals[1:])),
          f"each step plays the next wake-up (wake-ups A, B after each: {totals})")
    status = page.text("#live-status")
    check(status and "paused" in status and "wake-ups" in status, f"the status line says so (got {status!r})")
    said = page.js("return document.querySelector('#live-announce').textContent")
    check(said.startswith("Wake-up #") and "chosen CPU" in said,
          f"a step says the wake-up it played to a screen reader (got {said!r})")
    # A click on the newest arrow opens that wake-up in the Wake-up tab, captured by
    # re-running the side's run to it: its decision chooses the simulated CPU.
    a = live_attrs(page)
    side = 0 if a.get("lastArrowA") else 1
    buttons = page.all(f'.live-side[data-side="{side}"] .live-wake')
    newest = (buttons[0].get_attribute("data-wake"), buttons[0].get_attribute("data-cpu")) if buttons else None
    check(len(buttons) >= 2, f"the latest wake-ups are listed as buttons (got {len(buttons)})")
    if newest:
        x, y = (float(v) for v in a["lastArrow" + "AB"[side]].split(","))
        # A click at the arrow's middle (client coordinates; +1 for the canvas border).
        page.js("""const c = document.querySelector(arguments[0]);
                   c.scrollIntoView({block: 'center'});
                   const r = c.getBoundingClientRect();
                   c.dispatchEvent(new MouseEvent('click', {bubbles: true,
                     clientX: r.left + 1 + arguments[1], clientY: r.top + 1 + arguments[2]}));""",
                f"#live-canvas-{side}", x, y)
        page.wait_for(".sim-wake-origin", timeout=60)
        got = page.attrs(".sim-wake-origin", "data-wake")
        sim_cpu = page.attrs(".sim-wake-origin", "data-simulated-cpu")
        letter = "ab"[side]
        page.wait_for(f'.decision[data-side="{letter}"] .chosen-cpu')
        chosen = page.attrs(f'.decision[data-side="{letter}"]', "data-cpu")
        check(got == [newest[0]] and sim_cpu == [newest[1]] and chosen == [newest[1]],
              f"a click on the newest arrow opens that wake-up in the Wake-up tab, deciding the "
              f"simulated CPU (clicked #{newest[0]} on CPU {newest[1]}; tab shows {got}, simulated "
              f"{sim_cpu}, decided {chosen})")

    # Big: epyc9654-2p, 64 pairs, both sides streaming; the frame rate and draw time
    # while playing 20 µs a frame, then as fast as it goes.
    try:
        set_viewport(page, 1280, 720)
        page.open(fragment(LIVE_EPYC))
        page.wait_for("#live-status", timeout=60)
        page.js("document.querySelector('.live-view').scrollIntoView()")
        page.js("const s = document.querySelector('#live-speed'); s.value = '7';"
                "s.dispatchEvent(new Event('input', {bubbles: true}));")
        page.until(lambda: int(live_attrs(page).get("recordsB", "0")) > 20000, timeout=120)
        time.sleep(4)
        slow = live_attrs(page)
        page.js("document.querySelector('#live-canvas-0').scrollIntoView({block: 'end'})")
        page.screenshot(cfg["shot"].replace(".png", "-live-1280.png"))
        page.js("const s = document.querySelector('#live-speed'); s.value = '13';"
                "s.dispatchEvent(new Event('input', {bubbles: true}));")
        time.sleep(4)
        fast = live_attrs(page)
        for name, m in [("20 µs/frame", slow), ("as fast as it goes", fast)]:
            note(f"epyc9654-2p, 64 tbench pairs, A and B ({name}): {m.get('fps')} fps, "
                 f"draw {m.get('drawMs')} ms a frame (max {m.get('drawMaxMs')}), "
                 f"{m.get('frames')} frames drawn, wake-ups A {m.get('wakesA')} B {m.get('wakesB')}, "
                 f"markers A {m.get('markersA')} B {m.get('markersB')}")
        check(float(slow.get("fps", 0)) > 0 and int(slow.get("wakesA", 0)) > 0
              and int(slow.get("markersA", 0)) >= 128,
              f"epyc9654-2p: frames drawn with 128+ task markers (got {slow})")
        budget = 16.7 * busy_factor()
        check(float(slow.get("drawMs", 99)) < budget,
              f"epyc9654-2p: a frame draws within a 60 fps budget, {budget:.1f} ms at this "
              f"machine's load (avg {slow.get('drawMs')} ms)")
        with emulated_scheme(page, "dark"):
            time.sleep(1)
            page.js("document.querySelector('#live-canvas-0').scrollIntoView({block: 'end'})")
            page.screenshot(cfg["shot"].replace(".png", "-live-1280-dark.png"))
        set_viewport(page, 390, 844)
        time.sleep(1)
        page.js("document.querySelector('.live-view').scrollIntoView()")
        page.screenshot(cfg["shot"].replace(".png", "-live-390.png"))
        wide = page.js("return document.documentElement.scrollWidth")
        check(wide <= 390, f"at 390 px the live view fits the width (page {wide} px wide)")
        # When the row wraps, each control stays on its label's line, and the speed's
        # words ("as fast as it goes") on the slider's, not beside the next label.
        apart = page.js(
            "const mid = e => { const r = e.getBoundingClientRect(); return (r.top + r.bottom) / 2; };"
            "const pairs = [['label[for=\"live-speed\"]', '#live-speed'],"
            " ['#live-speed', '.live-speed-text'], ['label[for=\"live-show\"]', '#live-show']];"
            "return pairs.map(([a, b]) => {"
            " const x = document.querySelector(a), y = document.querySelector(b);"
            " if (!x || !y) return [b, 'missing'];"
            " return [b, Math.round(Math.abs(mid(x) - mid(y)))];"
            "}).filter(([b, d]) => d === 'missing' || d > 8)")
        check(apart == [], f"at 390 px each live control sits on its label's line "
              f"([element, vertical offset px] apart: {apart})")
    finally:
        set_viewport(page, *VIEWPORT)


def play_to_end(page, speed="7"):
    page.js("const s = document.querySelector('#live-speed'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input', {bubbles: true}));", speed)
    return page.until(lambda: (lambda a: a.get("endedA") == "true" and a.get("endedB") == "true" and a)(
        live_attrs(page)), timeout=150)


def live_glide(page, cfg):
    """Task markers glide to a new CPU over a few frames; under prefers-reduced-motion
    they jump (the same moves, no frame drawn on the way)."""
    page.open(fragment(LIVE))
    page.wait_for(".sim-status.done", timeout=180)
    page.wait_for("#live-status")
    a = play_to_end(page)
    # Over both sides: since dbench's start barrier the 2 pairs of this run move only
    # under 6.6+cluster (A 0, B 3 moves with seed 1).
    both = lambda x, k: sum(int(x.get(k + s, -1)) for s in "AB")  # noqa: E731
    glides, draws, moves = (both(a, k) for k in ("glides", "glideDraws", "moves"))
    check(moves > 0 and glides > 0 and draws > glides,
          f"markers glide: {glides} glides, drawn {draws} times on their way ({moves} task moves, A and B)")
    # A move to another CPU glides too (a frame may hold two moves, or one and back).
    cpu = [(int(a.get(f"cpuGlides{s}", -1)), int(a.get(f"moves{s}", -1))) for s in "AB"]
    check(any(m > 0 for _, m in cpu) and all(0 < g <= m if m > 0 else g == 0 for g, m in cpu),
          f"a task that moves to another CPU glides there (A, B: CPU glides against moves {cpu})")
    page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        time.sleep(1)  # the view reads the style a few times a second
        page.click("#live-restart")
        page.until(lambda: live_attrs(page).get("wakesA") == "0", timeout=5)
        page.click("#live-play")
        b = play_to_end(page)
        glides, draws, moves = (both(b, k) for k in ("glides", "glideDraws", "moves"))
        glides += both(b, "cpuGlides")
        check(b and moves > 0 and glides == 0 and draws == 0,
              f"reduced motion: markers jump ({moves} moves, {glides} glides, {draws} draws on the way)")
    finally:
        page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# Per live canvas, its CPU numbers' size as drawn on the page (0: none drawn; null:
# the canvas does not say).
LIVE_NUMBERS = """
    return [...document.querySelectorAll('.live-canvas')].filter(c => c.checkVisibility()).map(c => {
      const own = c.dataset.numberPx;
      return own === undefined ? null
        : Math.round(parseFloat(own) * c.getBoundingClientRect().width / c.width * 10) / 10; });"""

# Per live canvas, its group labels' size as drawn on the page (null: the canvas does
# not say) and how many it left out (too big for their box).
LIVE_LABELS = """
    return [...document.querySelectorAll('.live-canvas')].filter(c => c.checkVisibility()).map(c => {
      const own = c.dataset.labelPx;
      return [own === undefined ? null
        : Math.round(parseFloat(own) * c.getBoundingClientRect().width / c.width * 10) / 10,
        c.dataset.labelsLeftOut === undefined ? null : +c.dataset.labelsLeftOut]; });"""

# The live key's headings: [text, its left, the key's left] (px).
LEGEND_HEADS = """
    const key = document.querySelector('.live-legend').getBoundingClientRect().left;
    return [...document.querySelectorAll('.live-legend-title')].map(t =>
      [t.textContent, Math.round(t.getBoundingClientRect().left), Math.round(key)]);"""


# Per live canvas, the empty width left and right of it in its box (CSS px): within
# the box's content, less a scroll bar's room where the box scrolls.
LIVE_MARGINS = """
    return [...document.querySelectorAll('.live-canvas')].filter(c => c.checkVisibility()).map(c => {
      const p = c.parentElement, b = p.getBoundingClientRect(), r = c.getBoundingClientRect();
      const left = b.left + p.clientLeft;
      return [Math.round(r.left - left), Math.round(left + p.clientWidth - r.right)]; });"""

# Per live canvas, its height and its box's (the room it is shown in) and whether the
# box scrolls (CSS px).
LIVE_BOXES = """
    return [...document.querySelectorAll('.live-canvas')].filter(c => c.checkVisibility()).map(c => {
      const p = c.parentElement;
      return [Math.round(c.getBoundingClientRect().height), p.clientHeight, p.scrollHeight > p.clientHeight + 1]; });"""

# EPYC 9654 (one socket, 192 CPUs): the 2-client run on its 96 cores' first node.
LIVE_EPYC1 = dict(LIVE, machine="epyc9654-1p")


def live_layout(page, cfg):
    """A and B's live canvases side by side at 1280x800 and 1280x720, stacked on a 390
    px phone, each centred in its box; the view's heading, controls and first canvas
    (its box) on one screen; the CPU numbers drawn at 11 px or more at every size, on
    Kunpeng 920 (at 1280x800 in a taller layout whose CPUs hold them, on the phone and
    at 1280x720 in one whose clusters gave their names' line to the CPUs, which the key
    says) and on EPYC 9654's 192 CPUs (unnumbered at every size until session 40: in a
    canvas as wide as its box and taller, the box scrolling); the group labels at 11
    px, none left out; each heading of the key starts its line."""
    try:
        for machine, scenario in (("kunpeng920-6426", LIVE), ("epyc9654-1p", LIVE_EPYC1)):
            for (w, h), side_by_side in (((1280, 800), True), ((1280, 720), True), ((390, 844), False)):
                live_layout_at(page, cfg, machine, scenario, w, h, side_by_side)
    finally:
        set_viewport(page, *VIEWPORT)


def live_layout_at(page, cfg, machine, scenario, w, h, side_by_side):
    """live_layout's checks on one machine at one size."""
    epyc = machine.startswith("epyc")
    at = f"{machine} at {w}x{h}"
    set_viewport(page, w, h)
    page.open(fragment(scenario))
    page.wait_for("#live-status", timeout=120)
    page.until(lambda: page.js("return document.querySelector('#live-canvas-1').width") > 0, timeout=10)
    time.sleep(1.2)  # the canvases are fitted a few times a second (twice for a box that scrolls)
    # Each canvas' left, top and width, and its box's height (the room it is shown in).
    r = page.js("""return [0, 1].map(i => {
        const c = document.querySelector('#live-canvas-' + i), r = c.getBoundingClientRect();
        return [r.left, r.top, r.width, c.parentElement.getBoundingClientRect().height]; })""")
    (l0, t0, w0, h0), (l1, t1, w1, h1) = r
    if side_by_side:
        ok = abs(t0 - t1) < 2 and l1 >= l0 + w0 and w0 >= 250 and abs(w0 - w1) < 2
        what = "side by side"
    else:
        # The phone's layout is taller than wide: the canvas is as tall as
        # allowed, 250 px wide and more.
        ok = t1 >= t0 + h0 and abs(l0 - l1) < 2 and w0 >= 250
        what = "stacked"
    check(ok, f"{at} A and B are {what} (A {[round(v) for v in r[0]]}, B {[round(v) for v in r[1]]})")
    wide = page.js("return document.documentElement.scrollWidth")
    check(wide <= w, f"{at} the page fits the width ({wide} px)")
    # CPU numbers as drawn on the page: the canvas' own size for them times
    # its scale there. At 390 px they were 9 px in boxes 20 px wide (session
    # 37 numbered them in a 590 px canvas; in session 38's 552 px canvas that
    # fits the screen under the controls, and at 1280x720, Kunpeng 920's CPUs
    # were too small for "127" at 11 px, and not numbered). At 1280x800 the
    # taller layout numbers them; on the phone and at 1280x720 the one without
    # the clusters' names (session 39). EPYC 9654's were 12-14 px wide at every
    # size, unnumbered (session 40).
    px = page.js(LIVE_NUMBERS)
    ok = all(p is not None and p >= 11 for p in px)
    check(ok and px, f"{at} the CPU numbers are drawn at least 11 px (px per canvas {px})")
    boxes = page.js(LIVE_BOXES)
    if epyc:
        # As tall as numbers need, the box scrolling, and at most 2.5 times its
        # box (more is not worth the scrolling).
        ok = boxes and all(s and bh < c <= 2.5 * bh + 3 for c, bh, s in boxes)
        check(ok, f"{at} each canvas is taller than its box, at most 2.5 times, and the "
                  f"box scrolls ([canvas, box px, scrolls] {boxes})")
    else:
        check(boxes and not any(s for _, _, s in boxes),
              f"{at} no box scrolls ([canvas, box px, scrolls] {boxes})")
    key = page.text(".live-legend") or ""
    unnamed = "without a name: a cluster" in key
    # "requeued in place (6.12's delayed task)" was alone on the key's third
    # line at 1280 px, where it fit beside "other node" (session 39).
    lone = page.js(LONE_KEYS, ".live-legend")
    check(lone == [], f"{at} no line of the key holds one key alone that would fit "
                      f"the line before (lone: {lone})")
    check(unnamed == (epyc or (w, h) != (1280, 800)),
          f"{at} the key says what a box without a name is exactly where the "
          f"clusters' names were left out (says it: {unnamed})")
    # Centred: on the phone the canvas (252 px) sat at its box's left, 79 px
    # of the box empty at its right (session 39).
    margins = page.js(LIVE_MARGINS)
    check(margins and all(abs(a - b) <= 2 for a, b in margins),
          f"{at} each canvas is centred in its box ([left, right] empty px: {margins})")
    # The group labels ("cluster 0"): 10 px until session 38, squeezed into boxes
    # narrower than them at 1280 px.
    labels = page.js(LIVE_LABELS)
    check(labels and all(p is not None and p >= 11 and out == 0 for p, out in labels),
          f"{at} the group labels are drawn at least 11 px, none left out "
          f"([px, left out] per canvas: {labels})")
    # The view's heading, controls and first canvas' box on one screen: on the
    # phone the canvas was 590 px tall under 379 px of controls (969 px).
    page.js("document.querySelector('.live-view').scrollIntoView()")
    span = page.js(SPAN_ON_SCREEN, ".live-view", ".live-canvas-box")
    check(span and span[1] <= span[2],
          f"{at} the live view's heading, controls and first canvas fit one screen "
          f"([top, canvas bottom, screen] px: {span})")
    # The key: a heading ("CPUs:") starts a line, never left at the end of the
    # line of the keys before it.
    heads = page.js(LEGEND_HEADS)
    check(len(heads) == 2 and all(abs(x - left) <= 1 for _, x, left in heads),
          f"{at} each heading of the key starts a line ([heading, left, key's left]: {heads})")
    page.js("document.querySelector('.live-view').scrollIntoView()")
    time.sleep(0.5)
    size = f"{w}" if h != 720 else f"{w}x{h}"
    page.screenshot(cfg["shot"].replace(".png", f"-live-ab-{'epyc-' if epyc else ''}{size}.png"))

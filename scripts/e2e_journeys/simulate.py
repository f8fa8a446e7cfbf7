"""Journeys of the Simulate tab: shared simulation links against the native CLI's
digests, inputs, sweeps, seed examples, long runs, the link budget, results kept
across tab switches and the chart's confidence band. The simulate_* journeys go on
from one another's page (their order in JOURNEYS matters)."""

import re
import time

from harness import (
    SIMULATE,
    axe_violations,
    busy_factor,
    chart_series,
    check,
    cli_json,
    emulated_scheme,
    fragment,
    native,
    native_run,
    note,
)


def simulate_shared_link(page, cfg):
    """The Simulate tab from a shared link: both runs finish with the native CLI's
    digests, the chart draws both, and the drawing shades the CPUs by utilisation."""
    t0 = time.monotonic()
    page.open(fragment(SIMULATE))
    done = page.wait_for(".sim-status.done", timeout=180)
    note(f"link opened and both simulations ran in {time.monotonic() - t0:.1f} s: {done[:1]}")
    check(done, "both simulations finish")
    digests = {side: page.wait_for(f'.digest[data-side="{side}"]') for side in "ab"}
    want = {"a": native(cfg, SIMULATE["sim"], "6.6"), "b": native(cfg, SIMULATE["sim"], "6.6+cluster")}
    check(digests["a"] == [want["a"]] and digests["b"] == [want["b"]],
          f"the browser's digests are the native CLI's (browser {digests}, native {want})")
    # The change is the native runs' (a model result, not a pinned number: it moves
    # whenever the model does; docs/fidelity.md compares it with seed 01's table).
    a_val = native_run(cfg, SIMULATE["sim"], "6.6")["value"]
    b_val = native_run(cfg, SIMULATE["sim"], "6.6+cluster")["value"]
    want_pct = (b_val - a_val) / a_val * 100
    change = page.wait_for(".change-pct")
    got_pct = float(re.match(r"^([+-]?\d+\.\d+)", change[0]).group(1)) if change else None
    check(got_pct is not None and abs(got_pct - want_pct) < 0.01 and want_pct > 0,
          f"6.6+cluster is better by the native runs' change, {want_pct:+.2f}% (page {change})")
    series = chart_series(page)
    shape = sorted((s["side"], len(s["points"])) for s in series)
    check([s for s, _ in shape] == ["a", "b"] and min(n for _, n in shape) >= 3,
          f"the chart draws A and B over the window (sides and points {shape})")
    heat = page.wait_count("button.cpu.heat", 32)
    check(heat == 32, f"the drawing shades node 0's 32 CPUs by utilisation (got {heat})")
    page.click('button[data-heat-side="B"]')
    titles = page.attrs("button.cpu.heat", "title")
    check(len(titles) == 32 and all("busy" in t for t in titles), "each shaded CPU says how busy it was")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-simulate.png"))


# The shaded CPUs (button.cpu.heat) whose number contrasts less than 3:1 with their
# shade (blended over the page's background), as [cpu, ratio].
FAINT_CPUS = """
    const rgb = s => s.match(/[\\d.]+/g).map(Number);
    const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
      return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const page = rgb(getComputedStyle(document.body).backgroundColor);
    const out = [];
    for (const b of document.querySelectorAll('button.cpu.heat')) {
      const cs = getComputedStyle(b), bg = rgb(cs.backgroundColor), a = bg.length > 3 ? bg[3] : 1;
      const shade = [0, 1, 2].map(i => bg[i] * a + page[i] * (1 - a));
      const l1 = lum(rgb(cs.color)), l2 = lum(shade);
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      if (ratio < 3) out.push([b.dataset.cpu, Math.round(ratio * 100) / 100]);
    }
    return out;"""

def simulate_inputs(page, cfg):
    """Continues on the Simulate tab: a new input starts a new run and the link follows;
    a bad CPU list is refused with the reason and the results stay."""
    a1 = page.wait_for('.digest[data-side="a"]')
    before = page.hash
    page.set_input("#sim-threads", "2")
    page.until(lambda: page.count(".sim-status.done")
               and page.texts('.digest[data-side="a"]') not in ([], a1), timeout=180)
    a2 = page.wait_for('.digest[data-side="a"]')
    two = dict(SIMULATE["sim"], workload={"kind": "tbench", "clients": 2})
    check(a2 == [native(cfg, two, "6.6")], f"2 clients rerun and match the CLI again (got {a2})")
    after = page.hash
    check(after.startswith("#v2:") and after != before, "the URL fragment follows the simulation")

    # A fifth's warm-up measures the start-up (the LLC not yet balanced at its busy
    # interval): the page says so, as the CLI's note does.
    start_up = page.texts(".start-up-note")
    check(len(start_up) == 1 and "settled warm-up" in start_up[0],
          f"a run measured in the start-up says so and names the fix (got {start_up})")

    # The settled warm-up (past the LLC's first busy balance round): the run is the
    # CLI's `--warmup settled`, and the link carries it.
    page.click("#sim-warmup")
    page.until(lambda: page.count(".sim-status.done")
               and page.texts('.digest[data-side="a"]') not in ([], a2), timeout=180)
    a3 = page.wait_for('.digest[data-side="a"]')
    settled = dict(two, warmup="settled")
    check(a3 == [native(cfg, settled, "6.6")],
          f"a settled warm-up reruns and matches `run --warmup settled` (got {a3})")
    check(page.hash not in (after, before), "the link follows the warm-up")
    check(page.count(".start-up-note") == 0, "a settled run has no start-up note")
    cmd = page.wait_for(".sim-cli code")
    check(cmd and all("--warmup settled" in c for c in cmd),
          f"the command lines carry --warmup settled (got {cmd})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-settled.png"))
    # Each shaded CPU's number reads on its shade (the selected CPU 0 kept its white
    # text on a pale shade: a blank box).
    faint = page.js(FAINT_CPUS)
    check(page.count("button.cpu.heat") > 0 and faint == [],
          f"every shaded CPU's number contrasts with its shade at least 3:1 (faint: {faint[:6]})")
    page.click("#sim-warmup")
    page.until(lambda: page.count(".sim-status.done")
               and page.texts('.digest[data-side="a"]') == a2, timeout=180)
    check(page.hash == after, "back to a fifth: the run and the link are the ones before")

    page.set_input("#sim-cpus", "node9")
    err = page.wait_for(".sim-error")
    check(err and "nodes 0-3" in err[0], f"a bad CPU list says which nodes exist (got {err})")
    kept = page.wait_for('.digest[data-side="a"]')
    check(kept == a2, f"the last results stay on screen (got {kept})")
    note(f"after the bad input the CPUs field shows {page.js('return document.querySelector(arguments[0]).value', '#sim-cpus')!r}")
    # A negative window (a number field takes "-5") is refused aloud and the field shows
    # the run's window again; it was ignored, "-5" staying above a 60 ms run.
    window = page.js("return document.querySelector('#sim-duration').value")
    page.set_input("#sim-duration", "-5")
    err = page.wait_for(".sim-error", pred=lambda t: "-5" in t[0])
    shown = page.until(lambda: page.js("return document.querySelector('#sim-duration').value") == window
                       and window, timeout=5)
    check(err and 'duration: "-5" is not a whole number' in err[0] and shown == window
          and page.wait_for('.digest[data-side="a"]') == a2,
          f"a negative duration is refused with the reason, the field back at {window} ms "
          f"and the results kept (got {err}, field {page.js('return document.querySelector(arguments[0]).value', '#sim-duration')!r})")


def simulate_sweep(page, cfg):
    """Continues on the Simulate tab: a sweep, as seed 01's table, whose rows must be
    the native `schedlab sweep`'s."""
    page.set_input("#sim-cpus", "node0")
    page.set_input("#sim-duration", "30")
    page.set_input("#sim-sweep", "1,4,8")
    page.wait_for(".sim-status.done", timeout=180, pred=lambda t: "simulations" in t[0])
    rows = page.js("return [...document.querySelectorAll('.sweep-table tbody tr')]"
                   ".map(r => [r.dataset.threads, r.querySelector('.change-cell').textContent])")
    out = cli_json(cfg, "sweep", "--machine", "kunpeng920-6426", "--cpus", "node0",
                   "--workload", "tbench", "--threads", "1,4,8", "--baseline", "6.6",
                   "--patched", "6.6+cluster", "--duration-ms", "30", "--seed", "1",
                   "--seeds", "1")
    want = [[str(r["threads"]), f'{r["change_pct"]:+.2f}%'] for r in out["rows"]]
    check(rows == want, f"the sweep's rows are the native sweep's (page {rows}, native {want})")
    markers = sorted((s["side"], s["markers"]) for s in chart_series(page) if not s["published"])
    check(markers == [("a", 3), ("b", 3)],
          f"the sweep chart has a point per scale and side (got {markers})")
    hover = page.js("return [...document.querySelectorAll('.sim-chart circle[data-side=\"b\"] title')]"
                    ".map(t => t.textContent)")
    check(len(hover) == 3 and all("6.6+cluster" in t and t.count(": ") == 2 for t in hover),
          f"each point says its values on hover (got {hover})")
    cmd = page.wait_for(".sim-cli code")
    check(cmd and cmd[0].startswith("schedlab sweep") and "--threads 1,4,8" in cmd[0],
          f"the page prints the sweep's command line (got {cmd})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-sweep.png"))
    page.set_input("#sim-sweep", "")


def simulate_seed01_example(page, cfg):
    """Continues on the Simulate tab: one click opens seed 01's tbench table, with the
    published changes beside the model's."""
    page.select("#sim-example", "seed01-tbench")
    # 7 scales x 2 sides x the CI scale's 3 seeds.
    t0 = time.monotonic()
    page.wait_for(".sim-status.done", timeout=240, pred=lambda t: "42 simulations" in t[0])
    note(f"seed 01's tbench example ran in {time.monotonic() - t0:.1f} s")
    pub = page.js("return [...document.querySelectorAll('.sweep-table tbody tr')]"
                  ".map(r => [r.dataset.threads, r.querySelector('td.published').textContent])")
    check(pub[:1] == [["1", "+13.80%"]] and len(pub) == 7,
          f"seed 01's example shows the published change per row (got {pub})")
    model = page.texts(".sweep-table .change-cell")
    check(len(model) == 7 and all(re.match(INTERVAL, m) for m in model),
          f"the model's change over 3 seeds is shown with its interval on every row (got {model})")
    dashed = sorted(s["side"] for s in chart_series(page) if s["published"])
    check(dashed == ["a", "b"], f"the published tbench numbers are drawn dashed beside the model's (got {dashed})")
    # Not taken for B's dashed model line in the same violet (a 5 4 dash beside B's 4 2
    # was): the published lines are dotted, each point a square, and the legend says so.
    look = page.js("""const c = document.querySelector('.sim-chart');
        const dash = e => e && getComputedStyle(e).strokeDasharray;
        return {marks: [...c.querySelectorAll('rect.mark')].map(r => r.dataset.side).join(''),
                pub: dash(c.querySelector('polyline.published-line.line-b')),
                b: dash(c.querySelector('polyline.line-b:not(.published-line)')),
                legend: document.querySelector('.sim-legend').textContent}""")
    check(look["marks"] == "a" * 7 + "b" * 7 and look["pub"] == "0px, 5px" and look["b"] == "4px, 2px"
          and "published (dotted, squares)" in look["legend"],
          f"the published lines are dotted with a square on each point, B's model line dashed, "
          f"and the legend names them ({look})")
    page.js("document.querySelector('.sim-chart').scrollIntoView({block: 'center'})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-example.png"))
    page.js("[...document.querySelectorAll('.theme-switch button')].find(b => b.textContent === 'Dark').click()")
    time.sleep(0.5)
    page.js("document.querySelector('.sim-chart').scrollIntoView({block: 'center'})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-example-dark.png"))
    page.js("[...document.querySelectorAll('.theme-switch button')].find(b => b.textContent === 'Auto').click()")
    page.set_input("#sim-sweep", "")


# A change over seeds as the page prints it: `+12.8 % [+12.7, +12.9]`.
INTERVAL = r"^[+-]\d+\.\d % \[[+-]\d+\.\d, [+-]\d+\.\d\]"


def simulate_seeds(page, cfg):
    """A link that asks for 3 seeds per side: each seed's digests are the native CLI's
    (`run --seeds 3`), and the change with its interval is the native sweep's."""
    sim = dict(SIMULATE["sim"], seeds=3)
    page.open(fragment(dict(SIMULATE, sim=sim)))
    done = page.wait_for(".sim-status.done", timeout=180)
    check(done, f"the 6 simulations finish (got {done[:1]})")
    w = sim["workload"]
    args = ["--machine", "kunpeng920-6426", "--cpus", sim["cpus"], "--workload", w["kind"],
            "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]), "--seeds", "3"]
    for side, patches in (("a", "6.6"), ("b", "6.6+cluster")):
        runs = cli_json(cfg, "run", *args, "--threads", str(w["clients"]),
                        "--patches", patches)["over_seeds"]["runs"]
        want = [r["digest"] for r in runs]
        got = page.wait_for(f'.digest[data-side="{side}"]')
        seeds = page.attrs(f'.digest[data-side="{side}"]', "data-seed")
        check(got == want and seeds == ["1", "2", "3"],
              f"side {side}: seeds 1-3's digests are the native CLI's (browser {got} {seeds}, native {want})")
    row = cli_json(cfg, "sweep", *args, "--threads", str(w["clients"]), "--baseline", "6.6",
                   "--patched", "6.6+cluster")["rows"][0]
    want = f'{row["change_pct"]:+.1f} % [{row["change_lo"]:+.1f}, {row["change_hi"]:+.1f}]'
    change = page.wait_for(".change-pct")
    check(change == [want] and re.match(INTERVAL, change[0]),
          f"the change and its 95% interval are the native sweep's (page {change}, native {want})")
    cmd = page.wait_for(".sim-cli code")
    check(len(cmd) == 2 and all("--seeds 3" in c for c in cmd),
          f"the command lines carry --seeds 3 (got {cmd})")


# Every text the Simulate tab's status line and its live region take, as they change:
# window.__said = [[class, status text, announced text], ...]. Installed on the page
# it watches (a MutationObserver sees every batch's update, which polling could miss).
WATCH_STATUS = """
  window.__said = [];
  const note = () => {
    const s = document.querySelector('.sim-status'), a = document.querySelector('#sim-announce');
    const entry = [s ? s.className : '', s ? s.textContent : '', a ? a.textContent : ''];
    const last = window.__said[window.__said.length - 1];
    if (!last || last.join('|') !== entry.join('|')) window.__said.push(entry);
  };
  new MutationObserver(note).observe(document.body,
    {subtree: true, childList: true, characterData: true, attributes: true});
  note();
"""

# A running line: who (side, seed of how many), how far (all seeds' and sides' simulated
# time, of their ends once one is known), the least advanced seed's phase.
RUNNING = (r"^Running: [AB] seeds? [\d–, ]+ of 3(, [AB] seeds? [\d–, ]+ of 3)? · "
           r"(?P<done>[\d.]+)( of [\d.]+)? (?P<unit>m?s) simulated in all, "
           r"(the clients starting \(not measured\)|warming up \(not measured\)|measuring)"
           r"( · [1-5] of 6 done)?$")


def simulate_status(page, cfg):
    """The status line while a 3-seed run goes says which side and seed of how many
    run, how far in simulated time and whether warming up or measuring, and how many
    are done; at the end what ran and in how long. Screen readers hear it through a
    polite live region that changes with the run's state, not with every batch."""
    sim = dict(SIMULATE["sim"], seeds=3, duration_ms=400)
    page.open()
    page.wait_for(".level-name")
    page.js(WATCH_STATUS)
    page.js("location.hash = arguments[0]", fragment(dict(SIMULATE, sim=sim)))
    page.wait_for(".sim-status.running", timeout=60)
    page.screenshot(cfg["shot_epyc"].replace(".png", "-status-running.png"))
    ended = page.wait_for(".sim-status.done", timeout=240)
    said = page.js("return window.__said")
    running = [t for c, t, _ in said if "running" in c and t.startswith("Running")]
    bad = [t for t in running if not re.match(RUNNING, t)]
    check(running and not bad,
          f"while it runs, each status says side, seed of 3, simulated time in all and "
          f"the phase ({len(running)} seen, {bad[:2]} not so; first {running[:1]})")
    done = [float(m["done"]) * (1e3 if m["unit"] == "s" else 1)
             for m in (re.match(RUNNING, t) for t in running) if m]
    back = [(a, b) for a, b in zip(done, done[1:]) if b < a]
    check(done and not back,
          f"the simulated time in all never drops back as seeds start ({len(done)} lines, "
          f"from {done[:1]} to {done[-1:]} ms; back: {back[:2]})")
    seen = " ".join(running)
    # (tbench's start barrier, "the clients starting", often passes within a batch.)
    for what in ("warming up", "measuring", "seed 2 of 3", "seed 3 of 3", "of 6 done"):
        check(what in seen, f"the run's status said {what!r} at some point")
    want = (r"^Done( in \d+\.\d s)?: A and B, 3 seeds each · 400 ms measured after the "
            r"clients' start at \d+ ms and \d+\.?\d* ms of warm-up · [\d,]+ simulated events")
    check(ended and re.match(want, ended[0]), f"the end says what ran and in how long (got {ended})")
    announced = [a for _, _, a in said]
    distinct = [a for i, a in enumerate(announced) if a and (i == 0 or a != announced[i - 1])]
    check(distinct == ["Running: A and B, 3 seeds each.", ended[0]],
          f"the live region says the run once and its end once, not each batch "
          f"(it said {distinct}; the line changed {len(said)} times)")
    roles = page.js("const s = document.querySelector('.sim-status'),"
                    " a = document.querySelector('#sim-announce');"
                    "return [s.getAttribute('role'), s.getAttribute('aria-live'), a.getAttribute('role')]")
    check(roles == [None, None, "status"],
          f"the changing line is not itself live; #sim-announce is a status region (got {roles})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-status-done.png"))


def simulate_long_run(page, cfg):
    """Continues on the Simulate tab: a long run goes on in the workers, the page
    answers clicks meanwhile, and Stop stops it."""
    page.set_input("#sim-duration", "30000")
    running = page.wait_for(".sim-status.running", timeout=30)
    check(running, f"a 30 s simulation is running (got {running})")
    t0 = time.monotonic()
    page.click('button.cpu[data-cpu="5"]')
    selected = page.wait_for("button.cpu.selected", timeout=5, pred=lambda t: t == ["5"])
    took = time.monotonic() - t0
    limit = 2.0 * busy_factor()
    check(selected == ["5"] and took < limit,
          f"a click in the drawing is answered within {limit:.1f} s while it runs "
          f"(got {selected} in {took:.2f} s)")
    page.click("#sim-stop")
    stopped = page.wait_for(".sim-status", pred=lambda t: any("Stopped" in x for x in t))
    check(any("Stopped at" in x for x in stopped), f"Stop stops the run (got {stopped})")
    note(f"simulate screenshots: {cfg['shot_epyc'].replace('.png', '-*.png')}")


# A link that asks for minutes of simulation: 32 tbench clients on node 0 for 60 s,
# two sides (about 4 minutes at the page's speed, the budget is 30 s).
COSTLY = dict(SIMULATE, sim={"workload": {"kind": "tbench", "clients": 32}, "cpus": "node0",
                             "duration_ms": 60000, "seed": 1})


def link_budget(page, cfg):
    """A link asking for minutes of simulation does not start on opening: the page says
    what it costs and runs it only when the Run button is pressed."""
    page.open(fragment(COSTLY))
    prompt = page.wait_for(".sim-held", timeout=30)
    check(prompt and re.search(r"This link asks for about \d+ minutes of simulation\. Run it\?",
                               prompt[0]), f"the link's cost is asked about (got {prompt})")
    time.sleep(2.0)
    status = page.texts(".sim-status")
    check(not page.count(".sim-status.running") and not page.count(".sim-chart"),
          f"nothing runs before the button is pressed (status {status})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-budget.png"))
    page.click("#sim-run-held")
    running = page.wait_for(".sim-status.running", timeout=30)
    check(running and not page.count(".sim-held"), f"Run starts it (got {running})")
    page.click("#sim-stop")
    stopped = page.wait_for(".sim-status", pred=lambda t: any("Stopped" in x for x in t))
    check(any("Stopped" in x for x in stopped), f"and Stop stops it (got {stopped})")
    # The largest a link may ask for (4096 CPUs, 4096 clients, 64 seeds of 60 s) is
    # said in days, not as "about 40024 minutes".
    page.open(fragment({"machine": {"name": "m", "arch": "x86", "packages": 1, "cores_per_llc": 4096},
                        "patches": "6.8", "view": "simulate", "wake": {"compare": "6.8-cluster"},
                        "sim": {"workload": {"kind": "tbench", "clients": 4096}, "cpus": "all",
                                "duration_ms": 60000, "seed": 1, "seeds": 64}}))
    prompt = page.wait_for(".sim-held", timeout=60)
    check(prompt and re.search(r"This link asks for about \d+ days of simulation\. Run it\?", prompt[0]),
          f"a month of simulation is asked about in days (got {prompt[:1]})")


def simulate_kept(page, cfg):
    """Results survive tab switches: back on Simulate with the same inputs, the finished
    run is shown as it was (same status line, same digests), nothing runs again, and
    the pool's workers are not started again."""
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    status = page.text(".sim-status")
    digests = page.texts(".digest")
    workers = "return performance.getEntriesByType('resource')" \
              ".filter(e => e.name.endsWith('worker.js')).length"
    started = page.js(workers)
    page.click(".tabs button:nth-child(1)")
    page.wait_for(".level-name")
    page.click(".tabs button:nth-child(5)")
    back = page.wait_for(".sim-status.done", timeout=5)
    check(back and page.text(".sim-status") == status and page.texts(".digest") == digests,
          f"the finished run is shown again, not rerun (before {status!r}, after {page.text('.sim-status')!r})")
    check(page.js(workers) == started and started > 0,
          f"the workers started once ({started} worker loads, then {page.js(workers)})")
    page.set_input("#sim-threads", "2")
    page.until(lambda: page.text(".sim-status") != status, timeout=10)
    check(page.text(".sim-status") != status, "new inputs start a new run")


def svg_points(page, css):
    """The (x, y) points of the first element matching css (a polyline or polygon)."""
    raw = page.js("const e = document.querySelector(arguments[0]);"
                  " return e ? e.getAttribute('points') : ''", css) or ""
    return [tuple(float(v) for v in xy.split(",")) for xy in raw.split()]


def chart_band(page, cfg):
    """A 2-seed simulation: each side's mean line sits inside its 95% band (a polygon
    under the line, with a legend entry), the axes have titles with units, every point
    says its values on hover, the numbers are a keyboard-reachable table, "no
    significant change" shows exactly when the change's interval includes 0, and axe
    stays at 0 (light and dark)."""
    page.driver.set_script_timeout(60)
    sim = dict(SIMULATE["sim"], seeds=2)
    page.open(fragment(dict(SIMULATE, sim=sim)))
    page.wait_for(".sim-status.done", timeout=180)
    bands = page.js("return document.querySelector('.sim-chart').dataset.bandCount")
    check(bands == "2", f"two seeds: a band per side (data-band-count {bands!r})")
    for side in ("a", "b"):
        line = svg_points(page, f".sim-chart polyline.line-{side}")
        band = svg_points(page, f".sim-chart polygon.band-{side}")
        n = len(line)
        around = n > 3 and len(band) == 2 * n and all(
            band[k][1] <= line[k][1] <= band[2 * n - 1 - k][1]
            and band[k][0] == line[k][0] for k in range(n))
        wide = sum(band[2 * n - 1 - k][1] - band[k][1] for k in range(n)) if around else 0
        check(around and wide > 0,
              f"side {side}: the band's outline runs along the mean line, above and below it "
              f"({n} points, {len(band)} band points, {wide:.0f} px of width in all)")
        hover = page.js("return [...document.querySelectorAll(arguments[0])].map(t => t.textContent)",
                        f".sim-chart circle.hit-{side} title")
        check(len(hover) == n and all(" ms: " in t and "MB/s" in t for t in hover)
              and sum("95% interval" in t for t in hover) >= n - 1,
              f"side {side}: every point of the line says its values and interval on hover "
              f"({len(hover)} of {n}: {hover[:1]})")
    texts = page.texts(".sim-chart svg text")
    for title in ("simulated time in the measured window (ms)", "throughput (MB/s)"):
        check(title in texts, f"the axis title {title!r} is drawn (got {[t for t in texts if '(' in t]})")
    # The legend once, above the chart: plotters' own inside the SVG is for a saved
    # file and is not drawn on the page (it was, beside the list above the chart).
    shown = page.js("""
        const seen = e => e.checkVisibility() && e.getBoundingClientRect().width > 0;
        return {svg: [...document.querySelectorAll('.sim-chart svg text')]
                  .filter(t => seen(t) && t.textContent.includes(' 6.6')).map(t => t.textContent),
                list: [...document.querySelectorAll('.sim-legend li')].filter(seen).map(li => li.textContent),
                banded: [...document.querySelectorAll('.sim-legend .swatch.banded')].filter(seen).length};""")
    names = [t for t in shown["list"] if t in ("A 6.6", "B 6.6+cluster")]
    check(shown["svg"] == [] and names == ["A 6.6", "B 6.6+cluster"],
          f"the chart's legend is shown once, above it (list {shown['list']}, legend text drawn in the chart {shown['svg']})")
    check(shown["banded"] == 2 and any("mean of 2 seeds" in t and "95% interval" in t for t in shown["list"]),
          f"the legend names the bands: each side's key over its band's shade, and what they are (got {shown})")
    gap = page.js("const c = document.querySelector('.sim-chart').getBoundingClientRect();"
                  " const d = document.querySelector('.chart-data').getBoundingClientRect();"
                  " return d.top - c.bottom")
    check(gap is not None and 0 <= gap < 80,
          f"the table's summary sits right under the chart, above the inputs ({gap} px below it)")
    page.click(".chart-data > summary")
    rows = page.count(".chart-data tbody tr")
    focusable = page.js("return document.querySelector('.chart-data .table-scroll').tabIndex")
    n = len(svg_points(page, ".sim-chart polyline.line-a"))
    heads = page.texts(".chart-data thead th")
    check(rows == n and focusable == 0 and len(heads) == 5,
          f"the chart's numbers are a table the keyboard reaches ({rows} rows for {n} points, "
          f"tabindex {focusable}, columns {heads})")
    change = page.text(".change-pct") or ""
    m = re.search(r"\[([+-]\d+\.\d), ([+-]\d+\.\d)\]", change)
    says = page.count(".change .not-significant") == 1
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        check(says == (lo <= 0 <= hi),
              f"'no significant change' shows exactly when [{lo}, {hi}] includes 0 (shown: {says})")
    else:
        check(False, f"the change reads with its interval (got {change!r})")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the band and the open table (got {found})")
    page.js("document.querySelector('.sim-chart').scrollIntoView()")
    page.all(".sim-chart")[0].screenshot(cfg["shot_epyc"].replace(".png", "-band.png"))
    with emulated_scheme(page, "dark"):
        time.sleep(0.3)
        fill = page.js("return getComputedStyle(document.querySelector('.sim-chart polygon.band-b')).fill")
        found = axe_violations(page)
        check(found == [], f"axe (dark): no violations (got {found})")
        page.all(".sim-chart")[0].screenshot(cfg["shot_epyc"].replace(".png", "-band-dark.png"))
    check(fill and fill != "none", f"the band is filled in the dark theme too (got {fill!r})")


# The dash B's line and its legend key draw, read from the page: [dash, gap] in the
# SVG's units, or None for a solid line.
LINE_LOOK = """
    const chart = document.querySelector('.sim-chart');
    const look = side => {
      const line = chart.querySelector(`polyline.line-${side}:not(.published-line)`);
      const dash = getComputedStyle(line).strokeDasharray;
      const keys = [...chart.querySelectorAll(`rect.key-${side}`)]
        .map(r => [+r.getAttribute('x'), +r.getAttribute('x') + +r.getAttribute('width')])
        .sort((p, q) => p[0] - q[0]);
      return {dash: dash === 'none' ? null : dash.split(/[ ,]+/).map(parseFloat),
              stroke: getComputedStyle(line).stroke,
              keys: keys.map(k => k[1] - k[0]), gaps: keys.slice(1).map((k, i) => k[0] - keys[i][1]),
              index: [...chart.querySelectorAll('polyline')].indexOf(line),
              swatch: getComputedStyle(document.querySelector(`.sim-legend .swatch.line-${side}`)).backgroundImage};
    };
    return {a: look('a'), b: look('b'), label: chart.getAttribute('aria-label'),
            identical: chart.dataset.identical,
            note: [...document.querySelectorAll('.chart-same')].map(e => e.textContent)};"""


def chart_identical(page, cfg):
    """A against itself: A's and B's lines coincide, yet both show. A is solid, B is
    dashed and drawn over it, each legend key drawn as its line is (a pattern, not
    only a colour, in light and dark), and the chart's text says A and B are
    identical; a run whose sides differ does not say so."""
    same = dict(SIMULATE, wake={"compare": "6.6"})
    page.open(fragment(same))
    page.wait_for(".sim-status.done", timeout=180)
    for scheme in ("light", "dark"):
        with emulated_scheme(page, scheme):
            time.sleep(0.3)
            look = page.js(LINE_LOOK)
            a, b = look["a"], look["b"]
            check(a["dash"] is None and a["keys"] and all(abs(g) < 0.01 for g in a["gaps"]),
                  f"{scheme}: A's line and its legend key are solid (dash {a['dash']}, key gaps {a['gaps']})")
            dash = b["dash"] or [0, 0]
            check(b["dash"] and b["index"] > a["index"],
                  f"{scheme}: B's line is dashed and drawn over A's (dash {b['dash']}, "
                  f"polylines A {a['index']}, B {b['index']})")
            check(len(b["keys"]) >= 2 and all(abs(k - dash[0]) < 0.01 for k in b["keys"][:-1])
                  and b["keys"][-1] <= dash[0] + 0.01 and all(abs(g - dash[1]) < 0.01 for g in b["gaps"]),
                  f"{scheme}: B's legend key is the same dash (dash {b['dash']}; key pieces {b['keys']}, gaps {b['gaps']})")
            check(a["stroke"] != b["stroke"], f"{scheme}: and the two colours differ ({a['stroke']}, {b['stroke']})")
            check(a["swatch"] == "none" and "repeating-linear-gradient" in b["swatch"],
                  f"{scheme}: the legend above the chart draws B's swatch dashed, A's solid ({b['swatch'][:60]})")
            page.js("document.querySelector('.sim-chart').scrollIntoView()")
            page.all(".sim-chart")[0].screenshot(cfg["shot_epyc"].replace(".png", f"-identical-{scheme}.png"))
    look = page.js(LINE_LOOK)
    check(look["identical"] == "true" and "A and B identical" in (look["label"] or "")
          and len(look["note"]) == 1 and "A and B identical" in look["note"][0],
          f"the chart says A and B are identical (label {look['label']!r}, note {look['note']})")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the note (got {found})")
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    look = page.js(LINE_LOOK)
    check(look["identical"] != "true" and "identical" not in (look["label"] or "") and look["note"] == [],
          f"6.6 against 6.6+cluster: no such claim (label {look['label']!r}, note {look['note']})")

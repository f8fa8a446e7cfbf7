#!/usr/bin/env python3
"""Drives the schedlab page in headless Chromium through chromedriver (W3C WebDriver,
no client library needed) the way a person would: pick a preset, click a CPU, open
the dmesg tab, explain a wake-up, run a simulation (whose digests must be the native
CLI's). Used by scripts/e2e.

usage: e2e_drive.py URL SCREENSHOT.png SCHEDLAB_CLI
"""
import base64
import json
import re
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

W3C_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
problems = []


def check(ok, what):
    print(("  ok   " if ok else "  FAIL ") + what, flush=True)
    if not ok:
        problems.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None):
        url = self.base + (f"/session/{self.session}" if self.session else "") + path
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.load(r)["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{method} {path}: {e.read().decode(errors='replace')[:500]}")

    def start(self, profile):
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1100"]
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": os.environ.get("CHROMIUM", "/usr/bin/chromium"), "args": args}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def quit(self):
        if self.session:
            try:
                self.call("DELETE", "")
            except Exception:
                pass

    def find_all(self, css):
        found = self.call("POST", "/elements", {"using": "css selector", "value": css})
        return [e[W3C_ELEMENT] for e in found]

    def wait_count(self, css, n, timeout=30.0):
        """Waits until n elements match css; returns how many matched last."""
        deadline = time.monotonic() + timeout
        found = 0
        while time.monotonic() < deadline:
            found = len(self.find_all(css))
            if found == n:
                break
            time.sleep(0.05)
        return found

    def wait_for(self, css, timeout=30.0, pred=None):
        """Waits until elements match css (and pred(texts) holds); returns their texts."""
        deadline = time.monotonic() + timeout
        texts = []
        while time.monotonic() < deadline:
            try:
                texts = [self.text(e) for e in self.find_all(css)]
            except RuntimeError:
                texts = []  # the element went stale during a re-render
            if texts and (pred is None or pred(texts)):
                return texts
            time.sleep(0.1)
        return texts

    def text(self, el):
        return self.call("GET", f"/element/{el}/text")

    def click(self, css):
        els = self.find_all(css)
        if not els:
            raise RuntimeError(f"nothing matches {css}")
        self.call("POST", f"/element/{els[0]}/click", {})

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.call("GET", "/screenshot")))


def fragment(scenario):
    """core::scenario's v1 encoding: base64url (no padding) of the JSON."""
    raw = json.dumps(scenario, separators=(",", ":")).encode()
    return "v1:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


# Seed 01's case on kunpeng920-6426: everything busy but CPU2 (in the waker CPU0's
# cluster 0-3) and CPU12 (the wakee's prev, cluster 12-15); 6.6 against 6.6+cluster.
TEACHING = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "wakeup",
    "wake": {"busy": "0-1,3-11,13-127", "waker": 0, "prev": 12, "sync": True,
             "nr_idle_scan": 8, "compare": "6.6+cluster"},
}


def wakeup(d, url, shot):
    """The wake-up tab, opened from a shared link, then a damaged link."""
    base = url.split("#")[0]
    d.call("POST", "/url", {"url": "about:blank"})
    t0 = time.monotonic()
    d.call("POST", "/url", {"url": base + "#" + fragment(TEACHING)})
    a = d.wait_for('.decision[data-side="a"] .chosen-cpu')
    b = d.wait_for('.decision[data-side="b"] .chosen-cpu')
    print(f"       (link opened and both wake-ups decided in {time.monotonic() - t0:.1f} s)")
    heads = [d.text(e) for e in d.find_all(".decision-head code")]
    check(heads == ["v6.6", "v6.6+cluster"], f"the two columns are v6.6 and v6.6+cluster (got {heads})")
    check(a == ["CPU 12"], f"6.6 sends the wakee to its idle prev, CPU 12 (got {a})")
    check(b == ["CPU 2"], f"6.6+cluster sends it to idle CPU 2 in the waker's cluster (got {b})")
    chosen = [d.text(e) for e in d.find_all("button.cpu.chosen-a")]
    check(chosen and chosen[0].startswith("12"), f"CPU 12 is marked chosen (A) in the drawing (got {chosen})")
    chosen = [d.text(e) for e in d.find_all("button.cpu.chosen-b")]
    check(chosen and chosen[0].startswith("2"), f"CPU 2 is marked chosen (B) in the drawing (got {chosen})")
    trace = d.wait_for(".side-b .trace")
    check(bool(trace) and "select_idle_cpu" in trace[0], "B's trace shows select_idle_cpu()")
    errors = [d.text(e) for e in d.find_all(".error")]
    check(not errors, f"no error messages on the wake-up tab (got {errors})")
    # B's probes numbered in the drawing: CPU1 busy (1), CPU2 taken (2).
    d.click(".side-b .decision .focus")
    probes = d.wait_for("button.cpu.probe-taken")
    check(bool(probes) and re.sub(r"\s+", "", probes[0]) == "22",
          f"CPU 2 is drawn as probe 2, taken (got {probes})")
    wake_shot = shot.replace(".png", "-wakeup.png")
    d.screenshot(wake_shot)

    # A click in the drawing (busy/idle mode) changes the state and the URL follows.
    before = d.call("POST", "/execute/sync", {"script": "return location.hash", "args": []})
    d.click('button.cpu[data-cpu="1"]')
    count = d.wait_for(".wakeup .count", pred=lambda t: t[0].startswith("125"))
    check(count[:1] == ["125 of 128 busy"], f"clicking CPU 1 makes it idle (got {count})")
    after = d.call("POST", "/execute/sync", {"script": "return location.hash", "args": []})
    check(after.startswith("#v1:") and after != before, "the URL fragment follows the state")

    # A damaged link: a banner, and the page keeps working.
    d.call("POST", "/execute/sync", {"script": "location.hash = '#v1:this-is-not-a-scenario!'", "args": []})
    banner = d.wait_for(".banner")
    check(bool(banner) and "could not be opened" in banner[0],
          f"a garbage fragment shows the error banner (got {banner})")
    a = d.wait_for('.decision[data-side="a"] .chosen-cpu')
    check(bool(a), f"the wake-up decisions are still shown under the banner (got {a})")
    d.click("#all-idle")
    count = d.wait_for(".wakeup .count", pred=lambda t: t[0].startswith("0 of"))
    check(count[:1] == ["0 of 128 busy"], f"the page still reacts after a bad link (got {count})")
    d.screenshot(shot.replace(".png", "-badlink.png"))
    print(f"       (wake-up screenshots: {wake_shot})")


# Seed 01's tbench case, short: 4 clients pinned to node 0, 6.6 against 6.6+cluster.
SIMULATE = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "simulate",
    "wake": {"compare": "6.6+cluster"},
    "sim": {"workload": {"kind": "tbench", "clients": 4}, "cpus": "node0",
            "duration_ms": 60, "seed": 1},
}


def native(cli, sim, patches):
    """The digest and value `schedlab run` gives for a page's simulation."""
    w = sim["workload"]
    args = [cli, "run", "--machine", "kunpeng920-6426", "--cpus", sim["cpus"],
            "--workload", w["kind"], "--threads", str(w["clients"]),
            "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]),
            "--patches", patches, "--format", "json"]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return out["digest"]


def set_input(d, css, value):
    """Types a value into an input as a person would end an edit: value, then change."""
    d.call("POST", "/execute/sync", {"script": (
        "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('change', {bubbles: true}));"), "args": [css, value]})


def simulate(d, url, shot, cli):
    """The Simulate tab from a shared link: both runs live, then the browser's digests
    against the native CLI's, a change of input, and a bad one."""
    base = url.split("#")[0]
    d.call("POST", "/url", {"url": "about:blank"})
    t0 = time.monotonic()
    d.call("POST", "/url", {"url": base + "#" + fragment(SIMULATE)})
    done = d.wait_for(".sim-status.done", timeout=180)
    print(f"       (link opened and both simulations ran in {time.monotonic() - t0:.1f} s: {done[:1]})")
    check(bool(done), "both simulations finish")
    digests = {e_side: d.wait_for(f'.digest[data-side="{e_side}"]') for e_side in "ab"}
    want = {"a": native(cli, SIMULATE["sim"], "6.6"), "b": native(cli, SIMULATE["sim"], "6.6+cluster")}
    check(digests["a"] == [want["a"]] and digests["b"] == [want["b"]],
          f"the browser's digests are the native CLI's (browser {digests}, native {want})")
    change = d.wait_for(".change-pct")
    check(bool(change) and change[0].startswith("+12."),
          f"6.6+cluster is about 12.8% better, as seed 01's table (got {change})")
    lines = d.call("POST", "/execute/sync", {"script": (
        "return [...document.querySelectorAll('.sim-chart polyline')]"
        ".map(p => p.getAttribute('points').trim().split(' ').length)"), "args": []})
    check(len(lines) == 2 and min(lines) >= 3, f"the chart draws A and B over the window (points {lines})")
    heat = d.wait_count("button.cpu.heat", 32)
    check(heat == 32, f"the drawing shades node 0's 32 CPUs by utilisation (got {heat})")
    d.click('button[data-heat-side="B"]')
    titles = d.call("POST", "/execute/sync", {"script": (
        "return [...document.querySelectorAll('button.cpu.heat')].map(b => b.title)"), "args": []})
    check(len(titles) == 32 and all("busy" in t for t in titles), "each shaded CPU says how busy it was")
    sim_shot = shot.replace(".png", "-simulate.png")
    d.screenshot(sim_shot)

    # A new input starts a new run, and the link follows.
    before = d.call("POST", "/execute/sync", {"script": "return location.hash", "args": []})
    set_input(d, "#sim-threads", "2")
    d.wait_for(".sim-status.done", timeout=180,
               pred=lambda _: d.text(d.find_all('.digest[data-side="a"]')[0]) != want["a"])
    a2 = d.wait_for('.digest[data-side="a"]')
    two = dict(SIMULATE["sim"], workload={"kind": "tbench", "clients": 2})
    check(a2 == [native(cli, two, "6.6")], f"2 clients rerun and match the CLI again (got {a2})")
    after = d.call("POST", "/execute/sync", {"script": "return location.hash", "args": []})
    check(after.startswith("#v1:") and after != before, "the URL fragment follows the simulation")

    # A bad CPU list is refused with the reason, and the results stay.
    set_input(d, "#sim-cpus", "node9")
    err = d.wait_for(".sim-error")
    check(bool(err) and "nodes 0-3" in err[0], f"a bad CPU list says which nodes exist (got {err})")
    kept = d.wait_for('.digest[data-side="a"]')
    check(kept == a2, "the last results stay on screen")
    cpus = d.call("POST", "/execute/sync", {"script": "return document.querySelector('#sim-cpus').value", "args": []})
    print(f"       (after the bad input the CPUs field shows {cpus!r})")

    # A sweep, as seed 01's table: the rows must be the native `schedlab sweep`'s.
    set_input(d, "#sim-cpus", "node0")
    set_input(d, "#sim-duration", "30")
    set_input(d, "#sim-sweep", "1,4,8")
    d.wait_for(".sim-status.done", timeout=180,
               pred=lambda t: "simulations" in t[0])
    rows = d.call("POST", "/execute/sync", {"script": (
        "return [...document.querySelectorAll('.sweep-table tbody tr')]"
        ".map(r => [r.dataset.threads, r.querySelector('.change-cell').textContent])"), "args": []})
    out = json.loads(subprocess.run(
        [cli, "sweep", "--machine", "kunpeng920-6426", "--cpus", "node0", "--workload", "tbench",
         "--threads", "1,4,8", "--baseline", "6.6", "--patched", "6.6+cluster",
         "--duration-ms", "30", "--seed", "1", "--format", "json"],
        check=True, capture_output=True, text=True).stdout)
    want = [[str(r["threads"]), f'{r["change_pct"]:+.2f}%'] for r in out["rows"]]
    check(rows == want, f"the sweep's rows are the native sweep's (page {rows}, native {want})")
    dots = len(d.find_all(".sim-chart circle"))
    check(dots == 6, f"the sweep chart has a point per scale and side (got {dots})")
    cmd = d.wait_for(".sim-cli code")
    check(bool(cmd) and cmd[0].startswith("schedlab sweep") and "--threads 1,4,8" in cmd[0],
          f"the page prints the sweep's command line (got {cmd})")
    d.screenshot(shot.replace(".png", "-sweep.png"))
    set_input(d, "#sim-sweep", "")

    # One click opens seed 01's tbench table, with the published changes beside.
    d.click('#sim-example option[value="seed01-tbench"]')
    d.wait_for(".sim-status.done", timeout=240, pred=lambda t: "14 simulations" in t[0])
    pub = d.call("POST", "/execute/sync", {"script": (
        "return [...document.querySelectorAll('.sweep-table tbody tr')]"
        ".map(r => [r.dataset.threads, r.querySelector('td.published').textContent])"), "args": []})
    check(pub[:1] == [["1", "+13.80%"]] and len(pub) == 7,
          f"seed 01's example shows the published change per row (got {pub})")
    model = [d.text(e) for e in d.find_all(".sweep-table .change-cell")]
    check(len(model) == 7 and all(m.endswith("%") for m in model),
          f"the model's change is shown on every row (got {model})")
    dashed = len(d.find_all(".sim-chart polyline.published-line"))
    check(dashed == 2, f"the published tbench numbers are drawn dashed beside the model's (got {dashed})")
    d.screenshot(shot.replace(".png", "-example.png"))
    set_input(d, "#sim-sweep", "")

    # A long run goes on in the workers: the page answers clicks meanwhile, and Stop stops it.
    set_input(d, "#sim-duration", "30000")
    running = d.wait_for(".sim-status.running", timeout=30)
    check(bool(running), f"a 30 s simulation is running (got {running})")
    t0 = time.monotonic()
    d.click('button.cpu[data-cpu="5"]')
    selected = d.wait_for("button.cpu.selected", timeout=5, pred=lambda t: t == ["5"])
    took = time.monotonic() - t0
    check(selected == ["5"] and took < 2.0,
          f"a click in the drawing is answered while it runs (got {selected} in {took:.2f} s)")
    d.click("#sim-stop")
    stopped = d.wait_for(".sim-status", pred=lambda t: any("Stopped" in x for x in t))
    check(any("Stopped at" in x for x in stopped), f"Stop stops the run (got {stopped})")
    print(f"       (simulate screenshot: {sim_shot})")


def main():
    url, shot, cli = sys.argv[1], sys.argv[2], sys.argv[3]
    port = free_port()
    profile = tempfile.mkdtemp(prefix="schedlab-e2e-")
    log = open(os.path.join(profile, "chromedriver.log"), "w")
    cd = subprocess.Popen(["chromedriver", f"--port={port}"], stdout=log, stderr=log)
    d = Driver(port)
    try:
        for _ in range(100):
            try:
                d.call("GET", "/status")
                break
            except Exception:
                time.sleep(0.1)
        d.start(profile)
        d.call("POST", "/url", {"url": url})

        names = d.wait_for(".level-name")
        check(names[:2] == ["CLS", "MC"], f"kunpeng920-6426 CPU 0 starts CLS, MC (got {names})")

        # A person picks the 384-CPU EPYC from the machine menu...
        t0 = time.monotonic()
        d.click('#preset option[value="epyc9654-2p"]')
        n = d.wait_count("button.cpu", 384)
        check(n == 384, f"epyc9654-2p draws 384 CPUs (got {n})")
        print(f"       (machine and domains rebuilt and drawn in {time.monotonic() - t0:.1f} s)")

        # ...clicks CPU 200 (SMT sibling of CPU 8) in the drawing...
        d.click('button.cpu[data-cpu="200"]')
        spans = d.wait_for(".level-span", pred=lambda t: "200" in t[0])
        names = [d.text(e) for e in d.find_all(".level-name")]
        check(names[:2] == ["SMT", "MC"], f"CPU 200's lowest levels are SMT, MC (got {names})")
        check(spans[:2] == ["8,200", "8-15,200-207"],
              f"CPU 200's SMT and MC spans are 8,200 and 8-15,200-207 (got {spans})")
        check(spans[-1:] == ["0-383"], f"CPU 200's top domain spans 0-383 (got {spans})")
        selected = [d.text(e) for e in d.find_all("button.cpu.selected")]
        check(selected == ["200"], f"CPU 200 is shown selected (got {selected})")

        # ...and opens the dmesg tab.
        d.click('.tabs button:nth-child(2)')
        pre = d.wait_for("pre.dmesg", pred=lambda t: "CPU200" in t[0])
        check(bool(pre) and "CPU200 attaching sched-domain" in pre[0],
              "the dmesg tab shows 'CPU200 attaching sched-domain...'")
        d.click('.tabs button:nth-child(1)')
        d.wait_for(".level-name")
        d.screenshot(shot)
        errors = [d.text(e) for e in d.find_all(".error")]
        check(not errors, f"no error messages (got {errors})")

        wakeup(d, url, shot)
        simulate(d, url, shot, cli)
    except Exception as e:  # a driver failure is a test failure, with its reason
        check(False, f"driving the page: {e}")
    finally:
        d.quit()
        cd.terminate()
        try:
            cd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            cd.kill()
    if problems:
        print(f"{len(problems)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()

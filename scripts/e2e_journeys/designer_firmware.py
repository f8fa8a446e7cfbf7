"""The topology designer's arm64 firmware fields: where the kernel reads the topology
from (ACPI's PPTT or a device tree) and whether a shared cache is described, as
machine files take them (`firmware`, `no_shared_cache`; core/tests/domains_dt.rs)."""

import time

from harness import axe_violations, check


def value(page, css):
    return page.js("const e = document.querySelector(arguments[0]); return e && e.value", css)


def levels(page):
    return page.texts(".level-name")


def designer_firmware(page, cfg):
    """On arm64 the designer offers the firmware (ACPI PPTT, or a device tree with
    sockets or of clusters) and a "no shared cache" box; on 5.17 a device tree with
    socket nodes loses the clusters (a core per CPU, as arch_topology.c read it
    before 6.0); the link carries the choice and the designer opens on it; x86 shows
    neither field; no axe violation."""
    page.open()
    page.wait_for(".level-name")
    page.select("#release", "5.17")
    page.until(lambda: value(page, "#release") == "5.17", timeout=5)
    page.click("#open-designer")
    page.wait_for("#designer-firmware")
    options = page.js("return [...document.querySelectorAll('#designer-firmware option')].map(o => o.value)")
    cache_box = page.js("const e = document.querySelector('#designer-no-shared-cache'); return e && e.checked")
    check(value(page, "#designer-firmware") == "acpi" and options == ["acpi", "dt", "dt-clusters"]
          and cache_box is False,
          f"arm64 (Kunpeng): the firmware starts at ACPI, three choices, a shared cache (got {value(page, '#designer-firmware')!r}, {options}, {cache_box})")
    acpi = levels(page)
    check("CLS" in acpi, f"with ACPI's PPTT 5.17 builds the clusters (got {acpi})")
    before = page.hash
    page.select("#designer-firmware", "dt")
    page.until(lambda: page.hash != before, timeout=10)
    page.until(lambda: levels(page) != acpi, timeout=10)
    dt = levels(page)
    check("CLS" not in dt and page.count(".field-error") == 0,
          f"a device tree with socket nodes on 5.17: no CLS (a core per CPU), no error (got {dt})")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the firmware fields (got {found})")
    page.js("document.querySelector('#designer-firmware').scrollIntoView()")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-firmware.png"))
    # The link, in a fresh page: the designer opens on the device tree.
    time.sleep(1.2)
    link = page.hash
    page.open(link.lstrip("#"))
    page.wait_for(".level-name")
    page.click("#open-designer")
    page.wait_for("#designer-firmware")
    check(value(page, "#designer-firmware") == "dt" and levels(page) == dt,
          f"the link opens the device tree as designed (got {value(page, '#designer-firmware')!r}, {levels(page)})")
    # x86 reads CPUID and ACPI: neither field.
    page.select("#designer-arch", "x86")
    page.until(lambda: page.count("#designer-firmware") == 0, timeout=5)
    check(page.count("#designer-no-shared-cache") == 0 and page.count(".field-error") == 0,
          "x86: no firmware fields, no error")

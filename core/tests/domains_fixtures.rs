//! Exact-match tests of the sched-domain builder against real kernel output
//! (core/tests/fixtures/, each with its SOURCE header).

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig};
use schedlab_core::topology::{presets, Machine};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const D06: &str = include_str!("fixtures/kunpeng920_D06_2P96c_sched_domains_v5.6_dmesg.txt");
const NONUMA: &str = include_str!("fixtures/kunpeng920_noNUMA_debugfs_sched_domains_v5.18.txt");
const ALD: &str = include_str!("fixtures/intel_alderlake_sched_domains_dmesg.txt");

mod common;
use common::domains as build;

/// Strips the `[  202.222509] ` printk timestamp (and the indentation the mail added
/// before it).
fn strip_timestamp(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix('[')?;
    let close = rest.find("] ")?;
    Some(rest[close + 2..].to_string())
}

/// The dmesg lines of one section of a fixture, timestamps stripped.
fn dmesg_lines(text: &str, from: &str, to: Option<&str>) -> Vec<String> {
    let start = text.find(from).expect("section start") + from.len();
    let end = to
        .and_then(|t| text[start..].find(t))
        .map_or(text.len(), |e| start + e);
    let v: Vec<String> = text[start..end]
        .lines()
        .filter_map(strip_timestamp)
        .collect();
    assert!(v.len() >= 4, "fixture section {from:?} not found");
    v
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

#[test]
fn d06_numa_diameter_3_before_the_fix_matches_v5_6_dmesg() {
    // The D06 dmesg predates Barry Song's 585b6d2723dc (v5.13); 5.12 has the same
    // overlap-group code and no CLS level, so its output must match byte for byte,
    // ERROR line included.
    let m = presets::machine("kunpeng920-4826").unwrap();
    let sd = build(&m, "5.12");
    let expected = dmesg_lines(D06, "--- BEFORE", Some("# --- AFTER"));
    assert_eq!(lines(&format::dmesg(&sd, Some(CpuId(0)))), expected);
}

#[test]
fn d06_after_the_merged_fix_groups_fit_the_span() {
    // The fixture's AFTER block is Valentin Schneider's proposal, not what was merged.
    // With the merged fix (v5.13+), the sibling at CPU48 descends to its NUMA(<=12)
    // level, whose child (NODE, 48-71) fits in 0-71; that group's sgc is the one the
    // <=12 level uses for 48-71, whose capacity update sums the NODE groups: 24 CPUs.
    let m = presets::machine("kunpeng920-4826").unwrap();
    let sd = build(&m, "5.13");
    let out = format::dmesg(&sd, Some(CpuId(0)));
    let got = lines(&out);
    let expected_tail = [
        "   domain-2: span=0-71 level=NUMA",
        "    groups: 0:{ span=0-47 cap=49152 }, 48:{ span=48-71 cap=24576 }",
        "    domain-3: span=0-95 level=NUMA",
        "     groups: 0:{ span=0-71 mask=0-23 cap=73728 }, 72:{ span=48-95 mask=72-95 cap=49152 }",
    ];
    assert_eq!(&got[got.len() - 4..], &expected_tail, "{out}");
    assert!(!out.contains("ERROR"), "{out}");
    // The fixture's own AFTER block shows the proposal's different group for 48:
    let after = dmesg_lines(D06, "--- AFTER", None);
    assert_ne!(after.last().unwrap(), expected_tail[3]);
}

/// Joins the author's wrapped flag lines and drops the `^^^^` annotations.
fn unwrap_flags(section: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in section.lines() {
        if l.trim().is_empty() || l.trim_start().starts_with('^') {
            continue;
        }
        if l.starts_with("  ") {
            let last = out.last_mut().expect("continuation follows a line");
            last.push(' ');
            last.push_str(l.trim());
        } else {
            out.push(l.trim().to_string());
        }
    }
    out
}

fn section<'a>(text: &'a str, header: &str, next: &str) -> &'a str {
    let s = text.find(header).expect("header") + header.len();
    let e = text[s..].find(next).map_or(text.len(), |e| s + e);
    &text[s..e]
}

/// The values of `grep .` output for one file name, in order.
fn grep_values(out: &str, file: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let (path, value) = l.split_once(':')?;
            path.ends_with(&format!("/{file}"))
                .then(|| value.to_string())
        })
        .collect()
}

fn kunpeng_no_numa() -> Machine {
    let mut spec = presets::preset("kunpeng920-4826").unwrap().spec();
    let mut cfg = spec
        .config
        .unwrap_or(schedlab_core::topology::KernelConfig::SERVER);
    cfg.numa = false;
    spec.config = Some(cfg);
    spec.build().unwrap()
}

#[test]
fn kunpeng_no_numa_v5_18_debugfs_names_and_flags_match() {
    let m = kunpeng_no_numa();
    let sd = build(&m, "5.18");
    let out = format::debugfs(&sd, Some(CpuId(0)));
    let names = section(NONUMA, "domain*/name\n", "\n# cat");
    let expected_names: Vec<String> = names
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    assert_eq!(grep_values(&out, "name"), expected_names);
    let flags = section(NONUMA, "domain*/flags\n", "\ncat /proc/schedstat");
    // sd_flags_show() ends each name with a space; the mail lost trailing blanks.
    let got_flags: Vec<String> = grep_values(&out, "flags")
        .iter()
        .map(|f| f.trim_end().to_string())
        .collect();
    assert_eq!(got_flags, unwrap_flags(flags));
    // 5.18 has no `level` file (added in 6.9); the path is debugfs (5.13+).
    assert!(out.starts_with("/sys/kernel/debug/sched/domains/cpu0/domain0/name:CLS\n"));
    assert!(!out.contains("/level:"));
}

#[test]
fn kunpeng_no_numa_v5_18_schedstat_masks_match() {
    let m = kunpeng_no_numa();
    let sd = build(&m, "5.18");
    let out = format::schedstat(&sd, Some(CpuId(0)));
    let got: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with('c') || l.starts_with('d'))
        .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    let want: Vec<String> = section(NONUMA, "head -4\n", "\n\ncat")
        .lines()
        .map(|l| l.split(" <--").next().unwrap().to_string())
        .collect();
    assert_eq!(got, want);
    // The sysfs lines of the same mail.
    assert_eq!(m.cluster_mask(CpuId(0)).to_list(), "0-3");
    assert_eq!(m.package_mask(CpuId(0)).to_list(), "0-47");
    assert_eq!(m.llc_mask(CpuId(0)).to_list(), "0-23");
    assert_eq!(m.smt_mask(CpuId(0)).to_list(), "0");
}

/// arch/x86/kernel/smpboot.c, match_llc() (v6.8): CPUs of different nodes never
/// share an LLC in cpu_llc_shared_mask() (silently on Intel SNC, with topology_sane()'s
/// "not on the same node" warning elsewhere), although sysfs' shared_cpu_list spans
/// the package, as on a real SNC or cluster-on-die machine. So MC is the node's half,
/// and nothing is "borken". (A QEMU guest with one package, two nodes and one L3.)
#[test]
fn x86_llc_siblings_stay_on_their_node() {
    let mut text = String::from(
        "# cpu physical_package_id die_id cluster_id core_id thread_siblings_list cluster_cpus_list core_siblings_list die_cpus_list package_cpus_list\n",
    );
    for c in 0..8 {
        text.push_str(&format!("cpu{c} 0 0 {c} {c} {c} {c} 0-7 0-7 0-7\n"));
    }
    text.push_str("node0 cpulist=0-3 distance=10 20\nnode1 cpulist=4-7 distance=20 10\n");
    for c in 0..8 {
        text.push_str(&format!(
            "cpu{c} index3 level=3 type=Unified shared_cpu_list=0-7\n"
        ));
    }
    let m =
        schedlab_core::topology::load_machine(&text, &schedlab_core::topology::ImportHint::NONE)
            .expect("loads");
    let out = format::dmesg(&build(&m, "6.8"), Some(CpuId(5)));
    assert!(!out.contains("borken"), "{out}");
    let spans: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("span=") && l.contains("level="))
        .collect();
    assert_eq!(spans.len(), 2, "{out}");
    assert!(spans[0].ends_with("domain-0: span=4-7 level=MC"), "{out}");
    assert!(spans[1].ends_with("domain-1: span=0-7 level=NUMA"), "{out}");
}

/// kernel/sched/stats.c: SCHEDSTAT_VERSION 15 until v6.9, 16 from v6.10 (the
/// `enum cpu_idle_type` reorder); Debian's 6.12 prints `version 16`, its 6.1 `15`.
#[test]
fn schedstat_prints_the_releases_version() {
    let m = common::preset("flat-16");
    for (release, want) in [
        ("5.12", 15),
        ("6.1", 15),
        ("6.9", 15),
        ("6.10", 16),
        ("6.12", 16),
    ] {
        let out = format::schedstat(&build(&m, release), Some(CpuId(0)));
        assert_eq!(
            out.lines().next(),
            Some(format!("version {want}").as_str()),
            "{release}"
        );
    }
}

/// debugfs has a per-domain `level` file only from v6.9 ("sched/debug: Dump domains'
/// level", with the relax_domain_level `>=` change of the same series): v6.8's
/// register_sd() (kernel/sched/debug.c v6.8:411-428) creates min_interval ...
/// name, flags and groups_flags, no level; v6.12's has it (debug.c v6.12.19:587), as
/// Debian's 6.12 capture shows.
#[test]
fn debugfs_level_file_from_6_9() {
    let m = common::preset("flat-16");
    for (release, want) in [
        ("6.1", false),
        ("6.3", false),
        ("6.8", false),
        ("6.9", true),
    ] {
        let out = format::debugfs(&build(&m, release), Some(CpuId(0)));
        assert_eq!(out.contains("/level:"), want, "{release}: {out}");
    }
}

/// After attaching every CPU, build_sched_domains() prints the root domain under
/// sched_verbose (sched_debug before 5.13): "root domain span: %*pbl (max
/// cpu_capacity = %lu)" (kernel/sched/topology.c v5.12.9:2144-2147, v6.8:2532-2535);
/// v6.12 prints the span alone (topology.c v6.12.19:2538-2539), rd->max_cpu_capacity
/// having gone with "sched/topology: Remove max_cpu_capacity from root_domain" (Qais
/// Yousef, posted after the 6.9 merge window: v6.10). A line per build, not per CPU.
#[test]
fn dmesg_ends_with_the_root_domain() {
    let m = common::preset("flat-16");
    for (release, want) in [
        ("5.12", "root domain span: 0-15 (max cpu_capacity = 1024)"),
        ("6.8", "root domain span: 0-15 (max cpu_capacity = 1024)"),
        ("6.9", "root domain span: 0-15 (max cpu_capacity = 1024)"),
        ("6.10", "root domain span: 0-15"),
        ("6.12", "root domain span: 0-15"),
    ] {
        let sd = build(&m, release);
        let out = format::dmesg(&sd, None);
        assert_eq!(out.lines().last(), Some(want), "{release}");
        assert_eq!(out.matches("root domain").count(), 1, "{release}");
        let one = format::dmesg(&sd, Some(CpuId(3)));
        assert!(!one.contains("root domain"), "{release}: {one}");
    }
}

/// The fixture's blocks for one CPU (up to the next "..." or blank line), with the
/// mail's one lost space (`},12:{`) put back.
fn ald_block(text: &str, cpu: u32, nth: usize) -> Vec<String> {
    let all: Vec<&str> = text.lines().collect();
    let head = format!("CPU{cpu} attaching sched-domain(s):");
    let starts: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, l)| strip_timestamp(l).as_deref() == Some(head.as_str()))
        .map(|(i, _)| i)
        .collect();
    let start = starts[nth];
    let v: Vec<String> = all[start..]
        .iter()
        .take_while(|l| l.starts_with('['))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !strip_timestamp(l).unwrap().starts_with("CPU"))
        .map(|(_, l)| strip_timestamp(l).unwrap().replace("},12:{", "}, 12:{"))
        .collect();
    assert!(v.len() >= 3, "fixture block for CPU{cpu} too short");
    v
}

#[test]
fn alder_lake_v6_4_dmesg_matches() {
    let m = presets::machine("alderlake-8p8e").unwrap();
    let sd = build(&m, "6.4");
    assert_eq!(
        lines(&format::dmesg(&sd, Some(CpuId(0)))),
        ald_block(ALD, 0, 0)
    );
    assert_eq!(
        lines(&format::dmesg(&sd, Some(CpuId(23)))),
        ald_block(ALD, 23, 0)
    );
}

#[test]
fn alder_lake_v6_4_with_cpu1_offline_matches() {
    let m = presets::machine("alderlake-8p8e").unwrap();
    let mut cfg = BuildConfig::new(Release::new(6, 4));
    cfg.offline = Some(CpuMask::parse_list(24, "1").unwrap());
    let sd = build_sched_domains(&m, &cfg).unwrap();
    assert_eq!(
        lines(&format::dmesg(&sd, Some(CpuId(0)))),
        ald_block(ALD, 0, 1)
    );
    assert_eq!(
        lines(&format::dmesg(&sd, Some(CpuId(23)))),
        ald_block(ALD, 23, 1)
    );
}

#[test]
fn epyc9654_domains_follow_the_sysfs_masks() {
    // fixtures/amd_epyc9654_2P_sysfs_topology_partial.txt: SMT {0,192}; CLS = L2 =
    // SMT (degenerates); MC = CCX 0-7,192-199; PKG = node 0-95,192-287 (NODE
    // degenerates into it); NUMA = all.
    let m = presets::machine("epyc9654-2p").unwrap();
    let sd = build(&m, "6.8");
    let spans = |cpu: u32| -> Vec<(String, String)> {
        sd.cpu(CpuId(cpu))
            .domains
            .iter()
            .map(|d| (d.name.to_string(), d.span.to_list()))
            .collect()
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        spans(0),
        vec![
            s("SMT", "0,192"),
            s("MC", "0-7,192-199"),
            s("PKG", "0-95,192-287"),
            s("NUMA", "0-383")
        ]
    );
    assert_eq!(spans(104)[1], s("MC", "104-111,296-303"));
    assert_eq!(spans(104)[2], s("PKG", "96-191,288-383"));
    let c = sd.cpu(CpuId(192));
    assert_eq!(c.sd_llc_id, CpuId(0));
    assert_eq!(c.sd_llc_size, 16);
    // No SD_CLUSTER domain survives: sd_share_id falls back to the LLC id.
    assert_eq!(c.sd_share_id, CpuId(0));
    assert!(!sd.sched_cluster_active);
    assert!(sd.sched_smt_present);
    // Zen's node_reclaim_distance of 32 keeps SD_WAKE_AFFINE on the NUMA level.
    let numa = &sd.cpu(CpuId(0)).domains[3];
    assert!(numa.flags.names(sd.release).contains(&"SD_WAKE_AFFINE"));
}

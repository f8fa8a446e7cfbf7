use base64::Engine as _;

use super::link::{base64url_decode, LINK_BASE64};
use super::*;
use crate::cpumask::CpuMask;
use crate::experiment::CpuSelection;
use crate::topology::import::machine_to_spec;
use crate::workload::Workload;
use proptest::prelude::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Seed 01's teaching case: kunpeng920-6426, everything busy but CPU2 (the waker
/// CPU0's cluster) and CPU12 (the wakee's prev, another cluster). nr_idle_scan 8 as
/// a recent balance with some spare capacity left it (all-busy util would give 0).
fn prev_other_cluster() -> Scenario {
    let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).expect("preset");
    s.view = View::Wakeup;
    s.wake = WakeSetup {
        busy: CpuMask::parse_list(128, "0-1,3-11,13-127").expect("list"),
        prev: CpuId(12),
        sync: true,
        nr_idle_scan: Some(8),
        compare: Some(ps("6.6+cluster")),
        ..WakeSetup::idle(128)
    };
    s
}

fn ps(text: &str) -> PatchSet {
    text.parse().expect("a patch set")
}

/// The JSON inside a `v1:` or `v2:` link.
fn base64_json(link: &str) -> String {
    let raw = match link.strip_prefix("v2:") {
        Some(body) => {
            super::v2::unpack(&base64url_decode(body).expect("base64")).expect("inflates")
        }
        None => {
            base64url_decode(link.strip_prefix("v1:").expect("a v1 or v2 link")).expect("base64")
        }
    };
    String::from_utf8(raw).expect("utf-8")
}

fn b64(bytes: &[u8]) -> String {
    LINK_BASE64.encode(bytes)
}

#[test]
fn the_teaching_case_encodes_to_the_bytes_it_always_did() {
    // Written by the page before scenarios were typed: links keep their bytes.
    let json = r#"{"machine":"kunpeng920-6426","patches":"6.6","cpu":0,"view":"wakeup","wake":{"busy":"0-1,3-11,13-127","waker":0,"prev":12,"sync":true,"nr_idle_scan":8,"compare":"6.6+cluster"}}"#;
    let v1_link = format!("v1:{}", b64(json.as_bytes()));
    // That v1 link opens as it always did. The wire form now leaves fields at their
    // defaults out (here cpu 0 and waker 0), which reads back the same.
    assert_eq!(decode(&v1_link), Ok(prev_other_cluster()));
    let json = r#"{"machine":"kunpeng920-6426","patches":"6.6","view":"wakeup","wake":{"busy":"0-1,3-11,13-127","prev":12,"sync":true,"nr_idle_scan":8,"compare":"6.6+cluster"}}"#;
    assert_eq!(
        encode_v1(&prev_other_cluster()),
        format!("v1:{}", b64(json.as_bytes()))
    );
    // v2 deflates that very JSON.
    let v2_link = encode(&prev_other_cluster());
    let body = v2_link.strip_prefix("v2:").expect("v2");
    let inflated = super::v2::unpack(&base64url_decode(body).expect("base64")).expect("inflates");
    assert_eq!(String::from_utf8(inflated).expect("utf-8"), json);
}

#[test]
fn links_are_short() {
    // #18's targets: a preset scenario under 200 characters, a 384-CPU custom machine
    // (its explicit per-CPU spec) under 2 KB. v1 needed 235 and about 31 KB.
    assert!(
        encode(&prev_other_cluster()).len() < 200,
        "{}",
        encode(&prev_other_cluster())
    );
    for p in presets::PRESETS {
        let machine =
            ScenarioMachine::new(MachineChoice::Preset(p.name.to_string())).expect("builds");
        let mut s = Scenario::on(machine, ps("6.6"));
        s.view = View::Simulate;
        s.sim = Some(SimSetup::default());
        s.wake.compare = Some(ps("6.6+cluster"));
        let link = encode(&s);
        assert!(
            link.len() < 200,
            "{}: {} characters: {link}",
            p.name,
            link.len()
        );
    }
    let m = presets::machine("epyc9654-2p").expect("preset");
    assert_eq!(m.nr_cpus(), 384);
    let mut spec = machine_to_spec(&m);
    spec.name = "my epyc".to_string();
    let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect("builds");
    let s = Scenario::on(machine, ps("6.8"));
    let (v1_len, v2_len) = (encode_v1(&s).len(), encode(&s).len());
    assert!(
        v2_len < 2048,
        "384-CPU custom machine: v2 {v2_len} characters (v1 {v1_len})"
    );
    assert_eq!(decode(&encode(&s)), Ok(s));
}

#[test]
fn damaged_v2_links_are_named_and_bombs_refused() {
    let link = encode(&prev_other_cluster());
    let cut = 3 + (link.len() - 3) / 2 / 4 * 4; // whole base64 quanta, half the data
    let e = decode(&link[..cut]).expect_err("cut short");
    assert!(matches!(e, ScenarioError::Base64(_)), "{e}");
    assert!(e.to_string().contains("compressed data"), "{e}");
    // 8 MiB of spaces deflate to a few KB: refused at the inflate limit, not read.
    let bomb = super::v2::pack(&vec![b' '; 8 << 20]);
    let e = decode(&format!("v2:{}", b64(&bomb))).expect_err("bomb");
    assert!(e.to_string().contains("inflates to more than"), "{e}");
}

#[test]
fn round_trip_of_the_teaching_case() {
    let s = prev_other_cluster();
    let link = encode(&s);
    assert!(link.starts_with("v2:"), "{link}");
    assert!(link
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_:".contains(&b)));
    assert_eq!(decode(&link), Ok(s.clone()));
    assert_eq!(decode(&format!("#{link}")), Ok(s));
}

#[test]
fn the_teaching_case_decides_prev_on_6_6_and_the_cluster_cpu_with_the_patch() {
    let s = prev_other_cluster();
    let (d, _) = s.decide(s.patches).expect("resolves");
    assert_eq!(d.cpu, CpuId(12));
    let (d, t) = s.decide(ps("6.6+cluster")).expect("resolves");
    assert_eq!(d.cpu, CpuId(2));
    assert!(t.render(&d).contains("select_idle_cpu"));
}

#[test]
fn one_env_decides_every_wake_up_as_decide_does() {
    // Issue 16: the page built the machine's domains again for every decision.
    let mut s = prev_other_cluster();
    for patches in [s.patches, ps("6.6+cluster"), ps("6.8")] {
        let env = s.wake_env(patches).expect("builds");
        for (busy, waker, prev) in [
            ("0-1,3-11,13-127", 0, 12),
            ("", 5, 7),
            ("0-127", 3, 100),
            ("0-63", 64, 2),
        ] {
            s.wake.busy = CpuMask::parse_list(128, busy).expect("list");
            s.wake.waker = CpuId(waker);
            s.wake.prev = CpuId(prev);
            let (d, t) = s.decide_in(&env).expect("decides");
            let (d2, t2) = s.decide(patches).expect("decides");
            assert_eq!((d, t), (d2, t2));
        }
    }
    let other = Scenario::preset("xeon-smt-8", ps("6.8")).expect("preset");
    let small = other.wake_env(ps("6.8")).expect("builds");
    let e = s.decide_in(&small).expect_err("another machine's env");
    assert!(e.to_string().contains("8-CPU"), "{e}");
}

#[test]
fn a_link_with_node_ids_past_max_numnodes_is_refused_before_building() {
    // MachineSpec::build() bounds node ids (MAX_NUMNODES) before it sizes the
    // SLIT, so the issue's hostile link is refused at once, with the reason.
    let link = "v1:eyJtYWNoaW5lIjp7Im5hbWUiOiJtIiwiYXJjaCI6Ing4NiIsImNwdXMiOlt7ImNwdSI6MCwibm9kZSI6NjU1MzV9XX0sInBhdGNoZXMiOiI2LjgifQ";
    let e = decode(link).expect_err("refused");
    assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
    assert!(
        e.to_string().contains("65535") && e.to_string().contains("1024 NUMA nodes"),
        "{e}"
    );
    let regular = r#"{"machine":{"name":"m","arch":"x86","packages":2,"nodes_per_package":1024,"cores_per_llc":1},"patches":"6.8"}"#;
    let e = decode(&format!("v1:{}", LINK_BASE64.encode(regular))).expect_err("refused");
    assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
    let ok =
        r#"{"machine":{"name":"m","arch":"x86","cpus":[{"cpu":0,"node":1023}]},"patches":"6.8"}"#;
    let near = decode(&format!("v1:{}", LINK_BASE64.encode(ok))).expect_err("1023 empty nodes");
    assert!(!near.to_string().contains("1024 NUMA nodes"), "{near}");
}

#[test]
fn a_custom_machine_travels_as_its_spec() {
    let m = presets::machine("xeon-smt-8").expect("preset");
    let mut spec = machine_to_spec(&m);
    spec.name = "my box".to_string();
    let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect("builds");
    let mut s = Scenario::on(machine, ps("6.8+ttwu-l2c"));
    s.cpu = CpuId(3);
    let back = decode(&encode(&s)).expect("decodes");
    assert_eq!(back, s);
    assert_eq!(back.machine().name, "my box");
    assert_eq!(back.machine.preset_name(), None);
}

#[test]
fn a_simulation_travels_with_the_link_and_bad_ones_are_named() {
    let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).expect("preset");
    let m = s.machine().clone();
    s.view = View::Simulate;
    s.sim = Some(SimSetup {
        workload: Workload::NetperfTcpRr { instances: 16 },
        cpus: CpuSelection::parse(&m, "node0-1").expect("nodes"),
        duration_ms: 200,
        seed: 3,
        seeds: 4,
        sweep: vec![1, 16, 64],
    });
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    // Written by hand: cpus and seed may be left out.
    let json = r#"{"machine":"flat-16","patches":"6.8","view":"simulate","sim":{"workload":{"kind":"tbench","clients":4},"duration_ms":50}}"#;
    let link = format!("v1:{}", b64(json.as_bytes()));
    let back = decode(&link).expect("decodes");
    let sim = back.sim.clone().expect("a simulation");
    assert_eq!(
        (sim.cpus.clone(), sim.seed, sim.seeds),
        (CpuSelection::All, 1, 1),
        "links from before seeds had one"
    );
    // One seed is written as before: the field is left out.
    let mut one = back.clone();
    one.sim.as_mut().expect("set").seeds = 1;
    assert!(!base64_json(&encode(&one)).contains("seeds"));
    assert!(base64_json(&encode(&s)).contains(r#""seeds":4"#));
    assert_eq!(sim.points(), vec![4], "no sweep: the workload's own scale");
    assert_eq!(SimSetup::parse_sweep(" 1, 4,16 "), Ok(vec![1, 4, 16]));
    assert_eq!(SimSetup::parse_sweep(""), Ok(vec![]));
    let e = SimSetup::parse_sweep("1,four").expect_err("not a number");
    assert!(e.contains("\"four\" is not a count"), "{e}");
    // Bad setups as a link would carry them (the v1 wire form).
    let ok = v1::SimSetupV1::from(s.sim.as_ref().expect("set"));
    let bad = |sim: v1::SimSetupV1, want: &str| {
        let mut wire = v1::ScenarioV1::from(&s);
        wire.sim = Some(sim);
        let json = serde_json::to_string(&wire).expect("json");
        let e = decode(&format!("v1:{}", b64(json.as_bytes())))
            .expect_err(want)
            .to_string();
        assert!(e.contains("simulation") && e.contains(want), "{e}");
    };
    bad(
        v1::SimSetupV1 {
            cpus: "node9".to_string(),
            ..ok.clone()
        },
        "has nodes 0-3",
    );
    for seeds in [0, crate::experiment::MAX_SEEDS + 1] {
        bad(
            v1::SimSetupV1 {
                seeds,
                ..ok.clone()
            },
            "1 to 64 seeds",
        );
    }
    bad(
        v1::SimSetupV1 {
            duration_ms: MAX_SIM_MS + 1,
            ..ok.clone()
        },
        "at most 60000 ms",
    );
    bad(
        v1::SimSetupV1 {
            workload: Workload::Tbench { clients: 0 },
            sweep: Vec::new(),
            ..ok.clone()
        },
        "at least one client",
    );
    bad(
        v1::SimSetupV1 {
            sweep: vec![4, 0, 8],
            ..ok.clone()
        },
        "at least one instance",
    );
    bad(
        v1::SimSetupV1 {
            sweep: (1..=17).collect(),
            ..ok.clone()
        },
        "at most 16 points",
    );
    bad(
        v1::SimSetupV1 {
            duration_ms: 0,
            ..ok
        },
        "at least 1 ms",
    );
    let unknown = r#"{"machine":"flat-16","patches":"6.8","sim":{"workload":{"kind":"dbench"},"duration_ms":50}}"#;
    let e = decode(&format!("v1:{}", b64(unknown.as_bytes()))).expect_err("dbench");
    assert!(e.to_string().contains("dbench"), "{e}");
}

#[test]
fn garbage_says_it_is_not_a_scenario() {
    for g in ["", "#", "hello", "#tab=dmesg", "x1:abc", "v:abc", "vx:abc"] {
        let e = decode(g).expect_err(g);
        assert!(matches!(e, ScenarioError::NotAScenario(_)), "{g}: {e}");
        assert!(e.to_string().contains("#v1:"), "{e}");
    }
}

#[test]
fn an_unknown_version_is_named() {
    let e = decode("#v7:e30").expect_err("v7");
    assert_eq!(e, ScenarioError::UnknownVersion("v7".to_string()));
    assert!(e.to_string().contains("version v7"), "{e}");
}

#[test]
fn damaged_base64_and_json_are_told_apart() {
    let e = decode("v1:ab$d").expect_err("bad char");
    assert!(matches!(e, ScenarioError::Base64(_)), "{e}");
    assert!(e.to_string().contains("'$' at position 2"), "{e}");
    let e = decode("v1:abcde").expect_err("5 chars");
    assert!(matches!(e, ScenarioError::Base64(_)), "{e}");
    let link = encode_v1(&prev_other_cluster());
    let e = decode(&link[..link.len() / 2]).expect_err("cut short");
    assert!(matches!(e, ScenarioError::Json(_)), "{e}");
    let e = decode(&format!("v1:{}", b64(b"{\"machine\":1}"))).expect_err("json");
    assert!(e.to_string().contains("cannot be read"), "{e}");
}

fn with_json(json: &str) -> Result<Scenario, ScenarioError> {
    decode(&format!("v1:{}", b64(json.as_bytes())))
}

#[test]
fn an_unknown_preset_lists_the_known_ones() {
    let e = with_json(r#"{"machine":"pdp-11","patches":"6.8"}"#).expect_err("pdp-11");
    assert!(matches!(e, ScenarioError::UnknownPreset { .. }), "{e}");
    assert!(e.to_string().contains("kunpeng920-6426"), "{e}");
}

#[test]
fn bad_cpu_lists_and_cpus_are_named_by_field() {
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-3,,5"}}"#)
        .expect_err("bad list");
    assert!(e.to_string().contains("busy CPUs"), "{e}");
    assert!(e.to_string().contains("empty element"), "{e}");
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-16"}}"#)
        .expect_err("out of range list");
    assert!(e.to_string().contains("busy CPUs"), "{e}");
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"prev":99}}"#)
        .expect_err("prev out of range");
    assert_eq!(
        e,
        ScenarioError::CpuOutOfRange {
            field: "wakee's prev CPU",
            cpu: 99,
            last: 15
        }
    );
    let e =
        with_json(r#"{"machine":"flat-16","patches":"6.8+frobnicate"}"#).expect_err("bad patch");
    assert!(e.to_string().contains("frobnicate"), "{e}");
    let e =
        with_json(r#"{"machine":"flat-16","patches":"6.8","zoom":2}"#).expect_err("unknown field");
    assert!(e.to_string().contains("zoom"), "{e}");
}

#[test]
fn random_busy_is_deterministic_and_exact() {
    let a = random_busy(128, 750, 42);
    assert_eq!(a, random_busy(128, 750, 42));
    assert_eq!(a.weight(), 96);
    assert_ne!(a, random_busy(128, 750, 43));
    assert_eq!(random_busy(16, 0, 1).weight(), 0);
    assert_eq!(random_busy(16, 5000, 1).weight(), 16);
}

#[test]
fn base64url_matches_rfc4648_vectors() {
    for (plain, enc) in [
        ("", ""),
        ("f", "Zg"),
        ("fo", "Zm8"),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(b64(plain.as_bytes()), enc);
        assert_eq!(base64url_decode(enc).as_deref(), Ok(plain.as_bytes()));
        // Padding added back by some tools is read too.
        let padded = format!("{enc}{}", "=".repeat((4 - enc.len() % 4) % 4));
        assert_eq!(base64url_decode(&padded).as_deref(), Ok(plain.as_bytes()));
    }
    assert_eq!(b64(&[0xfb, 0xff]), "-_8");
    // Non-zero trailing bits, which the hand-written reader took: still read.
    assert_eq!(base64url_decode("Zh").as_deref(), Ok(&b"f"[..]));
}

#[test]
fn the_page_settings_travel_and_defaults_stay_out_of_the_link() {
    let mut s = prev_other_cluster();
    let plain = wire_json(&s);
    assert!(!plain.contains("\"ui\""), "{plain}");
    s.page = PageSettings {
        click: ClickMode::Prev,
        focus: Side::B,
        highlight: Some(2),
        busy_permille: 500,
        random_seed: 7,
        diff_with: Some(ps("6.1+cluster")),
        diff_text: KernelText::Schedstat,
    };
    let json = wire_json(&s);
    assert!(
        json.ends_with(
            r#","ui":{"click":"prev","focus":"b","highlight":2,"busy_permille":500,"random_seed":7,"diff_with":"6.1+cluster","diff_text":"schedstat"}}"#
        ),
        "{json}"
    );
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    // One setting changed: only it travels.
    s.page = PageSettings {
        click: ClickMode::Waker,
        ..PageSettings::default()
    };
    assert!(wire_json(&s).ends_with(r#","ui":{"click":"waker"}}"#));
}

/// Issue 18 item 4: the domain diff's kernel and text travel; at their defaults
/// nothing is added, so preset links keep their length, and links written before
/// (v1, and v2 without the fields) open on the defaults.
#[test]
fn the_domain_diff_travels_and_old_links_open_on_its_defaults() {
    let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).unwrap();
    let before = encode(&s);
    s.page.diff_text = KernelText::Debugfs;
    s.page.diff_with = None;
    assert_eq!(encode(&s), before, "the defaults add nothing to the link");
    s.page.diff_with = Some(ps("6.6+cluster"));
    assert!(wire_json(&s).ends_with(r#","ui":{"diff_with":"6.6+cluster"}}"#));
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    s.page.diff_text = KernelText::Dmesg;
    assert!(wire_json(&s).ends_with(r#","ui":{"diff_with":"6.6+cluster","diff_text":"dmesg"}}"#));
    let back = decode(&encode(&s)).unwrap();
    assert_eq!(back.page.diff_with, Some(ps("6.6+cluster")));
    assert_eq!(back.page.diff_text, KernelText::Dmesg);
    assert_eq!(
        decode(&encode_v1(&s)),
        Ok(s.clone()),
        "a v1 link carries them too"
    );
    // A link written before these fields: the defaults.
    let old = with_json(r#"{"machine":"flat-16","patches":"6.8","ui":{"click":"waker"}}"#).unwrap();
    assert_eq!(old.page.diff_with, None);
    assert_eq!(old.page.diff_text, KernelText::Debugfs);
    for k in KernelText::ALL {
        assert_eq!(KernelText::from_name(k.name()), Some(k));
    }
    assert_eq!(KernelText::from_name("lscpu"), None);
}

#[test]
fn a_bad_domain_diff_is_named() {
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"diff_with":"6.99"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.starts_with("this link's page settings are not valid: its domain diff's kernel \"6.99\" is not valid"),
        "{err}"
    );
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"diff_text":"lscpu"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.contains("unknown variant `lscpu`") && err.contains("schedstat"),
        "{err}"
    );
}

#[test]
fn bad_page_settings_are_named() {
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"busy_permille":1001}}"#;
    assert_eq!(
        with_json(json).map(|_| ()).map_err(|e| e.to_string()),
        Err("this link's page settings are not valid: its busy share is 1001 per mille; at most 1000".into())
    );
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"click":"nope"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("unknown variant `nope`"), "{err}");
    assert!(err.contains("toggle-busy"), "{err}");
}

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    let presets: Vec<&'static str> = presets::PRESETS.iter().map(|p| p.name).collect();
    let views = prop_oneof![
        Just(View::Domains),
        Just(View::Dmesg),
        Just(View::Debugfs),
        Just(View::Wakeup),
        Just(View::Simulate)
    ];
    let patches = prop_oneof![
        Just("6.6"),
        Just("6.6+cluster"),
        Just("6.8-cluster+cluster-scan"),
        Just("5.15+no-smt-idle-cores"),
        Just("6.12+ttwu-l2c+cookie-fastpath"),
    ];
    (
        proptest::sample::select(presets),
        patches,
        views,
        any::<u64>(),
        0u32..=1000,
        any::<(u32, u32, u32, bool)>(),
        proptest::option::of(any::<bool>()),
        proptest::option::of(0u32..64),
        proptest::option::of(Just("6.6+cluster")),
        proptest::option::of((0usize..7, 1u32..64, 1u64..5000, any::<bool>())),
        (
            0u8..3,
            any::<bool>(),
            proptest::option::of(0u8..6),
            0u32..=1000,
            any::<u64>(),
            proptest::option::of(0usize..3),
            0usize..3,
        ),
    )
        .prop_map(
            |(name, patches, view, seed, permille, (a, b, c, sync), hic, nis, cmp, sim, ui)| {
                let mut s = Scenario::preset(name, ps(patches)).expect("preset");
                let n = s.machine.nr_cpus();
                s.cpu = CpuId(a % n);
                s.view = view;
                s.wake = WakeSetup {
                    busy: random_busy(n, permille, seed),
                    waker: CpuId(b % n),
                    prev: CpuId(c % n),
                    recent: sync.then_some(CpuId(a % n)),
                    sync,
                    has_idle_cores: hic,
                    nr_idle_scan: nis,
                    compare: cmp.map(ps),
                    // A cookie on the waker's CPU for some: the wire form carries it.
                    cookies: if sync {
                        vec![CookieRule {
                            cpus: CpuMask::from_cpus(n, [CpuId(b % n)]),
                            cookie: seed % 3 + 1,
                        }]
                    } else {
                        Vec::new()
                    },
                    wakee_cookie: u64::from(sync) * (seed % 2),
                    sim: (seed % 3 == 0).then_some(SimWakeAt {
                        side: if sync { Side::B } else { Side::A },
                        seed: seed >> 3,
                        wake: a + 1,
                        scale: None,
                    }),
                };
                s.lesson = (seed % 4 == 0).then_some(LessonStep {
                    lesson: a % 6 + 1,
                    step: b % 5 + 1,
                });
                s.sim = sim.map(|(w, threads, ms, all)| SimSetup {
                    workload: Workload::with_defaults(Workload::NAMES[w])
                        .expect("a name")
                        .with_threads(threads),
                    cpus: if all {
                        CpuSelection::All
                    } else {
                        SimSetup::default().cpus
                    },
                    sweep: if all { vec![1, threads] } else { Vec::new() },
                    duration_ms: ms,
                    seed,
                    seeds: 1 + (seed % 3) as u32,
                });
                // Some references name a sweep point: the simulation's smallest (the
                // default simulation's when the link has none).
                if let Some(at) = s.wake.sim.as_mut() {
                    let points = s
                        .sim
                        .as_ref()
                        .map_or_else(|| SimSetup::default().points(), SimSetup::points);
                    at.scale = points.iter().copied().min().filter(|_| seed % 2 == 0);
                }
                let (click, b_side, highlight, busy_permille, random_seed, with, text) = ui;
                s.page = PageSettings {
                    click: [ClickMode::ToggleBusy, ClickMode::Waker, ClickMode::Prev]
                        [usize::from(click)],
                    focus: if b_side { Side::B } else { Side::A },
                    highlight,
                    busy_permille,
                    random_seed,
                    diff_with: with.map(|i| ps(["5.15", "6.8+cluster", "6.12-cluster"][i])),
                    diff_text: KernelText::ALL[text],
                };
                s
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn encode_decode_round_trips(s in arb_scenario()) {
        prop_assert_eq!(decode(&encode(&s)), Ok(s));
    }

    #[test]
    fn base64url_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert_eq!(base64url_decode(&b64(&bytes)), Ok(bytes));
    }

    #[test]
    fn decode_never_panics_on_garbage(text in "\\PC{0,80}") {
        let _ = decode(&text);
        let _ = decode(&format!("v1:{text}"));
    }
}

#[test]
fn pasted_machines_travel_compact() {
    // Real captures, as the page's custom-machine form loads them: each link is the
    // regular spec when the capture describes a regular machine.
    use crate::topology::import::{load_machine, ImportHint};
    for (name, text, most) in [
        (
            "xeon 6230 lscpu",
            include_str!("../../tests/fixtures/intel_xeon_gold6230_2S_smt_lscpu.txt"),
            700,
        ),
        (
            "kunpeng920 sysfs",
            include_str!("../../tests/fixtures/kunpeng920_128c_sysfs_topology.txt"),
            700,
        ),
        (
            "kunpeng920 lscpu",
            include_str!("../../tests/fixtures/kunpeng920_96c_lscpu.txt"),
            700,
        ),
    ] {
        let m = load_machine(text, &ImportHint::NONE).expect(name);
        let spec = machine_to_spec(&m);
        let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect(name);
        let s = Scenario::on(machine, ps("6.8"));
        let link = encode(&s);
        assert!(
            link.len() < most && !wire_json(&s).contains("\"cpus\":["),
            "{name}: {} characters, not the regular form: {}",
            link.len(),
            wire_json(&s)
        );
        assert_eq!(decode(&link).expect(name).machine().as_ref(), &m, "{name}");
    }
}

#[test]
fn an_irregular_machine_keeps_its_explicit_spec() {
    // Three CPUs, LLCs of two and one: no regular form builds it.
    let json = r#"{"name":"odd","arch":"arm64","cpus":[{"cpu":0,"llc":0},{"cpu":1,"llc":0},{"cpu":2,"llc":1}]}"#;
    let spec: MachineSpec = serde_json::from_str(json).expect("spec");
    let machine =
        ScenarioMachine::new(MachineChoice::Spec(Box::new(spec.clone()))).expect("builds");
    assert_eq!(machine.choice(), &MachineChoice::Spec(Box::new(spec)));
    let s = Scenario::on(machine, ps("6.8"));
    assert_eq!(decode(&encode(&s)), Ok(s));
}

#[test]
fn cookies_and_a_lesson_step_round_trip_and_old_links_keep_their_bytes() {
    let mut s = Scenario::preset("xeon-smt-8", ps("6.12")).expect("preset");
    s.view = View::Wakeup;
    s.wake.cookies = vec![CookieRule {
        cpus: CpuMask::parse_list(8, "1").expect("list"),
        cookie: 2,
    }];
    s.wake.wakee_cookie = 1;
    s.wake.busy = CpuMask::parse_list(8, "1").expect("list");
    s.lesson = Some(LessonStep { lesson: 6, step: 2 });
    let link = encode(&s);
    let json = base64_json(&link);
    assert!(
        json.contains(r#""cookies":[{"cpus":"1","cookie":2}]"#),
        "{json}"
    );
    assert!(json.contains(r#""wakee_cookie":1"#), "{json}");
    assert!(json.contains(r#""lesson":"6.2""#), "{json}");
    assert_eq!(decode(&link), Ok(s.clone()));
    // The cookies reach the wake state: the idle CPU 0 shares a core with CPU 1's
    // cookie 2, so core scheduling is on and CPU 0 fails the wakee's cookie 1.
    let ws = s.wake_scenario();
    assert_eq!(ws.wakee.cookie, 1);
    assert!(ws.cpus.iter().any(|r| r.cookie == Some(2) && r.cpus == "1"));
    // An idle CPU runs no task: its cookie is dropped.
    s.wake.busy = CpuMask::new(8);
    assert!(s.wake_scenario().cpus.iter().all(|r| r.cookie.is_none()));
    // Fields at their defaults stay out: the teaching case's bytes are unchanged
    // (the_teaching_case_encodes_to_the_bytes_it_always_did), and a bad step is named.
    for bad in ["0.1", "2", "2.x"] {
        let mut json: serde_json::Value = serde_json::from_str(&base64_json(&link)).expect("json");
        json["lesson"] = serde_json::Value::String(bad.to_string());
        let e = decode(&format!("v1:{}", b64(json.to_string().as_bytes()))).expect_err(bad);
        assert!(e.to_string().contains("LESSON.STEP"), "{bad}: {e}");
    }
}

/// A simulated wake-up's reference rides in the link's `wake` block, round-trips,
/// keeps old links' encoding (absent when unset), and wake-up 0 is refused.
#[test]
fn a_simulated_wake_ups_reference_rides_in_the_link() {
    let mut s = Scenario::preset("kunpeng920-6426", "6.6".parse().unwrap()).unwrap();
    let plain = encode(&s);
    s.wake.sim = Some(SimWakeAt {
        side: Side::B,
        seed: 7,
        wake: 1234,
        scale: None,
    });
    let back = decode(&encode(&s)).unwrap();
    assert_eq!(back.wake.sim, s.wake.sim);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"b","seed":7,"wake":1234}"#),
        "{json}"
    );
    s.wake.sim = None;
    assert_eq!(encode(&s), plain);
    let bad = json.replace(r#""wake":1234"#, r#""wake":0"#);
    let e = decode(&format!("v1:{}", base64_url(&bad))).unwrap_err();
    assert!(e.to_string().contains("numbered from 1"), "{e}");
}

/// A reference to a wake-up at a sweep point carries the point, round-trips, and
/// leaves a reference without one (every link before it) encoded as it was; a
/// point the simulation does not run is refused.
#[test]
fn a_simulated_wake_up_at_a_sweep_point_rides_in_the_link() {
    let mut s = Scenario::preset("kunpeng920-6426", "6.6".parse().unwrap()).unwrap();
    s.sim = Some(SimSetup {
        workload: Workload::Tbench { clients: 8 },
        sweep: vec![2, 8],
        ..SimSetup::default()
    });
    let at = SimWakeAt {
        side: Side::A,
        seed: 3,
        wake: 99,
        scale: None,
    };
    s.wake.sim = Some(at);
    let watched = encode(&s);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"a","seed":3,"wake":99}"#),
        "{json}"
    );
    s.wake.sim = Some(SimWakeAt {
        scale: Some(2),
        ..at
    });
    let link = encode(&s);
    assert_ne!(link, watched);
    let back = decode(&link).unwrap();
    assert_eq!(back.wake.sim, s.wake.sim);
    assert_eq!(back, s);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"a","seed":3,"wake":99,"scale":2}"#),
        "{json}"
    );
    // The old form (no scale) reads back as the watched scale.
    assert_eq!(decode(&watched).unwrap().wake.sim, Some(at));
    for (bad, want) in [
        (r#""scale":4"#, "runs at 2, 8"),
        (r#""scale":0"#, "runs at"),
    ] {
        let text = json.replace(r#""scale":2"#, bad);
        let e = decode(&format!("v1:{}", base64_url(&text))).unwrap_err();
        assert!(e.to_string().contains(want), "{bad}: {e}");
    }
    // Without a simulation in the link, the page's default one is named.
    s.sim = None;
    let default_point = SimSetup::default().points()[0];
    s.wake.sim = Some(SimWakeAt {
        scale: Some(default_point),
        ..at
    });
    assert_eq!(decode(&encode(&s)).unwrap().wake.sim, s.wake.sim);
    s.wake.sim = Some(SimWakeAt {
        scale: Some(default_point + 1),
        ..at
    });
    assert!(decode(&encode(&s)).is_err());
}

fn base64_url(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

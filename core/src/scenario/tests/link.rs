//! The link's encoding and versions (`link.rs`, `v2.rs`): the bytes old links keep,
//! the lengths, damaged and unknown links named, base64url, any scenario's round trip.

use proptest::prelude::*;

use super::*;
use crate::experiment::CpuSelection;
use crate::topology::import::machine_to_spec;
use crate::workload::Workload;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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

/// A byte-order mark before the link (Notepad and PowerShell's `Out-File` write one
/// at the start of a text file; a link copied from such a file carries it), as the
/// address bar percent-encodes it in `location.hash`, or before the JSON inside (a
/// link a Windows tool wrote): the link opens as it would without it. Before, the
/// error's quoted excerpt was that invisible character alone.
#[test]
fn a_leading_byte_order_mark_is_ignored() {
    let s = prev_other_cluster();
    let link = encode(&s);
    for with_bom in [
        format!("\u{feff}{link}"),
        format!("\u{feff}#{link}"),
        format!("#\u{feff}{link}"),
        format!("#%EF%BB%BF{link}"),
        format!("%ef%bb%bf{link}"),
        format!(" \u{feff} {link}\n"),
    ] {
        assert_eq!(decode(&with_bom), Ok(s.clone()), "{with_bom:?}");
    }
    let json = base64_json(&encode_v1(&s));
    assert_eq!(with_json(&format!("\u{feff}{json}")), Ok(s.clone()));
    // Only a leading one: a BOM inside the text is damage, said as such.
    let e = with_json(&format!("{{\u{feff}{}", &json[1..])).expect_err("inside");
    assert!(matches!(e, ScenarioError::Json(_)), "{e}");
    let e = decode(&format!("v2\u{feff}:{}", &link[3..])).expect_err("inside");
    assert!(matches!(e, ScenarioError::NotAScenario(_)), "{e}");
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
    assert!(matches!(e, ScenarioError::Field { .. }), "{e}");
    assert!(e.to_string().contains("field `machine`"), "{e}");
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
                    warmup: Default::default(),
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

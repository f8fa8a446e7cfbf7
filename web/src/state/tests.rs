use schedlab_core::topology::{presets, Arch};
use schedlab_core::workload::Workload;

use super::*;
use schedlab_core::scenario;
use schedlab_core::wakeup::{Reject, WakeEnv};

fn level_names(state: &AppState) -> Vec<&'static str> {
    let domains = state.domains().expect("domains build");
    let cpu = domains.try_cpu(state.cpu()).expect("CPU is online");
    cpu.domains.iter().map(|d| d.name).collect()
}

fn apply(state: Rc<AppState>, actions: Vec<Action>) -> Rc<AppState> {
    actions.into_iter().fold(state, |s, a| s.reduce(a))
}

fn chosen(o: &Option<Result<Rc<WakeOutcome>, String>>) -> u32 {
    o.as_ref()
        .expect("decided")
        .as_ref()
        .expect("no error")
        .decision
        .cpu
        .0
}

/// Seed 01's case by clicks: all busy, CPU2 (waker's cluster) and CPU12 (prev,
/// another cluster) idle, compare 6.6 with 6.6+cluster.
fn teaching_case() -> Rc<AppState> {
    apply(
        Rc::new(AppState::default()),
        vec![
            Action::ShowTab(View::Wakeup),
            Action::SelectRelease(Release::new(6, 6)),
            Action::AllBusy,
            Action::ToggleBusy(CpuId(2)),
            Action::SetClickMode(ClickMode::ToggleBusy),
            Action::ClickCpu(CpuId(12)),
            Action::SetClickMode(ClickMode::Prev),
            Action::ClickCpu(CpuId(12)),
            Action::SetWaker(CpuId(0)),
            Action::SetSync(true),
            Action::SetNrIdleScan(Some(8)),
            Action::SetCompare(true),
        ],
    )
}

#[test]
fn default_page_has_kunpeng_domains_for_cpu0() {
    let state = AppState::default();
    assert_eq!(state.preset(), DEFAULT_PRESET);
    assert_eq!(state.release(), Release::new(6, 8));
    assert_eq!(state.cpu(), CpuId(0));
    assert_eq!(&level_names(&state)[..2], &["CLS", "MC"]);
    assert_eq!(state.wake_a, None, "no decision until the tab is opened");
}

#[test]
fn a_cpu_outside_the_machine_is_ignored() {
    let state = Rc::new(AppState::default());
    let next = state.clone().reduce(Action::SelectCpu(CpuId(128)));
    assert!(Rc::ptr_eq(&state, &next));
    let next = state.clone().reduce(Action::ToggleBusy(CpuId(500)));
    assert!(Rc::ptr_eq(&state, &next));
    let next = state.clone().reduce(Action::SetPrev(CpuId(128)));
    assert!(Rc::ptr_eq(&state, &next));
    let next = state.reduce(Action::SelectCpu(CpuId(127)));
    assert_eq!(next.cpu(), CpuId(127));
}

#[test]
fn changing_release_rebuilds_domains_and_keeps_the_cpu() {
    let state = Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(5)));
    let state = state.reduce(Action::Highlight(Some(1)));
    assert!(state.highlight_span().is_some());
    // CONFIG_SCHED_CLUSTER's CLS level arrived in v5.16.
    let old = state.reduce(Action::SelectRelease(Release::new(5, 15)));
    assert_eq!(old.cpu(), CpuId(5));
    assert_eq!(old.highlight(), None);
    assert!(!level_names(&old).contains(&"CLS"));
}

#[test]
fn changing_preset_resets_the_cpu_and_the_wake_state() {
    let state = apply(
        Rc::new(AppState::default()),
        vec![Action::SelectCpu(CpuId(100)), Action::AllBusy],
    );
    let state = state.reduce(Action::SelectPreset("xeon-smt-8".to_string()));
    assert_eq!(state.cpu(), CpuId(0));
    assert_eq!(level_names(&state)[0], "SMT");
    assert!(state.wake().busy.is_empty());
    assert_eq!(state.wake().busy.nr_cpu_ids(), 8);
}

#[test]
fn an_unknown_preset_is_an_error_message_not_a_panic() {
    let state = Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(3)));
    let next = state
        .clone()
        .reduce(Action::SelectPreset("nope".to_string()));
    let err = next.banner.as_deref().expect("a message");
    assert!(err.contains("nope"), "{err}");
    assert_eq!(next.scenario, state.scenario, "the page keeps its scenario");
    assert!(AppState::new("nope", Release::DEFAULT).is_err());
}

#[test]
fn every_preset_builds_without_error() {
    // All releases × presets is core's to test; here the page's three anchors.
    for p in presets::PRESETS {
        for r in [Release::OLDEST, Release::DEFAULT, Release::NEWEST] {
            let state = AppState::new(p.name, r).expect("builds");
            assert!(
                state.domains().is_ok(),
                "{} {r}: {:?}",
                p.name,
                state.domains()
            );
        }
    }
}

#[test]
fn compare_shows_prev_on_6_6_and_the_cluster_cpu_with_seed_01() {
    let state = teaching_case();
    assert_eq!(state.wake().prev, CpuId(12));
    assert_eq!(state.wake().busy.weight(), 126);
    assert_eq!(
        state.wake().compare.map(|p| p.to_string()).as_deref(),
        Some("6.6+cluster")
    );
    assert_eq!(chosen(&state.wake_a), 12);
    assert_eq!(chosen(&state.wake_b), 2);
    let marks = state.wake_marks().expect("wake tab");
    assert_eq!(marks.chosen_a, Some(CpuId(12)));
    assert_eq!(marks.chosen_b, Some(CpuId(2)));
    // B's probes: the cluster scan from target+1, CPU1 busy, then CPU2 taken.
    let b = state
        .reduce(Action::Focus(Side::B))
        .wake_marks()
        .expect("marks");
    assert_eq!(b.probes.get(&1), Some(&(vec![1], Some(Reject::Busy))));
    assert_eq!(b.probes.get(&2), Some(&(vec![2], None)));
}

/// The env of a side, as a pointer: equal pointers, no rebuild.
fn env_ptr(env: &Env) -> *const WakeEnv {
    Rc::as_ptr(env.get().expect("builds"))
}

#[test]
fn domains_are_built_once_per_machine_and_patch_set_not_per_decision() {
    // Issue 16: every decision built the machine and its domains again.
    let state = teaching_case();
    let (a, b) = (
        env_ptr(&state.env_a),
        env_ptr(state.env_b.as_ref().expect("B")),
    );
    let state = apply(
        state,
        vec![
            Action::ToggleBusy(CpuId(1)),
            Action::SetWaker(CpuId(5)),
            Action::SetSync(false),
            Action::RandomBusy {
                permille: 300,
                seed: 3,
            },
            Action::ShowTab(View::Simulate),
            Action::ShowTab(View::Wakeup),
            Action::Focus(Side::B),
        ],
    );
    assert_eq!(env_ptr(&state.env_a), a, "A's domains are not rebuilt");
    assert_eq!(env_ptr(state.env_b.as_ref().expect("B")), b);
    // The decisions are core's Scenario::decide(), which builds its own.
    for (side, p) in [
        (&state.wake_a, state.patches()),
        (&state.wake_b, ps_b(&state)),
    ] {
        let o = side.as_ref().expect("decided").as_ref().expect("no error");
        let (d, t) = state.scenario.decide(p).expect("decides");
        assert_eq!((&o.decision, &o.trace, o.patches), (&d, &t, p));
    }
    // A new kernel on side A rebuilds A only; B's patch set equal to A's shares A's.
    let next = state.reduce(Action::TogglePatch(Side::A, Patch::Cluster, true));
    assert_ne!(env_ptr(&next.env_a), a);
    assert_eq!(env_ptr(next.env_b.as_ref().expect("B")), b);
    let same = next.reduce(Action::SetSideRelease(Side::B, Release::new(6, 6)));
    let same = same.reduce(Action::TogglePatch(Side::B, Patch::Cluster, true));
    assert_eq!(same.wake().compare, Some(same.patches()));
    assert_eq!(
        env_ptr(same.env_b.as_ref().expect("B")),
        env_ptr(&same.env_a)
    );
    // Comparing off: no B decision, and no B env in use.
    let off = same.reduce(Action::SetCompare(false));
    assert!(off.env_b.is_none() && off.wake_b.is_none());
}

fn ps_b(state: &AppState) -> PatchSet {
    state.wake().compare.expect("comparing")
}

#[test]
fn the_url_round_trips_the_page() {
    let state = teaching_case();
    let f = state.fragment();
    let back = AppState::from_fragment(&format!("#{f}"));
    assert_eq!(back.banner, None);
    assert_eq!(back.scenario, state.scenario);
    assert_eq!(chosen(&back.wake_b), 2);
}

#[test]
fn every_page_setting_travels_in_the_link() {
    let state = apply(
        teaching_case(),
        vec![
            Action::SetClickMode(ClickMode::Prev),
            Action::Focus(Side::B),
            Action::SetRandomInputs {
                permille: 300,
                seed: 9,
            },
        ],
    );
    let back = AppState::from_fragment(&state.fragment());
    assert_eq!(back.banner, None);
    assert_eq!(back.click(), ClickMode::Prev);
    assert_eq!(back.focus(), Side::B);
    assert_eq!(back.random_inputs(), (300, 9));
    // Randomise keeps its inputs; the same inputs draw the same CPUs after a reload.
    let drawn = Rc::new(back).reduce(Action::RandomBusy {
        permille: 300,
        seed: 9,
    });
    let again = AppState::from_fragment(&drawn.fragment());
    assert_eq!(again.wake().busy, drawn.wake().busy);
    assert_eq!(again.random_inputs(), (300, 9));
    // The shaded level of the domain cards, too.
    let shaded = apply(
        Rc::new(AppState::default()),
        vec![Action::SelectCpu(CpuId(5)), Action::Highlight(Some(1))],
    );
    let back = AppState::from_fragment(&shaded.fragment());
    assert_eq!(back.highlight(), Some(1));
    assert_eq!(back.highlight_span(), shaded.highlight_span());
    assert!(back.highlight_span().is_some());
    // The Domains tab's diff: the other kernel and the text compared.
    let with: PatchSet = "6.1+cluster".parse().unwrap();
    let diffed = apply(
        Rc::new(AppState::default()),
        vec![Action::SetDiff(
            Some(with),
            schedlab_core::scenario::KernelText::Schedstat,
        )],
    );
    assert_ne!(diffed.fragment(), AppState::default().fragment());
    let back = AppState::from_fragment(&diffed.fragment());
    assert_eq!(back.banner, None);
    assert_eq!(back.scenario.page.diff_with, Some(with));
    assert_eq!(
        back.scenario.page.diff_text,
        schedlab_core::scenario::KernelText::Schedstat
    );
}

#[test]
fn presentation_steps_walk_the_levels_then_the_wake_up_then_the_run() {
    let state = Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(5)));
    let levels = level_names(&state).len();
    assert!(levels >= 3, "kunpeng920 has CLS, MC and NUMA levels");
    let mut seen = Vec::new();
    let mut s = state.clone();
    let simulate = s.clone().reduce(Action::ShowTab(View::Simulate));
    assert_eq!(simulate.reduce(Action::PresentStep(-1)).tab(), View::Wakeup);
    for _ in 0..levels + 3 {
        s = s.reduce(Action::PresentStep(1));
        seen.push((s.tab(), s.highlight()));
    }
    let mut want: Vec<(View, Option<usize>)> =
        (0..levels).map(|i| (View::Domains, Some(i))).collect();
    want.extend([
        (View::Wakeup, None),
        (View::Simulate, None),
        (View::Simulate, None),
    ]);
    assert_eq!(seen, want);
    // Each shaded step shades that level's span.
    let first = state.clone().reduce(Action::PresentStep(1));
    assert!(first.highlight_span().is_some());
    // Back: the run, the wake-up, then the levels outermost first, to the unshaded
    // cards, where it stays.
    let back = apply(
        Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(5))),
        vec![Action::ShowTab(View::Wakeup), Action::PresentStep(-1)],
    );
    assert_eq!(
        (back.tab(), back.highlight()),
        (View::Domains, Some(levels - 1))
    );
    let start = back.reduce(Action::PresentStep(-1));
    assert_eq!(start.highlight(), Some(levels - 2));
    let start = apply(
        start,
        (0..levels + 2).map(|_| Action::PresentStep(-1)).collect(),
    );
    assert_eq!((start.tab(), start.highlight()), (View::Domains, None));
}

#[test]
fn a_bad_link_shows_a_banner_and_keeps_the_page() {
    let state = teaching_case();
    let next = state
        .clone()
        .reduce(Action::LoadFragment("#v1:garbage!".to_string()));
    let banner = next.banner.as_deref().expect("banner");
    assert!(banner.contains("could not be opened"), "{banner}");
    assert!(banner.contains("keeps its current scenario"), "{banner}");
    // The damaged link stays in the address bar (app.rs) and the banner says so.
    assert!(
        banner.ends_with(
            "stays in the address bar, to fix and try again, until you change the scenario."
        ),
        "{banner}"
    );
    assert_eq!(next.scenario, state.scenario);
    // In an embed's frame there is no address bar: the reader is told who can fix it.
    let framed = super::embedded_banner(banner);
    assert!(framed.contains("could not be opened"), "{framed}");
    assert!(!framed.contains("address bar"), "{framed}");
    assert!(
        framed.ends_with(
            "Whoever embedded this view can copy a new snippet from schedlab's Share menu."
        ),
        "{framed}"
    );
    assert_eq!(super::embedded_banner("Copied."), "Copied.");
    let next = next.reduce(Action::DismissBanner);
    assert_eq!(next.banner, None);
    let fresh = AppState::from_fragment("#v9:abc");
    let said = fresh.banner.as_deref().unwrap_or_default();
    assert!(said.contains("v9"), "{said}");
    assert_eq!(fresh.preset(), DEFAULT_PRESET);
    // A first visit had no scenario to keep: the banner says the page shows its
    // default (it said "keeps its current scenario").
    assert!(
        said.contains("shows its default scenario") && !said.contains("keeps"),
        "{said}"
    );
    // Not "this link is damaged: its compressed data is damaged".
    let flipped = AppState::from_fragment("#v2:AAAAbroken");
    let said = flipped.banner.as_deref().unwrap_or_default();
    assert!(said.contains("this link is damaged: its compressed data does not inflate (a character changed when copied?). "), "{said}");
}

/// A link that is only a byte-order mark opens nothing and says nothing, as a bare `#`
/// (before, it showed "should start with #v2: or #v1: (got \"\")").
#[test]
fn a_link_that_is_only_a_byte_order_mark_is_empty() {
    let state = teaching_case();
    for f in ["#\u{feff}", "#%EF%BB%BF", "#%ef%bb%bf", "#"] {
        let next = state.clone().reduce(Action::LoadFragment(f.to_string()));
        assert_eq!(next.banner, None, "{f:?}");
        assert_eq!(next.scenario, state.scenario, "{f:?}");
    }
}

#[test]
fn patch_boxes_go_through_the_canonical_syntax() {
    let s = Rc::new(AppState::default()).reduce(Action::SelectRelease(Release::new(6, 6)));
    let s = s.reduce(Action::TogglePatch(Side::A, Patch::Cluster, true));
    assert_eq!(s.patches().to_string(), "6.6+cluster");
    // Ticking cluster-scan unticks cluster: two versions of one series.
    let s = s.reduce(Action::TogglePatch(Side::A, Patch::ClusterScan, true));
    assert_eq!(s.patches().to_string(), "6.6+cluster-scan");
    let s = s.reduce(Action::SelectRelease(Release::new(6, 8)));
    let s = s.reduce(Action::TogglePatch(Side::A, Patch::Cluster, false));
    assert_eq!(s.patches().to_string(), "6.8-cluster");
    assert!(
        level_names(&s).contains(&"CLS"),
        "CLS is Kconfig, not seed 01"
    );
    let s = s.reduce(Action::SetCompare(true));
    assert_eq!(
        s.wake().compare.map(|p| p.to_string()).as_deref(),
        Some("6.8")
    );
    let s = s.reduce(Action::SetSideRelease(Side::B, Release::new(6, 1)));
    assert_eq!(
        s.wake().compare.map(|p| p.to_string()).as_deref(),
        Some("6.1")
    );
}

#[test]
fn all_idle_all_busy_and_random_are_deterministic() {
    let s = Rc::new(AppState::default()).reduce(Action::AllBusy);
    assert_eq!(s.wake().busy.weight(), 128);
    let s = s.reduce(Action::AllIdle);
    assert!(s.wake().busy.is_empty());
    let a = s.clone().reduce(Action::RandomBusy {
        permille: 500,
        seed: 7,
    });
    let b = s.reduce(Action::RandomBusy {
        permille: 500,
        seed: 7,
    });
    assert_eq!(a.wake().busy, b.wake().busy);
    assert_eq!(a.wake().busy.weight(), 64);
}

#[test]
fn the_simulation_travels_in_the_link_and_bad_changes_are_refused() {
    assert_eq!(
        AppState::default().link_scenario().sim,
        None,
        "links without it stay as they were"
    );
    let s = Rc::new(AppState::default()).reduce(Action::ShowTab(View::Simulate));
    assert_eq!(s.link_scenario().sim.as_ref(), Some(s.sim()));
    let shaded = s.highlight_span().expect("the workload's CPUs are shaded");
    assert_eq!(shaded.to_list(), "0-31", "the default runs on node 0");
    let bad = s.clone().reduce(Action::SetSimCpus("node7".to_string()));
    let e = bad.sim_error.as_deref().expect("refused");
    assert!(e.contains("nodes 0-3"), "{e}");
    assert_eq!(bad.sim(), s.sim(), "the setup is kept");
    // The field's name, then core's reason (it read "CPUs CPU 200 is out of range").
    let out = s.clone().reduce(Action::SetSimCpus("0-3,200".to_string()));
    let e = out.sim_error.as_deref().unwrap_or_default();
    assert!(e.starts_with("CPUs: CPU 200 is out of range"), "{e}");
    let huge = bad.clone().reduce(Action::SetSim(SimSetup {
        workload: Workload::Tbench {
            clients: 4_000_000_000,
        },
        ..s.sim().clone()
    }));
    let e = huge.sim_error.as_deref().expect("refused");
    assert!(e.contains("at most 100000"), "{e}");
    assert_eq!(huge.sim(), s.sim());
    let netperf = SimSetup {
        workload: Workload::NetperfTcpRr { instances: 4 },
        ..s.sim().clone()
    };
    let good = bad
        .reduce(Action::SetSim(netperf.clone()))
        .reduce(Action::SetSimCpus("node1".to_string()));
    let netperf = SimSetup {
        cpus: CpuSelection::parse(good.machine(), "node1").expect("node 1"),
        ..netperf
    };
    assert_eq!((good.sim_error.as_deref(), good.sim()), (None, &netperf));
    let back = AppState::from_fragment(&good.fragment());
    assert_eq!((back.banner.as_deref(), back.tab()), (None, View::Simulate));
    assert_eq!(back.sim(), &netperf);
    // The drawing shades the focused side's utilisation, in this tab only.
    let heat = |p: u64| Rc::new(vec![(0, p)]);
    let shaded = good
        .clone()
        .reduce(Action::SetCompare(true))
        .reduce(Action::SimHeat(vec![heat(100), heat(900)]));
    assert_eq!(shaded.heat(), Some(heat(100)));
    let b = shaded.clone().reduce(Action::Focus(Side::B));
    assert_eq!(b.heat(), Some(heat(900)));
    assert_eq!(b.reduce(Action::ShowTab(View::Domains)).heat(), None);
    // A machine without node 1: the workload stays, on every CPU.
    let small = good.reduce(Action::SelectPreset("xeon-smt-8".to_string()));
    assert_eq!(small.sim().cpus, CpuSelection::All);
    assert_eq!(small.sim().workload, netperf.workload);
}

/// Issue 16's costly link: tbench at 50,000 clients, 16 sweep points, 60 s each,
/// on epyc9654-2p.
fn costly_link() -> String {
    let mut s =
        Scenario::preset("epyc9654-2p", PatchSet::release(Release::new(6, 8))).expect("preset");
    s.view = View::Simulate;
    s.sim = Some(SimSetup {
        warmup: Default::default(),
        workload: Workload::Tbench { clients: 50_000 },
        cpus: CpuSelection::All,
        duration_ms: 60_000,
        seed: 1,
        seeds: 1,
        sweep: (1..=16).map(|i| i * 3_000).collect(),
    });
    scenario::encode(&s)
}

#[test]
fn a_link_s_costly_simulation_waits_for_the_run_button() {
    let held = AppState::from_fragment(&costly_link());
    assert_eq!(held.banner, None);
    let secs = held.held.expect("held");
    assert!(secs > 3600.0, "hours of simulation, estimated {secs} s");
    assert_eq!(held.sim_estimate_s(), secs);
    let held = Rc::new(held);
    // The button runs it; an edit of the simulation is the user's and runs too.
    assert_eq!(held.clone().reduce(Action::RunHeld).held, None);
    let edited = held.clone().reduce(Action::SetSim(SimSetup {
        duration_ms: 50,
        ..held.sim().clone()
    }));
    assert_eq!(edited.held, None);
    // Anything else leaves it held.
    let clicked = held.clone().reduce(Action::SelectCpu(CpuId(3)));
    assert_eq!(clicked.held, Some(secs));
    // The page's own links (the default, seed 01's short runs) start at once, and
    // an example picked on the page is never held.
    assert_eq!(
        AppState::from_fragment(&AppState::default().fragment()).held,
        None
    );
    let s = Rc::new(AppState::default()).reduce(Action::ShowTab(View::Simulate));
    let s = s.reduce(Action::SetCompare(true));
    let cheap = AppState::from_fragment(&s.fragment());
    assert!(
        cheap.held.is_none() && cheap.sim_estimate_s() < 1.0,
        "{}",
        cheap.sim_estimate_s()
    );
    let picked = Rc::new(AppState::default()).reduce(Action::OpenExample(costly_link()));
    assert_eq!((picked.held, picked.sim().duration_ms), (None, 60_000));
}

/// What the custom form dispatches for a paste: the import module's reading of it
/// (`machine_import::read`, which that module runs).
pub(super) fn custom_read(text: &str, arch: Option<Arch>) -> Action {
    Action::CustomRead(crate::machine_import::read(text, arch).map(Box::new))
}

#[test]
fn a_custom_machine_loads_or_says_why_not() {
    let s = Rc::new(AppState::default()).reduce(Action::SelectPreset(CUSTOM.to_string()));
    assert!(s.custom_open);
    assert_eq!(
        s.preset(),
        DEFAULT_PRESET,
        "opening the form changes nothing yet"
    );
    let bad = s.clone().reduce(custom_read("this is not lscpu", None));
    assert!(bad.custom_error.is_some());
    assert_eq!(bad.preset(), DEFAULT_PRESET);
    let lscpu = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
                 0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,0,0\n2,2,0,0,,2,2,1,0\n3,3,0,0,,3,3,1,0\n";
    let ok = s.reduce(custom_read(lscpu, Some(Arch::Arm64)));
    assert_eq!(ok.custom_error, None, "{:?}", ok.custom_error);
    assert_eq!(ok.preset(), CUSTOM);
    assert_eq!(ok.machine().nr_cpus(), 4);
    // The link carries the spec, and opens the same machine.
    let back = AppState::from_fragment(&ok.fragment());
    assert_eq!(back.banner, None);
    assert_eq!(back.preset(), CUSTOM);
    assert_eq!(back.machine().nr_cpus(), 4);
}

#[test]
fn the_default_wake_up_is_busy_and_its_sides_differ() {
    let state = apply(
        Rc::new(AppState::default()),
        vec![Action::ShowTab(View::Wakeup)],
    );
    assert!(state.wake().busy.weight() >= 77);
    let (a, b) = (chosen(&state.wake_a), chosen(&state.wake_b));
    assert!(
        (1..=3).contains(&a),
        "A stays in the waker's cluster: CPU {a}"
    );
    assert_eq!(b, 12, "B takes prev");
}

#[test]
fn a_lesson_step_loads_its_scene_and_keeps_the_page_on_a_step_without_one() {
    let at = |lesson, step| Action::Lesson(Some(LessonStep { lesson, step }));
    let state = apply(Rc::new(AppState::default()), vec![at(4, 1)]);
    assert_eq!(
        state.scenario.lesson,
        Some(LessonStep { lesson: 4, step: 1 })
    );
    assert_eq!(state.tab(), View::Wakeup);
    assert_eq!((chosen(&state.wake_a), chosen(&state.wake_b)), (12, 1));
    assert!(state.fragment() != AppState::default().fragment());
    // The link opens the step as it is.
    let reopened = AppState::from_fragment(&state.fragment());
    assert_eq!(reopened.scenario, state.scenario);
    // Lesson 6 step 2 has no scene of its own: the page keeps step 1's, with a change
    // the student made.
    let state = apply(
        state,
        vec![at(6, 1), Action::ToggleBusy(CpuId(6)), at(6, 2)],
    );
    assert_eq!(
        state.scenario.lesson,
        Some(LessonStep { lesson: 6, step: 2 })
    );
    assert!(
        state.wake().busy.test_cpu(CpuId(6)),
        "step 2 loads nothing new"
    );
    // A step that does not exist changes nothing; closing keeps the scenario.
    let same = apply(state.clone(), vec![at(6, 9), at(9, 1)]);
    assert_eq!(same.scenario, state.scenario);
    let closed = apply(state.clone(), vec![Action::Lesson(None)]);
    assert_eq!(closed.scenario.lesson, None);
    assert_eq!(closed.wake(), state.wake());
}

/// An nr_idle_scan past the waker's LLC is refused with the field's name and range; the
/// scenario and both decisions stay (before, both cards turned into the core's error).
#[test]
fn an_nr_idle_scan_past_the_llc_is_refused_and_the_decisions_stay() {
    let state = teaching_case();
    assert!(matches!(
        (&state.wake_a, &state.wake_b),
        (Some(Ok(_)), Some(Ok(_)))
    ));
    let next = state.clone().reduce(Action::SetNrIdleScan(Some(999)));
    let e = next.ui.input_error.as_deref().unwrap_or_default();
    assert!(
        e.starts_with("nr_idle_scan: 999") && e.contains("from 0 to 32"),
        "{e}"
    );
    assert_eq!(next.scenario, state.scenario, "the scenario is kept");
    assert!(
        matches!((&next.wake_a, &next.wake_b), (Some(Ok(_)), Some(Ok(_)))),
        "both decisions stay shown"
    );
    // A value in range is taken and clears the message.
    let ok = next.reduce(Action::SetNrIdleScan(Some(32)));
    assert_eq!(ok.ui.input_error, None);
    assert_eq!(ok.wake().nr_idle_scan, Some(32));
}

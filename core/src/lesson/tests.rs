use super::examples::{DEFAULT_SCENE, WAKE_EXAMPLES};
use super::glossary::{term, TERMS};
use super::*;
use crate::release::Release;
use crate::scenario::{decode, encode};
use crate::sched_domain::SdFlags;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Each side's decision of a scenario.
fn decide(s: &Scenario) -> (Decision, Option<Decision>) {
    let a = s.decide(s.patches).expect("A decides").0;
    let b = s.wake.compare.map(|p| s.decide(p).expect("B decides").0);
    (a, b)
}

fn check_claim(what: &str, s: &Scenario, claim: Claim) {
    let (a, b) = decide(s);
    let side = |x: Side| match x {
        Side::A => a.clone(),
        Side::B => b
            .clone()
            .unwrap_or_else(|| panic!("{what}: {claim:?} needs side B")),
    };
    let other = |x: Side| match x {
        Side::A => side(Side::B),
        Side::B => side(Side::A),
    };
    let env = s.wake_env(s.patches).expect("domains");
    let cd = env.domains.try_cpu(s.cpu).expect("CPU online");
    let level = |name: &str| {
        // The lowest level of the name (NUMA: the highest, the whole machine).
        let mut it = cd.domains.iter().filter(|d| d.name == name);
        if name == "NUMA" {
            it.next_back()
        } else {
            it.next()
        }
        .unwrap_or_else(|| panic!("{what}: no level {name}"))
    };
    let ok = match claim {
        Claim::Chooses(x, cpu) => side(x).cpu.0 == cpu,
        Claim::Queues(x, q) => side(x).queue == q,
        Claim::ProbesMore(x) => side(x).costs.cpus_probed > other(x).costs.cpus_probed,
        Claim::ProbesAtLeast(x, n) => side(x).costs.cpus_probed >= n,
        Claim::Probes(x, n) => side(x).costs.cpus_probed == n,
        Claim::FewerLlcSharedReads(x) => {
            side(x).costs.llc_shared_reads < other(x).costs.llc_shared_reads
        }
        Claim::Level(name, span) => level(name).span.to_list() == span,
        Claim::Flag(name, flag, has) => {
            level(name).flags.names(s.patches.release).contains(&flag) == has
        }
        Claim::Groups(name, n) => level(name).groups.len() == n,
        Claim::NoLevel(name) => cd.domains.iter().all(|d| d.name != name),
        Claim::ClusterActive(on) => env.domains.sched_cluster_active == on,
    };
    assert!(
        ok,
        "{what}: claim {claim:?} is false (A {:?}, B {:?})",
        (a.cpu, a.queue, a.costs),
        b.as_ref().map(|b| (b.cpu, b.queue, b.costs))
    );
}

#[test]
fn lessons_are_numbered_short_and_at_most_six() {
    assert!(!LESSONS.is_empty() && LESSONS.len() <= 6);
    for (i, l) in LESSONS.iter().enumerate() {
        assert_eq!(l.number as usize, i + 1, "{}", l.title);
        assert!(
            (2..=5).contains(&l.steps.len()),
            "{}: {} steps",
            l.title,
            l.steps.len()
        );
        assert!(
            l.steps[0].scene.is_some(),
            "{}: step 1 sets the scene",
            l.title
        );
        assert!(!l.task.goal.is_empty(), "{}: the task has a goal", l.title);
        assert_eq!(lesson(l.number).map(|x| x.title), Some(l.title));
    }
    assert!(lesson(0).is_none() && lesson(7).is_none());
}

#[test]
fn every_lesson_scene_decodes_builds_and_decides_and_every_claim_holds() {
    for l in LESSONS {
        for (i, step) in l.steps.iter().enumerate() {
            let what = format!("lesson {} step {}", l.number, i + 1);
            let scene = l.scene_at(i as u32 + 1).expect("a scene");
            let mut s = scene.scenario().unwrap_or_else(|e| panic!("{what}: {e}"));
            s.lesson = Some(crate::scenario::LessonStep {
                lesson: l.number,
                step: i as u32 + 1,
            });
            // What the page puts in the link opens as the same scenario.
            assert_eq!(decode(&encode(&s)).as_ref(), Ok(&s), "{what}");
            decide(&s);
            for &c in step.claims {
                check_claim(&what, &s, c);
            }
        }
    }
}

/// In the kernel a CPU that runs the waker is not idle: `wake_affine_idle()` reads an
/// idle waking CPU as a wake-up from interrupt context. A step whose waking CPU is
/// idle must not say a task on it does the waking (a student would learn that a
/// running task's CPU counts as idle).
#[test]
fn a_step_with_an_idle_waking_cpu_does_not_put_a_task_on_it() {
    for l in LESSONS {
        for (i, step) in l.steps.iter().enumerate() {
            let scene = l.scene_at(i as u32 + 1);
            let Some(s) = scene.map(|sc| sc.scenario().expect("the scene builds")) else {
                continue;
            };
            if s.wake.busy.test_cpu(s.wake.waker) {
                continue;
            }
            let text = step.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let cpu = s.wake.waker.0;
            for claim in [
                format!("by a task on CPU {cpu}"),
                format!("a task on CPU {cpu} wakes"),
            ] {
                assert!(
                    !text.contains(&claim),
                    "lesson {}.{}: CPU {cpu} is idle, yet the text says {claim:?}: {text}",
                    l.number,
                    i + 1
                );
            }
        }
    }
}

#[test]
fn no_task_is_done_where_it_starts_and_each_can_be_done() {
    use crate::cpumask::CpuId;
    use crate::patch::PatchSet;
    for l in LESSONS {
        let scene = l.scene_at(l.steps.len() as u32).expect("a scene");
        let mut s = scene.scenario().expect("scene");
        let (a, b) = decide(&s);
        assert!(
            !l.task.done(&s, Some(&a), b.as_ref()),
            "lesson {}: the task is done before the student acts",
            l.number
        );
        // Do what the task says, as the page's actions would.
        match l.number {
            1 => {
                s.view = View::Domains;
                s.cpu = CpuId(40);
            }
            2 => s.patches = PatchSet::release(Release::new(6, 7)),
            3 => s.wake.nr_idle_scan = Some(16),
            4 => {
                s.wake.compare = Some("6.6+cluster".parse().expect("set"));
                s.wake.busy.clear_cpu(CpuId(3));
            }
            5 => s.wake.prev = CpuId(192),
            6 => s.wake.busy.clear_cpu(CpuId(1)),
            n => panic!("lesson {n} has no scripted answer"),
        }
        let (a, b) = decide(&s);
        assert!(
            l.task.done(&s, Some(&a), b.as_ref()),
            "lesson {}: doing the task ({}) does not meet its goal (A {:?}, B {:?})",
            l.number,
            l.task.text,
            a.cpu,
            b.map(|b| b.cpu)
        );
    }
}

#[test]
fn each_seed_example_shows_what_its_note_says() {
    use crate::cpumask::CpuId;
    let names: Vec<_> = WAKE_EXAMPLES.iter().map(|e| e.name).collect();
    assert_eq!(names, ["seed01", "seed02", "seed03", "seed04"]);
    let run = |name: &str| {
        let e = WAKE_EXAMPLES
            .iter()
            .find(|e| e.name == name)
            .expect("example");
        let s = e.scene.scenario().expect("scene");
        assert_eq!(decode(&encode(&s)).as_ref(), Ok(&s), "{name}");
        let (a, b) = decide(&s);
        (a, b.expect("every example compares"))
    };
    let (a, b) = run("seed01");
    assert_eq!((a.cpu, b.cpu), (CpuId(12), CpuId(2)));
    let (a, b) = run("seed02");
    assert_eq!(a.cpu, b.cpu);
    assert!(
        a.costs.llc_shared_reads > b.costs.llc_shared_reads,
        "{a:?} {b:?}"
    );
    let (a, b) = run("seed03");
    assert_eq!(a.cpu, b.cpu);
    assert_eq!(a.queue, QueuePath::RemoteLock);
    assert_eq!(b.queue, QueuePath::Wakelist { ipi: true });
    let (a, b) = run("seed04");
    assert_eq!(a.cpu, CpuId(5));
    assert_ne!(b.cpu, CpuId(5));
    // B's CPU's core runs nothing of another cookie: its sibling is idle or cookie 1.
    let s = WAKE_EXAMPLES[3].scene.scenario().expect("scene");
    let sibling = s.machine().smt_mask(b.cpu);
    for c in sibling.iter() {
        assert!(
            !s.wake.busy.test_cpu(c) || c == CpuId(2),
            "B's core {} runs cookie 2",
            sibling.to_list()
        );
    }
}

#[test]
fn the_default_scenario_is_busy_and_its_sides_differ() {
    use crate::cpumask::CpuId;
    let mut s = DEFAULT_SCENE.scenario().expect("scene");
    let n = s.machine.nr_cpus();
    assert!(s.wake.busy.weight() * 10 >= n * 6, "at least 60% busy");
    s.view = View::Wakeup;
    let (a, b) = decide(&s);
    let b = b.expect("compares");
    assert_ne!(a.cpu, b.cpu);
    // A (6.8, cluster merged) stays in the waker's cluster; B goes to prev.
    assert!(s.machine().cluster_mask(CpuId(0)).test_cpu(a.cpu), "{a:?}");
    assert_eq!(b.cpu, CpuId(12));
}

#[test]
fn the_glossary_explains_every_flag_and_every_term_a_lesson_uses() {
    for r in Release::all() {
        for bit in 0..15 {
            for name in SdFlags(1 << bit).names(r) {
                assert!(term(name).is_some(), "{r}: no glossary entry for {name}");
            }
        }
    }
    let mut keys: Vec<_> = TERMS.iter().map(|t| t.key).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), TERMS.len(), "a key twice");
    for l in LESSONS {
        let texts = l.steps.iter().map(|s| s.text).chain([l.task.text]);
        for text in texts {
            let mut rest = text;
            while let Some(i) = rest.find("[[") {
                let end = rest[i..].find("]]").expect("closed") + i;
                let inner = &rest[i + 2..end];
                let key = inner.split('|').next().unwrap_or(inner);
                assert!(
                    term(key).is_some(),
                    "lesson {}: [[{key}]] is not in the glossary",
                    l.number
                );
                rest = &rest[end + 2..];
            }
        }
    }
}

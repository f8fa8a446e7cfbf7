//! The six lessons' text, scenes, claims and tasks (see the module doc of `lesson`).

use super::Claim::*;
use super::Cond;
use super::Side::{A, B};
use super::{Highlight as H, Lesson, Scene, Step, Task};
use crate::patch::Patch;
use crate::scenario::View;
use crate::wakeup::QueuePath;

const KUNPENG: &str = "kunpeng920-6426";

/// Kunpeng 920-6426 on a patch set, the Domains tab, CPU 0.
const fn kunpeng(a: &'static str) -> Scene {
    Scene::on(KUNPENG, a)
}

/// A wake-up on Kunpeng 920-6426: waker CPU 0, prev CPU 12 (another cluster of the
/// same LLC), under `a` and optionally `b`.
const fn kunpeng_wake(a: &'static str, b: Option<&'static str>, busy: &'static str) -> Scene {
    Scene {
        view: View::Wakeup,
        b,
        busy,
        waker: 0,
        prev: 12,
        ..Scene::on(KUNPENG, a)
    }
}

/// A wake-up on the two-socket EPYC 9654 (CCX 0 is CPUs 0-7 and their SMT
/// siblings 192-199), 6.8 against seed 03.
const fn epyc_wake(busy: &'static str, prev: u32) -> Scene {
    Scene {
        view: View::Wakeup,
        b: Some("6.8+ttwu-l2c"),
        busy,
        waker: 0,
        prev,
        ..Scene::on("epyc9654-2p", "6.8")
    }
}

/// Seed 04's wake-up on xeon-smt-8 (cores {0,4} {1,5} {2,6} {3,7}): CPU 1 runs a
/// task of cookie 2, the waker on CPU 2 one of cookie 1; the wakee (cookie 1) last
/// ran on CPU 5, CPU 1's sibling.
pub(crate) const COOKIE_WAKE: Scene = Scene {
    view: View::Wakeup,
    b: Some("6.12+cookie-fastpath"),
    busy: "1-2",
    waker: 2,
    prev: 5,
    cookies: &[("1", 2), ("2", 1)],
    wakee_cookie: 1,
    ..Scene::on("xeon-smt-8", "6.12")
};

pub const LESSONS: &[Lesson] = &[
    Lesson {
        number: 1,
        title: "What a sched domain is",
        steps: &[
            Step {
                text: "The scheduler does not see a flat row of CPUs. For every CPU, \
                       `build_sched_domains()` (topology.c) stacks [[sched domain|sched domains]], \
                       one per level of the machine, from the smallest to the whole machine. \
                       CPU 0 of this Kunpeng 920 has CLS 0-3 (its cluster), MC 0-31 (its die), \
                       then NUMA levels up to all 128 CPUs.",
                scene: Some(kunpeng("6.8")),
                highlight: Some(H::Levels),
                claims: &[Level("CLS", "0-3"), Level("MC", "0-31"), Level("NUMA", "0-127")],
            },
            Step {
                text: "Each domain is cut into [[sched group|groups]], the spans of the level \
                       below (`get_group()`). MC 0-31 has 8 groups: the 8 clusters of the die. \
                       Load balancing (`load_balance()`, fair.c) compares a domain's groups and \
                       moves tasks from the busiest. Click a level card to shade its span in \
                       the drawing.",
                scene: None,
                highlight: Some(H::Levels),
                claims: &[Groups("MC", 8), Groups("CLS", 4)],
            },
            Step {
                text: "The chips are each level's flags. [[SD_SHARE_PKG_RESOURCES]] marks levels \
                       whose CPUs share a cache; the highest such level is the CPU's [[sd_llc]] \
                       (`update_top_cache_domain()`), here MC 0-31: the set the wake-up path \
                       scans for an idle CPU. NUMA levels carry [[SD_NUMA]] and [[SD_SERIALIZE]] \
                       instead. Press any chip for what it means.",
                scene: None,
                highlight: Some(H::Flags),
                claims: &[
                    Flag("MC", "SD_SHARE_PKG_RESOURCES", true),
                    Flag("NUMA", "SD_SHARE_PKG_RESOURCES", false),
                    Flag("NUMA", "SD_NUMA", true),
                ],
            },
            Step {
                text: "Levels that add nothing are dropped: the PKG and NODE levels span the same \
                       32 CPUs as MC here, so `cpu_attach_domain()` removes them \
                       (`sd_parent_degenerate()`). The dmesg tab shows what the kernel prints \
                       with the `sched_verbose` boot option (`sched_domain_debug()`), to compare \
                       with a real machine.",
                scene: Some(Scene { view: View::Dmesg, ..kunpeng("6.8") }),
                highlight: None,
                claims: &[NoLevel("PKG"), NoLevel("NODE")],
            },
        ],
        task: Task {
            text: "Open the Domains tab and choose a CPU on another node (click it in the \
                   drawing or use the CPU picker): its MC level is another die.",
            goal: &[Cond::View(View::Domains), Cond::SelectedOutside("0-31")],
            done: "Done: this CPU's levels are its own die's and cluster's.",
        },
    },
    Lesson {
        number: 2,
        title: "Clusters and LLCs on Kunpeng 920",
        steps: &[
            Step {
                text: "Kunpeng 920-6426: 2 sockets of 2 dies, each die a NUMA node of 32 cores \
                       with one L3, its [[LLC]]. Inside a die, 4 cores form a [[cluster]] that \
                       shares an L3 tag partition, so data moves faster between cores of one \
                       cluster than across the die. No [[SMT]]: one CPU per core.",
                scene: Some(kunpeng("6.8")),
                highlight: Some(H::Drawing),
                claims: &[Level("CLS", "0-3"), Level("MC", "0-31")],
            },
            Step {
                text: "On 6.8, CLS 0-3 carries [[SD_CLUSTER]] and [[SD_SHARE_PKG_RESOURCES]], MC \
                       0-31 only the second, so MC is the [[sd_llc]]. Above the cards: \
                       `sd_llc_id` 0 names the LLC (`cpus_share_cache()` compares it) and \
                       [[sd_share_id]] 0 the cluster (`cpus_share_resources()`). \
                       [[sched_cluster_active]] is on, so wake-ups look in the cluster first.",
                scene: None,
                highlight: Some(H::Facts),
                claims: &[
                    Flag("CLS", "SD_CLUSTER", true),
                    Flag("MC", "SD_CLUSTER", false),
                    ClusterActive(true),
                ],
            },
            Step {
                text: "On 6.6 the CLS level is there, but without SD_CLUSTER: \
                       `cpu_cluster_flags()` returned only SD_SHARE_PKG_RESOURCES until seed 01's \
                       patch 1/3, merged in 6.7. Load balancing used clusters since 5.16; the \
                       wake-up path did not know them: sched_cluster_active is 'no'.",
                scene: Some(kunpeng("6.6")),
                highlight: Some(H::Flags),
                claims: &[Flag("CLS", "SD_CLUSTER", false), ClusterActive(false)],
            },
        ],
        task: Task {
            text: "Pick v6.7 or later in the Kernel picker at the top: SD_CLUSTER comes back on \
                   CLS and sched_cluster_active says yes.",
            goal: &[Cond::View(View::Domains), Cond::Patch(A, Patch::Cluster, true)],
            done: "Done: the kernel now knows the cluster.",
        },
    },
    Lesson {
        number: 3,
        title: "What select_idle_sibling() does",
        steps: &[
            Step {
                text: "A task that last ran on CPU 12 (its [[prev]] CPU) is woken from CPU 0, \
                       which runs nothing: an interrupt handler there does the waking. \
                       [[select_task_rq_fair]] first asks [[wake_affine]] where to start: \
                       both CPUs are idle and share the LLC, so `wake_affine_idle()` keeps prev. \
                       [[select_idle_sibling]] finds this [[target]] idle and takes it, without \
                       scanning.",
                scene: Some(kunpeng_wake("6.8", None, "")),
                highlight: Some(H::Setup),
                claims: &[Chooses(A, 12)],
            },
            Step {
                text: "Now CPU 12 is busy. `wake_affine_idle()` sees the waking CPU 0 idle (the \
                       interrupt again) and prev busy, so target is CPU 0, which is idle: taken \
                       at once.",
                scene: Some(kunpeng_wake("6.8", None, "12")),
                highlight: Some(H::Decisions),
                claims: &[Chooses(A, 0)],
            },
            Step {
                text: "Now CPUs 0-12 are busy, and the waker is about to sleep ([[WF_SYNC]]) with \
                       nothing else on CPU 0, so target is CPU 0. Target and prev are busy, so \
                       [[select_idle_cpu]] scans the LLC: CPU 0's cluster first, then on from \
                       CPU 4, until CPU 13 is idle. The trace lists each probe and the drawing \
                       numbers them.",
                scene: Some(Scene { sync: true, nr_idle_scan: Some(16), ..kunpeng_wake("6.8", None, "0-12") }),
                highlight: Some(H::Trace),
                claims: &[Chooses(A, 13), ProbesAtLeast(A, 10)],
            },
            Step {
                text: "The scan has a budget: with [[SIS_UTIL]] it tries at most [[nr_idle_scan]] \
                       CPUs, which `update_idle_cpu_scan()` lowers as the LLC gets busier (0 at \
                       about 85% utilisation). With nr_idle_scan 4 the scan gives up before CPU 13, \
                       and the wakee waits on target, the busy CPU 0.",
                scene: Some(Scene { sync: true, nr_idle_scan: Some(4), ..kunpeng_wake("6.8", None, "0-12") }),
                highlight: Some(H::Setup),
                claims: &[Chooses(A, 0)],
            },
        ],
        task: Task {
            text: "Raise nr_idle_scan (in the wake-up's inputs) until the wakee finds an idle \
                   CPU again.",
            goal: &[Cond::View(View::Wakeup), Cond::ChosenIdle(A)],
            done: "Done: with a bigger budget the scan reaches an idle CPU.",
        },
    },
    Lesson {
        number: 4,
        title: "Why the cluster patch wins at low load, not at high load",
        steps: &[
            Step {
                text: "Low load: only the waker's CPU 0 is busy, and the waker is about to sleep \
                       ([[WF_SYNC]]), so target is CPU 0. On 6.6 (A) the idle prev, CPU 12, \
                       shares the LLC: taken. With seed 01 (B) prev counts only inside target's \
                       [[cluster]] (`cpus_share_resources()`). CPU 12 is not, so \
                       `select_idle_cpu()` scans cluster 0-3 first and finds CPU 1: waker and \
                       wakee now share an L3 tag. tbench on one node gained 10.7 to 13.8% from 1 to \
                       16 threads.",
                scene: Some(Scene { sync: true, ..kunpeng_wake("6.6", Some("6.6+cluster"), "0") }),
                highlight: Some(H::Decisions),
                claims: &[Chooses(A, 12), Chooses(B, 1), ProbesMore(B)],
            },
            Step {
                text: "High load: every CPU but 12 is busy. 6.6 takes the idle prev in its fast \
                       path. With the patch prev is outside the cluster, so it looks for an idle \
                       CPU; but the LLC is so busy that its [[nr_idle_scan]] is 0, and \
                       `select_idle_cpu()` returns without probing. The patch's 3/3 then falls \
                       back to prev (`prev_aff`). The same CPU, so nothing to win: the seed's \
                       table has +0.68% at 32 threads and about 0 at 64 and 128.",
                scene: Some(Scene { sync: true, ..kunpeng_wake("6.6", Some("6.6+cluster"), "0-11,13-127") }),
                highlight: Some(H::Decisions),
                claims: &[Chooses(A, 12), Chooses(B, 12), Probes(B, 0), Probes(A, 0)],
            },
            Step {
                text: "Without 3/3 (`cluster-scan`: v10's 1/3 and 2/3 only), the patch forgets prev \
                       when it is outside the cluster. With a small budget (nr_idle_scan 4) the \
                       scan finds nothing and the wakee waits on target, the busy CPU 0, although \
                       CPU 12 is idle: the hackbench regression Chen Yu reported, which 3/3 fixed.",
                scene: Some(Scene {
                    sync: true,
                    nr_idle_scan: Some(4),
                    ..kunpeng_wake("6.6", Some("6.6+cluster-scan"), "0-11,13-127")
                }),
                highlight: Some(H::Kernel),
                claims: &[Chooses(A, 12), Chooses(B, 0)],
            },
        ],
        task: Task {
            text: "Tick cluster on side B (the full patch). Then free a CPU in the waker's \
                   cluster: click CPU 3 in the drawing. B moves into the cluster, A stays on \
                   CPU 12.",
            goal: &[
                Cond::Patch(B, Patch::Cluster, true),
                Cond::Chosen(A, "12", true),
                Cond::Chosen(B, "0-3", true),
            ],
            done: "Done: with a free CPU in the cluster, seed 01 keeps the wakee beside its waker.",
        },
    },
    Lesson {
        number: 5,
        title: "Wakelist, IPI and seed 03",
        steps: &[
            Step {
                text: "Once a CPU is chosen, `try_to_wake_up()` must put the task on its runqueue, \
                       and `ttwu_queue_cond()` (core.c) says how. CPU 16 is in another CCX of this \
                       EPYC, so another [[LLC]]: the waking CPU puts the task on CPU 16's [[wakelist]] \
                       and sends an [[IPI]]; CPU 16 enqueues it itself.",
                scene: Some(epyc_wake("", 16)),
                highlight: Some(H::Decisions),
                claims: &[Chooses(A, 16), Queues(A, QueuePath::Wakelist { ipi: true })],
            },
            Step {
                text: "An idle CPU in the waker's own CCX: the wakelist again, because \
                       `ttwu_queue_cond()` also queues when the target runs nothing \
                       (`nr_running` 0): the idle CPU does the enqueue itself. Both sides agree.",
                scene: Some(epyc_wake("", 3)),
                highlight: Some(H::Decisions),
                claims: &[
                    Chooses(A, 3),
                    Queues(A, QueuePath::Wakelist { ipi: true }),
                    Queues(B, QueuePath::Wakelist { ipi: true }),
                ],
            },
            Step {
                text: "Now the CCX is busy and the target, CPU 3, runs a task. 6.8 takes CPU 3's \
                       [[remote rq lock|runqueue lock]] and enqueues from CPU 0: the two share the \
                       L3. Seed 03 asks [[cpus_share_l2c]] instead; on Zen 4 only a core's two \
                       threads share an L2, so B queues on the wakelist with an IPI. When all 16 \
                       threads of a CCX lock each other's runqueues (hackbench), that was 30% \
                       faster in the patch's measurement.",
                scene: Some(epyc_wake("0-7,192-199", 3)),
                highlight: Some(H::Decisions),
                claims: &[
                    Chooses(A, 3),
                    Chooses(B, 3),
                    Queues(A, QueuePath::RemoteLock),
                    Queues(B, QueuePath::Wakelist { ipi: true }),
                ],
            },
        ],
        task: Task {
            text: "Make the wakee's prev the waker's SMT sibling, CPU 192 (the \"wakee's prev \
                   CPU\" picker): the two threads share an L2, so seed 03 takes the runqueue lock \
                   again.",
            goal: &[
                Cond::Chosen(B, "192", true),
                Cond::Queued(B, QueuePath::RemoteLock),
            ],
            done: "Done: L2 neighbours still lock each other's runqueues under seed 03.",
        },
    },
    Lesson {
        number: 6,
        title: "Core-scheduling cookies and seed 04",
        steps: &[
            Step {
                text: "[[core scheduling|Core scheduling]] lets only tasks with the same [[cookie]] \
                       run on the two threads of a core at once. On this 4-core SMT machine \
                       (cores {0,4} {1,5} {2,6} {3,7}), CPU 1 runs a task of cookie 2 and the \
                       waker on CPU 2 one of cookie 1. The wakee has cookie 1 and last ran on \
                       CPU 5, CPU 1's sibling.",
                scene: Some(COOKIE_WAKE),
                highlight: Some(H::Drawing),
                claims: &[Chooses(A, 5)],
            },
            Step {
                text: "6.12's fast path sees CPU 5 idle and takes it. But CPU 1 beside it runs \
                       cookie 2, and the core cannot run both: one thread is [[force idle|forced \
                       idle]]. Seed 04 adds `sched_core_cookie_match()` to \
                       `select_idle_sibling()`'s target, prev and recent checks: CPU 5 fails, \
                       and the scan finds a core the wakee may use.",
                scene: None,
                highlight: Some(H::Decisions),
                claims: &[Chooses(A, 5), ProbesMore(B)],
            },
            Step {
                text: "The patch's measurement: 10 threads in 5 cookie pairs on 8 CPUs. Cookies \
                       cost 1.48 s over running without them, 0.57 s with the patch: 61.7% less. \
                       The Simulate tab's seed 04 example runs the same experiment on the model.",
                scene: None,
                highlight: Some(H::Decisions),
                claims: &[],
            },
        ],
        task: Task {
            text: "Click CPU 1 in the drawing (in \"busy / idle\" mode) to make it idle: with no \
                   task of another cookie on that core, both sides take prev, CPU 5.",
            goal: &[
                Cond::Busy(1, false),
                Cond::Chosen(A, "5", true),
                Cond::Chosen(B, "5", true),
            ],
            done: "Done: an idle core matches any cookie.",
        },
    },
];

//! The Wake-up tab's examples menu (each seed's decisive wake-up) and the page's
//! default scenario. Each is a [`Scene`]; the tests check what each one's note says.

use super::content::COOKIE_WAKE;
use super::Scene;
use crate::scenario::View;

/// One example: its label, what it shows, and the scene.
#[derive(Clone, Copy, Debug)]
pub struct WakeExample {
    /// Short name, also the menu's value (`seed01`).
    pub name: &'static str,
    pub label: &'static str,
    /// What A and B do differently.
    pub note: &'static str,
    pub scene: Scene,
}

pub const WAKE_EXAMPLES: &[WakeExample] = &[
    WakeExample {
        name: "seed01",
        label: "Seed 01: cluster wake-up on Kunpeng 920",
        note: "Everything busy but CPU 2 (in the waker's cluster 0-3) and CPU 12 (prev). \
               6.6 takes prev, CPU 12; 6.6+cluster scans the cluster first and takes CPU 2.",
        scene: Scene {
            view: View::Wakeup,
            b: Some("6.6+cluster"),
            busy: "0-1,3-11,13-127",
            waker: 0,
            prev: 12,
            sync: true,
            nr_idle_scan: Some(8),
            ..Scene::on("kunpeng920-6426", "6.6")
        },
    },
    WakeExample {
        name: "seed02",
        label: "Seed 02: has_idle_cores on a machine without SMT",
        note: "The same CPU on both sides; past the fast path 5.12 reads the LLC's shared \
               has_idle_cores line, 5.12+no-smt-idle-cores does not (Kunpeng 920 has no SMT), \
               which is all seed 02 changes here.",
        scene: Scene {
            view: View::Wakeup,
            b: Some("5.12+no-smt-idle-cores"),
            busy: "0-29",
            waker: 0,
            prev: 5,
            sync: true,
            ..Scene::on("kunpeng920-6426", "5.12")
        },
    },
    WakeExample {
        name: "seed03",
        label: "Seed 03: queueing a wake-up inside an EPYC CCX",
        note: "A busy target in the waker's CCX: 6.8 takes its runqueue lock; 6.8+ttwu-l2c \
               queues on its wakelist with an IPI, since the two share no L2.",
        scene: Scene {
            view: View::Wakeup,
            b: Some("6.8+ttwu-l2c"),
            busy: "0-7,192-199",
            waker: 0,
            prev: 3,
            ..Scene::on("epyc9654-2p", "6.8")
        },
    },
    WakeExample {
        name: "seed04",
        label: "Seed 04: a core-scheduling cookie on wake-up",
        note: "The wakee (cookie 1) last ran on CPU 5, whose sibling CPU 1 runs cookie 2. 6.12 \
               takes CPU 5 (forcing a thread idle); 6.12+cookie-fastpath goes elsewhere.",
        scene: COOKIE_WAKE,
    },
];

/// The page's default scenario: Kunpeng 920-6426 on 6.8, the Domains tab, and a busy
/// wake-up where the two sides differ: A (6.8, with the cluster patch merged) keeps
/// the wakee in the waker's cluster, B (6.8 without it) sends it to prev in another
/// cluster. Busy: 94 of 128 CPUs (three quarters of each node; in node 0 all but
/// CPU 2 of the waker's cluster, prev CPU 12 and CPUs 24-31).
pub const DEFAULT_SCENE: Scene = Scene {
    view: View::Domains,
    b: Some("6.8-cluster"),
    busy: "0-1,3-11,13-23,32-55,64-87,96-119",
    waker: 0,
    prev: 12,
    sync: true,
    ..Scene::on("kunpeng920-6426", "6.8")
};

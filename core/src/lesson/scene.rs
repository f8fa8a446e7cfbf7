//! Building a lesson's scenarios: a small builder over [`Scenario`] so each step's
//! wake-up reads as data (machine, kernels, busy CPUs, waker, prev, …).

use crate::cpumask::{CpuId, CpuMask};
use crate::patch::PatchSet;
use crate::scenario::{CookieRule, Scenario, ScenarioError, View};

/// A wake-up on a preset: every field a lesson sets, the rest at the page's defaults.
#[derive(Clone, Copy, Debug)]
pub struct Scene {
    pub preset: &'static str,
    /// Side A's patch set (`6.6`, `6.6+cluster`, …).
    pub a: &'static str,
    /// Side B's, if the step compares.
    pub b: Option<&'static str>,
    pub view: View,
    /// The CPU whose domains the Domains tabs show.
    pub cpu: u32,
    /// Busy CPUs, a kernel CPU list.
    pub busy: &'static str,
    pub waker: u32,
    pub prev: u32,
    pub sync: bool,
    pub nr_idle_scan: Option<u32>,
    pub has_idle_cores: Option<bool>,
    /// (CPU list, cookie) of running tasks.
    pub cookies: &'static [(&'static str, u64)],
    pub wakee_cookie: u64,
}

impl Scene {
    /// `preset` under `a`, on the Domains tab, every CPU idle.
    pub const fn on(preset: &'static str, a: &'static str) -> Scene {
        Scene {
            preset,
            a,
            b: None,
            view: View::Domains,
            cpu: 0,
            busy: "",
            waker: 0,
            prev: 0,
            sync: false,
            nr_idle_scan: None,
            has_idle_cores: None,
            cookies: &[],
            wakee_cookie: 0,
        }
    }

    /// The typed scenario, or why the scene does not fit its machine (a test catches
    /// that for every lesson).
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        let parse = |text: &str| -> Result<PatchSet, ScenarioError> {
            text.parse().map_err(|err| ScenarioError::Patches {
                text: text.to_string(),
                err,
            })
        };
        let mut s = Scenario::preset(self.preset, parse(self.a)?)?;
        let n = s.machine.nr_cpus();
        let cpu = |field: &'static str, c: u32| {
            if c < n {
                Ok(CpuId(c))
            } else {
                Err(ScenarioError::CpuOutOfRange {
                    field,
                    cpu: c,
                    last: n.saturating_sub(1),
                })
            }
        };
        let list = |field: &'static str, text: &str| {
            CpuMask::parse_list(n, text).map_err(|err| ScenarioError::CpuList { field, err })
        };
        s.view = self.view;
        s.cpu = cpu("selected CPU", self.cpu)?;
        s.wake.busy = list("busy CPUs", self.busy)?;
        s.wake.waker = cpu("waker CPU", self.waker)?;
        s.wake.prev = cpu("wakee's prev CPU", self.prev)?;
        s.wake.sync = self.sync;
        s.wake.nr_idle_scan = self.nr_idle_scan;
        s.wake.has_idle_cores = self.has_idle_cores;
        s.wake.compare = self.b.map(parse).transpose()?;
        s.wake.cookies = self
            .cookies
            .iter()
            .map(|&(cpus, cookie)| {
                Ok(CookieRule {
                    cpus: list("cookie CPUs", cpus)?,
                    cookie,
                })
            })
            .collect::<Result<_, ScenarioError>>()?;
        s.wake.wakee_cookie = self.wakee_cookie;
        Ok(s)
    }
}

//! The scenario's tests, by what they cover (as the module's files divide it): the
//! link's encoding and versions (`link`), the machine (`machine`), the wake-up part
//! (`wake`), the simulation (`sim`) and the page's settings (`page`). Here: the
//! scenarios and link helpers they share.

use base64::Engine as _;

use super::link::{base64url_decode, LINK_BASE64};
use super::*;
use crate::cpumask::CpuMask;

mod link;
mod machine;
mod page;
mod sim;
mod wake;
mod wire_error;

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

fn with_json(json: &str) -> Result<Scenario, ScenarioError> {
    decode(&format!("v1:{}", b64(json.as_bytes())))
}

fn base64_url(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

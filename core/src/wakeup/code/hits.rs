//! [`hits()`]: which line of the listing each step of a trace comes from.
//!
//! The wake-up path names each step's line as it makes the step
//! ([`Tracer::step`](crate::wakeup::Tracer::step) takes a [`Site`]), so the mapping
//! is the trace's own: no step's wording is read back.

use super::Site;
use crate::wakeup::trace::Trace;

/// Where each step of `trace` comes from: `(step index, site)` for every step, in
/// order. A step pushed onto [`Trace::steps`] by hand, not made through
/// [`Tracer::step`](crate::wakeup::Tracer::step), has no site: an error naming it.
pub fn hits(trace: &Trace) -> Result<Vec<(usize, Site)>, String> {
    let sites = trace.sites();
    if let Some(step) = trace.steps.get(sites.len()) {
        return Err(format!(
            "step {} has no line of the listing (not made through Tracer::step): {step:?}",
            sites.len()
        ));
    }
    Ok(sites.iter().copied().enumerate().collect())
}

/// The site a listing line for `site` stands on: the local enqueue shares the
/// remote one's line (`ttwu_do_activate()` under the rq lock), the slow path's return
/// shares the fast path's.
pub fn line_site(site: Site) -> Site {
    match site {
        Site::QueueLocal => Site::QueueRemote,
        Site::FairReturnSlow => Site::FairReturnFast,
        s => s,
    }
}

//! The gloo 0.11 modules yew 0.23 and tokise use (see Cargo.toml).

#[cfg(feature = "console")]
pub use gloo_console as console;
#[cfg(feature = "timers")]
pub use gloo_timers as timers;
#[cfg(feature = "utils")]
pub use gloo_utils as utils;

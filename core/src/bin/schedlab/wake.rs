//! `schedlab wake --state FILE.json [--patches SET] [--format text|json]`.

use clap::ValueEnum;
use serde::Serialize;

use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{wake_up, Decision, Trace};

#[derive(Clone, Copy, ValueEnum)]
pub enum WakeFormat {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct WakeArgs {
    /// The wake-up state file (schema in README.md; examples in examples/wake/; at most
    /// 4 MiB; `-` reads standard input).
    #[arg(long, short)]
    state: String,
    /// Patch set, overriding the file's: RELEASE[+PATCH...][-PATCH...], e.g. 6.6+cluster.
    #[arg(long, short)]
    patches: Option<String>,
    #[arg(long, short, value_enum, default_value = "text")]
    format: WakeFormat,
}

#[derive(Serialize)]
struct Output<'a> {
    patches: String,
    decision: &'a Decision,
    trace: &'a Trace,
}

pub fn run(a: WakeArgs) -> Result<String, String> {
    let name = crate::input::display_name(&a.state);
    let text = crate::input::read_file(&a.state)?;
    let scenario = WakeScenario::from_json(&text).map_err(|e| format!("{name}: {e}"))?;
    let r = scenario
        .resolve(a.patches.as_deref())
        .map_err(|e| format!("{name}: {e}"))?;
    let mut trace = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut trace);
    Ok(match a.format {
        WakeFormat::Text => format!(
            "{} on {}: wake task {} (prev CPU{}) from CPU{}\n{}",
            r.env.patches,
            r.env.domains.machine,
            r.wakee.id.0,
            r.wakee.prev_cpu.0,
            r.waker.cpu.0,
            trace.render(&d)
        ),
        WakeFormat::Json => {
            let out = Output {
                patches: r.env.patches.to_string(),
                decision: &d,
                trace: &trace,
            };
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())? + "\n"
        }
    })
}

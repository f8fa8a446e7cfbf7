//! `schedlab`: the command-line face of schedlab-core.
//!
//! ```text
//! schedlab machines
//! schedlab domains --machine kunpeng920-6426 --kernel 6.8 --cpu 0 --format dmesg
//! ```
//!
//! A module a subcommand, and what they share:
//!
//! ```text
//!  main.rs       the command line (Cli, Command), main(), `machines`
//!  domains.rs    `domains`: build_sched_domains() and its output formats
//!  wake.rs       `wake`: one wake-up decision, step by step
//!  sim/          `run` and `sweep`
//!  reproduce.rs  `reproduce`: the seeds' tables, model versus published
//!  machine.rs    --machine with --arch and --kconfig: presets and machine files
//!  input.rs      files and standard input, read with a cap
//!  output.rs     the answer and errors on the terminal, control characters escaped
//!  par.rs        runs spread over the machine's cores, longest first
//! ```

// The flags' doc comments are their --help text, written for a terminal: usage such as
// `RELEASE[+PATCH...]` is not a rustdoc link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod domains;
mod input;
mod machine;
mod output;
mod par;
mod reproduce;
mod sim;
mod wake;

use schedlab_core::topology::presets;

use output::{emit, Answer};

#[derive(Parser)]
#[command(
    name = "schedlab",
    version,
    about = "Linux sched domains and wake-up placement, for machines you may not have"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the preset machines.
    Machines,
    /// Print the sched domains Linux builds for a machine, as the kernel prints them.
    Domains(domains::DomainsArgs),
    /// Explain one wake-up decision, step by step.
    Wake(wake::WakeArgs),
    /// Reproduce the seeds' published tables: model versus published, side by side.
    Reproduce(reproduce::ReproArgs),
    /// Simulate a workload on a machine and report what it measured.
    Run(sim::RunArgs),
    /// Baseline versus patched over thread counts, as the seeds' tables.
    Sweep(sim::SweepArgs),
}

/// Why a command did not succeed.
pub enum Failure {
    /// Nothing to print but the error (exit status 2).
    Error(String),
    /// A batch (`wake --jsonl`) that answered every line but some with errors: `out`
    /// is printed as a success would be, then `err`, and the exit status is 1.
    Partial { out: String, err: String },
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::Error(e)
    }
}

/// The CLI's one clock: the wall time its "took" lines report. Core and the page have
/// none (clippy.toml bans clocks there); timing itself is the CLI's own business.
#[allow(clippy::disallowed_methods)]
fn wall_clock() -> std::time::Instant {
    std::time::Instant::now()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    emit(
        run(cli),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
}

fn run(cli: Cli) -> Result<Answer, Failure> {
    Ok(Answer::Text(match cli.command {
        Command::Machines => machines(),
        Command::Domains(a) => return Ok(Answer::Domains(Box::new(domains::domains(a)?))),
        Command::Wake(a) => wake::run(a)?,
        Command::Reproduce(a) => reproduce::run(a)?,
        Command::Run(a) => sim::run(a)?,
        Command::Sweep(a) => sim::sweep(a)?,
    }))
}

fn machines() -> String {
    let width = presets::PRESETS
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for p in presets::PRESETS {
        let m = p.machine();
        out.push_str(&format!(
            "{:width$}  {:>4} CPUs  {}\n",
            p.name,
            m.nr_cpus(),
            p.summary
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command's answer, or its error (for a failed batch, the error line).
    pub(crate) fn cli(args: &[&str]) -> Result<String, String> {
        cli_full(args).map_err(|f| match f {
            Failure::Error(e) => e,
            Failure::Partial { err, .. } => err,
        })
    }

    pub(crate) fn cli_full(args: &[&str]) -> Result<String, Failure> {
        cli_answer(args).map(Answer::into_text)
    }

    pub(crate) fn cli_answer(args: &[&str]) -> Result<Answer, Failure> {
        let mut argv = vec!["schedlab"];
        argv.extend_from_slice(args);
        run(Cli::try_parse_from(argv).map_err(|e| e.to_string())?)
    }
}

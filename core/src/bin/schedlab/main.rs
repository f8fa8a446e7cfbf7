//! `schedlab`: the command-line face of schedlab-core.
//!
//! ```text
//! schedlab machines
//! schedlab domains --machine kunpeng920-6426 --kernel 6.8 --cpu 0 --format dmesg
//! ```

// The flags' doc comments are their --help text, written for a terminal: usage such as
// `RELEASE[+PATCH...]` is not a rustdoc link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod input;
mod par;
mod reproduce;
mod sim;
mod wake;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig, SchedDomains};
use schedlab_core::topology::{presets, Arch, Machine};

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
    Domains(DomainsArgs),
    /// Explain one wake-up decision, step by step.
    Wake(wake::WakeArgs),
    /// Reproduce the seeds' published tables: model versus published, side by side.
    Reproduce(reproduce::ReproArgs),
    /// Simulate a workload on a machine and report what it measured.
    Run(sim::RunArgs),
    /// Baseline versus patched over thread counts, as the seeds' tables.
    Sweep(sim::SweepArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum DomainFormat {
    /// sched_verbose "CPUn attaching sched-domain(s):" blocks.
    Dmesg,
    /// grep . /sys/kernel/debug/sched/domains/cpuN/domain*/{name,flags,level}
    Debugfs,
    /// /proc/schedstat cpuN and domainN lines.
    Schedstat,
    /// Everything schedlab knows, as JSON.
    Json,
}

#[derive(clap::Args)]
struct DomainsArgs {
    /// A preset name (see `schedlab machines`) or a machine file (JSON spec, `lscpu -p`
    /// or `lscpu -e` output, optionally followed by `numactl -H` output; at most 4 MiB;
    /// `-` reads standard input).
    #[arg(long, short)]
    machine: String,
    #[command(flatten)]
    machine_opts: MachineOpts,
    /// Mainline release whose domain code to mirror (5.12 to 6.12), with the patches
    /// that change the domains if any: 6.6+cluster is 6.6 with seed 01's SD_CLUSTER
    /// and sched_cluster_active (merged in 6.7), 6.8-cluster 6.8 without them. The
    /// other patches change wake-ups only (`schedlab wake`). Also --patches, as
    /// `run` and `wake` spell it.
    #[arg(long, short, visible_alias = "patches", default_value = "6.8")]
    kernel: String,
    /// The relax_domain_level= boot parameter: domains above this level (from 6.9 at
    /// it and above) lose newidle and wake balancing. -1 (or any negative) = default.
    #[arg(long, allow_hyphen_values = true)]
    relax_domain_level: Option<i32>,
    /// Only this CPU.
    #[arg(long)]
    cpu: Option<u32>,
    /// CPUs to take offline first, as a kernel CPU list (e.g. `1` or `8-15`).
    #[arg(long)]
    offline: Option<String>,
    #[arg(long, short, value_enum, default_value = "dmesg")]
    format: DomainFormat,
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

/// A command's answer: text, or a machine's domains, written CPU by CPU as they are
/// formatted (a 4096-CPU machine's JSON is 4 GB: it is never held in memory).
enum Answer {
    Text(String),
    Domains(Box<DomainsAnswer>),
}

/// `schedlab domains`' answer: the built domains and how to print them.
struct DomainsAnswer {
    sd: SchedDomains,
    cpu: Option<CpuId>,
    format: DomainFormat,
}

impl DomainsAnswer {
    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let (sd, cpu) = (&self.sd, self.cpu);
        match self.format {
            DomainFormat::Dmesg => format::write_dmesg(out, sd, cpu),
            DomainFormat::Debugfs => format::write_debugfs(out, sd, cpu),
            DomainFormat::Schedstat => format::write_schedstat(out, sd, cpu),
            DomainFormat::Json => {
                format::write_json(out, sd, cpu)?;
                out.write_all(b"\n")
            }
        }
    }
}

impl Answer {
    /// The whole answer as text (tests, and every command but `domains`).
    #[cfg(test)]
    fn into_text(self) -> String {
        match self {
            Answer::Text(t) => t,
            Answer::Domains(d) => {
                let mut out = Vec::new();
                d.write(&mut out).expect("writing to memory");
                String::from_utf8(out).expect("the formats write UTF-8")
            }
        }
    }
}

/// Prints a command's answer or error: the one place the CLI writes to the terminal.
fn emit(result: Result<Answer, Failure>, out: &mut impl Write, err: &mut impl Write) -> ExitCode {
    match result {
        Ok(Answer::Text(text)) => {
            let _ = write!(out, "{}", terminal_safe(&text));
            ExitCode::SUCCESS
        }
        Ok(Answer::Domains(d)) => {
            let mut safe = SafeWriter {
                inner: std::io::BufWriter::with_capacity(1 << 16, out),
                pending: Vec::new(),
            };
            // As for text: a closed pipe (`| head`) ends the output quietly.
            let _ = d.write(&mut safe).and_then(|()| safe.flush());
            ExitCode::SUCCESS
        }
        Err(Failure::Error(e)) => {
            let _ = writeln!(err, "schedlab: {}", terminal_safe(&e));
            ExitCode::from(2)
        }
        Err(Failure::Partial { out: text, err: e }) => {
            let _ = write!(out, "{}", terminal_safe(&text));
            let _ = writeln!(err, "schedlab: {}", terminal_safe(&e));
            ExitCode::from(1)
        }
    }
}

/// [`terminal_safe`] over a stream: the bytes written are passed on in whole UTF-8
/// characters, each chunk escaped as the whole text would be (the escape is per
/// character).
struct SafeWriter<W: Write> {
    inner: W,
    /// Written but not yet passed on (at most 64 KiB and one partial character).
    pending: Vec<u8>,
}

impl<W: Write> SafeWriter<W> {
    /// Passes on the pending bytes up to the last whole character (all of them if
    /// `all`; bytes that are not UTF-8 at all pass as U+FFFD).
    fn drain(&mut self, all: bool) -> std::io::Result<()> {
        // Printable ASCII, newlines and tabs pass unchanged (terminal_safe() keeps
        // them): a domains dump is all of those, and one pass over the bytes is
        // cheaper than decoding its characters twice.
        if all_plain_ascii(&self.pending) {
            self.inner.write_all(&self.pending)?;
            self.pending.clear();
            return Ok(());
        }
        let cut = match std::str::from_utf8(&self.pending) {
            Err(e) if e.error_len().is_none() && !all => e.valid_up_to(),
            _ => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..cut]);
        self.inner.write_all(terminal_safe(&text).as_bytes())?;
        self.pending.drain(..cut);
        Ok(())
    }
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= 1 << 16 {
            self.drain(false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

/// A byte [`terminal_safe`] passes as it is without looking further: printable ASCII,
/// newline or tab.
fn is_plain_ascii(b: u8) -> bool {
    (b' '..b'\x7f').contains(&b) || b == b'\n' || b == b'\t'
}

/// Whether every byte is [`is_plain_ascii`]; 64 bytes at a time without an early
/// exit inside a block, which the compiler turns into vector compares.
fn all_plain_ascii(bytes: &[u8]) -> bool {
    bytes
        .chunks(64)
        .all(|c| c.iter().fold(true, |ok, &b| ok & is_plain_ascii(b)))
}

/// `text` with every character that could drive the terminal written out instead: C0
/// and C1 controls (ESC, CSI U+009B, `\r`, …) but newline and tab, DEL, and the
/// bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder what
/// the user reads. Names and strings from files (a machine's name, an echoed value) end
/// up in the answer and in errors, so everything printed goes through here: `\x1b`,
/// `\r`, `\u{9b}`, `\u{202e}`. JSON output is unaffected: serde_json already escapes
/// controls inside strings, and the bidi characters only appear if a file put them there.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if all_plain_ascii(text.as_bytes()) {
        return text.into();
    }
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(unsafe_char) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

fn run(cli: Cli) -> Result<Answer, Failure> {
    Ok(Answer::Text(match cli.command {
        Command::Machines => machines(),
        Command::Domains(a) => return Ok(Answer::Domains(Box::new(domains(a)?))),
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

/// A preset name, or a file in any format the importers read.
/// How to read a machine file, and the kernel's configuration.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct MachineOpts {
    /// The architecture whose topology code to model: x86 or arm64. `lscpu -p`/`-e`
    /// do not say (without it they are read as x86; plain `lscpu` says in its
    /// Architecture: line); a sysfs dump is read as arm64 when its files show it
    /// (die_id -1, or cluster files without die files), else as x86. Presets and JSON
    /// specs name their own.
    #[arg(long)]
    arch: Option<Arch>,
    /// Kconfig options that change the domains, as a distribution's config spells
    /// them, e.g. CONFIG_SCHED_CLUSTER=n (Debian's arm64 kernels) or NUMA=n,SCHED_SMT=y:
    /// SCHED_SMT, SCHED_CLUSTER, SCHED_MC, NUMA. Default: all y (a server distribution).
    #[arg(long)]
    kconfig: Option<String>,
}

fn load_machine(arg: &str, opts: &MachineOpts) -> Result<Machine, String> {
    let mut m = load_machine_as(arg, opts.arch)?;
    if let Some(want) = opts.arch.filter(|&a| a != m.arch) {
        return Err(format!(
            "--arch {}: {} is an {} machine (presets and JSON specs name their \
             architecture; --arch is for lscpu and sysfs text)",
            want.as_str(),
            m.name,
            m.arch.as_str()
        ));
    }
    if let Some(k) = &opts.kconfig {
        m.config = m
            .config
            .with_options(k)
            .map_err(|e| format!("--kconfig: {e}"))?;
    }
    Ok(m)
}

fn load_machine_as(arg: &str, arch: Option<Arch>) -> Result<Machine, String> {
    if let Some(p) = presets::preset(arg) {
        return p.spec().build().map_err(|e| e.to_string());
    }
    let file = input::open(arg).map_err(|e| {
        let near = near_presets(arg);
        format!(
            "{arg:?} is neither a preset ({}) nor a readable file: {e}{}",
            presets::PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
            if near.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", near.join(" or "))
            }
        )
    })?;
    let name = input::display_name(arg);
    let text = input::read_capped(&name, file, input::MAX_FILE_BYTES)?;
    let hint = schedlab_core::topology::ImportHint {
        arch,
        ..schedlab_core::topology::ImportHint::NONE
    };
    schedlab_core::topology::load_machine(&text, &hint).map_err(|e| format!("{name}: {e}"))
}

/// The presets `arg` may have meant: those it begins (`epyc9654` for `epyc9654-1p`),
/// or those within two typed letters of it (`jacobsvile`), case aside.
fn near_presets(arg: &str) -> Vec<&'static str> {
    let arg = arg.to_ascii_lowercase();
    if arg.chars().count() < 3 || arg.len() > 64 {
        return Vec::new();
    }
    presets::PRESETS
        .iter()
        .map(|p| p.name)
        .filter(|name| name.starts_with(&arg) || edit_distance(&arg, name) <= 2)
        .collect()
}

/// Levenshtein distance: insertions, deletions and substitutions of one character.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

fn domains(a: DomainsArgs) -> Result<DomainsAnswer, String> {
    let machine = load_machine(&a.machine, &a.machine_opts)?;
    let patches: PatchSet = a
        .kernel
        .parse()
        .map_err(|e| format!("--kernel (--patches): {e}"))?;
    let mut cfg = BuildConfig::for_patches(&patches);
    cfg.relax_domain_level = a.relax_domain_level;
    if let Some(off) = &a.offline {
        cfg.offline = Some(
            CpuMask::parse_list(machine.nr_cpus(), off).map_err(|e| format!("--offline: {e}"))?,
        );
    }
    let cpu = match a.cpu {
        Some(c) if c >= machine.nr_cpus() => {
            return Err(format!(
                "--cpu {c}: {} has CPUs 0-{}",
                machine.name,
                machine.nr_cpus() - 1
            ))
        }
        Some(c) => Some(CpuId(c)),
        None => None,
    };
    let sd = build_sched_domains(&machine, &cfg).map_err(|e| e.to_string())?;
    if let Some(c) = cpu {
        if sd.try_cpu(c).is_none() {
            return Err(format!("--cpu {}: that CPU is offline", c.0));
        }
    }
    Ok(DomainsAnswer {
        sd,
        cpu,
        format: a.format,
    })
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

    /// `domains --kernel` takes a patch set as `run` and `wake` do: seed 01's SD_CLUSTER
    /// on a 6.6 kernel, or 6.8 without it.
    #[test]
    fn domains_take_the_cluster_patch() {
        let flags = |k: &str| {
            cli(&[
                "domains",
                "-m",
                "jacobsville",
                "-k",
                k,
                "--cpu",
                "0",
                "-f",
                "debugfs",
            ])
            .unwrap()
            .contains("SD_CLUSTER")
        };
        assert!(!flags("6.6"));
        assert!(flags("6.6+cluster"));
        assert!(flags("6.8"));
        assert!(!flags("6.8-cluster"));
        let spelt_as_run = cli(&["domains", "-m", "jacobsville", "--patches", "6.6+cluster"]);
        assert!(spelt_as_run.is_ok(), "{spelt_as_run:?}");
        let e = cli(&["domains", "-m", "jacobsville", "-k", "6.6+clsuter"]).unwrap_err();
        assert!(
            e.starts_with("--kernel (--patches): unknown patch \"clsuter\""),
            "{e}"
        );
    }

    /// A machine name that is no preset and no file suggests the presets it may have
    /// meant: those it begins, and typos; nothing for a name far from every preset.
    #[test]
    fn a_near_miss_of_a_preset_suggests_it() {
        let err = |m: &str| cli(&["domains", "-m", m]).unwrap_err();
        assert!(
            err("epyc9654").ends_with("; did you mean epyc9654-1p or epyc9654-2p?"),
            "{}",
            err("epyc9654")
        );
        assert!(err("jacobsvile").ends_with("; did you mean jacobsville?"));
        assert!(err("Flat-16x").ends_with("; did you mean flat-16?"));
        assert!(!err("/no/such/machine.json").contains("did you mean"));
    }

    /// A sysfs dump says nothing of its architecture: --arch says it, and --kconfig
    /// says what the distribution built. Debian's arm64 kernels have no
    /// CONFIG_SCHED_CLUSTER, so on Kunpeng 920 their lowest level is MC, not CLS.
    #[test]
    fn arch_and_kconfig_pick_the_distributions_levels() {
        let dump = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/kunpeng920_128c_sysfs_topology.txt"
        );
        let first_level = |extra: &[&str]| {
            let mut args = vec!["domains", "-m", dump, "--cpu", "0"];
            args.extend_from_slice(extra);
            let out = cli(&args).expect("builds");
            out.lines().nth(1).unwrap_or_default().to_string()
        };
        assert_eq!(
            first_level(&["--arch", "arm64"]),
            " domain-0: span=0-3 level=CLS"
        );
        assert_eq!(
            first_level(&["--arch", "aarch64", "--kconfig", "CONFIG_SCHED_CLUSTER=n"]),
            " domain-0: span=0-31 level=MC"
        );
        let e = cli(&["domains", "-m", "flat-16", "--kconfig", "SCHED_CLUSTER=m"]).unwrap_err();
        assert!(e.contains("--kconfig") && e.contains("y or n"), "{e}");
        let e = cli(&["domains", "-m", "kunpeng920-6426", "--arch", "x86"]).unwrap_err();
        assert!(e.contains("arm64 machine"), "{e}");
        let e = cli(&["domains", "-m", "flat-16", "--arch", "riscv"]).unwrap_err();
        assert!(e.contains("x86 or arm64"), "{e}");
    }

    /// The streamed answer is escaped as the whole text would be, also when a write
    /// ends inside a character, and `domains` streams through it.
    #[test]
    fn the_stream_escape_is_the_text_escape() {
        let text = "a\u{202e}b\x1b[2Jé€\r\n".repeat(5000);
        let mut out = Vec::new();
        let mut w = SafeWriter {
            inner: &mut out,
            pending: Vec::new(),
        };
        for chunk in text.as_bytes().chunks(7) {
            w.write_all(chunk).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), terminal_safe(&text));
        let path =
            std::env::temp_dir().join(format!("schedlab-esc-dom-{}.json", std::process::id()));
        std::fs::write(
            &path,
            r#"{"name": "x\u202ey", "arch": "x86", "packages": 1, "cores_per_llc": 2}"#,
        )
        .unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ["domains", "-m", path.to_str().unwrap(), "--format", "json"];
        emit(cli_answer(&args), &mut out, &mut err);
        let whole = cli(&args).unwrap();
        std::fs::remove_file(&path).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains(r#""machine": "x\u{202e}y""#), "{out}");
        assert_eq!(out, terminal_safe(&whole));
    }

    /// Issue #16 item 8, on a real boot (core/tests/fixtures/qemu/): Debian's arm64
    /// 6.1 on QEMU's device tree (clusters, no cache nodes, no CONFIG_SCHED_CLUSTER).
    /// `--arch arm64 --kconfig CONFIG_SCHED_CLUSTER=n` prints the kernel's SMT + DIE
    /// for CPU 0; without --arch the dump's files (cluster files, no die files) say
    /// arm64 and the answer is the same; --arch x86 refuses the dump, since x86's
    /// CPUID never leaves SMT threads without a shared cache.
    #[test]
    fn an_arm64_dump_from_a_real_boot_builds_what_the_kernel_built() {
        let dump = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/qemu/arm64-dt-clusters-6.1.sysfs.txt"
        );
        let base = ["domains", "-m", dump, "-k", "6.1", "--cpu", "0"];
        let with = |extra: &[&str]| {
            let mut args = base.to_vec();
            args.extend_from_slice(extra);
            cli(&args)
        };
        let kernel =
            "BUG: arch topology borken\n     the SMT domain not a subset of the MC domain\n";
        let cpu0 = "CPU0 attaching sched-domain(s):\n domain-0: span=0-1 level=SMT\n  groups: 0:{ span=0 }, 1:{ span=1 }\n  domain-1: span=0-7 level=DIE\n   groups: 0:{ span=0-1 cap=2048 }, 2:{ span=2-3 cap=2048 }, 4:{ span=4-5 cap=2048 }, 6:{ span=6-7 cap=2048 }\n";
        let want = kernel.repeat(8) + cpu0;
        let told = with(&["--arch", "arm64", "--kconfig", "CONFIG_SCHED_CLUSTER=n"]).unwrap();
        assert_eq!(told, want);
        assert_eq!(
            with(&["--kconfig", "CONFIG_SCHED_CLUSTER=n"]).unwrap(),
            want
        );
        let e = with(&["--arch", "x86"]).unwrap_err();
        assert!(e.contains("narrower than its SMT core"), "{e}");
    }

    /// Issue 16: a machine's name comes from its file, and was printed raw: a file
    /// could clear the screen or recolour it. Everything printed goes through one
    /// escape, on stdout and stderr alike.
    #[test]
    fn control_characters_from_files_never_reach_the_terminal() {
        let path = std::env::temp_dir().join(format!("schedlab-esc-{}.json", std::process::id()));
        let name = r"evil\u001b[2J\u009b31m\r\u202eX";
        std::fs::write(
            &path,
            format!(
                r#"{{ "machine": {{ "name": "{name}", "arch": "x86", "packages": 1,
                     "cores_per_llc": 4 }},
                   "wakee": {{ "id": 1, "prev_cpu": 1 }}, "waker": {{ "cpu": 0 }} }}"#
            ),
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let mut outputs = Vec::new();
        for args in [
            &["wake", "-s", p][..],
            &["wake", "-s", p, "--patches", "nope"][..],
        ] {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            emit(cli_answer(args), &mut out, &mut err);
            outputs.push(String::from_utf8(out).unwrap() + &String::from_utf8(err).unwrap());
        }
        std::fs::remove_file(&path).unwrap();
        assert!(
            outputs[0].contains("evil\\x1b[2J\\u{9b}31m\\r\\u{202e}X"),
            "{}",
            outputs[0]
        );
        for o in &outputs {
            assert!(
                !o.chars()
                    .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
                "{o:?}"
            );
        }
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
    }

    /// The plain-ASCII fast path passes exactly the bytes the character test passes:
    /// every ASCII byte alone, and beside a character that sends the text down the
    /// slow path, comes out the same either way (DEL and the C0 controls escaped).
    #[test]
    fn the_ascii_fast_path_passes_what_the_slow_path_passes() {
        for b in 0u8..0x80 {
            let c = b as char;
            let alone = c.to_string();
            let slow = format!("{c}\u{e9}");
            let fast = terminal_safe(&alone).into_owned();
            let slow = terminal_safe(&slow).into_owned();
            assert_eq!(
                slow.strip_suffix('\u{e9}'),
                Some(fast.as_str()),
                "byte {b:#04x}"
            );
            assert_eq!(is_plain_ascii(b), fast == alone, "byte {b:#04x}");
        }
        assert_eq!(terminal_safe("\x7f"), "\\x7f");
    }

    /// Issue 16: whole files were read before any size check (`-m /dev/urandom` ran
    /// until killed). A file one byte past the cap is refused, naming the cap.
    #[test]
    fn files_past_the_input_cap_are_refused_naming_it() {
        let path = std::env::temp_dir().join(format!("schedlab-cap-{}.txt", std::process::id()));
        std::fs::write(&path, vec![b' '; (4 << 20) + 1]).unwrap();
        let p = path.to_str().unwrap();
        let machine = cli(&["domains", "-m", p]).unwrap_err();
        let wake = cli(&["wake", "-s", p]).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        for e in [machine, wake] {
            assert!(e.contains("4 MiB") && e.contains(p), "{e}");
        }
    }
}

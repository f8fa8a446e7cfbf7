//! `schedlab domains`: the sched domains Linux builds for a machine
//! (`build_sched_domains()`), printed as the kernel prints them: sched_verbose's
//! dmesg blocks, the debugfs files, /proc/schedstat, or JSON.

use std::io::Write;

use clap::ValueEnum;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig, SchedDomains};

use crate::machine::{load_machine, MachineOpts};

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
pub(crate) struct DomainsArgs {
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

/// `schedlab domains`' answer: the built domains and how to print them.
pub(crate) struct DomainsAnswer {
    sd: SchedDomains,
    cpu: Option<CpuId>,
    format: DomainFormat,
}

impl DomainsAnswer {
    pub(crate) fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
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

pub(crate) fn domains(a: DomainsArgs) -> Result<DomainsAnswer, String> {
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
    use crate::tests::cli;

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
}

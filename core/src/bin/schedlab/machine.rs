//! `--machine` and its options, shared by `domains`, `run` and `sweep`: a preset by
//! name (with the presets a mistyped name may have meant), or a machine file in any
//! format the importers read, with `--arch` and `--kconfig`.

use schedlab_core::topology::{presets, Arch, Machine};

use crate::input;

/// How to read a machine file, and the kernel's configuration.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct MachineOpts {
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

pub(crate) fn load_machine(arg: &str, opts: &MachineOpts) -> Result<Machine, String> {
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

/// A preset name, or a file in any format the importers read.
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

/// The presets `arg` may have meant (`schedlab_core::near::near`).
fn near_presets(arg: &str) -> Vec<&'static str> {
    schedlab_core::near::near(arg, presets::PRESETS.iter().map(|p| p.name))
}

#[cfg(test)]
mod tests {
    use crate::tests::cli;

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
}

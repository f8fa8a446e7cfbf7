//! The designer's arm64 firmware fields (`Field::Firmware`, `Field::NoSharedCache`):
//! a machine file's device tree survives the form, the picker rebuilds the domains
//! as that firmware's kernel reads them, and x86 never takes a device tree.

use schedlab_core::release::Release;
use schedlab_core::topology::{Arch, Firmware, MachineSpec, Numbering};

use super::designer::{Designer, Field};
use super::designer_tests::{apply, draft, edit, levels};
use super::*;

/// QEMU's virt as `-smp 8,sockets=1,clusters=2,cores=4` writes its device tree
/// (socket0/clusterN/coreN), without cache nodes.
fn qemu_virt() -> MachineSpec {
    let mut s = MachineSpec::regular("virt", "", Arch::Arm64, 1, 1, 1, 8, 4, 1, Numbering::Linear);
    s.firmware = Firmware::Dt;
    s.no_shared_cache = true;
    s
}

fn opened(spec: MachineSpec) -> Rc<AppState> {
    apply(
        Rc::new(AppState::default()),
        vec![
            Action::CustomRead(Ok(Box::new(spec))),
            Action::OpenDesigner(true),
        ],
    )
}

#[test]
fn a_device_tree_machine_keeps_its_firmware_through_an_edit() {
    let s = opened(qemu_virt());
    let d = draft(&s);
    assert_eq!(
        (d.firmware, d.no_shared_cache),
        (Firmware::Dt, true),
        "the form opens with the file's firmware"
    );
    // Any edit rebuilds the machine from the form: the firmware goes with it (it
    // came back as ACPI with a shared cache before the form carried it).
    let t = s.reduce(edit(Field::Name, "virt, renamed"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().name, "virt, renamed");
    assert_eq!(t.machine().firmware, Firmware::Dt);
    assert!(t.machine().no_shared_cache);
    // And so does the link.
    let back = AppState::from_fragment(&t.fragment());
    assert_eq!(**back.machine(), **t.machine());
}

#[test]
fn the_firmware_picker_rebuilds_the_domains_as_that_kernel_reads_them() {
    let mut spec = qemu_virt();
    spec.firmware = Firmware::Acpi;
    spec.no_shared_cache = false;
    // 5.17: CONFIG_SCHED_CLUSTER's CLS is there (5.16), a device tree's old reading too.
    let s = opened(spec).reduce(Action::SelectRelease(Release::new(5, 17)));
    // A PPTT with a shared cache: the clusters and the package.
    assert_eq!(levels(&s), ["CLS", "MC"]);
    // Before 6.0 a cpu-map with socket nodes is "empty cluster": a core per CPU in
    // its node's package (core/tests/domains_dt.rs), so one MC of all 8.
    let dt = s.clone().reduce(edit(Field::Firmware, "dt"));
    assert!(draft(&dt).errors.is_empty(), "{:?}", draft(&dt).errors);
    assert_eq!(dt.machine().firmware, Firmware::Dt);
    assert_eq!(levels(&dt), ["MC"]);
    // From 6.0 it reads as given; without a shared cache `cpu_coregroup_mask()` is
    // the cluster, so MC spans what CLS does (CLS degenerates) and DIE the package.
    let dt6 = dt.clone().reduce(Action::SelectRelease(Release::new(6, 1)));
    assert_eq!(levels(&dt6), ["CLS", "MC"]);
    let bare = dt6.reduce(edit(Field::NoSharedCache, "y"));
    assert!(bare.machine().no_shared_cache);
    assert_eq!(levels(&bare), ["MC", "DIE"]);
    // Something that is not a firmware leaves the form and the machine as they were.
    let same = dt.clone().reduce(edit(Field::Firmware, "uefi"));
    assert_eq!(draft(&same).firmware, Firmware::Dt);
    assert_eq!(same.machine(), dt.machine());
}

#[test]
fn x86_reads_no_device_tree_and_arm64_gets_it_back() {
    let s = opened(qemu_virt());
    let x = s.reduce(edit(Field::Arch, "x86"));
    assert!(draft(&x).errors.is_empty(), "{:?}", draft(&x).errors);
    assert_eq!(x.machine().arch, Arch::X86);
    assert_eq!(x.machine().firmware, Firmware::Acpi);
    assert!(!x.machine().no_shared_cache);
    // The form keeps arm64's choice for the way back.
    let a = x.reduce(edit(Field::Arch, "arm64"));
    assert_eq!(a.machine().firmware, Firmware::Dt);
    assert!(a.machine().no_shared_cache);
}

#[test]
fn an_irregular_machine_takes_the_firmware_on_its_own_spec() {
    // Explicit CPUs whose clusters differ in size cannot be counts per level.
    let mut spec = qemu_virt();
    spec.firmware = Firmware::Acpi;
    spec.no_shared_cache = false;
    let m = spec.build().expect("builds");
    let mut cpus = schedlab_core::topology::import::machine_to_spec(&m)
        .cpus
        .expect("per-CPU");
    cpus[3].cluster = cpus[4].cluster;
    spec.cpus = Some(cpus);
    let s = opened(spec);
    assert!(
        matches!(s.designer, Some(Designer::Irregular { .. })),
        "{:?}",
        s.designer
    );
    let dt = s.reduce(edit(Field::Firmware, "dt-clusters"));
    assert_eq!(dt.machine().firmware, Firmware::DtClusters);
    assert!(matches!(dt.designer, Some(Designer::Irregular { .. })));
    let bare = dt.reduce(edit(Field::NoSharedCache, "y"));
    assert!(bare.machine().no_shared_cache);
    // Its x86 reading drops both, as the form's does.
    let x = bare.reduce(edit(Field::Arch, "x86"));
    assert!(x.banner.is_none(), "{:?}", x.banner);
    assert_eq!(x.machine().firmware, Firmware::Acpi);
    assert!(!x.machine().no_shared_cache);
}

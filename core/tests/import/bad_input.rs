//! Bad input says what to do; the largest machine imports.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

#[test]
fn bad_inputs_say_what_to_do() {
    let none = &ImportHint::NONE;
    assert_eq!(load_machine("  \n\n", none), Err(ImportError::Empty));

    let err = load_machine("hello world", none).unwrap_err();
    assert!(
        matches!(err, ImportError::UnknownFormat { line: 1, .. }),
        "{err}"
    );

    // A short row.
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0\n";
    let err = load_machine(text, none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: expected 9 comma-separated fields like the header, found 4"
    );

    // Data without the header.
    let err = load_machine("0,0,0,0,,0,0,0,0\n", none).unwrap_err();
    assert!(matches!(err, ImportError::NoHeader { .. }), "{err}");

    // Not a number.
    let text = "# CPU,Core,Socket,Node\n0,zero,0,0\n";
    let err = load_machine(text, none).unwrap_err();
    assert!(
        matches!(&err, ImportError::BadField { line: 2, column, .. } if column == "Core"),
        "{err}"
    );

    // A gap in the numbering.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n2,2,0,0\n";
    assert_eq!(
        load_machine(text, none),
        Err(ImportError::CpuGap { missing: 1 })
    );

    // The same CPU twice.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n0,0,0,0\n";
    assert!(matches!(
        load_machine(text, none),
        Err(ImportError::DuplicateCpu { line: 3, cpu: 0 })
    ));

    // Too many CPUs: a CPU number past the limit is that line's error.
    let text = "# CPU,Core,Socket,Node\n5000,0,0,0\n";
    assert_eq!(
        load_machine(text, none),
        Err(ImportError::CpuNumberTooLarge {
            line: 2,
            cpu: "5000".to_string()
        })
    );
    let big = KP96.replace(
        "CPU(s):                          96",
        "CPU(s):                          9600",
    );
    assert!(matches!(
        load_machine(&big, none),
        Err(ImportError::TooManyCpus { cpus: 9600 })
    ));

    // numactl on its own.
    assert_eq!(
        load_machine(KP96_NUMACTL, none),
        Err(ImportError::NumactlOnly)
    );

    // A distance table missing a row.
    let text = format!(
        "{KP96}\n{}",
        KP96_NUMACTL.replace("  3:  22  24  12  10\n", "")
    );
    assert!(matches!(
        load_machine(&text, none),
        Err(ImportError::BadLine { .. })
    ));

    // An asymmetric SLIT is kept as given, as the kernel keeps it (sched_init_numa(),
    // topology.c v6.8:1930-1932); a bad diagonal reaches validation.
    let text = format!(
        "{KP96}\n{}",
        KP96_NUMACTL.replace("  3:  22  24", "  3:  22  25")
    );
    let m = load_machine(&text, none).expect("asymmetric SLIT");
    assert_eq!(m.numa_distance[3][1], 25);
    let text = format!(
        "{KP96}\n{}",
        KP96_NUMACTL.replace("  3:  22  24  12  10", "  3:  22  24  12  11")
    );
    assert!(matches!(
        load_machine(&text, none),
        Err(ImportError::Topology(_))
    ));
}

#[test]
fn a_4096_cpu_machine_imports() {
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for c in 0..4096 {
        text.push_str(&format!("{c},{c},{},0,,{c},{c},{c},{}\n", c / 2048, c / 64));
    }
    let m = load(&text);
    assert_eq!(m.nr_cpus(), 4096);
    text.push_str("4096,4096,1,0,,4096,4096,4096,64\n");
    assert_eq!(
        load_machine(&text, &ImportHint::NONE),
        Err(ImportError::TooManyCpus { cpus: 4097 })
    );
}

/// One stray CPU number past the limit is that line's mistake, not a machine of that
/// many CPUs (an `lscpu -e` row of CPU 99999 said "the machine has 100000 CPUs").
#[test]
fn a_cpu_number_past_the_limit_names_its_line_and_the_limit() {
    let none = &ImportHint::NONE;
    let lscpu_e = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n  0    0      0    0 0:0:0:0          yes\n99999    0      0    1 1:1:1:0          yes\n";
    let lscpu_p = "# CPU,Core,Socket,Node\n0,0,0,0\n99999,1,0,0\n";
    // Too large even for a 64-bit number: still a CPU number, not "not a number".
    let lscpu_huge = "# CPU,Core,Socket,Node\n0,0,0,0\n99999999999999999999999,1,0,0\n";
    let sysfs = "# cpu physical_package_id core_id\ncpu0 0 0\ncpu99999 0 1\n";
    for (text, line, cpu) in [
        (lscpu_e, 3, "99999"),
        (lscpu_p, 3, "99999"),
        (lscpu_huge, 3, "99999999999999999999999"),
        (sysfs, 3, "99999"),
    ] {
        let err = load_machine(text, none).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("line {line}: CPU {cpu} is past schedlab's limit")),
            "{text}\n{err}"
        );
        assert!(err.contains("0 to 4095"), "{err}");
        assert!(!err.contains("100000 CPUs"), "{err}");
    }
}

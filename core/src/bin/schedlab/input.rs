//! Reading the files the command line is given, never more than [`MAX_FILE_BYTES`]: a
//! machine file (`--machine`) or a wake-up state (`wake --state`), either of which may
//! be `-` for standard input. A device or pipe that never ends (`-m /dev/urandom`)
//! stops at the cap instead of filling memory.

use std::io::Read;

/// The most bytes the CLI reads from one input: core's own limit on a machine
/// description (`topology::import::MAX_INPUT_BYTES`, 4 MiB). `lscpu -p` of a
/// 4096-CPU machine is about 200 KiB and a wake-up state file a few KiB.
pub const MAX_FILE_BYTES: usize = schedlab_core::topology::import::MAX_INPUT_BYTES;

/// Opens `path` (`-` is standard input) for [`read_capped`].
pub fn open(path: &str) -> std::io::Result<Box<dyn Read>> {
    if path == "-" {
        Ok(Box::new(std::io::stdin().lock()))
    } else {
        Ok(Box::new(std::fs::File::open(path)?))
    }
}

/// The text of `r`, read through `take(cap + 1)`: more than `cap` bytes is refused with
/// a message naming `name` and the cap.
pub fn read_capped(name: &str, r: impl Read, cap: usize) -> Result<String, String> {
    let mut buf = Vec::new();
    r.take(cap as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("{name}: {e}"))?;
    if buf.len() > cap {
        return Err(format!(
            "{name}: larger than {cap} bytes ({}); an input may be at most that",
            mib(cap)
        ));
    }
    String::from_utf8(buf).map_err(|e| {
        format!(
            "{name}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// [`open`] then [`read_capped`] with [`MAX_FILE_BYTES`].
pub fn read_file(path: &str) -> Result<String, String> {
    let name = display_name(path);
    let r = open(path).map_err(|e| format!("{name}: {e}"))?;
    read_capped(&name, r, MAX_FILE_BYTES)
}

/// How messages name an input: its path, or "standard input" for `-`.
pub fn display_name(path: &str) -> String {
    if path == "-" {
        "standard input".to_string()
    } else {
        path.to_string()
    }
}

fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::cli;

    #[test]
    fn an_endless_input_stops_at_the_cap() {
        let e = read_capped("endless", std::io::repeat(b'x'), 1 << 20).unwrap_err();
        assert_eq!(
            e,
            "endless: larger than 1048576 bytes (1 MiB); an input may be at most that"
        );
        assert_eq!(read_capped("ok", &b"abc"[..], 3).unwrap(), "abc");
        assert!(read_capped("bin", &[0xff_u8, 0][..], 3)
            .unwrap_err()
            .contains("not UTF-8"));
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

//! What the CLI prints: a command's answer (text, or a machine's domains streamed
//! as they are formatted) and its errors, every character that could drive the
//! terminal written out instead.

use std::io::Write;
use std::process::ExitCode;

use crate::domains::DomainsAnswer;
use crate::Failure;

/// A command's answer: text, or a machine's domains, written CPU by CPU as they are
/// formatted (a 4096-CPU machine's JSON is 4 GB: it is never held in memory).
pub(crate) enum Answer {
    Text(String),
    Domains(Box<DomainsAnswer>),
}

impl Answer {
    /// The whole answer as text (tests, and every command but `domains`).
    #[cfg(test)]
    pub(crate) fn into_text(self) -> String {
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
pub(crate) fn emit(
    result: Result<Answer, Failure>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> ExitCode {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{cli, cli_answer};

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
}

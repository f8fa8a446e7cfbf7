//! A mask as the kernel prints and reads it: `%*pbl` ([`CpuMask::to_list`]) and `%*pb`
//! ([`CpuMask::to_hex`]) as lib/vsprintf.c formats them, `bitmap_parselist()`'s list
//! syntax ([`CpuMask::parse_list`]), and serde, `Debug` and `Display` in the list form.

use std::fmt;

use serde::Serialize;

use super::{CpuId, CpuMask, CpuMaskError};

impl CpuMask {
    /// The kernel's `%*pbl` format: `0-3,8,10-11`; empty mask prints nothing. Run by
    /// run (`bitmap_list_string()`'s `find_next_bit`/`find_next_zero_bit`), a word at a
    /// time: a 4096-CPU span is one run, not 4096 steps.
    pub fn to_list(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let mut from = 0;
        while let Some(start) = self.next_from(from) {
            let end = self.next_zero_from(start.0 + 1) - 1;
            let sep = if out.is_empty() { "" } else { "," };
            // Writing to a String cannot fail.
            let _ = if start.0 == end {
                write!(out, "{sep}{end}")
            } else {
                write!(out, "{sep}{}-{end}", start.0)
            };
            from = end + 1;
        }
        out
    }

    /// The first CPU `>= from` not in the mask, or `nr_cpu_ids` (`find_next_zero_bit`).
    fn next_zero_from(&self, from: u32) -> u32 {
        let words = self.words();
        let mut wi = (from / 64) as usize;
        while wi < words.len() {
            let w = !words[wi]
                & (!0u64)
                    .checked_shl(from.saturating_sub(wi as u32 * 64))
                    .unwrap_or(0);
            if w != 0 {
                return (wi as u32 * 64 + w.trailing_zeros()).min(self.nr_cpu_ids);
            }
            wi += 1;
        }
        self.nr_cpu_ids
    }

    /// The kernel's `%*pb` format (lib/vsprintf.c bitmap_string()): 32-bit chunks,
    /// most significant first, comma separated; the top chunk is only as wide as the
    /// bits it holds (`nr_cpu_ids % 32`).
    pub fn to_hex(&self) -> String {
        const CHUNK: u32 = 32;
        let nr_bits = self.nr_cpu_ids.max(1);
        let mut chunksz = nr_bits % CHUNK;
        if chunksz == 0 {
            chunksz = CHUNK;
        }
        let mut out = String::new();
        let mut i = nr_bits.div_ceil(CHUNK) * CHUNK;
        while i >= CHUNK {
            i -= CHUNK;
            let word = self.words().get((i / 64) as usize).copied().unwrap_or(0);
            let chunkmask = ((1u64 << chunksz) - 1) as u32;
            let val = ((word >> (i % 64)) as u32) & chunkmask;
            if !out.is_empty() {
                out.push(',');
            }
            // `{val:0width$x}` digit by digit: val has at most `width` hex digits.
            for k in (0..chunksz.div_ceil(4)).rev() {
                out.push(char::from(
                    b"0123456789abcdef"[(val >> (4 * k) & 0xf) as usize],
                ));
            }
            chunksz = CHUNK;
        }
        out
    }

    /// Parses the kernel list format (`0-3,8`, also `0-7:2` strides as
    /// bitmap_parselist() accepts). Whitespace around the list is ignored.
    pub fn parse_list(nr_cpu_ids: u32, text: &str) -> Result<CpuMask, CpuMaskError> {
        let mut m = CpuMask::new(nr_cpu_ids);
        let bad = |why: &str| CpuMaskError::BadList {
            text: text.to_string(),
            why: why.to_string(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(m);
        }
        for part in trimmed.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad("empty element between commas"));
            }
            let (range, stride) = match part.split_once(':') {
                Some((r, s)) => {
                    let s: u64 = s
                        .parse()
                        .map_err(|_| bad(&format!("stride {s:?} is not a number")))?;
                    if s == 0 {
                        return Err(bad("stride 0: a stride must be at least 1"));
                    }
                    (r, s)
                }
                None => (part, 1),
            };
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (a, b),
                None => (range, range),
            };
            let lo: u64 = lo
                .trim()
                .parse()
                .map_err(|_| bad(&format!("{lo:?} is not a CPU number")))?;
            let hi: u64 = hi
                .trim()
                .parse()
                .map_err(|_| bad(&format!("{hi:?} is not a CPU number")))?;
            if hi < lo {
                return Err(bad(&format!("range {lo}-{hi} runs backwards")));
            }
            if hi >= nr_cpu_ids as u64 {
                return Err(CpuMaskError::OutOfRange {
                    cpu: hi,
                    last: nr_cpu_ids.saturating_sub(1),
                });
            }
            // `hi < nr_cpu_ids`, so a step past u64::MAX is simply past the range: a
            // wrapping add would start again at CPU 0 (issue 16).
            let mut c = Some(lo);
            while let Some(cpu) = c.filter(|&cpu| cpu <= hi) {
                m.set_cpu(CpuId(cpu as u32));
                c = cpu.checked_add(stride);
            }
        }
        Ok(m)
    }
}

/// Serialised in the kernel list format (`"0-3,8"`). There is no `Deserialize`: a mask
/// only means something with its machine's size, so readers parse lists with
/// [`CpuMask::parse_list`] once they know `nr_cpu_ids`.
impl Serialize for CpuMask {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({})", self.to_list())
    }
}

impl fmt::Display for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

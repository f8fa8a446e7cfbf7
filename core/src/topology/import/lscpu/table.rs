//! `lscpu -p` and `lscpu -e`: the header, the rows split into fields (`-e`'s one cache
//! token spread into a column per cache), then read by [`RowReader`].

use super::rows::{Columns, RowReader};
use super::{content, is_parse_header};
use crate::cpumask::MAX_CPUS;
use crate::topology::import::{arch_or_default, ImportError, ImportHint, Line, Parsed};

fn check_row_count(n: usize) -> Result<(), ImportError> {
    if n > MAX_CPUS as usize {
        return Err(ImportError::TooManyCpus { cpus: n as u64 });
    }
    Ok(())
}

/// `lscpu -p` / `lscpu --parse=...`.
pub(crate) fn parse_p(lines: &[Line], hint: &ImportHint) -> Result<Parsed, ImportError> {
    const FORMAT: &str = "`lscpu -p`";
    // Several comment lines precede the header; the fixtures' `# SOURCE:` lines also
    // contain commas, so the header is the one whose first field is CPU.
    let header =
        lines
            .iter()
            .rev()
            .find(|(_, l)| is_parse_header(l))
            .ok_or(ImportError::NoHeader {
                format: FORMAT,
                example: "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3",
            })?;
    let names: Vec<String> = header
        .1
        .trim_start()
        .trim_start_matches('#')
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let cols = Columns::from_names(names, FORMAT)?;
    let expected = cols.names.len();
    let rows: Vec<(usize, Vec<&str>)> = content(lines)
        .filter(|&(n, _)| n > header.0)
        .map(|(n, l)| (n, l.split(',').collect()))
        .collect();
    check_row_count(rows.len())?;
    for (n, f) in &rows {
        if f.len() != expected {
            return Err(ImportError::FieldCount {
                line: *n,
                expected,
                found: f.len(),
                sep: "comma",
            });
        }
    }
    if let Some((n, _)) = content(lines).find(|&(n, _)| n < header.0) {
        return Err(ImportError::BadLine {
            line: n,
            what: "text before the `# CPU,...` header line".to_string(),
        });
    }
    let mut notes = Vec::new();
    let arch = arch_or_default(hint, &mut notes);
    let mut reader = RowReader::new(cols, arch, &rows);
    for (n, f) in &rows {
        reader.row(*n, f)?;
    }
    Ok(reader.finish("`lscpu -p`", notes))
}

/// `lscpu -e` / `lscpu --extended`.
pub(crate) fn parse_e(lines: &[Line], hint: &ImportHint) -> Result<Parsed, ImportError> {
    const FORMAT: &str = "`lscpu -e`";
    let mut content = content(lines);
    let Some((_, header)) = content.next() else {
        return Err(ImportError::NoHeader {
            format: FORMAT,
            example: "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE",
        });
    };
    // The cache column is one token (`L1d:L1i:L2:L3`, data `0:0:0:0`); spread it into
    // one column per cache so both -p and -e read the same way.
    let tokens: Vec<&str> = header.split_whitespace().collect();
    let cache_token = tokens.iter().position(|t| t.contains(':'));
    let mut names = Vec::new();
    for t in &tokens {
        names.extend(t.split(':').map(str::to_string));
    }
    let cache_parts = cache_token
        .map(|i| tokens[i].split(':').count())
        .unwrap_or(0);
    let cols = Columns::from_names(names, FORMAT)?;
    // Trailing columns (MAXMHZ, MINMHZ, MHZ) may be blank rather than `-`, so rows
    // must reach the columns read here but may stop before the header does.
    let last_used_token = {
        let last = cols.last_used();
        // Map a spread column index back to its token index.
        match cache_token {
            Some(ct) if last >= ct + cache_parts => last + 1 - cache_parts,
            Some(ct) if last >= ct => ct,
            _ => last,
        }
    };
    let mut rows = Vec::new();
    for (n, l) in content {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() <= last_used_token || toks.len() > tokens.len() {
            return Err(ImportError::FieldCount {
                line: n,
                expected: tokens.len(),
                found: toks.len(),
                sep: "whitespace",
            });
        }
        let mut fields = Vec::with_capacity(cols.names.len());
        for (i, t) in toks.iter().enumerate() {
            if Some(i) == cache_token {
                let parts: Vec<&str> = t.split(':').collect();
                if parts.len() == cache_parts {
                    fields.extend(parts);
                } else if *t == "-" {
                    fields.extend(std::iter::repeat_n("-", cache_parts));
                } else {
                    return Err(ImportError::BadField {
                        line: n,
                        column: tokens[i].to_string(),
                        value: t.to_string(),
                        expected: "one id per cache, separated by colons like the header",
                    });
                }
            } else {
                fields.push(*t);
            }
        }
        rows.push((n, fields));
        check_row_count(rows.len())?;
    }
    let mut notes = Vec::new();
    let arch = arch_or_default(hint, &mut notes);
    let mut reader = RowReader::new(cols, arch, &rows);
    for (n, f) in &rows {
        reader.row(*n, f)?;
    }
    Ok(reader.finish("`lscpu -e`", notes))
}

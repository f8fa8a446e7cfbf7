//! The seed corpora (files read at run time, the links every page version wrote) and
//! base64url as links write it (the test should not trust the code it tests).

pub(super) fn read_dir(dir: &str, ext: &str) -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(ext)))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// The links of tests/fixtures/links.txt: every form the page has written.
pub(super) fn links() -> Vec<String> {
    include_str!("../fixtures/links.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("# "))
        .map(str::to_string)
        .collect()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub(super) fn base64_encode(b: &[u8]) -> String {
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..=c.len() {
            out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
        }
    }
    out
}

pub(super) fn base64_decode(s: &str) -> String {
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for ch in s.bytes() {
        let Some(v) = B64.iter().position(|&b| b == ch) else {
            continue;
        };
        bits = bits << 6 | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_tests_base64_matches_links() {
    for l in links() {
        let body = l.trim_start_matches('#').strip_prefix("v1:").unwrap();
        let json = base64_decode(body.trim_end_matches('='));
        assert!(json.starts_with('{'), "{json}");
        assert_eq!(
            base64_encode(json.as_bytes()),
            body.trim_end_matches('='),
            "{l}"
        );
    }
}

//! "Did you mean …?" for a mistyped name: the known names a word may have meant.
//!
//! Used wherever a name is looked up in a closed list (machine presets, patches, sched
//! features, experiments, the values of a link's fields), so a typo gets the name it
//! missed, not only the whole list.

/// The names of `known` that `word` may have meant: those it begins (`epyc9654` for
/// `epyc9654-1p`) or those within two typed letters of it (`jacobsvile`), case
/// aside. Nothing for words under 3 or over 64 characters (too short to guess from,
/// or not a name).
pub fn near<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word = word.to_lowercase();
    let len = word.chars().count();
    if !(3..=64).contains(&len) {
        return Vec::new();
    }
    known
        .into_iter()
        .filter(|name| {
            let name = name.to_lowercase();
            name != word && (name.starts_with(&word) || edit_distance(&word, &name) <= 2)
        })
        .collect()
}

/// `"; did you mean a or b?"` for [`near`]'s names, or `""` when there is none: the
/// end of an error message.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let near = near(word, known);
    if near.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", near.join(" or "))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const PRESETS: [&str; 3] = ["epyc9654-1p", "epyc9654-2p", "jacobsville"];

    #[test]
    fn typos_and_prefixes_are_near() {
        assert_eq!(near("jacobsvile", PRESETS), ["jacobsville"]);
        assert_eq!(near("Jacobsvilel", PRESETS), ["jacobsville"]);
        assert_eq!(near("epyc9654", PRESETS), ["epyc9654-1p", "epyc9654-2p"]);
        assert_eq!(
            did_you_mean("clutser", ["cluster", "cluster-scan"]),
            "; did you mean cluster?"
        );
    }

    #[test]
    fn far_short_long_and_exact_words_are_not() {
        assert!(near("xeon", PRESETS).is_empty());
        assert!(near("ep", PRESETS).is_empty(), "too short to guess from");
        assert!(near(&"e".repeat(65), PRESETS).is_empty());
        assert!(near("jacobsville", PRESETS).is_empty(), "not a typo");
        assert_eq!(did_you_mean("xeon", PRESETS), "");
    }

    #[test]
    fn edit_distance_counts_single_letter_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("ab", "ba"), 2);
    }
}

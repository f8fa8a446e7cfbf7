//! The page's settings in a link (`page.rs`): they travel, defaults stay out, bad ones
//! are named.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn the_page_settings_travel_and_defaults_stay_out_of_the_link() {
    let mut s = prev_other_cluster();
    let plain = wire_json(&s);
    assert!(!plain.contains("\"ui\""), "{plain}");
    s.page = PageSettings {
        click: ClickMode::Prev,
        focus: Side::B,
        highlight: Some(2),
        busy_permille: 500,
        random_seed: 7,
        diff_with: Some(ps("6.1+cluster")),
        diff_text: KernelText::Schedstat,
    };
    let json = wire_json(&s);
    assert!(
        json.ends_with(
            r#","ui":{"click":"prev","focus":"b","highlight":2,"busy_permille":500,"random_seed":7,"diff_with":"6.1+cluster","diff_text":"schedstat"}}"#
        ),
        "{json}"
    );
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    // One setting changed: only it travels.
    s.page = PageSettings {
        click: ClickMode::Waker,
        ..PageSettings::default()
    };
    assert!(wire_json(&s).ends_with(r#","ui":{"click":"waker"}}"#));
}

/// Issue 18 item 4: the domain diff's kernel and text travel; at their defaults
/// nothing is added, so preset links keep their length, and links written before
/// (v1, and v2 without the fields) open on the defaults.
#[test]
fn the_domain_diff_travels_and_old_links_open_on_its_defaults() {
    let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).unwrap();
    let before = encode(&s);
    s.page.diff_text = KernelText::Debugfs;
    s.page.diff_with = None;
    assert_eq!(encode(&s), before, "the defaults add nothing to the link");
    s.page.diff_with = Some(ps("6.6+cluster"));
    assert!(wire_json(&s).ends_with(r#","ui":{"diff_with":"6.6+cluster"}}"#));
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    s.page.diff_text = KernelText::Dmesg;
    assert!(wire_json(&s).ends_with(r#","ui":{"diff_with":"6.6+cluster","diff_text":"dmesg"}}"#));
    let back = decode(&encode(&s)).unwrap();
    assert_eq!(back.page.diff_with, Some(ps("6.6+cluster")));
    assert_eq!(back.page.diff_text, KernelText::Dmesg);
    assert_eq!(
        decode(&encode_v1(&s)),
        Ok(s.clone()),
        "a v1 link carries them too"
    );
    // A link written before these fields: the defaults.
    let old = with_json(r#"{"machine":"flat-16","patches":"6.8","ui":{"click":"waker"}}"#).unwrap();
    assert_eq!(old.page.diff_with, None);
    assert_eq!(old.page.diff_text, KernelText::Debugfs);
    for k in KernelText::ALL {
        assert_eq!(KernelText::from_name(k.name()), Some(k));
    }
    assert_eq!(KernelText::from_name("lscpu"), None);
}

#[test]
fn a_bad_domain_diff_is_named() {
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"diff_with":"6.99"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.starts_with("this link's page settings are not valid: its domain diff's kernel \"6.99\" is not valid"),
        "{err}"
    );
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"diff_text":"lscpu"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.starts_with("this link's field `ui.diff_text` must be one of `dmesg`")
            && err.ends_with(r#"found "lscpu""#),
        "{err}"
    );
}

#[test]
fn bad_page_settings_are_named() {
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"busy_permille":1001}}"#;
    assert_eq!(
        with_json(json).map(|_| ()).map_err(|e| e.to_string()),
        Err("this link's page settings are not valid: its busy share is 1001 per mille; at most 1000".into())
    );
    let json = r#"{"machine":"flat-16","patches":"6.8","ui":{"click":"nope"}}"#;
    let err = with_json(json).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.starts_with("this link's field `ui.click` must be one of `toggle-busy`"),
        "{err}"
    );
    assert!(err.ends_with(r#"found "nope""#), "{err}");
}

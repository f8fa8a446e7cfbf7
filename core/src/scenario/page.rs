//! The page's own settings that a link carries besides the scenario proper: what a
//! click in the drawing does, which side's decision the drawing shows, which domain
//! level is shaded, the "Randomise" inputs, and the Domains tab's "compare with"
//! (the other kernel and the text format of its diff). None of them changes a
//! decision or a number; they make a shared link open on the same screen the sender
//! saw (issue 18: "everything the user set travels in the link").

use serde::{Deserialize, Serialize};

use crate::patch::PatchSet;

/// What a click on a CPU in the drawing does while the wake-up tab is open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClickMode {
    /// Makes the CPU busy or idle.
    #[default]
    ToggleBusy,
    /// Makes it the waker's CPU.
    Waker,
    /// Makes it the wakee's prev CPU.
    Prev,
}

/// One of the two compared patch sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The page's patch set (also the domains').
    #[default]
    A,
    /// The compared one.
    B,
}

/// The kernel text a domain diff compares: how the kernel prints the domains
/// (`sched_domain::format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelText {
    /// `sched_domain_debug()`'s boot lines; no flags.
    Dmesg,
    /// `/sys/kernel/debug/sched/domains/cpuN/domainM/*`: every level's flags, so the
    /// default (6.6 and 6.6+cluster print the same dmesg lines on Kunpeng 920).
    #[default]
    Debugfs,
    /// `/proc/schedstat`'s domain lines.
    Schedstat,
}

impl KernelText {
    pub const ALL: [KernelText; 3] = [
        KernelText::Dmesg,
        KernelText::Debugfs,
        KernelText::Schedstat,
    ];

    /// The wire name (`debugfs`).
    pub fn name(self) -> &'static str {
        match self {
            KernelText::Dmesg => "dmesg",
            KernelText::Debugfs => "debugfs",
            KernelText::Schedstat => "schedstat",
        }
    }

    /// The wire name read back.
    pub fn from_name(name: &str) -> Option<KernelText> {
        KernelText::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The busy share "Randomise" starts from, per mille.
pub const DEFAULT_BUSY_PERMILLE: u32 = 750;

/// The page's settings ([module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSettings {
    pub click: ClickMode,
    /// Whose probes the drawing numbers, and whose utilisation it shades after a run.
    pub focus: Side,
    /// The index into the selected CPU's domains whose span the drawing shades. An
    /// index past the CPU's last level shades nothing (a machine or kernel change can
    /// leave one behind; it is not an error).
    pub highlight: Option<u8>,
    /// "Randomise": the busy share, per mille (0–1000) …
    pub busy_permille: u32,
    /// … and the seed of `random_busy()`.
    pub random_seed: u64,
    /// The Domains tab's diff: the kernel A's domains are compared with (`None`: the
    /// page's choice, B when it compares, else A with the cluster patch) …
    pub diff_with: Option<PatchSet>,
    /// … and the text compared.
    pub diff_text: KernelText,
}

impl Default for PageSettings {
    fn default() -> Self {
        PageSettings {
            click: ClickMode::ToggleBusy,
            focus: Side::A,
            highlight: None,
            busy_permille: DEFAULT_BUSY_PERMILLE,
            random_seed: 1,
            diff_with: None,
            diff_text: KernelText::Debugfs,
        }
    }
}

/// The wire form of [`PageSettings`]: every field at its default is left out, so a
/// link that changes none of them has no `ui` at all and reads as it always did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageSettingsV1 {
    #[serde(default, skip_serializing_if = "is_default")]
    pub click: ClickMode,
    #[serde(default, skip_serializing_if = "is_default")]
    pub focus: Side,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highlight: Option<u8>,
    #[serde(
        default = "default_permille",
        skip_serializing_if = "is_default_permille"
    )]
    pub busy_permille: u32,
    #[serde(default = "seed_one", skip_serializing_if = "is_seed_one")]
    pub random_seed: u64,
    /// A patch set in the `6.6+cluster` syntax (from session 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_with: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub diff_text: KernelText,
}

impl Default for PageSettingsV1 {
    fn default() -> Self {
        PageSettingsV1::from(&PageSettings::default())
    }
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn default_permille() -> u32 {
    DEFAULT_BUSY_PERMILLE
}

fn is_default_permille(v: &u32) -> bool {
    *v == DEFAULT_BUSY_PERMILLE
}

fn seed_one() -> u64 {
    1
}

fn is_seed_one(v: &u64) -> bool {
    *v == 1
}

impl From<&PageSettings> for PageSettingsV1 {
    fn from(p: &PageSettings) -> Self {
        PageSettingsV1 {
            click: p.click,
            focus: p.focus,
            highlight: p.highlight,
            busy_permille: p.busy_permille,
            random_seed: p.random_seed,
            diff_with: p.diff_with.map(|p| p.to_string()),
            diff_text: p.diff_text,
        }
    }
}

impl PageSettingsV1 {
    /// The typed settings, or why the busy share is out of range or the diff's kernel
    /// is not one.
    pub fn parse(&self) -> Result<PageSettings, String> {
        if self.busy_permille > 1000 {
            return Err(format!(
                "its busy share is {} per mille; at most 1000",
                self.busy_permille
            ));
        }
        let diff_with = self
            .diff_with
            .as_deref()
            .map(|t| {
                t.parse::<PatchSet>()
                    .map_err(|e| format!("its domain diff's kernel {t:?} is not valid: {e}"))
            })
            .transpose()?;
        Ok(PageSettings {
            click: self.click,
            focus: self.focus,
            highlight: self.highlight,
            busy_permille: self.busy_permille,
            random_seed: self.random_seed,
            diff_with,
            diff_text: self.diff_text,
        })
    }

    /// Nothing set: the wire form leaves `ui` out.
    pub fn is_default(&self) -> bool {
        *self == PageSettingsV1::default()
    }
}

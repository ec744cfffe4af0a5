//! A design's parameters: the typed values of the keys of its `[lock]` or
//! `[storage]` table, and the defaults a design declares for them.
//!
//! This layer knows nothing of TOML. A design declares its keys once, as
//! the fields of its config struct, each with its kind, bounds and typed
//! default ([`KeySpec`]); the scenario loader reads a table into [`Params`]
//! against them (file:line:col errors, defaults filled in); the registry
//! parses those into the design's config
//! ([`DesignConfig::from_params`](crate::design::DesignConfig::from_params)),
//! whose `Default` is the same declared defaults.
//!
//! ```
//! use std::time::Duration;
//! use fencesim::design::lease::{LeaseConfig, LEASE};
//! use fencesim::design::params::ParamValue;
//! use fencesim::design::DesignConfig;
//!
//! let params = LEASE
//!     .defaults()
//!     .with("ttl", ParamValue::Duration(Duration::from_secs(3)));
//! let config = LeaseConfig::from_params(&params);
//! assert_eq!(config.ttl, Duration::from_secs(3));
//! assert_eq!(config.first_token, LeaseConfig::default().first_token);
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::design::catalog::{show_duration, KeySpec};

/// A design's parameters, checked against its keys, with defaults filled in.
///
/// The typed getters panic when the key is missing or of another type: the
/// loader guarantees every declared key is present with its declared kind,
/// so that can only be a design asking for a key it did not declare.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(BTreeMap<String, ParamValue>);

/// One parameter's value, typed by its key's kind: a value loaded from a
/// scenario file, and a key's declared default ([`KeySpec::default`]),
/// which can be written in a `const` next to the design's code.
///
/// It displays as a scenario file would write it: `"10s"`, `true`, `1`,
/// `0.01`, `"global"`.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// From a duration key.
    Duration(Duration),
    /// From a bool key.
    Bool(bool),
    /// From an integer key.
    U64(u64),
    /// From a float key.
    F64(f64),
    /// From a choice or string key (borrowed when it is a declared default).
    Str(Cow<'static, str>),
}

impl ParamValue {
    /// A string value written in a `const`: a choice's or text key's
    /// declared default.
    pub const fn text(s: &'static str) -> ParamValue {
        ParamValue::Str(Cow::Borrowed(s))
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Duration(d) => write!(f, "\"{}\"", show_duration(*d)),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::U64(n) => write!(f, "{n}"),
            ParamValue::F64(x) => write!(f, "{x}"),
            ParamValue::Str(s) => quoted(f, s),
        }
    }
}

/// `s` as a basic string in a scenario file: in quotes, with `"`, `\` and
/// control characters escaped.
fn quoted(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{:04X}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

impl Params {
    /// Parameters from `(key, value)` pairs.
    pub fn new(values: impl IntoIterator<Item = (String, ParamValue)>) -> Params {
        Params(values.into_iter().collect())
    }

    /// The declared default of every key of `keys` that has one: what a
    /// table that sets nothing loads as.
    pub fn defaults(keys: &[KeySpec]) -> Params {
        let defaults = keys
            .iter()
            .filter_map(|key| Some((key.name.to_owned(), key.default.clone()?)));
        Params::new(defaults)
    }

    /// These parameters with `key` set to `value`.
    pub fn with(mut self, key: &str, value: ParamValue) -> Params {
        self.0.insert(key.to_owned(), value);
        self
    }

    /// The value of `key`, if the design has it.
    pub fn get(&self, key: &str) -> Option<&ParamValue> {
        self.0.get(key)
    }

    /// All parameters, ordered by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    fn expect(&self, key: &str, kind: &str) -> &ParamValue {
        match self.0.get(key) {
            Some(value) => value,
            None => panic!(
                "design parameter `{key}` ({kind}) is missing: is it among the design's keys? \
                 present: {:?}",
                self.0.keys().collect::<Vec<_>>()
            ),
        }
    }

    /// The duration `key`. Panics if it is missing or not a duration.
    pub fn duration(&self, key: &str) -> Duration {
        match self.expect(key, "duration") {
            ParamValue::Duration(d) => *d,
            other => panic!("design parameter `{key}` is {other:?}, not a duration"),
        }
    }

    /// The bool `key`. Panics if it is missing or not a bool.
    pub fn bool(&self, key: &str) -> bool {
        match self.expect(key, "bool") {
            ParamValue::Bool(b) => *b,
            other => panic!("design parameter `{key}` is {other:?}, not a bool"),
        }
    }

    /// The integer `key`. Panics if it is missing or not an integer.
    pub fn u64(&self, key: &str) -> u64 {
        match self.expect(key, "integer") {
            ParamValue::U64(n) => *n,
            other => panic!("design parameter `{key}` is {other:?}, not an integer"),
        }
    }

    /// The float `key`. Panics if it is missing or not a float.
    pub fn f64(&self, key: &str) -> f64 {
        match self.expect(key, "float") {
            ParamValue::F64(f) => *f,
            other => panic!("design parameter `{key}` is {other:?}, not a float"),
        }
    }

    /// The choice or string `key`. Panics if it is missing or not a string.
    pub fn str(&self, key: &str) -> &str {
        match self.expect(key, "choice") {
            ParamValue::Str(s) => s,
            other => panic!("design parameter `{key}` is {other:?}, not a choice"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_display_as_a_scenario_file_writes_them() {
        let shown = |v: ParamValue| v.to_string();
        assert_eq!(
            shown(ParamValue::Duration(Duration::from_millis(50))),
            "\"50ms\""
        );
        assert_eq!(shown(ParamValue::Bool(true)), "true");
        assert_eq!(shown(ParamValue::U64(5)), "5");
        assert_eq!(shown(ParamValue::F64(0.01)), "0.01");
        assert_eq!(shown(ParamValue::text("global")), "\"global\"");
        assert_eq!(
            shown(ParamValue::text("a \"b\" \\ \u{1b}")),
            r#""a \"b\" \\ \u001B""#
        );
    }

    #[test]
    fn with_overrides_one_default() {
        const KEYS: &[KeySpec] = &[KeySpec {
            name: "ttl",
            kind: crate::design::catalog::TTL,
            default: Some(ParamValue::Duration(Duration::from_secs(10))),
            doc: "",
        }];
        let params = Params::defaults(KEYS);
        assert_eq!(params.duration("ttl"), Duration::from_secs(10));
        let params = params.with("ttl", ParamValue::Duration(Duration::from_secs(2)));
        assert_eq!(params.duration("ttl"), Duration::from_secs(2));
    }
}

//! A design's configuration as a type: one struct whose fields are the keys
//! of its `[lock]` or `[storage]` table.
//!
//! [`design_config!`](crate::design_config) declares the struct: each field
//! is a key, named as the field, with its kind, bounds and default (a
//! [`Key`], typed like the field) and one line of documentation, written
//! once. The macro derives the catalog's [`KeySpec`]s, the parser from the
//! loaded [`Params`] and a `Default` of the declared defaults. The keys that
//! several designs share (`ttl`, `tokens`, `first_token`, `durable`,
//! `stonith`, …) are declared once, in [`key`].
//!
//! ```
//! use std::time::Duration;
//! use fencesim::design::config::{key, DesignConfig};
//!
//! fencesim::design_config! {
//!     /// Settings of a TTL lock.
//!     #[derive(Clone, Debug, PartialEq)]
//!     pub struct TtlConfig {
//!         ttl: Duration = key::ttl(), "how long a grant lasts on the lock's clock";
//!         tokens: bool = key::tokens(true), "hand out fencing tokens with each grant";
//!         stonith: bool = key::STONITH;
//!     }
//! }
//!
//! assert_eq!(TtlConfig::default().ttl, Duration::from_secs(10));
//! let names: Vec<_> = TtlConfig::KEYS.iter().map(|k| k.name).collect();
//! assert_eq!(names, ["ttl", "tokens", "stonith"]);
//! assert!(TtlConfig::KEYS[2].doc.contains("STONITH"));
//! ```

use std::fmt::Debug;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::time::Duration;

use crate::design::catalog::{KeyKind, KeySpec};
use crate::design::params::{ParamValue, Params};

/// A design's typed configuration: what a [`LockDesign`](crate::design::LockDesign)
/// or [`StorageDesign`](crate::design::StorageDesign) is handed, parsed once
/// from the loaded table. Declare one with
/// [`design_config!`](crate::design_config).
pub trait DesignConfig: Clone + Debug + Send + Sync + 'static {
    /// The keys of the design's table, in documentation order: what the
    /// loader checks a table against and `fencesim designs` prints.
    const KEYS: &'static [KeySpec];

    /// The configuration a loaded table describes: every key of
    /// [`DesignConfig::KEYS`], defaults filled in.
    ///
    /// # Panics
    /// If a key is missing or of another kind: the loader hands over every
    /// declared key with a value of its kind.
    fn from_params(params: &Params) -> Self;
}

/// No keys at all.
impl DesignConfig for () {
    const KEYS: &'static [KeySpec] = &[];
    fn from_params(_: &Params) -> Self {}
}

/// The table as loaded, untyped: for a design that takes the keys of
/// another's [`DesignInfo`](crate::design::catalog::DesignInfo) and reads
/// them itself. Its own key list is empty; the design's `info()` names them.
impl DesignConfig for Params {
    const KEYS: &'static [KeySpec] = &[];
    fn from_params(params: &Params) -> Self {
        params.clone()
    }
}

/// A type a config field can have: how to read it from a loaded value.
pub trait Param: Sized {
    /// The kind's name in a panic message.
    const KIND: &'static str;
    /// The value as `Self`, if it is of this kind.
    fn from_value(value: &ParamValue) -> Option<Self>;

    /// The value of `key` in `params`.
    ///
    /// # Panics
    /// If it is missing or of another kind (a design that reads a key it
    /// did not declare).
    fn read(params: &Params, key: &str) -> Self {
        let value = params.get(key).unwrap_or_else(|| {
            panic!(
                "design parameter `{key}` ({}) is missing: is it among the design's keys? \
                 present: {:?}",
                Self::KIND,
                params.iter().map(|(k, _)| k).collect::<Vec<_>>()
            )
        });
        Self::from_value(value).unwrap_or_else(|| {
            panic!(
                "design parameter `{key}` is {value:?}, not a {}",
                Self::KIND
            )
        })
    }
}

impl Param for Duration {
    const KIND: &'static str = "duration";
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Duration(d) => Some(*d),
            _ => None,
        }
    }
}

impl Param for bool {
    const KIND: &'static str = "bool";
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl Param for u64 {
    const KIND: &'static str = "integer";
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::U64(n) => Some(*n),
            _ => None,
        }
    }
}

impl Param for f64 {
    const KIND: &'static str = "float";
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::F64(x) => Some(*x),
            _ => None,
        }
    }
}

impl Param for String {
    const KIND: &'static str = "string";
    fn from_value(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }
}

/// A key's kind, bounds, default and (for a shared key) documentation,
/// typed by the config field it fills: its name is the field's. Made by
/// the functions of [`key`], or by a [`design_choice!`](crate::design_choice)
/// enum's `key`.
///
/// Keys are made in `const`s, and a `const fn` may not drop a value that
/// owns memory: the default is kept in a [`ManuallyDrop`] and handed on to
/// the [`KeySpec`] whole (a default is a borrowed string at most, so
/// nothing is leaked).
#[derive(Clone, Debug, PartialEq)]
pub struct Key<T> {
    kind: KeyKind,
    default: ManuallyDrop<Option<ParamValue>>,
    doc: Option<&'static str>,
    field: PhantomData<fn() -> T>,
}

impl<T: Param> Key<T> {
    /// A key of `kind` with this default (`None`: required). The default's
    /// kind is checked when the design is registered.
    pub const fn new(kind: KeyKind, default: Option<ParamValue>) -> Key<T> {
        Key {
            kind,
            default: ManuallyDrop::new(default),
            doc: None,
            field: PhantomData,
        }
    }

    /// This key, documented by `doc` wherever a design does not say more.
    pub const fn documented(self, doc: &'static str) -> Key<T> {
        let Key {
            kind,
            default,
            field,
            ..
        } = self;
        Key {
            kind,
            default,
            doc: Some(doc),
            field,
        }
    }

    /// The catalog entry of the field `name`, documented by `doc` or else
    /// by the key's own documentation.
    ///
    /// # Panics
    /// (At compile time, in a `const`.) If neither says what the key does.
    pub const fn spec(self, name: &'static str, doc: Option<&'static str>) -> KeySpec {
        let Key {
            kind,
            default,
            doc: own,
            field: _,
        } = self;
        let doc = match (doc, own) {
            (Some(doc), _) | (None, Some(doc)) => doc,
            (None, None) => panic!("a design key without documentation"),
        };
        KeySpec {
            name,
            kind,
            default: ManuallyDrop::into_inner(default),
            doc,
        }
    }
}

/// Keys by kind, and the keys several designs share, declared once.
pub mod key {
    use std::time::Duration;

    use super::Key;
    use crate::design::catalog::{
        self, KeyKind, ANY_DURATION, FIRST_TOKEN, MAX_DURATION, MIN_INTERVAL, TTL,
    };
    use crate::design::params::ParamValue;

    /// A duration of `kind` (see [`catalog::TTL`], [`catalog::INTERVAL`], …).
    pub const fn duration(kind: KeyKind, default: Duration) -> Key<Duration> {
        Key::new(kind, Some(ParamValue::Duration(default)))
    }

    /// `true` or `false`.
    pub const fn flag(default: bool) -> Key<bool> {
        Key::new(KeyKind::Bool, Some(ParamValue::Bool(default)))
    }

    /// An integer in `min..=max`.
    pub const fn integer(min: u64, max: u64, default: u64) -> Key<u64> {
        Key::new(KeyKind::U64 { min, max }, Some(ParamValue::U64(default)))
    }

    /// A float in `min..=max`.
    pub const fn float(min: f64, max: f64, default: f64) -> Key<f64> {
        Key::new(KeyKind::F64 { min, max }, Some(ParamValue::F64(default)))
    }

    /// Any string.
    pub const fn text(default: &'static str) -> Key<String> {
        Key::new(KeyKind::Text, Some(ParamValue::text(default)))
    }

    /// `ttl`: a lease, session or key TTL, ten seconds unless a design says
    /// otherwise.
    pub const fn ttl() -> Key<Duration> {
        duration(TTL, Duration::from_secs(10))
    }

    /// `tokens`: whether grants carry fencing tokens.
    pub const fn tokens(default: bool) -> Key<bool> {
        flag(default)
    }

    /// `first_token`: the token of the first grant, 1 by default.
    pub const fn first_token() -> Key<u64> {
        Key::new(FIRST_TOKEN, Some(ParamValue::U64(1)))
    }

    /// `durable`: whether what the design keeps survives a crash; it does
    /// by default.
    pub const fn durable() -> Key<bool> {
        flag(true)
    }

    /// `nodes`: how many lock nodes (`lock1` … `lockN`), 1 to 15.
    pub const fn nodes(default: u64) -> Key<u64> {
        integer(1, 15, default)
    }

    /// `heartbeat` (or `keepalive`): a client's period, shorter than `ttl`;
    /// `0s` (the default) for the design's own, which `zero` names.
    pub const fn heartbeat(zero: &'static str) -> Key<Duration> {
        duration(catalog::heartbeat(zero), Duration::ZERO)
    }

    /// A period or wait of at least [`MIN_INTERVAL`], shorter than the
    /// duration key `key` of the same table (checked when a scenario loads).
    pub const fn shorter_than(key: &'static str, default: Duration) -> Key<Duration> {
        let kind = KeyKind::DurationIn {
            min: MIN_INTERVAL,
            max: MAX_DURATION,
            zero: None,
            below: Some(key),
        };
        duration(kind, default)
    }

    /// `timeout`: how long to wait for answers, shorter than `ttl`; 50 ms.
    pub const fn timeout() -> Key<Duration> {
        shorter_than("ttl", Duration::from_millis(50))
    }

    /// `drift_factor`: clock drift allowed per unit of ttl, 0 to 0.5; 0.01.
    pub const fn drift_factor() -> Key<f64> {
        float(0.0, 0.5, 0.01)
    }

    /// `stonith`: power off a lapsed holder before the next grant
    /// ([`Grants::with_stonith`](crate::design::grants::Grants::with_stonith)).
    pub const STONITH: Key<bool> = flag(false)
        .documented("power off a holder whose lease ran out before granting to another (STONITH)");

    /// `stonith_restart`, beside [`STONITH`]: how long a powered-off node
    /// stays down
    /// ([`Grants::restarting_after`](crate::design::grants::Grants::restarting_after)).
    pub const STONITH_RESTART: Key<Duration> = duration(ANY_DURATION, Duration::ZERO).documented(
        "with stonith, restart the powered-off node after this long; 0s: it stays down",
    );
}

/// Declares a design's configuration struct: each field a key of its table,
/// `name: Type = key, "doc";` (the doc may be left out for a shared key
/// that has its own, such as [`key::STONITH`]). Implements
/// [`DesignConfig`] and `Default` (the declared defaults). See the
/// [module](crate::design::config) for an example.
#[macro_export]
macro_rules! design_config {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $field:ident : $ty:ty = $key:expr $(, $doc:literal)? ; )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                #[doc = $crate::__design_key_doc!($field $(, $doc)?)]
                pub $field: $ty,
            )*
        }

        impl $crate::design::config::DesignConfig for $name {
            const KEYS: &'static [$crate::design::catalog::KeySpec] = &[
                $(
                    $crate::design::config::Key::<$ty>::spec(
                        $key,
                        stringify!($field),
                        $crate::__design_key_doc!(@opt $($doc)?),
                    ),
                )*
            ];

            fn from_params(params: &$crate::design::params::Params) -> Self {
                $name {
                    $(
                        $field: <$ty as $crate::design::config::Param>::read(
                            params,
                            stringify!($field),
                        ),
                    )*
                }
            }
        }

        impl ::std::default::Default for $name {
            /// The declared defaults.
            fn default() -> Self {
                use $crate::design::config::DesignConfig as _;
                Self::from_params(&$crate::design::params::Params::defaults(Self::KEYS))
            }
        }
    };
}

/// The documentation of a field of [`design_config!`](crate::design_config).
#[doc(hidden)]
#[macro_export]
macro_rules! __design_key_doc {
    ($field:ident, $doc:literal) => {
        $doc
    };
    ($field:ident) => {
        concat!("The shared `", stringify!($field), "` key.")
    };
    (@opt $doc:literal) => {
        ::std::option::Option::Some($doc)
    };
    (@opt) => {
        ::std::option::Option::None
    };
}

/// Declares the enum of a choice key: each variant with the string a
/// scenario file writes for it. The enum gets `CHOICES`, `as_str` and a
/// `key(default)` for [`design_config!`](crate::design_config).
///
/// ```
/// fencesim::design_choice! {
///     /// How a client releases.
///     pub enum Release {
///         /// Delete the key only if it is still ours.
///         Compare = "compare",
///         /// A plain DEL.
///         Del = "del",
///     }
/// }
/// assert_eq!(Release::CHOICES, ["compare", "del"]);
/// assert_eq!(Release::Del.as_str(), "del");
/// ```
#[macro_export]
macro_rules! design_choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// What a scenario file may write, in declaration order.
            pub const CHOICES: &'static [&'static str] = &[$($text),*];

            /// As a scenario file writes it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )*
                }
            }

            /// The key choosing among these, `default` unless set.
            pub const fn key(default: Self) -> $crate::design::config::Key<Self> {
                $crate::design::config::Key::new(
                    $crate::design::catalog::KeyKind::Choice(Self::CHOICES),
                    Some($crate::design::params::ParamValue::text(default.as_str())),
                )
            }
        }

        impl $crate::design::config::Param for $name {
            const KIND: &'static str = "choice";
            fn from_value(value: &$crate::design::params::ParamValue) -> Option<Self> {
                match value {
                    $(
                        $crate::design::params::ParamValue::Str(s) if s == $text => {
                            Some($name::$variant)
                        }
                    )*
                    _ => None,
                }
            }
        }
    };
}

/// Declares a lock design, the unit struct the registry takes: its name,
/// one-line summary, configuration and the server and client it builds
/// from that configuration. It also declares the design's catalog entry as
/// a constant, for documentation and tests. `server` and `client` give
/// boxed actors, as [`LockDesign`](crate::design::LockDesign)'s methods do.
///
/// The configuration is declared inline, its fields as in
/// [`design_config!`] (the struct derives `Clone`, `Debug` and
/// `PartialEq`; more derives may be added above it), or named, as
/// `struct MyLock(MyConfig)`, when a `design_config!` elsewhere declares it.
/// `node = "apiserver";` before `server` names the design's node, which
/// is `lock` otherwise ([`DesignInfo::on_node`](crate::design::catalog::DesignInfo::on_node)).
/// A design that checks its settings beyond their keys' bounds, or whose
/// server needs more than its configuration and index, implements
/// [`LockDesign`](crate::design::LockDesign) by hand instead.
///
/// ```
/// use std::time::Duration;
/// use fencesim::design::config::key;
/// use fencesim::design::lock_client::SingleServer;
///
/// # use fencesim::{protocol::Msg, sim::{Actor, Context, NodeId}};
/// # struct MyServer(Duration);
/// # impl Actor<Msg> for MyServer {
/// #     fn on_message(&mut self, _: &mut Context<'_, Msg>, _: NodeId, _: Msg) {}
/// # }
/// fencesim::lock_design! {
///     pub struct MyLock as MY_LOCK = "my_lock", "a TTL lease of my own";
///     pub struct MyConfig {
///         ttl: Duration = key::ttl(), "how long a grant lasts";
///     }
///     server(config, _index) => Box::new(MyServer(config.ttl));
///     client(_config, lock_nodes) => Box::new(SingleServer::new(lock_nodes[0].clone()));
/// }
///
/// assert_eq!(MY_LOCK.name, "my_lock");
/// assert_eq!(MY_LOCK.keys[0].name, "ttl");
/// assert_eq!(MyConfig::default().ttl, Duration::from_secs(10));
/// let mut registry = fencesim::design::catalog::Registry::builtin();
/// registry.add_lock(MyLock);
/// ```
#[macro_export]
macro_rules! lock_design {
    // The configuration declared inline: a `design_config!` struct deriving
    // `Clone, Debug, PartialEq`, documented from the design's name, and the
    // design's own struct documented from its summary.
    (
        $vis:vis struct $name:ident as $info:ident = $design:literal, $summary:literal;
        $(#[$cmeta:meta])*
        $cvis:vis struct $config:ident {
            $( $field:ident : $ty:ty = $key:expr $(, $doc:literal)? ; )*
        }
        $(node = $node:literal;)?
        server($sc:pat, $index:pat) => $server:expr;
        client($cc:pat, $nodes:pat) => $client:expr;
    ) => {
        $crate::design_config! {
            #[doc = concat!("Settings of the `", $design, "` design: the keys of its table.")]
            #[derive(Clone, Debug, PartialEq)]
            $(#[$cmeta])*
            $cvis struct $config {
                $( $field : $ty = $key $(, $doc)? ; )*
            }
        }

        $crate::lock_design! {
            #[doc = concat!("The `", $design, "` design: ", $summary, ".")]
            $vis struct $name($config) as $info = $design, $summary;
            $(node = $node;)?
            server($sc, $index) => $server;
            client($cc, $nodes) => $client;
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident ($config:ty) as $info:ident = $design:literal, $summary:literal;
        $(node = $node:literal;)?
        server($sc:pat, $index:pat) => $server:expr;
        client($cc:pat, $nodes:pat) => $client:expr;
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default)]
        $vis struct $name;

        #[doc = concat!("The `", $design, "` design's catalog entry: ", $summary, ".")]
        $vis const $info: $crate::design::catalog::DesignInfo =
            $crate::design::catalog::DesignInfo::lock(
                $design,
                $summary,
                <$config as $crate::design::config::DesignConfig>::KEYS,
            )$(.on_node($node))?;

        impl $crate::design::LockDesign for $name {
            type Config = $config;

            fn info(&self) -> $crate::design::catalog::DesignInfo {
                $info
            }

            fn server(
                &self,
                $sc: &$config,
                $index: usize,
            ) -> ::std::boxed::Box<dyn $crate::sim::Actor<$crate::protocol::Msg>> {
                $server
            }

            fn client(
                &self,
                $cc: &$config,
                $nodes: &[::std::string::String],
            ) -> ::std::boxed::Box<dyn $crate::design::lock_client::AnyLockClient> {
                $client
            }
        }
    };
}

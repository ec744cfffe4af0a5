//! [`Name`]: the cheap-to-clone string of a journal's node names, event
//! kinds and field names.

use std::fmt;
use std::sync::Arc;

/// A node name, event kind or field name: a string that a journal repeats
/// in thousands of events, so cloning it must not copy it.
///
/// A `Name` is either a `&'static str` (the world's constant kinds and
/// field names in [`crate::events`], and every field name written in a
/// handler's `emit!`) or an `Arc<str>` shared by every event that repeats
/// it (a node name: one per node, kept by the world; a design's event kind:
/// one per kind, kept by the thread's capture layer). It reads as a `&str`:
/// it derefs to one, compares with `&str` and `String`, orders and hashes
/// as its text, and prints as its text (`{:?}` as a quoted string). Which
/// of the two it is never shows.
///
/// ```
/// use sim::journal::Name;
/// let kind = Name::from_static("granted");
/// let node = Name::from("lock".to_owned());
/// assert_eq!(kind, "granted");
/// assert!(node == "lock" && node.starts_with("lo"));
/// assert_eq!(format!("{node}/{kind:?}"), "lock/\"granted\"");
/// ```
#[derive(Clone)]
pub struct Name(NameRepr);

#[derive(Clone)]
enum NameRepr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Name {
    /// A name for a constant string: no allocation, ever.
    pub const fn from_static(s: &'static str) -> Name {
        Name(NameRepr::Static(s))
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            NameRepr::Static(s) => s,
            NameRepr::Shared(s) => s,
        }
    }

    /// Whether both are the same copy of the text (not only equal text):
    /// the cheap first test of equality.
    #[inline]
    fn same_copy(&self, other: &str) -> bool {
        let s = self.as_str();
        std::ptr::eq(s.as_ptr(), other.as_ptr()) && s.len() == other.len()
    }
}

impl Default for Name {
    fn default() -> Self {
        Name::from_static("")
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Self {
        Name(NameRepr::Shared(Arc::from(s)))
    }
}

impl From<&String> for Name {
    fn from(s: &String) -> Self {
        Name::from(s.as_str())
    }
}

impl From<String> for Name {
    fn from(s: String) -> Self {
        Name(NameRepr::Shared(Arc::from(s)))
    }
}

impl From<Arc<str>> for Name {
    fn from(s: Arc<str>) -> Self {
        Name(NameRepr::Shared(s))
    }
}

impl From<&Name> for Name {
    fn from(s: &Name) -> Self {
        s.clone()
    }
}

impl From<Name> for String {
    fn from(s: Name) -> Self {
        s.as_str().to_owned()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.same_copy(other.as_str()) || self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Name {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.same_copy(other) || self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self == *other.as_str()
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        *other == *self
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *other == **self
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        *other == *self.as_str()
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

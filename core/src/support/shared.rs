//! Strings that are slices of a session's text as it was read. A resumed context is
//! mostly the file itself (tool output, message blocks): sharing the file's text
//! instead of copying every message out of it halves the memory a resume needs and
//! the bytes it moves.

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;
use core::ops::{Deref, Range};

/// A string: a range of a shared source text, or a string of its own.
#[derive(Clone, Default)]
pub struct SharedStr {
    /// The string when it is no slice (then empty).
    own: String,
    slice: Option<(Arc<String>, Range<usize>)>,
}

impl SharedStr {
    /// `part` as a slice of `source` when it lies inside it (it was borrowed from it),
    /// else a copy.
    pub(crate) fn slice(source: &Arc<String>, part: &str) -> Self {
        let start = (part.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
        let range = start..start.wrapping_add(part.len());
        if source.get(range.clone()).is_some() {
            Self { own: String::new(), slice: Some((Arc::clone(source), range)) }
        } else {
            Self::from(part)
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.slice {
            None => &self.own,
            Some((source, range)) => source.get(range.clone()).unwrap_or_default(),
        }
    }

    /// The string to change in place (a slice is copied out first).
    pub fn to_mut(&mut self) -> &mut String {
        if let Some((source, range)) = self.slice.take() {
            self.own = source.get(range).unwrap_or_default().into();
        }
        &mut self.own
    }

    /// How many bytes of a shared source this string is (`None`: it is its own).
    pub(crate) fn shared_bytes(&self) -> Option<usize> {
        self.slice.as_ref().map(|(_, range)| range.len())
    }

    /// Copies a slice out, so the source it came from can be freed.
    pub(crate) fn detach(&mut self) {
        self.to_mut();
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self { own: text, slice: None }
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        Self::from(String::from(text))
    }
}

impl From<SharedStr> for String {
    fn from(mut shared: SharedStr) -> Self {
        core::mem::take(shared.to_mut())
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for SharedStr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_of_the_source_is_shared_anything_else_copied() {
        let source = Arc::new(String::from("{\"text\":\"hello\"}"));
        let inside = SharedStr::slice(&source, &source[9..14]);
        assert_eq!((inside.as_str(), inside.shared_bytes()), ("hello", Some(5)));
        let elsewhere = String::from("hello");
        let copied = SharedStr::slice(&source, &elsewhere);
        assert_eq!((copied.as_str(), copied.shared_bytes()), ("hello", None));
        let mut changed = inside.clone();
        changed.to_mut().push('!');
        assert_eq!((changed.as_str(), changed.shared_bytes(), inside.as_str()), ("hello!", None, "hello"));
    }
}

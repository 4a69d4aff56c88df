//! A lookup of short names (program keys, list entries) asked for nearly every word of a
//! command: most words are no name of the table, and are turned away by their first byte and
//! length alone; the rest are compared with the few names of the same first byte. The
//! tables stay where they are (Rust constants, `assets/*.txt`); this is only how they are
//! looked up.

/// Names and their values, by first byte and length.
#[derive(Debug)]
pub(in crate::policy) struct NameTable<'n, V> {
    /// For each first byte, the lengths of the names starting with it (bit `n`: a name of `n`
    /// bytes; bit 63: 63 bytes or more).
    lengths: [u64; 256],
    /// The names sorted by first byte (otherwise in the order given), with their values.
    names: Vec<(&'n str, V)>,
    /// For each first byte `b`, its names are `names[starts[b]..starts[b + 1]]`.
    starts: [usize; 257],
    /// The value of the empty name, if the table has it.
    empty: Option<V>,
}

/// The bit of a length in [`NameTable::lengths`].
fn length_bit(length: usize) -> u64 {
    1 << length.min(63)
}

impl<'n, V: Copy> NameTable<'n, V> {
    /// The table of `entries`; a name given again merges its value into the first one's
    /// (`merge(first, again)`).
    pub(in crate::policy) fn new(
        entries: impl IntoIterator<Item = (&'n str, V)>,
        merge: impl Fn(&mut V, V),
    ) -> Self {
        let mut names: Vec<(&'n str, V)> = Vec::new();
        let mut empty: Option<V> = None;
        for (name, value) in entries {
            if name.is_empty() {
                match &mut empty {
                    Some(first) => merge(first, value),
                    None => empty = Some(value),
                }
            } else if let Some((_, first)) = names.iter_mut().find(|(known, _)| *known == name) {
                merge(first, value);
            } else {
                names.push((name, value));
            }
        }
        // Stable: names of one first byte keep their order.
        names.sort_by_key(|(name, _)| name.as_bytes()[0]);
        let mut lengths = [0u64; 256];
        let mut starts = [0usize; 257];
        for (name, _) in &names {
            let first = usize::from(name.as_bytes()[0]);
            lengths[first] |= length_bit(name.len());
            starts[first + 1] += 1;
        }
        for at in 1..starts.len() {
            starts[at] += starts[at - 1];
        }
        NameTable {
            lengths,
            names,
            starts,
            empty,
        }
    }

    /// The value of `name`, if the table has it.
    pub(in crate::policy) fn get(&self, name: &str) -> Option<V> {
        let bytes = name.as_bytes();
        let Some(&first) = bytes.first() else {
            return self.empty;
        };
        let first = usize::from(first);
        if self.lengths[first] & length_bit(bytes.len()) == 0 {
            return None;
        }
        self.names[self.starts[first]..self.starts[first + 1]]
            .iter()
            .find(|(known, _)| known.as_bytes() == bytes)
            .map(|(_, value)| *value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A name's value is the first entry's of that name with the later ones merged in,
        /// as a search of the entries in order finds it, for generated names and words (short
        /// and long, empty, non-ASCII, sharing first bytes and lengths).
        #[test]
        fn lookups_find_what_a_search_finds(
            entries in prop::collection::vec(("[ab\u{e9}-]{0,3}|[a-z]{60,66}", 0..8u32), 0..20),
            words in prop::collection::vec("[ab\u{e9}-]{0,3}|[a-z]{60,66}", 0..20),
        ) {
            let table = NameTable::new(
                entries.iter().map(|(name, value)| (name.as_str(), 1u32 << value)),
                |first, again| *first |= again,
            );
            let reference = |word: &str| {
                entries
                    .iter()
                    .filter(|(name, _)| name == word)
                    .map(|(_, value)| 1u32 << value)
                    .reduce(|first, again| first | again)
            };
            for word in words.iter().chain(entries.iter().map(|(name, _)| name)) {
                prop_assert_eq!(table.get(word), reference(word), "{:?}", word);
            }
        }
    }

    #[test]
    fn names_are_told_apart() {
        let table = NameTable::new([("rm", 1), ("rmdir", 2), ("rm", 4), ("", 8)], |a, b| *a |= b);
        assert_eq!(table.get("rm"), Some(5));
        assert_eq!(table.get("rmdir"), Some(2));
        assert_eq!(table.get(""), Some(8));
        assert_eq!(table.get("rd"), None);
        assert_eq!(table.get("r"), None);
        assert_eq!(table.get("mr"), None);
    }
}

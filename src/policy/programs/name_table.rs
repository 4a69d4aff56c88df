//! A lookup of short names (program keys, list entries) asked for nearly every word of a
//! command: most words are no name of the table, and are turned away by their first byte and
//! length alone; the rest are found by a hash of their bytes (an open-addressed table, one
//! comparison of the text for a name that is there). The tables stay where they are (Rust
//! constants, `assets/*.txt`); this is only how they are looked up.

/// Names and their values.
#[derive(Debug)]
pub(in crate::policy) struct NameTable<'n, V> {
    /// For each first byte, the lengths of the names starting with it (bit `n`: a name of `n`
    /// bytes; bit 63: 63 bytes or more).
    lengths: [u64; 256],
    /// The names, each once, with their values.
    names: Vec<(&'n str, V)>,
    /// Open addressing by [`hash`]: each slot is empty (`None`) or holds a name's hash and
    /// where it is in `names`. At least twice as many slots as names, a power of two.
    slots: Vec<Option<(u64, usize)>>,
    /// The value of the empty name, if the table has it.
    empty: Option<V>,
}

/// The bit of a length in [`NameTable::lengths`].
fn length_bit(length: usize) -> u64 {
    1 << length.min(63)
}

/// A hash of a name's bytes (FxHash's step: rotate, mix in the byte, multiply).
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |hash, &byte| {
        (hash.rotate_left(5) ^ u64::from(byte)).wrapping_mul(0x517c_c1b7_2722_0a95)
    })
}

impl<'n, V: Copy> NameTable<'n, V> {
    /// The table of `entries`; a name given again merges its value into the first one's
    /// (`merge(first, again)`).
    pub(in crate::policy) fn new(
        entries: impl IntoIterator<Item = (&'n str, V)>,
        merge: impl Fn(&mut V, V),
    ) -> Self {
        let mut table = NameTable {
            lengths: [0; 256],
            names: Vec::new(),
            slots: Vec::new(),
            empty: None,
        };
        let entries: Vec<(&'n str, V)> = entries.into_iter().collect();
        table.slots = vec![None; (entries.len() * 2).next_power_of_two().max(8)];
        let mask = table.slots.len() - 1;
        for (name, value) in entries {
            let Some(&first) = name.as_bytes().first() else {
                match &mut table.empty {
                    Some(known) => merge(known, value),
                    None => table.empty = Some(value),
                }
                continue;
            };
            let hash = hash(name.as_bytes());
            // The bits of a `u64` hash taken modulo the slot count (a power of two).
            #[allow(clippy::cast_possible_truncation)]
            let mut slot = hash as usize & mask;
            loop {
                match table.slots[slot] {
                    Some((known, at)) if known == hash && table.names[at].0 == name => {
                        merge(&mut table.names[at].1, value);
                        break;
                    }
                    Some(_) => slot = (slot + 1) & mask,
                    None => {
                        table.slots[slot] = Some((hash, table.names.len()));
                        table.names.push((name, value));
                        table.lengths[usize::from(first)] |= length_bit(name.len());
                        break;
                    }
                }
            }
        }
        table
    }

    /// The value of `name`, if the table has it.
    #[inline]
    pub(in crate::policy) fn get(&self, name: &str) -> Option<V> {
        let bytes = name.as_bytes();
        let Some(&first) = bytes.first() else {
            return self.empty;
        };
        if self.lengths[usize::from(first)] & length_bit(bytes.len()) == 0 {
            return None;
        }
        let hash = hash(bytes);
        let mask = self.slots.len() - 1;
        #[allow(clippy::cast_possible_truncation)]
        let mut slot = hash as usize & mask;
        while let Some((known, at)) = self.slots[slot] {
            let (text, value) = self.names[at];
            if known == hash && text.as_bytes() == bytes {
                return Some(value);
            }
            slot = (slot + 1) & mask;
        }
        None
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
            entries in prop::collection::vec(("[ab\u{e9}-]{0,3}|[a-z]{60,66}", 0..8u32), 0..40),
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
        let table = NameTable::new([("rm", 1), ("rmdir", 2), ("rm", 4), ("", 8)], |a, b| {
            *a |= b;
        });
        assert_eq!(table.get("rm"), Some(5));
        assert_eq!(table.get("rmdir"), Some(2));
        assert_eq!(table.get(""), Some(8));
        assert_eq!(table.get("rd"), None);
        assert_eq!(table.get("r"), None);
        assert_eq!(table.get("mr"), None);
        let first = NameTable::new([("a", 1), ("a", 2)], |_, _| {});
        assert_eq!(first.get("a"), Some(1), "the first entry's value stays");
    }
}

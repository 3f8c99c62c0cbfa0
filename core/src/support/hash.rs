//! Hash maps for lookups by id over a whole transcript, where an ordered map's string
//! comparisons cost more than reading the file. Seeded with a constant: the core has no
//! randomness, and nothing iterates these in hash order where order shows.

pub(crate) type FastMap<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

pub(crate) type FastSet<K> = hashbrown::HashSet<K, foldhash::fast::FixedState>;

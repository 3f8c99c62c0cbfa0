//! The recall index: BM25 over a memory's words, then three expansions that let a
//! memory be found through its neighbours when it does not share the query's words —
//! the memories next to it in the session it came from, the other memories of that
//! session (by how well the session as a whole matches: BM25 over it as one text), and
//! the memories it links to or that link to it. Topics the query names weigh a memory
//! up, and so does a user's own message in a session search. Superseded and archived
//! memories are kept in the index and left out of results unless asked for.
//!
//! With an embedding table ([`RecallIndex::embed_with`]) recall is hybrid: each memory
//! also has the vector of its terms, and a memory close to the query's vector scores a
//! share of the best lexical score, so it is found without a word in common.
//!
//! A host's embedder ([`RecallIndex::set_vector`]) gives memories vectors of its own
//! model, and a query its vector ([`Query::near`]); then those rank by meaning, by the
//! same rule, in place of the table's. A memory written again loses its vector until
//! the host gives it one of the new text.
//!
//! Incremental: [`RecallIndex::insert`] adds or replaces one memory without touching the
//! others. Scores are `f32` arithmetic and `libm`'s logarithm, the same on every host.

pub mod embed;
pub mod text;

use alloc::collections::{BTreeMap, BinaryHeap};
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use embed::Embeddings;

/// BM25's term-frequency saturation and length normalisation (Lucene's defaults).
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// A memory whose topic the query names scores this much more.
const TOPIC_BOOST: f32 = 0.5;
/// Share of a memory's own score passed to its neighbours in the session it came from,
/// by distance (1 and 2 places away): conversations answer the turn before. Not
/// between the messages of a chat with an assistant (a session search's), whose answers
/// repeat the question's words and are found by them: there the shares pushed what the
/// user said out of the first ten (LongMemEval_S's development quarter, turn R@10
/// 94.1 → 90.8), where on LoCoMo's turns between two people they are worth six points
/// (R@10 69.1 → 75.4).
const NEIGHBOUR_SHARE: [f32; 2] = [0.3, 0.1];
/// Share of the best own score given to every memory of the session that matches the
/// query best as a whole (BM25 over the session as one text), and to the others' by
/// their session's score against it. A session found by meaning alone (an embedding
/// table, a host's vectors) and by no word has no such score, and gets no share.
/// Measured on LongMemEval_S's development quarter (`cargo xtask bench-recall`): with
/// the session read whole, session R@5 96.6 → 98.3, where a share of the best message
/// in each session had found no more than messages alone; 0.3 to 0.5 give the same.
const SESSION_SHARE: f32 = 0.3;
/// A user's own message counts this many times its words: what users remember and ask
/// about is what they said (their plans, tastes, purchases), and an assistant's long
/// answers share many of a question's words without holding its answer. On
/// LongMemEval_S's development quarter (no neighbour shares), turn R@10 89.9 at 1 → 94.1
/// at 2 (91.6 at 1.3, 95.0 at 3; questions about what the assistant said were all still
/// found at 4). 2 is where it stopped rising steeply, not the development quarter's best:
/// what is tuned to its questions does not carry to others.
const USER_WEIGHT: f32 = 2.0;
/// Share of a memory's score passed along its links, both ways.
const LINK_SHARE: f32 = 0.3;
/// How many of the best-scoring memories pass shares on, at least.
const SPREADING_GIVERS: usize = 200;
/// With an embedding table: a memory's similarity to the query (cosine, 0 to 1) times
/// this share of the best lexical score is added to its own score.
const DENSE_SHARE: f32 = 0.2;
/// Similarities below this are noise between averaged word vectors: they add nothing.
const DENSE_FLOOR: f32 = 0.3;
/// How many of the memories nearest the query may gain from the table. Few: on LoCoMo
/// (`cargo xtask bench-recall`) more of them, or a larger share, push out what words
/// found better.
const DENSE_CANDIDATES: usize = 10;

/// What the index needs to know about one memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    /// The memory's file stem, unique in its scope.
    pub key: String,
    /// Everything searchable, already run through [`text::terms`].
    pub terms: Vec<String>,
    pub topics: Vec<String>,
    /// The session it came from; memories of one session are read as a conversation.
    pub session: Option<String>,
    /// When it happened (milliseconds since the epoch); orders a session and breaks ties.
    pub time_ms: i64,
    /// Keys of the memories it links to.
    pub links: Vec<String>,
    /// False once superseded or archived: kept, but out of default results.
    pub current: bool,
    /// Who wrote it, for a message of a chat with an assistant (a session search's);
    /// none for a memory.
    pub role: Option<Role>,
}

/// Whose words a message of a chat with an assistant holds. Either way it lends its
/// neighbours nothing (see [`NEIGHBOUR_SHARE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user's own: weighed up by [`USER_WEIGHT`].
    User,
    /// Anything else: the assistant's, a compaction's summary, a client's meta text.
    Other,
}

/// One result of [`RecallIndex::recall`].
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub key: String,
    pub score: f32,
    /// The document itself matches the query (its words, or its meaning through an
    /// embedding table); false when only the conversation around it did (a
    /// neighbouring turn, its session, a link).
    pub matched: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct Query<'a> {
    pub text: &'a str,
    pub limit: usize,
    /// Include superseded and archived memories.
    pub all: bool,
    /// Only documents whose time is in it.
    pub window: Window,
    /// Only documents whose key starts with it (a session search's project).
    pub under: Option<&'a str>,
    /// The query's vector from the host's embedder, of unit length: the documents'
    /// vectors from [`RecallIndex::set_vector`] rank by it.
    pub near: Option<&'a [f32]>,
}

impl<'a> Query<'a> {
    /// The `limit` best current documents for `text`, at any time, under any key.
    pub fn new(text: &'a str, limit: usize) -> Self {
        Query { text, limit, all: false, window: Window::default(), under: None, near: None }
    }

    /// Whether `slot` may be a result. One that may not scores nothing, so it lifts no
    /// neighbour and takes no place among the nearest by meaning either.
    fn admits(&self, slot: &Slot) -> bool {
        !slot.removed
            && (self.all || slot.current)
            && self.window.contains(slot.time_ms)
            && self.under.is_none_or(|prefix| slot.key.starts_with(prefix))
    }
}

/// The span of time a search's messages or a recall's memories must fall in: from
/// `since_ms` (included) to `until_ms` (left out), either end open. A message's time
/// is its timestamp (one without counts as 1970); a memory's is when it holds from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    #[serde(default)]
    pub since_ms: Option<i64>,
    #[serde(default)]
    pub until_ms: Option<i64>,
}

impl Window {
    pub fn contains(&self, time_ms: i64) -> bool {
        self.since_ms.is_none_or(|since| time_ms >= since) && self.until_ms.is_none_or(|until| time_ms < until)
    }
}

#[derive(Clone, Debug)]
struct Slot {
    key: String,
    /// (term id, count) for each distinct term.
    terms: Vec<(u32, u32)>,
    len: u32,
    topics: Vec<u32>,
    session: Option<u32>,
    time_ms: i64,
    links: Vec<String>,
    current: bool,
    role: Option<Role>,
    removed: bool,
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    slot: u32,
    count: u32,
}

/// The index. Slots are never reused: a replaced memory's slot is marked removed and
/// skipped, and [`RecallIndex::garbage`] says when rebuilding would pay.
#[derive(Clone, Debug, Default)]
pub struct RecallIndex {
    term_ids: BTreeMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    /// Live documents containing each term.
    document_frequency: Vec<u32>,
    slots: Vec<Slot>,
    by_key: BTreeMap<String, u32>,
    /// Slots of each session, in (time, insertion) order.
    sessions: Vec<Vec<u32>>,
    /// Each session's terms (its live memories' together), sessions with a live
    /// memory, and their terms together: a session read as one text.
    session_len: Vec<u64>,
    live_sessions: u32,
    live_session_terms: u64,
    session_ids: BTreeMap<String, u32>,
    /// Slots that link to a key.
    backlinks: BTreeMap<String, Vec<u32>>,
    live: u32,
    live_terms: u64,
    /// The table memories are embedded with, and each term's row in it.
    embeddings: Option<Rc<Embeddings>>,
    term_rows: Vec<Option<u32>>,
    /// One unit vector (or zeros) per slot, in slot order, when there is a table.
    vectors: Vec<f32>,
    /// Vectors a host's embedder gave, of unit length, by key.
    host_vectors: BTreeMap<String, Vec<f32>>,
}

impl RecallIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many memories the index holds (current or not).
    pub fn len(&self) -> usize {
        self.live as usize
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Slots held by replaced or removed memories.
    pub fn garbage(&self) -> usize {
        self.slots.len() - self.live as usize
    }

    pub fn contains(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// Adds a memory, replacing the one with the same key (its host vector stays:
    /// whoever inserts says when the text changed, with [`RecallIndex::drop_vector`]).
    pub fn insert(&mut self, document: Document) {
        self.unslot(&document.key);
        let slot_id = self.slots.len() as u32;
        let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
        for term in &document.terms {
            *counts.entry(self.term_id(term)).or_default() += 1;
        }
        for (&term, &count) in &counts {
            if let Some(postings) = self.postings.get_mut(term as usize) {
                postings.push(Posting { slot: slot_id, count });
            }
            if let Some(df) = self.document_frequency.get_mut(term as usize) {
                *df += 1;
            }
        }
        let mut topics = Vec::new();
        for topic in &document.topics {
            text::for_each_term(topic, |term| topics.push(self.term_id(term)));
        }
        topics.sort_unstable();
        topics.dedup();
        let session = document.session.as_ref().map(|name| self.session_id(name));
        for link in &document.links {
            self.backlinks.entry(link.clone()).or_default().push(slot_id);
        }
        let len = document.terms.len() as u32;
        self.slots.push(Slot {
            key: document.key.clone(),
            terms: counts.into_iter().collect(),
            len,
            topics,
            session,
            time_ms: document.time_ms,
            links: document.links,
            current: document.current,
            role: document.role,
            removed: false,
        });
        if let Some(session) = session
            && let Some(members) = self.sessions.get_mut(session as usize)
        {
            let slots = &self.slots;
            let at = members.partition_point(|&other| slots.get(other as usize).is_some_and(|s| s.time_ms <= document.time_ms));
            if members.is_empty() {
                self.live_sessions = self.live_sessions.saturating_add(1);
            }
            members.insert(at, slot_id);
            if let Some(total) = self.session_len.get_mut(session as usize) {
                *total = total.saturating_add(u64::from(len));
            }
            self.live_session_terms = self.live_session_terms.saturating_add(u64::from(len));
        }
        self.by_key.insert(document.key, slot_id);
        self.live += 1;
        self.live_terms += u64::from(len);
        // Embedded once it counts among the documents, so its terms' idf is never below 0.
        if self.embeddings.is_some() {
            let terms = self.slots.last().map(|slot| slot.terms.clone()).unwrap_or_default();
            self.push_vector(&terms);
        }
    }

    /// Takes a memory out, with its host vector; a key not in the index is ignored.
    pub fn remove(&mut self, key: &str) {
        self.unslot(key);
        self.host_vectors.remove(key);
    }

    fn unslot(&mut self, key: &str) {
        let Some(slot_id) = self.by_key.remove(key) else { return };
        let Some(slot) = self.slots.get_mut(slot_id as usize) else { return };
        slot.removed = true;
        for &(term, _) in &slot.terms {
            if let Some(df) = self.document_frequency.get_mut(term as usize) {
                *df = df.saturating_sub(1);
            }
        }
        if let Some(session) = slot.session
            && let Some(members) = self.sessions.get_mut(session as usize)
        {
            let held = members.len();
            members.retain(|&other| other != slot_id);
            if members.is_empty() && held > 0 {
                self.live_sessions = self.live_sessions.saturating_sub(1);
            }
            if let Some(total) = self.session_len.get_mut(session as usize) {
                *total = total.saturating_sub(u64::from(slot.len));
            }
            self.live_session_terms = self.live_session_terms.saturating_sub(u64::from(slot.len));
        }
        for link in &slot.links {
            if let Some(sources) = self.backlinks.get_mut(link) {
                sources.retain(|&other| other != slot_id);
            }
        }
        self.live = self.live.saturating_sub(1);
        self.live_terms = self.live_terms.saturating_sub(u64::from(slot.len));
    }

    /// Gives memory `key` its vector from the host's embedder; false (and nothing kept)
    /// for a key the index has not, or a vector of no length.
    pub fn set_vector(&mut self, key: &str, mut vector: Vec<f32>) -> bool {
        if !self.by_key.contains_key(key) || !embed::normalise(&mut vector) {
            return false;
        }
        self.host_vectors.insert(String::from(key), vector);
        true
    }

    /// Whether memory `key` has a vector from the host's embedder.
    pub fn has_vector(&self, key: &str) -> bool {
        self.host_vectors.contains_key(key)
    }

    /// How many values the host's vectors have (the first one's: one model gives them
    /// all one length).
    pub fn vector_dimensions(&self) -> Option<usize> {
        self.host_vectors.values().next().map(Vec::len)
    }

    /// Forgets memory `key`'s host vector: what it says changed.
    pub fn drop_vector(&mut self, key: &str) {
        self.host_vectors.remove(key);
    }

    /// Takes every host vector out (to give them to an index read again, or because
    /// the host's embedder changed model).
    pub fn take_vectors(&mut self) -> BTreeMap<String, Vec<f32>> {
        core::mem::take(&mut self.host_vectors)
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.term_ids.insert(String::from(term), id);
        self.postings.push(Vec::new());
        self.document_frequency.push(0);
        self.term_rows.push(self.embeddings.as_ref().and_then(|table| table.row(term)));
        id
    }

    /// Embeds every memory with `table` (none: recall is lexical only). The same table
    /// again costs nothing; memories inserted later are embedded as they come.
    pub fn embed_with(&mut self, table: Option<Rc<Embeddings>>) {
        let same = match (&self.embeddings, &table) {
            (Some(old), Some(new)) => Rc::ptr_eq(old, new),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        self.embeddings = table;
        self.term_rows = alloc::vec![None; self.postings.len()];
        if let Some(table) = &self.embeddings {
            for (term, &id) in &self.term_ids {
                if let Some(row) = self.term_rows.get_mut(id as usize) {
                    *row = table.row(term);
                }
            }
        }
        self.vectors = Vec::new();
        let slots = core::mem::take(&mut self.slots);
        for slot in &slots {
            self.push_vector(&slot.terms);
        }
        self.slots = slots;
    }

    /// Appends the vector of a memory with these (term, count) pairs, when embedding.
    fn push_vector(&mut self, terms: &[(u32, u32)]) {
        let Some(table) = self.embeddings.clone() else { return };
        let start = self.vectors.len();
        self.vectors.resize(start + table.dimensions(), 0.0);
        let weights: Vec<(u32, f32)> =
            terms.iter().filter_map(|&(term, _)| Some((self.term_rows.get(term as usize).copied()??, self.idf(Some(term))))).collect();
        let Some(vector) = self.vectors.get_mut(start..) else { return };
        for (row, idf) in weights {
            table.add_row(row, idf, vector);
        }
        embed::normalise(vector);
    }

    /// BM25's inverse document frequency of a term (of one no memory has: the highest).
    /// Memories are embedded with the frequencies of when they were inserted (or of the
    /// last `embed_with`): close enough, and inserting one never re-embeds the others.
    fn idf(&self, term: Option<u32>) -> f32 {
        let df = term.and_then(|term| self.document_frequency.get(term as usize)).copied().unwrap_or(0) as f32;
        let documents = self.live as f32;
        libm::logf(1.0 + (documents - df + 0.5) / (df + 0.5)).max(0.0)
    }

    /// The query's vector: its terms' rows, each weighed by its idf, of unit length.
    fn query_vector(&self, text: &str) -> Option<Vec<f32>> {
        let table = self.embeddings.as_ref()?;
        let mut vector = alloc::vec![0.0; table.dimensions()];
        let mut rows: Vec<(u32, f32)> = Vec::new();
        text::for_each_term(text, |term| {
            if let Some(row) = table.row(term) {
                rows.push((row, self.idf(self.term_ids.get(term).copied())));
            }
        });
        rows.sort_unstable_by_key(|&(row, _)| row);
        rows.dedup_by_key(|&mut (row, _)| row);
        for (row, idf) in rows {
            table.add_row(row, idf, &mut vector);
        }
        embed::normalise(&mut vector).then_some(vector)
    }

    /// The memories nearest `query` by their vectors (the host's when the query has
    /// one, else the table's), with their similarity, above [`DENSE_FLOOR`].
    fn nearest(&self, query: &[f32], wanted: &Query) -> Vec<(u32, f32)> {
        let dimensions = query.len();
        if dimensions == 0 {
            return Vec::new();
        }
        let mut near: Vec<(u32, f32)> = Vec::new();
        let mut consider = |slot_id: u32, similarity: f32| {
            if similarity > DENSE_FLOOR && self.slots.get(slot_id as usize).is_some_and(|slot| wanted.admits(slot)) {
                near.push((slot_id, similarity));
            }
        };
        if wanted.near.is_some() {
            let vectors: Vec<(u32, &Vec<f32>)> = self
                .host_vectors
                .iter()
                .filter(|(_, vector)| vector.len() == dimensions)
                .filter_map(|(key, vector)| Some((*self.by_key.get(key)?, vector)))
                .collect();
            // Centred on their mean, as the table's rows are: a model's vectors share a
            // direction that makes every text look alike (cosines of 0.7 between texts
            // about nothing in common), and the floor and the share are for what is
            // left. A lone memory has no direction to share, and keeps its own. With
            // unit vectors, (v - c)·q' is v·q' - c·q' and |v - c|² is 1 - 2 v·c + |c|²:
            // no centred copy of each vector is made.
            let mut centre = vec![0.0f32; dimensions];
            if vectors.len() > 1 {
                let count = vectors.len() as f32;
                for (_, vector) in &vectors {
                    centre.iter_mut().zip(vector.iter()).for_each(|(sum, value)| *sum += value / count);
                }
            }
            let mut query: Vec<f32> = query.iter().zip(&centre).map(|(value, centre)| value - centre).collect();
            if !embed::normalise(&mut query) {
                return Vec::new();
            }
            let centre_query = embed::dot(&centre, &query);
            let centre_norm = embed::dot(&centre, &centre);
            for (slot_id, vector) in vectors {
                let length = libm::sqrtf((1.0 - 2.0 * embed::dot(vector, &centre) + centre_norm).max(0.0));
                if length > f32::EPSILON {
                    consider(slot_id, (embed::dot(vector, &query) - centre_query) / length);
                }
            }
        } else {
            for (slot_id, vector) in self.vectors.chunks_exact(dimensions).enumerate() {
                consider(slot_id as u32, embed::dot(vector, query));
            }
        }
        if near.len() > DENSE_CANDIDATES {
            near.select_nth_unstable_by(DENSE_CANDIDATES - 1, |a, b| b.1.total_cmp(&a.1));
            near.truncate(DENSE_CANDIDATES);
        }
        near
    }

    fn session_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.session_ids.get(name) {
            return id;
        }
        let id = self.sessions.len() as u32;
        self.session_ids.insert(String::from(name), id);
        self.sessions.push(Vec::new());
        self.session_len.push(0);
        id
    }

    /// The best memories for `query`, best first. Ties go to the newer memory.
    pub fn recall(&self, query: &Query<'_>) -> Vec<Hit> {
        let mut query_terms: Vec<u32> = Vec::new();
        text::for_each_term(query.text, |term| {
            if let Some(&id) = self.term_ids.get(term) {
                query_terms.push(id);
            }
        });
        query_terms.sort_unstable();
        query_terms.dedup();
        let query_vector = match query.near {
            Some(near) => Some(near.to_vec()),
            None => self.query_vector(query.text),
        };
        if (query_terms.is_empty() && query_vector.is_none()) || self.live == 0 || query.limit == 0 {
            return Vec::new();
        }

        // `scores` starts as the own scores, each memory's share then added to it.
        let (mut own, mut scores, sessions) = self.bm25(&query_terms, query);
        if let Some(query_vector) = &query_vector {
            self.add_nearest(&mut scores, &own, query_vector, query);
            own = scores.touched.iter().filter_map(|&slot_id| Some((slot_id, *scores.value.get(slot_id as usize)?))).collect();
        }
        // A bit per slot, as `scores` holds a value per slot: marking every own hit is one
        // pass over them, where sorting them cost a search over 100k memories.
        let mut matched = alloc::vec![0u64; self.slots.len().div_ceil(64)];
        for &(slot_id, _) in &own {
            if let Some(word) = matched.get_mut(slot_id as usize / 64) {
                *word |= 1 << (slot_id % 64);
            }
        }
        // Only the strongest memories pass shares on: shares are fractions of the giver's
        // score, so those from far down the list seldom change the top (on LoCoMo not at
        // all) and skipping them halves a query over 10k memories.
        let givers = SPREADING_GIVERS.max(query.limit.saturating_mul(8));
        if own.len() > givers {
            own.select_nth_unstable_by(givers - 1, |a, b| b.1.total_cmp(&a.1));
            own.truncate(givers);
        }
        self.spread(&own, &sessions, &mut scores);

        // The best `limit` by score, then time, then slot, newest first on a tie: kept in
        // a heap of `limit`, where most memories are turned away by one comparison with
        // its weakest (a positive score's bits order as the score does).
        let mut best: BinaryHeap<Reverse<(u32, i64, u32)>> = BinaryHeap::with_capacity(query.limit.min(scores.touched.len()));
        for &slot_id in &scores.touched {
            let (Some(slot), Some(&score)) = (self.slots.get(slot_id as usize), scores.value.get(slot_id as usize)) else { continue };
            if !(score > 0.0 && query.admits(slot)) {
                continue;
            }
            let ranked = (score.to_bits(), slot.time_ms, slot_id);
            if best.len() < query.limit {
                best.push(Reverse(ranked));
            } else if best.peek().is_some_and(|Reverse(weakest)| ranked > *weakest) {
                best.pop();
                best.push(Reverse(ranked));
            }
        }
        best.into_sorted_vec()
            .into_iter()
            .filter_map(|Reverse((bits, _, slot_id))| {
                let key = self.slots.get(slot_id as usize)?.key.clone();
                let own = matched.get(slot_id as usize / 64).is_some_and(|word| word & (1 << (slot_id % 64)) != 0);
                Some(Hit { key, score: f32::from_bits(bits), matched: own })
            })
            .collect()
    }

    /// Adds to `scores` (the own scores, from `own`) the share each memory's similarity
    /// to the query earns, memories without a word of the query included. The share is
    /// of the best lexical score, so the table re-ranks what words found and brings in
    /// what they missed without outweighing an exact match; with no lexical hit at all
    /// it is of 1.
    fn add_nearest(&self, scores: &mut Scores, own: &[(u32, f32)], query: &[f32], wanted: &Query) {
        let best = own.iter().map(|(_, score)| *score).fold(0.0f32, f32::max);
        let unit = if best > 0.0 { best } else { 1.0 };
        for (slot_id, similarity) in self.nearest(query, wanted) {
            scores.add(slot_id, DENSE_SHARE * unit * similarity);
        }
    }

    /// Each live memory's own score: BM25, weighed up when the query names a topic of it
    /// or the user wrote it; and by session id, each session's BM25 read as one text
    /// against the other sessions (term counts and frequencies from the memories in the
    /// query's reach, lengths from all of them: a window or a project cuts no session's
    /// length).
    /// Memories out of the results (superseded, archived, outside the query's window or
    /// key prefix) score nothing, so they lift no neighbour either. The own scores come
    /// as a list and as the scores by memory the shares are then added to.
    fn bm25(&self, query_terms: &[u32], wanted: &Query) -> (Vec<(u32, f32)>, Scores, Scores) {
        let documents = self.live as f32;
        let average_len = (self.live_terms as f32 / documents).max(1.0);
        let sessions = self.live_sessions as f32;
        let average_session_len = (self.live_session_terms as f32 / sessions.max(1.0)).max(1.0);
        let mut own = Scores::new(self.slots.len());
        let mut session_scores = Scores::new(self.sessions.len());
        let mut session_counts = vec![0u32; self.sessions.len()];
        let mut holding: Vec<u32> = Vec::new();
        for &term in query_terms {
            let (Some(postings), Some(&df)) = (self.postings.get(term as usize), self.document_frequency.get(term as usize)) else {
                continue;
            };
            if df == 0 {
                continue;
            }
            let idf = self.idf(Some(term));
            for posting in postings {
                let Some(slot) = self.slots.get(posting.slot as usize) else { continue };
                if !wanted.admits(slot) {
                    continue;
                }
                let weight = if slot.role == Some(Role::User) { USER_WEIGHT } else { 1.0 };
                own.add(posting.slot, weight * bm25_term(idf, posting.count, slot.len as f32 / average_len));
                if let Some(count) = slot.session.and_then(|session| session_counts.get_mut(session as usize)) {
                    if *count == 0 {
                        holding.extend(slot.session);
                    }
                    *count = count.saturating_add(posting.count);
                }
            }
            let frequency = holding.len() as f32;
            let session_idf = libm::logf(1.0 + (sessions - frequency + 0.5) / (frequency + 0.5)).max(0.0);
            for session in holding.drain(..) {
                let (Some(count), Some(&len)) = (session_counts.get_mut(session as usize), self.session_len.get(session as usize)) else {
                    continue;
                };
                session_scores.add(session, bm25_term(session_idf, *count, len as f32 / average_session_len));
                *count = 0;
            }
        }
        let mut listed = Vec::with_capacity(own.touched.len());
        for &slot_id in &own.touched {
            let (Some(slot), Some(score)) = (self.slots.get(slot_id as usize), own.value.get_mut(slot_id as usize)) else { continue };
            if slot.topics.iter().any(|topic| query_terms.binary_search(topic).is_ok()) {
                *score *= 1.0 + TOPIC_BOOST;
            }
            listed.push((slot_id, *score));
        }
        (listed, own, session_scores)
    }

    /// Passes shares of each memory's own score to its session neighbours and its
    /// links, and a share of the best own score to every memory of a session that
    /// matches, by how well the session matches as a whole.
    fn spread(&self, own: &[(u32, f32)], sessions: &Scores, scores: &mut Scores) {
        let mut matched_sessions: Vec<u32> = Vec::new();
        let mut best = 0.0f32;
        for &(slot_id, score) in own {
            let Some(slot) = self.slots.get(slot_id as usize) else { continue };
            best = best.max(score);
            if let Some(session) = slot.session
                && let Some(members) = self.sessions.get(session as usize)
            {
                matched_sessions.push(session);
                if slot.role.is_none()
                    && let Some(at) = members.iter().position(|&other| other == slot_id)
                {
                    for (distance, share) in NEIGHBOUR_SHARE.iter().enumerate() {
                        let distance = distance + 1;
                        let before = at.checked_sub(distance).and_then(|i| members.get(i));
                        for &neighbour in before.into_iter().chain(members.get(at + distance)) {
                            scores.add(neighbour, share * score);
                        }
                    }
                }
            }
            for link in &slot.links {
                if let Some(&target) = self.by_key.get(link) {
                    scores.add(target, LINK_SHARE * score);
                }
            }
            for &source in self.backlinks.get(&slot.key).into_iter().flatten() {
                scores.add(source, LINK_SHARE * score);
            }
        }
        matched_sessions.sort_unstable();
        matched_sessions.dedup();
        let session_scores: Vec<(u32, f32)> =
            matched_sessions.into_iter().filter_map(|session| Some((session, *sessions.value.get(session as usize)?))).collect();
        let best_session = session_scores.iter().map(|(_, score)| *score).fold(0.0f32, f32::max);
        if best_session <= 0.0 {
            return;
        }
        for (session, score) in session_scores {
            for &member in self.sessions.get(session as usize).into_iter().flatten() {
                scores.add(member, SESSION_SHARE * best * score / best_session);
            }
        }
    }
}

/// One term's BM25 score in a text holding it `count` times, `relative_len` times as
/// long as the average.
fn bm25_term(idf: f32, count: u32, relative_len: f32) -> f32 {
    let count = count as f32;
    idf * count * (K1 + 1.0) / (count + K1 * (1.0 - B + B * relative_len))
}

/// Dense scores with the list of slots that have one, so a query costs what it touches.
struct Scores {
    value: Vec<f32>,
    touched: Vec<u32>,
}

impl Scores {
    fn new(slots: usize) -> Self {
        Self { value: vec![0.0; slots], touched: Vec::new() }
    }

    fn add(&mut self, slot_id: u32, score: f32) {
        // A zero would leave the value at zero and list the slot again on the next add.
        if score <= 0.0 {
            return;
        }
        if let Some(value) = self.value.get_mut(slot_id as usize) {
            if *value == 0.0 {
                self.touched.push(slot_id);
            }
            *value += score;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn doc(key: &str, body: &str, session: Option<&str>, time_ms: i64) -> Document {
        Document {
            key: key.to_string(),
            terms: text::terms(body),
            session: session.map(str::to_string),
            time_ms,
            current: true,
            ..Document::default()
        }
    }

    fn keys(index: &RecallIndex, query: &str, limit: usize) -> Vec<String> {
        index.recall(&Query::new(query, limit)).into_iter().map(|hit| hit.key).collect()
    }

    /// Equal scores go to the newer memory, at equal times to the one written later, and
    /// the limit cuts in that order.
    #[test]
    fn equal_scores_rank_newest_first() {
        let mut index = RecallIndex::new();
        index.insert(doc("old", "the red kite", None, 1));
        index.insert(doc("new", "the red kite", None, 3));
        index.insert(doc("same-time-first", "the red kite", None, 2));
        index.insert(doc("same-time-second", "the red kite", None, 2));
        assert_eq!(keys(&index, "red kite", 10), ["new", "same-time-second", "same-time-first", "old"]);
        assert_eq!(keys(&index, "red kite", 2), ["new", "same-time-second"]);
        assert_eq!(keys(&index, "red kite", 3), ["new", "same-time-second", "same-time-first"]);
        assert_eq!(keys(&index, "red kite", usize::MAX).len(), 4);
    }

    #[test]
    fn finds_by_stemmed_words_best_first() {
        let mut index = RecallIndex::new();
        index.insert(doc("a", "Melanie painted a sunrise over the lake", None, 1));
        index.insert(doc("b", "Caroline went to a support group", None, 2));
        index.insert(doc("c", "Painting is relaxing; Melanie paints every weekend and paints often", None, 3));
        assert_eq!(keys(&index, "When does Melanie paint?", 10), ["c", "a"]);
        assert!(keys(&index, "the of and", 10).is_empty());
        assert!(keys(&index, "zebra", 10).is_empty());
    }

    #[test]
    fn host_vectors_that_share_a_direction_do_not_all_look_near_the_query() {
        let mut index = RecallIndex::new();
        // Every vector is mostly one direction, as many models' are; each memory's own
        // meaning is a small part on an axis of its own.
        for n in 0..12 {
            index.insert(doc(&alloc::format!("m{n}"), &alloc::format!("fact number {n}"), None, n as i64));
            let mut vector = vec![10.0f32; 1];
            vector.extend((0..12).map(|axis| if axis == n { 1.0 } else { 0.0 }));
            assert!(index.set_vector(&alloc::format!("m{n}"), vector));
        }
        let mut near = vec![10.0f32; 1];
        near.extend((0..12).map(|axis| if axis == 3 { 1.0 } else { 0.0 }));
        embed::normalise(&mut near);
        let query = Query { near: Some(&near), ..Query::new("zebra", 10) };
        let nearest: Vec<u32> = index.nearest(&near, &query).into_iter().map(|(slot, _)| slot).collect();
        assert_eq!(nearest, [3], "raw cosines are all above 0.99; centred, only m3 is near");
        assert_eq!(index.recall(&query).into_iter().map(|hit| hit.key).collect::<Vec<_>>(), ["m3"]);
        assert!(!index.set_vector("unknown", vec![1.0]) && !index.set_vector("m1", vec![0.0, 0.0]));

        let mut lone = RecallIndex::new();
        lone.insert(doc("only", "fact", None, 1));
        assert!(lone.set_vector("only", vec![10.0, 1.0]));
        let near = [1.0f32, 0.0];
        let query = Query { near: Some(&near), ..Query::new("zebra", 10) };
        assert_eq!(lone.recall(&query).into_iter().map(|hit| hit.key).collect::<Vec<_>>(), ["only"], "a lone memory keeps its direction");
    }

    #[test]
    fn a_neighbour_in_the_session_is_found_through_the_turn_before_it() {
        let mut index = RecallIndex::new();
        index.insert(doc("q", "How was the charity race last weekend?", Some("s1"), 1));
        index.insert(doc("answer", "It made me realize self-care matters.", Some("s1"), 2));
        index.insert(doc("other", "I adopted a dog.", Some("s2"), 3));
        assert_eq!(keys(&index, "charity race", 10), ["q", "answer"]);
        // The answer is there through the question, not through words of its own.
        let matched: Vec<bool> = index.recall(&Query::new("charity race", 10)).iter().map(|h| h.matched).collect();
        assert_eq!(matched, [true, false]);
    }

    #[test]
    fn a_session_matching_the_query_as_a_whole_lifts_its_messages() {
        let mut index = RecallIndex::new();
        index.insert(doc("spread-bike", "I took the bike in", Some("spread"), 1));
        index.insert(doc("spread-brakes", "they fixed the brakes", Some("spread"), 2));
        index.insert(doc("spread-chain", "and oiled the chain", Some("spread"), 3));
        // As good a match on its own, and newer: ties go to the newer.
        index.insert(doc("lone-bike", "I took the bike in", Some("lone"), 4));
        index.insert(doc("lone-weather", "the weather was fine", Some("lone"), 5));
        let found = keys(&index, "bike brakes chain", 10);
        let at = |key: &str| found.iter().position(|k| k == key);
        assert!(at("spread-bike").is_some() && at("spread-bike") < at("lone-bike"), "{found:?}");
        assert!(at("lone-weather").is_some(), "every message of a matching session has a share: {found:?}");
    }

    #[test]
    fn in_a_chat_what_the_user_said_counts_more_and_lends_its_neighbours_nothing() {
        let message =
            |key: &str, body: &str, role: Role, time_ms: i64| Document { role: Some(role), ..doc(key, body, Some("chat"), time_ms) };
        let mut index = RecallIndex::new();
        index.insert(message("asked", "How was the charity race?", Role::User, 1));
        index.insert(message("answered", "It made me realize self-care matters.", Role::Other, 2));
        index.insert(message("echoed", "Charity race!", Role::Other, 3));
        let hits = index.recall(&Query::new("charity race", 10));
        let score = |key: &str| hits.iter().find(|hit| hit.key == key).map(|hit| hit.score);
        assert_eq!(hits.first().map(|hit| hit.key.as_str()), Some("asked"), "the user's words first, though the echo is newer: {hits:?}");
        // The answer has the session's share alone (the question's own score has it
        // too): no share from the turn before it.
        let (Some(asked), Some(answered)) = (score("asked"), score("answered")) else { panic!("{hits:?}") };
        assert!((answered - SESSION_SHARE * asked / (1.0 + SESSION_SHARE)).abs() < 1e-5, "{hits:?}");
    }

    #[test]
    fn removing_a_memory_leaves_the_index_as_if_it_had_never_been_there() {
        let bodies = [
            ("a", "the deploy target is staging", "s1"),
            ("b", "deploy to production on fridays", "s2"),
            ("c", "the target audience", "s3"),
        ];
        let mut with_removed = RecallIndex::new();
        let mut without = RecallIndex::new();
        for (n, (key, body, session)) in bodies.iter().enumerate() {
            with_removed.insert(doc(key, body, Some(session), n as i64));
            if *key != "c" {
                without.insert(doc(key, body, Some(session), n as i64));
            }
        }
        with_removed.insert(doc("gone", "deploy target deploy", Some("s4"), 9));
        with_removed.remove("gone");
        // Moved to another session and back: replaced twice.
        with_removed.insert(doc("a", "the deploy target is staging", Some("s5"), 0));
        with_removed.insert(doc("a", "the deploy target is staging", Some("s1"), 0));
        with_removed.remove("c");
        assert_eq!(with_removed.recall(&Query::new("deploy target", 10)), without.recall(&Query::new("deploy target", 10)));
    }

    #[test]
    fn superseded_memories_are_out_unless_asked_for_and_replacing_keeps_one_copy() {
        let mut index = RecallIndex::new();
        index.insert(doc("old", "The deploy target is staging", None, 1));
        index.insert(doc("new", "The deploy target is production", None, 2));
        let mut old = doc("old", "The deploy target is staging", None, 1);
        old.current = false;
        index.insert(old);
        assert_eq!(index.len(), 2);
        assert_eq!(index.garbage(), 1);
        assert_eq!(keys(&index, "deploy target", 10), ["new"]);
        let all: Vec<String> = index.recall(&Query { all: true, ..Query::new("deploy target", 10) }).into_iter().map(|h| h.key).collect();
        assert_eq!(all, ["new", "old"]);
        index.remove("new");
        assert!(keys(&index, "production", 10).is_empty());
    }

    #[test]
    fn a_rare_planted_token_is_found_among_many() {
        let mut index = RecallIndex::new();
        for i in 0..2000 {
            index.insert(doc(&alloc::format!("m{i}"), "the user likes rust and wasm and tests", Some("s"), i));
        }
        index.insert(doc("planted", "the vault code is XK-7741-QZ", Some("s"), 5000));
        assert_eq!(keys(&index, "what is xk 7741 qz", 1), ["planted"]);
    }

    #[test]
    fn a_memory_inserted_after_the_table_is_embedded_like_the_others() {
        let table = Rc::new(Embeddings::parse(b"car 1 0 0\nautomobile 0.9 0.1 0\nred 0 1 0\nblue 0 0 1\nstone -1 -1 -1\n").unwrap());
        let mut late = RecallIndex::new();
        late.embed_with(Some(table.clone()));
        late.insert(doc("paint", "a red bike", None, 1));
        late.insert(doc("ride", "a red car", None, 2));
        let mut early = RecallIndex::new();
        early.insert(doc("paint", "a red bike", None, 1));
        early.insert(doc("ride", "a red car", None, 2));
        early.embed_with(Some(table));
        // A one-word memory points where its word does, whatever that word's idf then.
        let apart = late.vectors.iter().zip(&early.vectors).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(late.vectors.len() == early.vectors.len() && apart < 1e-5, "{:?} against {:?}", late.vectors, early.vectors);
        assert_eq!(keys(&late, "automobile", 10), ["ride"]);
        // Found by its meaning, without a word of the query: the memory itself matched.
        assert!(late.recall(&Query::new("automobile", 10))[0].matched);
    }

    #[test]
    fn links_and_topics_lift_related_memories() {
        let mut index = RecallIndex::new();
        let mut style = doc("style", "Prefer small commits with honest messages", None, 1);
        style.links = alloc::vec!["review".to_string()];
        index.insert(style);
        index.insert(doc("review", "Ask for a second pair of eyes", None, 2));
        assert_eq!(keys(&index, "commits", 10), ["style", "review"]);

        let mut index = RecallIndex::new();
        let mut caroline = doc("c", "I went hiking", None, 1);
        caroline.topics = alloc::vec!["Caroline".to_string()];
        index.insert(caroline);
        index.insert(doc("m", "I went hiking", None, 1));
        assert_eq!(keys(&index, "Did Caroline go hiking?", 10)[0], "c");
    }
}

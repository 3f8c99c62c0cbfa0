//! A host's embedder: an OpenAI-compatible `/embeddings` API (OpenAI, Ollama's `/v1`,
//! vLLM, llama.cpp, LM Studio) answering the core's embedding plans, so recall ranks
//! memories by meaning with the model's vectors.

use std::time::Duration;

use mneme_core::Engine;
use mneme_core::memory::store::{Near, Scope};
use serde_json::{Value, json};

use crate::Error;
use crate::http::{HttpError, post_json};

/// `POST {base_url}/embeddings` with `model`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedder {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    Engine(#[from] Error),
    #[error("the embedder: {0}")]
    Http(#[from] HttpError),
    #[error("the embedder at {url} answered without {wanted} vectors ({detail})")]
    NoVectors { url: String, wanted: usize, detail: String },
}

/// How long one request for a batch of vectors may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Memories embedded per request: what OpenAI's and most servers' batch limits allow.
const BATCH: usize = 64;

impl Embedder {
    /// The vectors of `texts`, in their order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.base_url.trim_end_matches('/'));
        let headers: Vec<(&str, String)> = self.api_key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect();
        let answer = post_json(&url, &json!({ "model": self.model, "input": texts }), &headers, TIMEOUT)?;
        let no_vectors = |detail: String| EmbedError::NoVectors { url: url.clone(), wanted: texts.len(), detail };
        let data = answer["data"].as_array().ok_or_else(|| no_vectors(crate::http::snippet(&answer.to_string())))?;
        // Each item says which input it embeds; servers need not keep the order.
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (at, item) in data.iter().enumerate() {
            let index = item["index"].as_u64().map_or(at, |index| index as usize);
            let vector: Option<Vec<f32>> =
                item["embedding"].as_array().map(|values| values.iter().filter_map(Value::as_f64).map(|v| v as f32).collect());
            if let (Some(slot), Some(vector)) = (vectors.get_mut(index), vector) {
                *slot = Some(vector);
            }
        }
        let found = vectors.iter().filter(|vector| vector.is_some()).count();
        vectors.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| no_vectors(format!("{found} came back")))
    }

    /// Embeds every memory of `scope` with no vector of this model (telling
    /// `progress` how many so far), then `query`: the query's `near` for recall.
    pub fn near(
        &self,
        engine: &mut dyn Engine<Error>,
        scope: &Scope,
        query: &str,
        mut progress: impl FnMut(usize),
    ) -> Result<Near, EmbedError> {
        let mut embedded = 0;
        // A memory planned again after its vector was given (written again meanwhile)
        // is left for the next recall: this one goes on rather than plan forever.
        let mut given = std::collections::BTreeSet::new();
        loop {
            let plan = engine.plan_embedding(scope, &self.model, BATCH)?;
            if plan.files.is_empty() || plan.files.iter().any(|file| given.contains(file)) {
                break;
            }
            let vectors = self.embed(&plan.texts)?;
            let kept = engine.apply_embedding(scope, &plan, &vectors)?;
            if kept == 0 {
                break;
            }
            embedded += kept as usize;
            progress(embedded);
            given.extend(plan.files);
        }
        let vector = self.embed(&[query.to_owned()])?.pop().unwrap_or_default();
        Ok(Near { model: self.model.clone(), vector })
    }
}

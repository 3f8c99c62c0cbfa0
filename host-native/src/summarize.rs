//! Where compaction summaries come from: the core's offline extractive summariser
//! (the default: no network), or a model over HTTP — OpenAI-compatible
//! `/chat/completions` (OpenAI, vLLM, llama.cpp server, LM Studio), Anthropic
//! Messages, or Ollama `/api/chat`.

use std::time::Duration;

use mneme_core::Plan;
use mneme_core::compaction::{Run, Step};
use serde_json::{Value, json};

use crate::Error;
use mneme_core::Engine;

/// A source of summaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Summarizer {
    /// The core's extractive summary: requests, first sentences, tools, files.
    Extractive,
    /// `POST {base_url}/chat/completions`, base such as `https://api.openai.com/v1`.
    OpenAi { base_url: String, model: String, api_key: Option<String> },
    /// `POST {base_url}/v1/messages`, base such as `https://api.anthropic.com`.
    Anthropic { base_url: String, model: String, api_key: Option<String> },
    /// `POST {base_url}/api/chat`, base such as `http://127.0.0.1:11434`.
    Ollama { base_url: String, model: String },
}

/// Why a summary could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error(transparent)]
    Engine(#[from] Error),
    #[error("cannot reach the summariser at {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("the summariser at {url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("the summariser at {url} answered without a summary ({detail})")]
    NoSummary { url: String, detail: String },
}

impl From<crate::http::HttpError> for SummaryError {
    fn from(error: crate::http::HttpError) -> Self {
        use crate::http::HttpError;
        match error {
            HttpError::Unreachable { url, message } => SummaryError::Unreachable { url, message },
            HttpError::Status { url, status, body } => SummaryError::Status { url, status, body },
            HttpError::NotJson { url, message } => SummaryError::NoSummary { url, detail: format!("not JSON: {message}") },
        }
    }
}

/// How long a model may take to write a summary.
const TIMEOUT: Duration = Duration::from_secs(300);

impl Summarizer {
    /// A short name for messages: `extractive`, `openai (gpt-4o-mini)`, ...
    pub fn describe(&self) -> String {
        match self {
            Summarizer::Extractive => "the offline extractive summariser".into(),
            Summarizer::OpenAi { model, base_url, .. } => format!("{model} at {base_url} (OpenAI-compatible)"),
            Summarizer::Anthropic { model, base_url, .. } => format!("{model} at {base_url} (Anthropic)"),
            Summarizer::Ollama { model, base_url } => format!("{model} at {base_url} (Ollama)"),
        }
    }

    /// The summary for `plan` of session `id`, through the core's compaction driver:
    /// each piece of a long conversation in a rolling request, then the turn prefix's
    /// own request when the cut fell inside a turn, joined by a rule. An empty answer
    /// is an error, as the driver counts it.
    pub fn summarize(&self, engine: &mut dyn Engine<Error>, id: &str, plan: &Plan) -> Result<String, SummaryError> {
        let mut run = Run::new(plan.clone());
        if let Some(error) = self.answer(engine, id, &mut run, |_, _| {}) {
            return Err(error);
        }
        match run.next() {
            Step::Apply { summary } => Ok(summary),
            _ => Ok(String::new()),
        }
    }

    /// Answers every summariser request `run` makes (the offline summariser answers
    /// them all at once from the session), telling `progress` each model request and
    /// their total. Stops at the first failure, which `run` then asks to have recorded;
    /// returns its typed error.
    pub fn answer(
        &self,
        engine: &mut dyn Engine<Error>,
        id: &str,
        run: &mut Run,
        mut progress: impl FnMut(usize, usize),
    ) -> Option<SummaryError> {
        let total = run.total_requests();
        let mut asked = 0;
        while let Step::Summarize { prompt, max_tokens } = run.next() {
            let answer = if *self == Summarizer::Extractive {
                match engine.summarize_offline(id, run.plan()) {
                    Ok(summary) => {
                        run.handle_whole(Ok(summary));
                        continue;
                    }
                    Err(e) => Err(SummaryError::from(e)),
                }
            } else {
                asked += 1;
                progress(asked, total);
                self.complete(&prompt, max_tokens)
            };
            match answer {
                Ok(text) => run.handle(Ok(text)),
                Err(error) => {
                    run.handle(Err(error.to_string()));
                    return Some(error);
                }
            }
            if let Some(reason) = run.failure() {
                return Some(SummaryError::NoSummary { url: String::new(), detail: reason.to_owned() });
            }
        }
        None
    }

    /// One completion of `prompt` in at most `max_tokens` tokens.
    pub fn complete(&self, prompt: &str, max_tokens: u64) -> Result<String, SummaryError> {
        let messages = json!([{ "role": "user", "content": prompt }]);
        let (url, body, headers): (String, Value, Vec<(&str, String)>) = match self {
            Summarizer::Extractive => {
                return Err(SummaryError::NoSummary { url: String::new(), detail: "the extractive summariser has no prompt API".into() });
            }
            Summarizer::OpenAi { base_url, model, api_key } => (
                format!("{}/chat/completions", base_url.trim_end_matches('/')),
                openai_body(base_url, model, messages, max_tokens),
                api_key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect(),
            ),
            Summarizer::Anthropic { base_url, model, api_key } => (
                format!("{}/v1/messages", base_url.trim_end_matches('/')),
                json!({ "model": model, "messages": messages, "max_tokens": max_tokens }),
                [("anthropic-version", "2023-06-01".to_owned())]
                    .into_iter()
                    .chain(api_key.iter().map(|key| ("x-api-key", key.clone())))
                    .collect(),
            ),
            Summarizer::Ollama { base_url, model } => (
                format!("{}/api/chat", base_url.trim_end_matches('/')),
                json!({ "model": model, "messages": messages, "stream": false, "options": { "num_predict": max_tokens } }),
                Vec::new(),
            ),
        };
        let answer = crate::http::post_json(&url, &body, &headers, TIMEOUT)?;
        let text = match self {
            Summarizer::OpenAi { .. } => answer["choices"][0]["message"]["content"].as_str().map(str::to_owned),
            Summarizer::Anthropic { .. } => {
                let blocks = answer["content"]
                    .as_array()
                    .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""));
                blocks.filter(|t| !t.is_empty())
            }
            Summarizer::Ollama { .. } => answer["message"]["content"].as_str().map(str::to_owned),
            Summarizer::Extractive => None,
        };
        match text {
            Some(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
            _ => Err(SummaryError::NoSummary { url, detail: crate::http::snippet(&answer.to_string()) }),
        }
    }
}

/// A `/chat/completions` request. OpenAI's own API refuses `max_tokens` and a
/// temperature of 0 for its reasoning models (o-series, GPT-5), and takes
/// `max_completion_tokens` for every model; the servers that copy its API (vLLM,
/// llama.cpp, LM Studio, Ollama) know `max_tokens`, and summarise more steadily at 0.
fn openai_body(base_url: &str, model: &str, messages: Value, max_tokens: u64) -> Value {
    if host_of(base_url).eq_ignore_ascii_case("api.openai.com") {
        json!({ "model": model, "messages": messages, "max_completion_tokens": max_tokens })
    } else {
        json!({ "model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0 })
    }
}

/// The host a base URL names (`api.openai.com` of `https://api.openai.com:443/v1`).
pub fn host_of(base_url: &str) -> &str {
    base_url.split_once("://").map_or(base_url, |(_, rest)| rest).split(['/', ':']).next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openais_own_api_is_asked_for_completion_tokens_and_compatible_servers_for_max_tokens() {
        for base in ["https://api.openai.com/v1", "https://API.openai.com:443/v1/", "api.openai.com/v1"] {
            let body = openai_body(base, "gpt-5", json!([]), 900);
            assert_eq!(body["max_completion_tokens"], 900, "{base}");
            assert!(body.get("max_tokens").is_none() && body.get("temperature").is_none(), "{base}: {body}");
        }
        for base in [
            "http://127.0.0.1:8000/v1",
            "https://openai.example.com/v1",
            "http://localhost:11434/v1",
            "https://api.openai.com.evil.test/v1",
        ] {
            let body = openai_body(base, "qwen", json!([]), 900);
            assert_eq!((body["max_tokens"].as_u64(), body["temperature"].as_u64()), (Some(900), Some(0)), "{base}");
            assert!(body.get("max_completion_tokens").is_none(), "{base}");
        }
    }
}

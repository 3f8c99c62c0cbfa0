//! One JSON request to a model API (a summariser, an embedder), with its failures
//! told apart: not reached, refused with a status, or answered with no JSON.

use std::time::Duration;

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("{url} answered with no JSON: {message}")]
    NotJson { url: String, message: String },
}

/// `POST url` with `body` as JSON, waiting at most `timeout`; the answer's JSON.
pub fn post_json(url: &str, body: &Value, headers: &[(&str, String)], timeout: Duration) -> Result<Value, HttpError> {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into();
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let unreachable = |e: ureq::Error| HttpError::Unreachable { url: url.to_owned(), message: e.to_string() };
    let mut response = request.send_json(body).map_err(unreachable)?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().map_err(unreachable)?;
    if !(200..300).contains(&status) {
        return Err(HttpError::Status { url: url.to_owned(), status, body: snippet(&text) });
    }
    serde_json::from_str(&text).map_err(|e| HttpError::NotJson { url: url.to_owned(), message: e.to_string() })
}

/// The first 300 characters of an answer, for a message.
pub fn snippet(text: &str) -> String {
    let cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() { format!("{cut}…") } else { cut }
}

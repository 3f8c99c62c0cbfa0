//! Secrets never reach disk: every line and memory file Mneme writes is scanned for
//! credentials first, and each one found is replaced with a marker naming what was
//! removed (`[REDACTED:github-token]`). Nothing else in the line changes.
//!
//! The patterns are the shapes providers document for their keys, anchored on their
//! fixed prefixes, so ordinary prose and code do not match: a token must start at a word
//! boundary and be long enough, and `KEY=value` lines count only for names that hold
//! secrets. Transcript lines are JSON, so secrets are looked for inside string values
//! (in their escaped form, where a newline is `\n`); ids, signatures and base64 payloads
//! (`signature`, `data`, `…id`) are opaque and left alone — a match there would be chance,
//! and cutting it would break the entry — and so is signed `thinking` text.

use alloc::string::String;
use alloc::vec::Vec;

/// A kind of secret Mneme recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SecretKind {
    AnthropicKey,
    OpenAiKey,
    GoogleKey,
    AwsAccessKey,
    GithubToken,
    SlackToken,
    BearerToken,
    PrivateKey,
    EnvSecret,
    Jwt,
    StripeKey,
    UrlPassword,
}

impl SecretKind {
    pub const ALL: [SecretKind; 12] = [
        SecretKind::AnthropicKey,
        SecretKind::OpenAiKey,
        SecretKind::GoogleKey,
        SecretKind::AwsAccessKey,
        SecretKind::GithubToken,
        SecretKind::SlackToken,
        SecretKind::BearerToken,
        SecretKind::PrivateKey,
        SecretKind::EnvSecret,
        SecretKind::Jwt,
        SecretKind::StripeKey,
        SecretKind::UrlPassword,
    ];

    /// The name used in markers, reports and settings.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::AnthropicKey => "anthropic-api-key",
            SecretKind::OpenAiKey => "openai-api-key",
            SecretKind::GoogleKey => "google-api-key",
            SecretKind::AwsAccessKey => "aws-access-key",
            SecretKind::GithubToken => "github-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::PrivateKey => "private-key",
            SecretKind::EnvSecret => "env-secret",
            SecretKind::Jwt => "jwt",
            SecretKind::StripeKey => "stripe-key",
            SecretKind::UrlPassword => "url-password",
        }
    }

    pub fn parse(name: &str) -> Option<SecretKind> {
        SecretKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// Which kinds of secret a store removes before writing. Every kind by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redaction {
    kinds: u16,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction::all()
    }
}

impl Redaction {
    pub fn all() -> Self {
        Redaction { kinds: SecretKind::ALL.iter().fold(0, |bits, kind| bits | kind.bit()) }
    }

    /// Nothing is removed: lines are written exactly as given.
    pub fn off() -> Self {
        Redaction { kinds: 0 }
    }

    pub fn only(kinds: &[SecretKind]) -> Self {
        Redaction { kinds: kinds.iter().fold(0, |bits, kind| bits | kind.bit()) }
    }

    /// The policy that removes the kinds named (as in [`SecretKind::as_str`]); an empty
    /// list turns redaction off.
    pub fn named<T: AsRef<str>>(names: &[T]) -> Result<Self, crate::Error> {
        let mut kinds = Vec::new();
        for name in names {
            let name = name.as_ref();
            let kind = SecretKind::parse(name).ok_or_else(|| {
                let known: Vec<&str> = SecretKind::ALL.iter().map(|kind| kind.as_str()).collect();
                crate::Error::InvalidArgument(alloc::format!("unknown kind of secret `{name}`: use one of {}", known.join(", ")))
            })?;
            kinds.push(kind);
        }
        Ok(Redaction::only(&kinds))
    }

    pub fn kinds(self) -> Vec<SecretKind> {
        SecretKind::ALL.into_iter().filter(|kind| self.covers(*kind)).collect()
    }

    pub fn is_off(self) -> bool {
        self.kinds == 0
    }

    fn covers(self, kind: SecretKind) -> bool {
        self.kinds & kind.bit() != 0
    }
}

/// What one write removed: how many secrets of one kind.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Redacted {
    pub kind: String,
    pub count: u32,
}

/// The secrets found in one text, counted by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found(Vec<(SecretKind, u32)>);

impl Found {
    fn add(&mut self, kind: SecretKind, count: u32) {
        match self.0.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, total)) => *total = total.saturating_add(count),
            None => self.0.push((kind, count)),
        }
    }

    pub fn merge(&mut self, other: &Found) {
        for &(kind, count) in &other.0 {
            self.add(kind, count);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The report: one row per kind, in the order of [`SecretKind::ALL`].
    pub fn report(&self) -> Vec<Redacted> {
        let mut rows = self.0.clone();
        rows.sort();
        rows.into_iter().map(|(kind, count)| Redacted { kind: String::from(kind.as_str()), count }).collect()
    }
}

impl Redaction {
    /// Plain text (a memory file, a summary): every secret replaced by its marker.
    pub fn text(self, text: &str, found: &mut Found) -> Option<String> {
        if self.is_off() {
            return None;
        }
        redact_span(self, text, Newlines::Plain, found)
    }

    /// One line of JSON as Mneme serialises it: secrets replaced inside string values,
    /// opaque fields left alone. `None` when nothing was found (the line is written as
    /// is). A line that is not JSON is scanned as plain text, so nothing slips through.
    pub fn json_line(self, line: &str, found: &mut Found) -> Option<String> {
        if self.is_off() {
            return None;
        }
        let before = found.clone();
        let mut out = String::new();
        let mut copied = 0;
        let is_json = each_json_string(line, |start, end| {
            if let Some(clean) = redact_span(self, &line[start..end], Newlines::Escaped, found) {
                out.push_str(&line[copied..start]);
                out.push_str(&clean);
                copied = end;
            }
        });
        if !is_json {
            *found = before;
            return redact_span(self, line, Newlines::Escaped, found);
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&line[copied..]);
        Some(out)
    }

    /// Every line of `record` (lines of JSON joined by `\n`), and what each had removed.
    pub fn json_lines(self, record: &str) -> (Option<String>, Vec<Found>) {
        let mut found_by_line = Vec::new();
        // Built only from the first line that changes: most records have no secret.
        let mut out: Option<String> = None;
        for (n, line) in crate::support::split_lines(record).enumerate() {
            let mut found = Found::default();
            let clean = self.json_line(line, &mut found);
            found_by_line.push(found);
            if clean.is_none() && out.is_none() {
                continue;
            }
            let out = out.get_or_insert_with(|| {
                let before: Vec<&str> = crate::support::split_lines(record).take(n).collect();
                let mut start = before.join("\n");
                start.reserve(record.len());
                start
            });
            if n > 0 {
                out.push('\n');
            }
            out.push_str(clean.as_deref().unwrap_or(line));
        }
        (out, found_by_line)
    }
}

/// The kinds one option names, as a person writes it (a CLI's `--redact`): `all` is
/// `None` (the default, every kind), `none` no kind, else kinds separated by commas.
/// Empty is refused: a script that empties the variable holding it would otherwise
/// write every secret as it came.
pub fn kinds_named(text: &str) -> Result<Option<Vec<String>>, String> {
    match text.trim() {
        "all" => Ok(None),
        "none" => Ok(Some(Vec::new())),
        "" => Err("it is empty: name the kinds to take out, `all`, or `none` to write secrets as they are".into()),
        list => Ok(Some(list.split(',').map(|kind| String::from(kind.trim())).collect())),
    }
}

/// What was taken out of line `line` (1-based) of a record, from [`Redaction::json_lines`].
pub fn report_of(found: &[Found], line: u32) -> Vec<Redacted> {
    found.get((line as usize).saturating_sub(1)).map(Found::report).unwrap_or_default()
}

/// How a line break is written in the text being scanned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Newlines {
    Plain,
    /// Inside a JSON string: `\n`, and `\` starts an escape, `"` is `\"`.
    Escaped,
}

/// Calls `string` with the byte range of each string value of a JSON line worth
/// scanning: not keys, and not under a key whose value is opaque. `false` if the line
/// is not JSON as expected (the ranges given so far are then of no use).
fn each_json_string(line: &str, mut string: impl FnMut(usize, usize)) -> bool {
    let bytes = line.as_bytes();
    // Per open container: is it an object, and the key its strings sit under.
    let mut stack = Stack::default();
    let mut key = (0, 0);
    let mut expecting_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                loop {
                    let Some(special) = crate::support::validate::next_special(bytes, j) else { return false };
                    if bytes[special] == b'"' {
                        j = special;
                        break;
                    }
                    j = special + 2;
                }
                if expecting_key {
                    key = (start, j);
                    expecting_key = false;
                } else {
                    let under = stack.under(key);
                    if !opaque(&line[under.0..under.1]) {
                        string(start, j);
                    }
                }
                i = j + 1;
                continue;
            }
            b'{' => {
                stack.push(true, stack.under(key));
                expecting_key = true;
            }
            b'[' => stack.push(false, stack.under(key)),
            b'}' | b']' => match stack.pop() {
                Some(under) => key = under,
                None => return false,
            },
            b',' => expecting_key = stack.in_object(),
            _ => {}
        }
        i += 1;
    }
    stack.is_empty()
}

/// [`each_json_string`]'s open containers: whether each is an object, and the key its
/// strings sit under. The first few are kept inline: a line is walked for every write,
/// and a transcript's lines nest a handful deep.
#[derive(Default)]
struct Stack {
    inline: [(bool, (usize, usize)); 8],
    depth: usize,
    deeper: Vec<(bool, (usize, usize))>,
}

impl Stack {
    fn top(&self) -> Option<&(bool, (usize, usize))> {
        match self.depth {
            0 => None,
            depth if depth <= self.inline.len() => self.inline.get(depth - 1),
            _ => self.deeper.last(),
        }
    }

    fn in_object(&self) -> bool {
        self.top().is_some_and(|(object, _)| *object)
    }

    /// The key a value at this point sits under: an object's own, else the array's.
    fn under(&self, key: (usize, usize)) -> (usize, usize) {
        match self.top() {
            Some((false, under)) => *under,
            _ => key,
        }
    }

    fn push(&mut self, object: bool, under: (usize, usize)) {
        match self.inline.get_mut(self.depth) {
            Some(slot) => *slot = (object, under),
            None => self.deeper.push((object, under)),
        }
        self.depth += 1;
    }

    /// The key the closed container sat under; `None` if none was open.
    fn pop(&mut self) -> Option<(usize, usize)> {
        let under = if self.depth > self.inline.len() { self.deeper.pop()?.1 } else { self.top()?.1 };
        self.depth -= 1;
        Some(under)
    }

    fn is_empty(&self) -> bool {
        self.depth == 0
    }
}

/// Keys whose string values are ids, signatures or base64 payloads — and `thinking`,
/// whose text its signature covers: an edited thinking block is refused by the API,
/// which would make the session impossible to resume.
fn opaque(key: &str) -> bool {
    matches!(key, "signature" | "thinking" | "data" | "id" | "uuid" | "type" | "media_type" | "timestamp")
        || key.ends_with("Id")
        || key.ends_with("_id")
        || key.ends_with("Uuid")
        || key.ends_with("UUID")
        || key.ends_with("ID")
}

const fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes from `at` that satisfy `allowed`.
fn run(bytes: &[u8], at: usize, allowed: impl Fn(u8) -> bool) -> usize {
    bytes[at.min(bytes.len())..].iter().take_while(|&&b| allowed(b)).count()
}

/// `text` with every secret the policy covers replaced, or `None` if there was none.
fn redact_span(policy: Redaction, text: &str, newlines: Newlines, found: &mut Found) -> Option<String> {
    if !may_hold_secret(text.as_bytes()) {
        return None;
    }
    scan_span(policy, text, newlines, found)
}

/// Whether `bytes` has what every secret [`secret_at`] finds needs: a `-`, `_` or `=`
/// (`sk-`, `xoxb-`, `ghp_`, private keys, `NAME=value`), an `A` (Google and AWS keys),
/// `eyJ` (a JWT's header), an `@` (a password in a URL), or `bearer ` in any case. Most
/// prose has none, and is passed over a vector at a time instead of a byte at a time.
fn may_hold_secret(bytes: &[u8]) -> bool {
    let bearer_at = |at: usize| bytes.get(at..at + 7).is_some_and(|word| word.eq_ignore_ascii_case(b"bearer "));
    // Most of a line's strings are short (a role, a path, a name): a vector search's
    // set-up would cost more than looking at each byte.
    if bytes.len() < 64 {
        return bytes.iter().enumerate().any(|(at, b)| match b {
            b'-' | b'_' | b'=' | b'A' | b'@' => true,
            b'e' => bytes[at..].starts_with(JWT_START),
            b'b' | b'B' => bearer_at(at),
            _ => false,
        });
    }
    memchr::memchr3(b'-', b'_', b'=', bytes).is_some()
        || memchr::memchr2(b'A', b'@', bytes).is_some()
        || memchr::memmem::find(bytes, JWT_START).is_some()
        || memchr::memchr2_iter(b'b', b'B', bytes).any(bearer_at)
}

/// How a JWT's header and payload start: `{"` in base64url.
const JWT_START: &[u8] = b"eyJ";

/// [`redact_span`] byte by byte, for text that may hold a secret.
fn scan_span(policy: Redaction, text: &str, newlines: Newlines, found: &mut Found) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    // At a word boundary `i` (the start of a line or not): the secret starting there
    // replaced, and where scanning goes on; `None` if there is none.
    let mut redact_at = |i: usize, line_start: bool| -> Option<usize> {
        let (kind, start, end) = secret_at(policy, bytes, i, newlines, line_start)?;
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..start]);
        out.push_str("[REDACTED:");
        out.push_str(kind.as_str());
        out.push(']');
        found.add(kind, 1);
        copied = end;
        Some(end.max(i + 1))
    };
    // A line's start matters only for a `NAME=value`: without an `=` there is none. A
    // URL's user starts anywhere after `://`: without an `@` there is no password.
    let assignments = memchr::memchr(b'=', bytes).is_some();
    let urls = memchr::memchr(b'@', bytes).is_some() && find(bytes, b"://").is_some();
    let after_scheme = |i: usize| urls && i >= 3 && &bytes[i - 3..i] == b"://";
    let mut i = 0;
    while i < bytes.len() {
        // Secrets start at a word boundary: inside a word (most bytes) one table lookup
        // moves on. In a JSON string, `\n` or `\t` ends a word too, though `n` and `t`
        // are letters: the byte after the escape is a boundary as well.
        if i > 0 && TOKEN_BYTE[bytes[i - 1] as usize] {
            i += 1;
            continue;
        }
        let escape_end = newlines == Newlines::Escaped && escaped(bytes, i);
        let line_start = i == 0 || bytes[i - 1] == b'\n';
        // The letter of an escape (`\r`, `\b`) is not a word's start: `\rk_live_…` is a
        // carriage return, then a word; a match there would cut the escape in half.
        if !escape_end
            && (STARTS_SECRET[bytes[i] as usize] || (line_start && assignments) || after_scheme(i))
            && let Some(end) = redact_at(i, line_start)
        {
            i = end;
            continue;
        }
        if escape_end && i + 1 < bytes.len() {
            // After `\n` a line starts.
            let line_start = matches!(bytes[i], b'n' | b'\n');
            if (STARTS_SECRET[bytes[i + 1] as usize] || (line_start && assignments))
                && let Some(end) = redact_at(i + 1, line_start)
            {
                i = end;
                continue;
            }
            i += 1;
        }
        i += 1;
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// Whether the byte at `at` is the letter of a JSON escape: an odd run of backslashes
/// before it (`\\r` is a backslash, then a letter; `\\\r` a backslash, then a return).
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// [`is_token_byte`] as a table, for the scan's inner loop.
const TOKEN_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_token_byte(b as u8);
        b += 1;
    }
    table
};

/// The first bytes of the patterns [`secret_at`] looks for (at a line's start it looks
/// for a `NAME=value`, and after a URL's `://` for a password, whatever the byte).
const STARTS_SECRET: [bool; 256] = {
    let mut table = [false; 256];
    let firsts = b"sAgxBb-re";
    let mut i = 0;
    while i < firsts.len() {
        table[firsts[i] as usize] = true;
        i += 1;
    }
    table
};

/// The secret starting at `i` (a word boundary), as the range to replace.
fn secret_at(policy: Redaction, bytes: &[u8], i: usize, newlines: Newlines, line_start: bool) -> Option<(SecretKind, usize, usize)> {
    let rest = &bytes[i..];
    let token = |kind: SecretKind, prefix: usize, min: usize, allowed: &dyn Fn(u8) -> bool| -> Option<(SecretKind, usize, usize)> {
        let len = run(bytes, i + prefix, allowed);
        let end = i + prefix + len;
        // A token runs to a word boundary: a longer word that merely starts alike is not one.
        (policy.covers(kind) && len >= min && !bytes.get(end).is_some_and(|&b| is_token_byte(b))).then_some((kind, i, end))
    };
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let hit = match rest.first()? {
        b's' if rest.starts_with(b"sk-ant-") => token(SecretKind::AnthropicKey, 7, 20, &is_token_byte),
        b's' | b'r' if STRIPE_PREFIXES.iter().any(|p| rest.starts_with(p)) => token(SecretKind::StripeKey, 8, 16, &alnum),
        b'e' if rest.starts_with(JWT_START) && policy.covers(SecretKind::Jwt) => jwt(bytes, i),
        b's' if rest.starts_with(b"sk-") => {
            let len = run(bytes, i + 3, is_token_byte);
            // An OpenAI key mixes letters and digits; a long kebab-case name does not.
            let body = &bytes[i + 3..i + 3 + len];
            if body.iter().any(u8::is_ascii_digit) && body.iter().any(u8::is_ascii_alphabetic) {
                token(SecretKind::OpenAiKey, 3, 20, &is_token_byte)
            } else {
                None
            }
        }
        b'A' if rest.starts_with(b"AIza") => token(SecretKind::GoogleKey, 4, 35, &is_token_byte),
        b'A' if rest.len() >= 4 && AWS_PREFIXES.iter().any(|p| rest.starts_with(p)) => {
            let len = run(bytes, i + 4, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
            let end = i + 4 + len;
            (policy.covers(SecretKind::AwsAccessKey) && len == 16 && !bytes.get(end).is_some_and(|&b| is_token_byte(b))).then_some((
                SecretKind::AwsAccessKey,
                i,
                end,
            ))
        }
        b'g' if rest.starts_with(b"github_pat_") => token(SecretKind::GithubToken, 11, 22, &|b| alnum(b) || b == b'_'),
        b'g' if rest.len() > 4 && rest.starts_with(b"gh") && matches!(rest[2], b'p' | b'o' | b'u' | b's' | b'r') && rest[3] == b'_' => {
            token(SecretKind::GithubToken, 4, 36, &alnum)
        }
        b'x' if rest.len() > 5 && rest.starts_with(b"xox") && matches!(rest[3], b'a' | b'b' | b'p' | b'r' | b's') && rest[4] == b'-' => {
            let len = run(bytes, i + 5, |b| alnum(b) || b == b'-');
            let body = &bytes[i + 5..i + 5 + len];
            if body.iter().any(u8::is_ascii_digit) { token(SecretKind::SlackToken, 5, 10, &|b| alnum(b) || b == b'-') } else { None }
        }
        b'x' if rest.starts_with(b"xapp-") => token(SecretKind::SlackToken, 5, 20, &|b| alnum(b) || b == b'-'),
        b'B' | b'b' if rest.len() > 7 && rest[..7].eq_ignore_ascii_case(b"bearer ") => {
            let start = i + 7;
            let len = run(bytes, start, |b| alnum(b) || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'='));
            let body = &bytes[start..start + len];
            // A credential, not a word: long, and with a digit in it.
            (policy.covers(SecretKind::BearerToken) && len >= 16 && body.iter().any(u8::is_ascii_digit)).then_some((
                SecretKind::BearerToken,
                start,
                start + len,
            ))
        }
        b'-' if rest.starts_with(b"-----BEGIN ") && policy.covers(SecretKind::PrivateKey) => private_key(bytes, i),
        _ => None,
    };
    // A token as a URL's user (`https://ghp_…@github.com`) is that token; else the
    // password after the user, which may be a word like any other.
    let url_password = || {
        let after_scheme = i >= 3 && &bytes[i - 3..i] == b"://";
        if after_scheme && policy.covers(SecretKind::UrlPassword) { url_password(bytes, i, newlines) } else { None }
    };
    hit.or_else(url_password)
        .or_else(|| if line_start && policy.covers(SecretKind::EnvSecret) { env_secret(bytes, i, newlines) } else { None })
}

/// Stripe's secret and restricted keys, live and test (`pk_` keys are public).
const STRIPE_PREFIXES: [&[u8]; 4] = [b"sk_live_", b"rk_live_", b"sk_test_", b"rk_test_"];

/// A JSON Web Token: a header and a payload (JSON objects, so each starts `eyJ`) and a
/// signature, base64url parts joined by dots. An unsigned one (`alg: none`, nothing
/// after the last dot) carries no credential.
fn jwt(bytes: &[u8], i: usize) -> Option<(SecretKind, usize, usize)> {
    let base64url = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let header = run(bytes, i, base64url);
    let payload_at = i + header + 1;
    if header < 10 || bytes.get(i + header) != Some(&b'.') || !bytes[payload_at.min(bytes.len())..].starts_with(JWT_START) {
        return None;
    }
    let payload = run(bytes, payload_at, base64url);
    let signature_at = payload_at + payload + 1;
    let signature = run(bytes, signature_at, base64url);
    let end = signature_at + signature;
    (payload >= 10 && bytes.get(payload_at + payload) == Some(&b'.') && signature >= 16 && bytes.get(end) != Some(&b'.')).then_some((
        SecretKind::Jwt,
        i,
        end,
    ))
}

/// The password of `scheme://user:password@host` (`i` is where the user starts): the
/// range to replace, so the URL still names its user and host. `$VAR` and `${VAR}`
/// name a password kept elsewhere, and `<password>` is documentation's.
fn url_password(bytes: &[u8], i: usize, newlines: Newlines) -> Option<(SecretKind, usize, usize)> {
    let ends_part = |b: u8| {
        b.is_ascii_whitespace()
            || matches!(b, b'/' | b'"' | b'\'' | b'?' | b'#' | b'<' | b'>')
            || (newlines == Newlines::Escaped && b == b'\\')
    };
    let user = run(bytes, i, |b| !ends_part(b) && b != b':' && b != b'@');
    let start = i + user + 1;
    if bytes.get(i + user) != Some(&b':') {
        return None;
    }
    let password = run(bytes, start, |b| !ends_part(b) && b != b'@');
    let end = start + password;
    let named_elsewhere = bytes.get(start) == Some(&b'$');
    (password > 0 && bytes.get(end) == Some(&b'@') && !named_elsewhere).then_some((SecretKind::UrlPassword, start, end))
}

const AWS_PREFIXES: [&[u8]; 8] = [b"AKIA", b"ASIA", b"AGPA", b"AIDA", b"AROA", b"ANPA", b"ANVA", b"AIPA"];

/// `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----` line (or the
/// end of the text, for a block cut short).
fn private_key(bytes: &[u8], i: usize) -> Option<(SecretKind, usize, usize)> {
    let header_end = i + 11 + run(bytes, i + 11, |b| b.is_ascii_uppercase() || b == b' ');
    if !bytes[i..header_end].ends_with(b"PRIVATE KEY") || !bytes[header_end..].starts_with(b"-----") {
        return None;
    }
    let body = header_end + 5;
    let end = find(&bytes[body..], b"-----END ")
        .and_then(|at| {
            let after = body + at + 9;
            let name_end = after + run(bytes, after, |b| b.is_ascii_uppercase() || b == b' ');
            bytes[name_end..].starts_with(b"-----").then_some(name_end + 5)
        })
        .unwrap_or(bytes.len());
    Some((SecretKind::PrivateKey, i, end))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Variables that hold a secret whatever their value looks like.
const SECRET_NAMES: [&str; 19] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_TOKEN",
    "HF_TOKEN",
    "NPM_TOKEN",
    "DATABASE_URL",
    "STRIPE_SECRET_KEY",
    "SECRET_KEY",
    "API_KEY",
    "PASSWORD",
    "AUTH_TOKEN",
];

/// Name endings that mark a secret (`DB_PASSWORD`, `SENTRY_AUTH_TOKEN`, `MY_API_KEY`);
/// `MAX_TOKENS` or `TOKEN_LIMIT` are not.
const SECRET_SUFFIXES: [&str; 6] = ["_API_KEY", "_SECRET", "_SECRET_KEY", "_ACCESS_TOKEN", "_AUTH_TOKEN", "_PASSWORD"];

/// `NAME=value` (optionally after `export `) at the start of a line, for a name that
/// holds a secret: the value, without its quotes, is the range to replace.
fn env_secret(bytes: &[u8], i: usize, newlines: Newlines) -> Option<(SecretKind, usize, usize)> {
    let mut at = skip_line_prefix(bytes, i, newlines);
    if bytes[at..].starts_with(b"export ") {
        at += 7;
    }
    let name_len = run(bytes, at, |b| b.is_ascii_alphanumeric() || b == b'_');
    // An INI file (AWS's credentials, a .pypirc) puts spaces around the `=`.
    let blank = |b: u8| b == b' ' || b == b'\t';
    let spaces_before = run(bytes, at + name_len, blank);
    // Every string value starts a line: most are no assignment, which costs one look.
    if bytes.get(at + name_len + spaces_before) != Some(&b'=') {
        return None;
    }
    let name = &bytes[at..at + name_len];
    let named = |secret: &str| name.eq_ignore_ascii_case(secret.as_bytes());
    let ends_with = |suffix: &str| name.len() >= suffix.len() && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes());
    if !SECRET_NAMES.iter().any(|secret| named(secret)) && !SECRET_SUFFIXES.iter().any(|suffix| ends_with(suffix)) {
        return None;
    }
    let after_equals = at + name_len + spaces_before + 1;
    let spaces_after = run(bytes, after_equals, blank);
    let start = after_equals + spaces_after;
    let escaped_quote = newlines == Newlines::Escaped && bytes[start..].starts_with(b"\\\"");
    let (start, end) = match bytes.get(start) {
        // A quoted value runs to its closing quote, spaces and escapes included.
        _ if escaped_quote => {
            let from = start + 2;
            let mut end = from;
            while end < bytes.len() && !bytes[end..].starts_with(b"\\\"") {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            (from, end.min(bytes.len()))
        }
        Some(&quote @ (b'"' | b'\'')) if !(newlines == Newlines::Escaped && quote == b'"') => {
            let from = start + 1;
            (from, from + run(bytes, from, |b| b != quote && b != b'\n'))
        }
        _ => {
            let stop = |b: u8| !(b.is_ascii_whitespace() || b == b'"' || b == b'\'' || (newlines == Newlines::Escaped && b == b'\\'));
            (start, start + run(bytes, start, stop))
        }
    };
    // `$OTHER` and `${OTHER}` name another variable; an empty value holds nothing; and
    // documentation's placeholders (`sk-ant-...`, `<your key>`, `xxxx`) are no secret.
    let value = &bytes[start..end];
    let placeholder = value.windows(3).any(|w| w == b"...")
        || value.starts_with(b"<")
        || value.iter().all(|b| matches!(b, b'x' | b'X' | b'*' | b'.'))
        || (value.get(..4).is_some_and(|head| head.eq_ignore_ascii_case(b"your")) && !value.get(4).is_some_and(u8::is_ascii_alphanumeric));
    // Spaced out, it may be code (`API_KEY = os.environ["API_KEY"]`, `password =
    // args.password`, `SECRET_KEY = None`, `password == x`): a call, an index, a block,
    // another name's field, a constant or a comparison is no value. A quoted value is.
    let quoted = start > 0 && matches!(bytes[start - 1], b'"' | b'\'');
    let field = value.contains(&b'.')
        && value.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && value.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'));
    let constant = matches!(value, b"None" | b"True" | b"False" | b"null" | b"nil" | b"true" | b"false" | b"undefined");
    let code = spaces_before + spaces_after > 0
        && !quoted
        && (value.iter().any(|b| matches!(b, b'(' | b'[' | b'{')) || field || constant || value.starts_with(b"="));
    if value.is_empty() || value[0] == b'$' || value.starts_with(b"[REDACTED:") || placeholder || code {
        return None;
    }
    Some((SecretKind::EnvSecret, start, end))
}

/// Past what tools put before a file's line: indentation, and a line number with its
/// arrow or tab, as Claude Code's Read tool and `cat -n` show files (`     3→KEY=…`).
fn skip_line_prefix(bytes: &[u8], mut at: usize, newlines: Newlines) -> usize {
    let blank = |bytes: &[u8], at: usize| -> usize {
        match bytes.get(at) {
            Some(b' ' | b'\t') => 1,
            Some(b'\\') if newlines == Newlines::Escaped && bytes.get(at + 1) == Some(&b't') => 2,
            _ => 0,
        }
    };
    loop {
        let step = blank(bytes, at);
        if step == 0 {
            break;
        }
        at += step;
    }
    let digits = run(bytes, at, |b| b.is_ascii_digit());
    if digits > 0 {
        let after = at + digits;
        if bytes[after..].starts_with("→".as_bytes()) {
            at = after + "→".len();
        } else if blank(bytes, after) > 0 {
            at = after + blank(bytes, after);
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn redact(text: &str) -> String {
        Redaction::all().text(text, &mut Found::default()).unwrap_or_else(|| String::from(text))
    }

    #[test]
    fn a_secret_at_the_end_of_a_word_is_not_one() {
        assert_eq!(redact("mask-ant-api03-abcdefghijklmnopqrstuvwxyz"), "mask-ant-api03-abcdefghijklmnopqrstuvwxyz");
    }

    #[test]
    fn json_strings_skip_keys_and_opaque_values() {
        let line = r#"{"type":"x","signature":"sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa","message":{"content":[{"text":"a"}]}}"#;
        let mut values = Vec::new();
        assert!(each_json_string(line, |s, e| values.push(&line[s..e])));
        assert_eq!(values, ["a"]);
    }

    /// Past the containers kept inline, each string still sits under its own key: an
    /// opaque one deep down is left alone, and the keys above it count again on the
    /// way back out.
    #[test]
    fn json_strings_know_their_key_at_any_depth() {
        for depth in [1, 7, 8, 9, 20] {
            let (open, close) = (r#"{"x":["#.repeat(depth - 1), "]}".repeat(depth - 1));
            let line = format!(r#"{{"type":"a","x":[{open}{{"signature":"b","text":"c"}},"d"{close}],"id":"e","text":"f"}}"#);
            let mut values = Vec::new();
            assert!(each_json_string(&line, |s, e| values.push(&line[s..e])), "{depth}: {line}");
            assert_eq!(values, ["c", "d", "f"], "{depth}: {line}");
        }
        assert!(!each_json_string(r#"{"a":["b"]]}"#, |_, _| ()));
        assert!(!each_json_string(r#"{"a":["b"}"#, |_, _| ()));
    }

    /// A line that turns out not to be JSON is scanned again as text: a secret its
    /// walk found before it gave up is counted once, not twice.
    #[test]
    fn a_line_that_is_not_json_counts_each_secret_once() {
        let line = r#"{"text":"ghp_abcdefghijklmnopqrstuvwxyz0123456789","more":["#;
        let mut found = Found::default();
        let redacted = Redaction::all().json_line(line, &mut found).unwrap();
        assert!(redacted.contains("[REDACTED:github-token]") && !redacted.contains("ghp_"), "{redacted}");
        assert_eq!(found.report(), [Redacted { kind: "github-token".into(), count: 1 }]);
    }

    /// Text the look-ahead passes over holds no secret: it finds what the byte-by-byte
    /// scan finds, in text made of secrets that have no `-`, `_` or `=` (a Google or AWS
    /// key, a bearer token), pieces of the others, and prose.
    #[test]
    fn the_look_ahead_passes_over_no_secret() {
        use alloc::vec;
        use proptest::prelude::*;
        let pieces: BoxedStrategy<&'static str> = prop_oneof![
            Just("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"),
            Just("AKIAIOSFODNN7EXAMPLE"),
            Just("Bearer abcdefghij0123456789"),
            Just("bEaReR abcdefghij0123456789"),
            Just("sk-ant-api03-abcdefghijklmnopqrstuvwxyz"),
            Just("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            Just("xoxb-1234567890-abcdef"),
            Just("-----BEGIN RSA PRIVATE KEY-----"),
            Just("PASSWORD=hunter22"),
            Just("password=hunter22"),
            Just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1rwW1gFWFOEjXk"),
            Just("sk_live_abcdefghij0123456789"),
            Just("db://u:pw@h"),
            Just("@"),
            Just("."),
            Just("\\r"),
            Just("\\"),
            Just("k_live_abcdefghij0123456789"),
            Just("\\n"),
            Just("\n"),
            Just("\n"),
            Just(" "),
            Just("bear"),
            Just("the build runs "),
            Just("0"),
        ]
        .boxed();
        let texts = proptest::collection::vec(pieces, 0..8).prop_map(|pieces: Vec<&str>| pieces.concat());
        proptest::proptest!(ProptestConfig::with_cases(2000), |(text in texts)| {
            for newlines in [Newlines::Plain, Newlines::Escaped] {
                let (mut quick, mut scanned) = (Found::default(), Found::default());
                let redacted = redact_span(Redaction::all(), &text, newlines, &mut quick);
                prop_assert_eq!(&redacted, &scan_span(Redaction::all(), &text, newlines, &mut scanned));
                prop_assert_eq!(&quick, &scanned);
            }
        });
    }

    /// The letter of an escape starts no secret: `\rk_live_…` in a JSON string is a
    /// carriage return and a word, and the line written stays JSON whatever the run of
    /// backslashes before it.
    #[test]
    fn an_escapes_letter_starts_no_secret_and_a_line_stays_json() {
        use alloc::string::ToString;
        for text in ["a\rk_live_abcdefghij0123456789 b", "\\\rk_test_abcdefghij0123456789", "x\u{8}earer abcdefghij0123456789"] {
            let line = serde_json::json!({ "type": "user", "message": { "content": text } }).to_string();
            let written = Redaction::all().json_line(&line, &mut Found::default()).unwrap_or(line.clone());
            assert!(serde_json::from_str::<serde_json::Value>(&written).is_ok(), "{written}");
        }
        let line = serde_json::json!({ "content": "a \\rk_live_abcdefghij0123456789" }).to_string();
        let written = Redaction::all().json_line(&line, &mut Found::default()).unwrap();
        assert!(written.contains("[REDACTED:stripe-key]") && serde_json::from_str::<serde_json::Value>(&written).is_ok(), "{written}");
    }

    #[test]
    fn in_json_a_line_starts_after_an_escape_and_after_a_raw_newline_behind_a_backslash() {
        let escaped = |text: &str| redact_span(Redaction::all(), text, Newlines::Escaped, &mut Found::default());
        let marked = "PASSWORD=[REDACTED:env-secret]";
        assert_eq!(escaped("a\\nPASSWORD=hunter22").as_deref(), Some(&*format!("a\\n{marked}")));
        assert_eq!(escaped("\\\nPASSWORD=hunter22").as_deref(), Some(&*format!("\\\n{marked}")));
        assert_eq!(escaped("\\\\nPASSWORD=hunter22"), None, "an escaped backslash, then a letter n");
    }
}

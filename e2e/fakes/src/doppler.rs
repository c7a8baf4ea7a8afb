//! A contract fake of the Doppler REST API (v3) — a fake, not Doppler.
//!
//! It follows Doppler's API reference (<https://docs.doppler.com/reference/api>) for the calls
//! the External Secrets provider makes:
//!
//! * authentication: every request needs the token as HTTP Basic user (empty password) or as a
//!   bearer token; an unknown token is 401 `{"messages":[...],"success":false}`. A service token
//!   is bound to one project and config (which the query may repeat but not change, 403
//!   otherwise); a personal token needs `project` and `config` in the query or body (400);
//! * `GET /v3/projects` (the token check);
//! * `GET /v3/configs/config/secrets/download`: `format` (`json` default, `env`, `yaml`,
//!   `docker`, `dotnet-json`), `name_transformer` (`upper-camel`, `camel`, `lower-snake`,
//!   `tf-var`, `dotnet-env`, `lower-kebab`) and `secrets` (comma-separated names); unknown
//!   values are 400. The answer carries an `ETag`; `If-None-Match` with the current one is 304;
//! * `POST /v3/configs/config/secrets` with a JSON body of exactly one of `secrets` (name to
//!   value) or `change_requests` (`name`, `originalName`, `value`, `shouldDelete`); names must be
//!   upper snake case (letters, digits, underscores, not starting with a digit);
//! * `POST /v3/auth/oidc` `{"identity","token"}`: the token must be a JWT whose `aud` claim holds
//!   the audience registered for the identity; answers a short-lived API token.
//!
//! Unknown projects or configs are 404.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::server::{FakeServer, bearer, header as header_value};

/// Secrets of one config, by name.
type Config = BTreeMap<String, String>;

/// What a token may reach.
#[derive(Clone)]
enum Grant {
    /// A service token: one project and config.
    Service(String, String),
    /// A personal (or OIDC-issued) token: any config named in the request.
    Personal,
}

#[derive(Default)]
struct Data {
    tokens: HashMap<String, Grant>,
    /// OIDC identity to the audience its service-account tokens must carry.
    identities: HashMap<String, String>,
    configs: HashMap<(String, String), Config>,
    issued: u64,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake Doppler API and handles to seed and inspect it.
pub struct DopplerFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl DopplerFake {
    /// Starts an empty fake.
    pub async fn start() -> std::io::Result<Self> {
        let data: Shared = Arc::default();
        let router = Router::new()
            .route("/v3/projects", get(projects))
            .route("/v3/configs/config/secrets/download", get(download))
            .route("/v3/configs/config/secrets", post(update))
            .route("/v3/auth/oidc", post(oidc))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Creates the (empty) config `project/config` and a service token bound to it.
    pub fn add_service_token(&self, token: &str, project: &str, config: &str) {
        let mut data = lock(&self.data);
        data.configs
            .entry((project.to_owned(), config.to_owned()))
            .or_default();
        data.tokens.insert(
            token.to_owned(),
            Grant::Service(project.to_owned(), config.to_owned()),
        );
    }

    /// A personal token, reaching every config.
    pub fn add_personal_token(&self, token: &str) {
        lock(&self.data)
            .tokens
            .insert(token.to_owned(), Grant::Personal);
    }

    /// A service account identity accepting Kubernetes tokens issued for `audience`.
    pub fn add_oidc_identity(&self, identity: &str, audience: &str) {
        lock(&self.data)
            .identities
            .insert(identity.to_owned(), audience.to_owned());
    }

    /// Sets secret `name` of `project/config` (creating the config).
    pub fn set_secret(&self, project: &str, config: &str, name: &str, value: &str) {
        lock(&self.data)
            .configs
            .entry((project.to_owned(), config.to_owned()))
            .or_default()
            .insert(name.to_owned(), value.to_owned());
    }

    /// The secrets of `project/config` (empty if it does not exist).
    pub fn secrets(&self, project: &str, config: &str) -> Config {
        lock(&self.data)
            .configs
            .get(&(project.to_owned(), config.to_owned()))
            .cloned()
            .unwrap_or_default()
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Doppler's error answer.
fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"messages": [message], "success": false})),
    )
        .into_response()
}

/// The token of a request: Basic user (empty password) or bearer.
fn token(headers: &HeaderMap) -> Option<String> {
    if let Some(token) = bearer(headers) {
        return Some(token.to_owned());
    }
    let basic = header_value(headers, "authorization")?.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    password.is_empty().then(|| user.to_owned())
}

/// Why a request is refused: status and Doppler's message.
type Refusal = (StatusCode, &'static str);

fn grant(data: &Data, headers: &HeaderMap) -> Result<Grant, Refusal> {
    token(headers)
        .and_then(|token| data.tokens.get(&token).cloned())
        .ok_or((StatusCode::UNAUTHORIZED, "Invalid Auth token"))
}

/// The config a request reaches: the service token's, or the one it names.
fn config_of(
    grant: &Grant,
    project: Option<&str>,
    config: Option<&str>,
) -> Result<(String, String), Refusal> {
    match grant {
        Grant::Service(own_project, own_config) => {
            if project.is_some_and(|project| project != own_project)
                || config.is_some_and(|config| config != own_config)
            {
                return Err((
                    StatusCode::FORBIDDEN,
                    "This token does not have access to requested config",
                ));
            }
            Ok((own_project.clone(), own_config.clone()))
        }
        Grant::Personal => match (project, config) {
            (Some(project), Some(config)) if !project.is_empty() && !config.is_empty() => {
                Ok((project.to_owned(), config.to_owned()))
            }
            _ => Err((
                StatusCode::BAD_REQUEST,
                "You must specify a project and config",
            )),
        },
    }
}

fn query_map(query: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

async fn projects(State(data): State<Shared>, headers: HeaderMap) -> Response {
    let data = lock(&data);
    if let Err((status, message)) = grant(&data, &headers) {
        return error(status, message);
    }
    let mut names: Vec<&String> = data.configs.keys().map(|(project, _)| project).collect();
    names.dedup();
    let projects: Vec<Value> = names.iter().map(|name| json!({"slug": name})).collect();
    axum::Json(json!({"projects": projects, "success": true})).into_response()
}

async fn download(
    State(data): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let data = lock(&data);
    let grant = match grant(&data, &headers) {
        Ok(grant) => grant,
        Err((status, message)) => return error(status, message),
    };
    let query = query_map(query.as_deref());
    let get = |name: &str| query.get(name).map(String::as_str);
    let (project, config) = match config_of(&grant, get("project"), get("config")) {
        Ok(found) => found,
        Err((status, message)) => return error(status, message),
    };
    let Some(secrets) = data.configs.get(&(project.clone(), config.clone())) else {
        return error(
            StatusCode::NOT_FOUND,
            &format!("Could not find requested config '{config}'"),
        );
    };
    let wanted: Option<Vec<&str>> = get("secrets").map(|list| list.split(',').collect());
    let transformer = get("name_transformer");
    let mut selected = Config::new();
    for (name, value) in secrets {
        if wanted
            .as_ref()
            .is_none_or(|list| list.contains(&name.as_str()))
        {
            let Some(name) = transform(name, transformer) else {
                return error(StatusCode::BAD_REQUEST, "Invalid name transformer");
            };
            selected.insert(name, value.clone());
        }
    }
    let Some(body) = render(&selected, get("format").unwrap_or("json")) else {
        return error(StatusCode::BAD_REQUEST, "Invalid format");
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut hasher);
    let etag = format!("W/\"{:016x}\"", hasher.finish());
    if header_value(&headers, "if-none-match") == Some(etag.as_str()) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (StatusCode::OK, [(header::ETAG, etag)], body).into_response()
}

/// A secret name in the case a name transformer asks for (`None`: unknown transformer).
fn transform(name: &str, transformer: Option<&str>) -> Option<String> {
    let words = |text: &str| -> Vec<String> {
        text.split('_')
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let capitalized = |word: &String| {
        let mut chars = word.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    let upper_camel = |text: &str| words(text).iter().map(capitalized).collect::<String>();
    Some(match transformer {
        None => name.to_owned(),
        Some("upper-camel") => upper_camel(name),
        Some("camel") => {
            let words = words(name);
            let mut out = words.first().cloned().unwrap_or_default();
            out.extend(words.iter().skip(1).map(capitalized));
            out
        }
        Some("lower-snake") => words(name).join("_"),
        Some("tf-var") => format!("TF_VAR_{}", words(name).join("_")),
        Some("dotnet-env") => name
            .split("__")
            .map(upper_camel)
            .collect::<Vec<_>>()
            .join("__"),
        Some("lower-kebab") => words(name).join("-"),
        Some(_) => return None,
    })
}

/// The download body in `format` (`None`: unknown format).
fn render(secrets: &Config, format: &str) -> Option<String> {
    let quoted = |value: &String| Value::String(value.clone()).to_string();
    let lines = |line: &dyn Fn(&String, &String) -> String| {
        secrets
            .iter()
            .map(|(name, value)| line(name, value) + "\n")
            .collect::<String>()
    };
    Some(match format {
        "json" => json!(secrets).to_string(),
        "dotnet-json" => {
            let renamed: Config = secrets
                .iter()
                .map(|(name, value)| {
                    let name = transform(name, Some("dotnet-env")).unwrap_or_default();
                    (name.replace("__", ":"), value.clone())
                })
                .collect();
            json!(renamed).to_string()
        }
        "env" => lines(&|name, value| format!("{name}={}", quoted(value))),
        "yaml" => lines(&|name, value| format!("{name}: {}", quoted(value))),
        "docker" => lines(&|name, value| format!("{name}={value}")),
        _ => return None,
    })
}

/// Doppler's secret name rule: upper case letters, digits and underscores, no leading digit.
fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|first| first.is_ascii_uppercase() || first == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

async fn update(State(data): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let mut data = lock(&data);
    let grant = match grant(&data, &headers) {
        Ok(grant) => grant,
        Err((status, message)) => return error(status, message),
    };
    if header_value(&headers, "content-type") != Some("application/json") {
        return error(
            StatusCode::BAD_REQUEST,
            "Content-Type must be application/json",
        );
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid JSON body");
    };
    let field = |name: &str| body.get(name).and_then(Value::as_str);
    let (project, config) = match config_of(&grant, field("project"), field("config")) {
        Ok(found) => found,
        Err((status, message)) => return error(status, message),
    };
    let Some(secrets) = data.configs.get_mut(&(project, config.clone())) else {
        return error(
            StatusCode::NOT_FOUND,
            &format!("Could not find requested config '{config}'"),
        );
    };
    match (body.get("secrets"), body.get("change_requests")) {
        (Some(Value::Object(values)), None) => {
            for (name, value) in values {
                let Some(value) = value.as_str().filter(|_| valid_name(name)) else {
                    return error(StatusCode::BAD_REQUEST, "Invalid secret name or value");
                };
                secrets.insert(name.clone(), value.to_owned());
            }
        }
        (None, Some(Value::Array(changes))) => {
            for change in changes {
                let name = change.get("name").and_then(Value::as_str);
                let original = change.get("originalName").and_then(Value::as_str);
                let delete = change.get("shouldDelete").and_then(Value::as_bool) == Some(true);
                match (name, original, delete) {
                    (Some(_), Some(original), true) => {
                        if secrets.remove(original).is_none() {
                            return error(
                                StatusCode::BAD_REQUEST,
                                &format!("Secret '{original}' does not exist"),
                            );
                        }
                    }
                    (Some(name), _, false) if valid_name(name) => {
                        let Some(value) = change.get("value").and_then(Value::as_str) else {
                            return error(StatusCode::BAD_REQUEST, "A value is required");
                        };
                        secrets.insert(name.to_owned(), value.to_owned());
                    }
                    _ => return error(StatusCode::BAD_REQUEST, "Invalid change request"),
                }
            }
        }
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "Either secrets or change_requests is required (can't use both)",
            );
        }
    }
    axum::Json(json!({"secrets": {}, "success": true})).into_response()
}

async fn oidc(State(data): State<Shared>, body: Bytes) -> Response {
    let mut data = lock(&data);
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid JSON body");
    };
    let identity = body.get("identity").and_then(Value::as_str);
    let jwt = body.get("token").and_then(Value::as_str);
    let (Some(identity), Some(jwt)) = (identity, jwt) else {
        return error(StatusCode::BAD_REQUEST, "identity and token are required");
    };
    let Some(audience) = data.identities.get(identity).cloned() else {
        return error(StatusCode::UNAUTHORIZED, "Unknown identity");
    };
    if !jwt_audiences(jwt).contains(&audience) {
        return error(StatusCode::UNAUTHORIZED, "Token audience not accepted");
    }
    data.issued += 1;
    let token = format!("dp.sa.oidc-{}", data.issued);
    data.tokens.insert(token.clone(), Grant::Personal);
    axum::Json(json!({
        "success": true,
        "token": token,
        "expires_at": "2099-01-01T00:00:00.000Z",
    }))
    .into_response()
}

/// The `aud` claim of a JWT (string or list), without checking its signature.
fn jwt_audiences(jwt: &str) -> Vec<String> {
    let payload = jwt.split('.').nth(1).unwrap_or_default();
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload) else {
        return Vec::new();
    };
    match serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|claims| claims.get("aud").cloned())
    {
        Some(Value::String(one)) => vec![one],
        Some(Value::Array(many)) => many
            .into_iter()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_transformers_follow_dopplers_cases() {
        let cases = [
            ("upper-camel", "ApiKey"),
            ("camel", "apiKey"),
            ("lower-snake", "api_key"),
            ("tf-var", "TF_VAR_api_key"),
            ("lower-kebab", "api-key"),
        ];
        for (transformer, expected) in cases {
            assert_eq!(transform("API_KEY", Some(transformer)).unwrap(), expected);
        }
        assert_eq!(
            transform("APP__API_KEY", Some("dotnet-env")).unwrap(),
            "App__ApiKey"
        );
        assert_eq!(transform("API_KEY", Some("shout")), None);
    }

    #[test]
    fn names_must_be_upper_snake_case() {
        assert!(valid_name("DB_URL_2"));
        assert!(!valid_name("db-url"));
        assert!(!valid_name("2DB"));
    }
}

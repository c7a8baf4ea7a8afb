//! A contract fake of the GitLab REST API (v4) for CI/CD variables — a fake, not GitLab.
//!
//! It follows GitLab's API reference: "Project-level CI/CD variables API"
//! (<https://docs.gitlab.com/api/project_level_variables/>), "Group-level variables API"
//! (<https://docs.gitlab.com/api/group_level_variables/>), "List groups of a project" of the
//! Projects API (<https://docs.gitlab.com/api/projects/#list-groups>) and offset pagination
//! (<https://docs.gitlab.com/api/rest/#pagination>):
//!
//! * every request needs the token as `PRIVATE-TOKEN` (or `Authorization: Bearer`), else
//!   401 `{"message":"401 Unauthorized"}`;
//! * `GET /api/v4/projects/:id/variables[/:key]` and `GET /api/v4/groups/:id/variables[/:key]`,
//!   `:id` a numeric id or a URL-encoded full path; an unknown project or group is
//!   404 `{"message":"404 Project Not Found"}` (`Group`); an unknown key
//!   404 `{"message":"404 Variable Not Found"}`; a key held in several environment scopes
//!   without `filter[environment_scope]` is 409, as GitLab's variable finder answers;
//! * `GET /api/v4/projects/:id/groups` lists the project's group and its ancestors;
//! * lists take `page` (default 1) and `per_page` (default 20, at most 100), refuse
//!   non-numeric ones with 400, and answer with the `X-Page`, `X-Per-Page`, `X-Total`,
//!   `X-Total-Pages`, `X-Next-Page` and `X-Prev-Page` headers (the next page empty on the last).
//!
//! Variable keys are letters, digits and `_` (up to 255), as GitLab's create validates; the
//! seeding helpers refuse other keys.

use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::server::{FakeServer, bearer, header};

/// Whose variable a seeded variable is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The project with this numeric id.
    Project(u64),
    /// The group with this numeric id.
    Group(u64),
}

#[derive(Debug, Clone)]
struct Variable {
    owner: Owner,
    key: String,
    value: String,
    scope: String,
}

#[derive(Default)]
struct Data {
    token: String,
    /// (id, full path) of each group.
    groups: Vec<(u64, String)>,
    /// (id, full path, ids of its groups) of each project.
    projects: Vec<(u64, String, Vec<u64>)>,
    variables: Vec<Variable>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake GitLab and handles to seed it.
pub struct GitlabFake {
    /// The HTTPS server (URL, CA, request log); the API is under `/api/v4`.
    pub server: FakeServer,
    data: Shared,
}

impl GitlabFake {
    /// Starts a fake accepting `token`, with no projects or groups.
    pub async fn start(token: &str) -> std::io::Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            token: token.to_owned(),
            ..Data::default()
        }));
        let router = Router::new()
            .route("/api/v4/projects/{id}/variables", get(list_project))
            .route("/api/v4/projects/{id}/variables/{key}", get(get_project))
            .route("/api/v4/projects/{id}/groups", get(project_groups))
            .route("/api/v4/groups/{id}/variables", get(list_group))
            .route("/api/v4/groups/{id}/variables/{key}", get(get_group))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        Ok(Self { server, data })
    }

    /// Adds group `id` at `full_path` (`parent/child` for a subgroup).
    pub fn add_group(&self, id: u64, full_path: &str) {
        lock(&self.data).groups.push((id, full_path.to_owned()));
    }

    /// Adds project `id` at `full_path`, in `groups` (its group and that group's ancestors).
    pub fn add_project(&self, id: u64, full_path: &str, groups: &[u64]) {
        lock(&self.data)
            .projects
            .push((id, full_path.to_owned(), groups.to_vec()));
    }

    /// Creates or replaces the variable `key` of `owner` in environment `scope` (`*`: all);
    /// false, as GitLab's 400, for a key that is not letters, digits and `_`.
    pub fn set_variable(&self, owner: Owner, key: &str, value: &str, scope: &str) -> bool {
        let valid = !key.is_empty()
            && key.len() <= 255
            && key
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
        if !valid {
            return false;
        }
        let mut data = lock(&self.data);
        data.variables
            .retain(|v| !(v.owner == owner && v.key == key && v.scope == scope));
        data.variables.push(Variable {
            owner,
            key: key.to_owned(),
            value: value.to_owned(),
            scope: scope.to_owned(),
        });
        true
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// GitLab's error answer.
fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "message": message }))).into_response()
}

/// The data, if the request carries the fake's token.
fn authorized<'a>(
    data: &'a Shared,
    headers: &HeaderMap,
) -> Result<MutexGuard<'a, Data>, Box<Response>> {
    let data = lock(data);
    let token = header(headers, "private-token").or_else(|| bearer(headers));
    if token == Some(data.token.as_str()) {
        Ok(data)
    } else {
        Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            "401 Unauthorized",
        )))
    }
}

impl Data {
    /// The owner an `:id` (numeric or full path) names, or GitLab's 404.
    fn owner(&self, project: bool, id: &str) -> Result<Owner, Box<Response>> {
        let found = if project {
            self.projects
                .iter()
                .find(|(number, path, _)| number.to_string() == id || path == id)
                .map(|(number, _, _)| Owner::Project(*number))
        } else {
            self.groups
                .iter()
                .find(|(number, path)| number.to_string() == id || path == id)
                .map(|(number, _)| Owner::Group(*number))
        };
        let missing = if project {
            "404 Project Not Found"
        } else {
            "404 Group Not Found"
        };
        found.ok_or_else(|| Box::new(error(StatusCode::NOT_FOUND, missing)))
    }
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn variable_json(variable: &Variable) -> Value {
    json!({
        "variable_type": "env_var",
        "key": variable.key,
        "value": variable.value,
        "protected": false,
        "masked": false,
        "hidden": false,
        "raw": false,
        "environment_scope": variable.scope,
        "description": null,
    })
}

/// One page of `items` as GitLab's offset pagination serves it.
fn page(items: Vec<Value>, query: Option<&str>) -> Response {
    let mut page = 1_usize;
    let mut per_page = 20_usize;
    for (key, value) in query_pairs(query) {
        let target = match key.as_str() {
            "page" => &mut page,
            "per_page" => &mut per_page,
            _ => continue,
        };
        match value.parse::<usize>() {
            Ok(number) => *target = number.max(1),
            Err(_) => {
                let message = json!({ "error": format!("{key} is invalid") });
                return (StatusCode::BAD_REQUEST, axum::Json(message)).into_response();
            }
        }
    }
    let per_page = per_page.min(100);
    let total = items.len();
    let pages = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .collect();
    let mut response = axum::Json(slice).into_response();
    let headers = response.headers_mut();
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    let prev = if page > 1 {
        (page - 1).to_string()
    } else {
        String::new()
    };
    for (name, value) in [
        ("x-page", page.to_string()),
        ("x-per-page", per_page.to_string()),
        ("x-total", total.to_string()),
        ("x-total-pages", pages.to_string()),
        ("x-next-page", next),
        ("x-prev-page", prev),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

fn list(
    data: &Shared,
    headers: &HeaderMap,
    project: bool,
    id: &str,
    query: Option<&str>,
) -> Response {
    let data = match authorized(data, headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    let owner = match data.owner(project, id) {
        Ok(owner) => owner,
        Err(missing) => return *missing,
    };
    let items = data
        .variables
        .iter()
        .filter(|variable| variable.owner == owner)
        .map(variable_json)
        .collect();
    page(items, query)
}

fn one(
    data: &Shared,
    headers: &HeaderMap,
    project: bool,
    (id, key): (String, String),
    query: Option<&str>,
) -> Response {
    let data = match authorized(data, headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    let owner = match data.owner(project, &id) {
        Ok(owner) => owner,
        Err(missing) => return *missing,
    };
    let scope = query_pairs(query)
        .into_iter()
        .find(|(name, _)| name == "filter[environment_scope]")
        .map(|(_, value)| value);
    let found: Vec<&Variable> = data
        .variables
        .iter()
        .filter(|variable| variable.owner == owner && variable.key == key)
        .filter(|variable| scope.as_deref().is_none_or(|scope| variable.scope == scope))
        .collect();
    match found.as_slice() {
        [] => error(StatusCode::NOT_FOUND, "404 Variable Not Found"),
        [variable] => axum::Json(variable_json(variable)).into_response(),
        _ => error(
            StatusCode::CONFLICT,
            "409 Conflict: There are multiple variables with provided parameters. Please use \
             'filter[environment_scope]'",
        ),
    }
}

async fn list_project(
    State(data): State<Shared>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list(&data, &headers, true, &id, query.as_deref())
}

async fn list_group(
    State(data): State<Shared>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list(&data, &headers, false, &id, query.as_deref())
}

async fn get_project(
    State(data): State<Shared>,
    Path(path): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    one(&data, &headers, true, path, query.as_deref())
}

async fn get_group(
    State(data): State<Shared>,
    Path(path): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    one(&data, &headers, false, path, query.as_deref())
}

async fn project_groups(
    State(data): State<Shared>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let data = match authorized(&data, &headers) {
        Ok(data) => data,
        Err(refused) => return *refused,
    };
    let Ok(Owner::Project(number)) = data.owner(true, &id) else {
        return error(StatusCode::NOT_FOUND, "404 Project Not Found");
    };
    let member_of: Vec<u64> = data
        .projects
        .iter()
        .find(|(project, _, _)| *project == number)
        .map(|(_, _, groups)| groups.clone())
        .unwrap_or_default();
    let items = data
        .groups
        .iter()
        .filter(|(group, _)| member_of.contains(group))
        .map(|(group, path)| {
            let name = path.rsplit('/').next().unwrap_or(path);
            json!({"id": group, "name": name, "full_path": path, "full_name": path})
        })
        .collect();
    page(items, query.as_deref())
}

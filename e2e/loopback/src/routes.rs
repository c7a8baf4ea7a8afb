//! HTTP dispatch: authentication, discovery and OIDC documents, and the verbs on resources
//! (get, list, watch, create, update, patch, delete, deletecollection, plus the `status`,
//! `token` and `finalize` subresources and TokenReview).

use crate::authz::Identity;
use crate::errors::{ApiError, ApiResult};
use crate::gc::{DeleteOptions, parse_propagation};
use crate::patch::{PatchKind, PatchRequest};
use crate::query::{Query, ResourcePath, Route, route};
use crate::read::{Representation, Selection, encode_items, encode_list, encode_object};
use crate::resources::{ResourceInfo, Special};
use crate::server::Server;
use crate::state::{WriteOptions, Written};
use crate::{authz, discovery, openapi, watch};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// Response bodies: whole documents or watch streams.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// Largest request body accepted (kube-apiserver allows 3 MiB objects; CRDs can be larger).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Answers one request.
pub(crate) async fn handle(server: Arc<Server>, request: Request<Incoming>) -> Response<Body> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let agent = request
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    server
        .counters
        .count(&method, &path, request.uri().query(), agent);
    let response = match serve(server, request).await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    };
    tracing::debug!(%method, %path, status = response.status().as_u16(), "request");
    response
}

async fn serve(server: Arc<Server>, request: Request<Incoming>) -> ApiResult<Response<Body>> {
    let route = route(request.uri().path());
    let public = matches!(
        route,
        Route::Version | Route::Health | Route::OpenIdConfiguration | Route::Jwks
    );
    if !public {
        let identity = server.authenticate(request.headers())?;
        // The admin is never checked (and never takes the lock for it).
        if identity != Identity::Admin {
            let attributes = authz::attributes(
                request.method(),
                request.uri().path(),
                request.uri().query(),
            );
            server.lock().authorize(&identity, &attributes)?;
        }
    }
    let not_found = ApiError::no_route;
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if matches!(route, Route::CoreVersions | Route::GroupList)
        && discovery::wants_aggregated(accept)
    {
        let document = discovery::aggregated(&server.lock().registry, route == Route::CoreVersions);
        let body = Bytes::from(serde_json::to_vec(&document).expect("JSON values serialize"));
        return Ok(bytes_response(
            StatusCode::OK,
            discovery::AGGREGATED_CONTENT_TYPE,
            body,
        ));
    }
    match route {
        Route::Version => Ok(json_response(StatusCode::OK, &discovery::version())),
        Route::Health => Ok(bytes_response(
            StatusCode::OK,
            "text/plain",
            Bytes::from_static(b"ok"),
        )),
        Route::OpenIdConfiguration => Ok(json_response(
            StatusCode::OK,
            &server.issuer.openid_configuration(&server.base_url),
        )),
        Route::Jwks => Ok(json_response(StatusCode::OK, &server.issuer.jwks())),
        Route::CoreVersions => Ok(json_response(
            StatusCode::OK,
            &discovery::core_versions(&server.address),
        )),
        Route::GroupList => Ok(json_response(
            StatusCode::OK,
            &discovery::group_list(&server.lock().registry),
        )),
        Route::Group(group) => {
            let document =
                discovery::group(&server.lock().registry, &group).ok_or_else(not_found)?;
            Ok(json_response(StatusCode::OK, &document))
        }
        Route::ResourceList(group, version) => {
            let document = discovery::resource_list(&server.lock().registry, &group, &version)
                .ok_or_else(not_found)?;
            Ok(json_response(StatusCode::OK, &document))
        }
        Route::Resource(path) => resource(server, request, path).await,
        Route::OpenApiIndex => Ok(json_response(
            StatusCode::OK,
            &openapi::index(&server.lock().registry),
        )),
        Route::OpenApi(group, version) => {
            let document = openapi::document(&server.lock().registry, &group, &version)
                .ok_or_else(not_found)?;
            Ok(json_response(StatusCode::OK, &document))
        }
        Route::Unknown => Err(not_found()),
    }
}

async fn resource(
    server: Arc<Server>,
    request: Request<Incoming>,
    path: ResourcePath,
) -> ApiResult<Response<Body>> {
    let query = Query::parse(request.uri().query())?;
    let info = server
        .lock()
        .registry
        .get(&path.group, &path.version, &path.plural)
        .ok_or_else(ApiError::no_route)?;
    if !info.namespaced && path.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    match path.subresource.as_deref() {
        None => {}
        Some("status") if info.status_subresource => {}
        Some("token") if info.special == Special::ServiceAccount => {}
        Some("finalize") if info.special == Special::Namespace => {}
        Some(_) => return Err(ApiError::no_route()),
    }
    let method = request.method().clone();
    let headers = request.headers().clone();
    let body = read_body(request).await?;
    let namespace = path.namespace.as_deref();
    let options = WriteOptions {
        dry_run: query.dry_run,
        field_manager: query.field_manager.clone(),
        default_manager: manager_from_user_agent(&headers),
        field_validation: query.field_validation,
        subresource: path.subresource.clone().filter(|sub| sub == "status"),
        patched: None,
    };
    let representation = Representation::from_accept(
        headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
    );
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    match (&method, path.name.as_deref(), path.subresource.as_deref()) {
        (&Method::GET, None, None) if query.watch => Ok(watch_response(
            server,
            info,
            namespace,
            &query,
            representation,
        )?),
        (&Method::GET, None, None) => {
            let selection = Selection::parse(&info, namespace, &query)?;
            // A slow API server: the list answers late, with what is there by then.
            let delay = server.list_delay(&info.plural);
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let page = server.lock().list(
                &info,
                &selection,
                query.limit,
                query.continue_token.as_deref(),
            )?;
            Ok(bytes_response(
                StatusCode::OK,
                "application/json",
                encode_list(&info, &page, representation),
            ))
        }
        (&Method::GET, Some(name), None | Some("status")) => {
            let object = server.lock().get(&info, namespace, name)?;
            Ok(bytes_response(
                StatusCode::OK,
                "application/json",
                encode_object(&info, &object, representation),
            ))
        }
        (&Method::POST, None, None) if info.special == Special::TokenReview => {
            let review = server
                .lock()
                .token_review(&server.issuer, &decode(&content_type, &body)?)?;
            Ok(json_response(StatusCode::CREATED, &review))
        }
        (&Method::POST, None, None) if info.special == Special::SubjectAccessReview => {
            let review = server
                .lock()
                .subject_access_review(&decode(&content_type, &body)?)?;
            Ok(json_response(StatusCode::CREATED, &review))
        }
        (&Method::POST, None, None) => {
            let object = decode(&content_type, &body)?;
            let written = server.lock().create(&info, namespace, object, &options)?;
            Ok(written_response(&info, written))
        }
        (&Method::POST, Some(name), Some("token")) => {
            let body = decode(&content_type, &body)?;
            let token = server.lock().token_request(
                &server.issuer,
                namespace.unwrap_or_default(),
                name,
                &body,
            )?;
            Ok(json_response(StatusCode::CREATED, &token))
        }
        (&Method::PUT, Some(name), None | Some("status")) => {
            let object = decode(&content_type, &body)?;
            let written = server
                .lock()
                .update(&info, namespace, name, object, &options)?;
            Ok(written_response(&info, written))
        }
        (&Method::PUT, Some(name), Some("finalize")) => {
            let object = decode(&content_type, &body)?;
            let written = server.lock().finalize_namespace(&info, name, &object)?;
            Ok(written_response(&info, written))
        }
        (&Method::PATCH, Some(name), None | Some("status")) => {
            let kind = PatchKind::from_content_type(&content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(&content_type))?;
            let patch = PatchRequest {
                kind,
                body: decode(&content_type, &body)?,
                force: query.force,
            };
            let written = server
                .lock()
                .patch(&info, namespace, name, &patch, &options)?;
            Ok(written_response(&info, written))
        }
        (&Method::DELETE, Some(name), None) => {
            let options = delete_options(&query, &body)?;
            let (object, gone) = server.lock().delete(&info, namespace, name, &options)?;
            if gone && info.special != Special::ServiceAccount {
                let status = json!({
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                    "details": {"name": name, "group": info.group, "kind": info.plural, "uid": object["metadata"]["uid"]},
                });
                Ok(json_response(StatusCode::OK, &status))
            } else {
                Ok(bytes_response(
                    StatusCode::OK,
                    "application/json",
                    encode_object(&info, &object, Representation::Full),
                ))
            }
        }
        (&Method::DELETE, None, None) => {
            let options = delete_options(&query, &body)?;
            let selection = Selection::parse(&info, namespace, &query)?;
            let mut state = server.lock();
            let page = state.list(&info, &selection, None, None)?;
            let keys = page
                .items
                .iter()
                .map(|o| {
                    crate::state::State::key(
                        &info,
                        o["metadata"]["namespace"].as_str(),
                        o["metadata"]["name"].as_str().unwrap_or_default(),
                    )
                })
                .collect();
            let deleted = state.delete_collection(&info, keys, &options);
            let version = state.store.resource_version();
            drop(state);
            Ok(bytes_response(
                StatusCode::OK,
                "application/json",
                encode_items(&info, deleted, version),
            ))
        }
        _ => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({method} {})",
            info.plural
        ))),
    }
}

fn watch_response(
    server: Arc<Server>,
    info: Arc<ResourceInfo>,
    namespace: Option<&str>,
    query: &Query,
    representation: Representation,
) -> ApiResult<Response<Body>> {
    let request = watch::WatchRequest {
        selection: Selection::parse(&info, namespace, query)?,
        info,
        resource_version: query.resource_version.clone(),
        bookmarks: query.allow_watch_bookmarks,
        send_initial_events: query.send_initial_events,
        timeout: query.timeout_seconds.map(Duration::from_secs),
        representation,
    };
    let mut receiver = watch::start(server, request);
    let stream = futures::stream::poll_fn(move |context| {
        receiver
            .poll_recv(context)
            .map(|chunk| chunk.map(|bytes| Ok::<_, Infallible>(Frame::data(bytes))))
    });
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn delete_options(query: &Query, body: &Bytes) -> ApiResult<DeleteOptions> {
    let mut options = DeleteOptions {
        dry_run: query.dry_run,
        ..DeleteOptions::default()
    };
    if let Some(policy) = &query.propagation_policy {
        options.propagation = Some(parse_propagation(policy)?);
    }
    if !body.is_empty() {
        let value: Value = serde_json::from_slice(body)
            .map_err(|error| ApiError::bad_request(format!("decoding DeleteOptions: {error}")))?;
        options.merge_body(&value)?;
    }
    Ok(options)
}

async fn read_body(request: Request<Incoming>) -> ApiResult<Bytes> {
    let limited = http_body_util::Limited::new(request.into_body(), MAX_BODY);
    limited
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|error| ApiError::bad_request(format!("reading the request body: {error}")))
}

/// Decodes a JSON (YAML for apply, protobuf for a few built-in kinds) request body.
fn decode(content_type: &str, body: &Bytes) -> ApiResult<Value> {
    if crate::protobuf::is_protobuf(content_type) {
        return crate::protobuf::decode(body);
    }
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(content_type));
    }
    match serde_json::from_slice(body) {
        Ok(value) => Ok(value),
        Err(_) if content_type.contains("yaml") => serde_yaml::from_slice(body)
            .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}"))),
        Err(error) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {error}"
        ))),
    }
}

/// kube-apiserver's default field manager: the User-Agent up to its first `/`.
fn manager_from_user_agent(headers: &HeaderMap) -> String {
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    agent
        .split('/')
        .next()
        .unwrap_or(agent)
        .chars()
        .take(128)
        .collect()
}

fn written_response(info: &ResourceInfo, written: Written) -> Response<Body> {
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = bytes_response(
        status,
        "application/json",
        encode_object(info, &written.object, Representation::Full),
    );
    for warning in written.warnings {
        let text = format!(
            "299 - {}",
            serde_json::to_string(&warning).unwrap_or_default()
        );
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

fn bytes_response(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(BodyExt::boxed(Full::new(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    bytes_response(
        status,
        "application/json",
        Bytes::from(serde_json::to_vec(value).expect("JSON values serialize")),
    )
}

/// The response for an error: its Status object with its code.
pub(crate) fn error_response(error: &ApiError) -> Response<Body> {
    let status = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &error.to_status())
}

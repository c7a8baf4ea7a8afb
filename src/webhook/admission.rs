//! The admission endpoints: an `AdmissionReview` (v1, or v1beta1 answered in kind) in, the
//! verdict out, one path per validated kind.
//!
//! As controller-runtime answers: every review gets HTTP 200 with the verdict in the body;
//! a refused object carries code 403 (`Forbidden`) and every problem, one per line; an object
//! or review that cannot be decoded carries code 400 (`BadRequest`). Deletions and connects
//! are always allowed (upstream's `ValidateDelete` accepts everything).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;
use kube::core::DynamicObject;
use kube::core::Status;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};

use super::metrics::WebhookMetrics;
use super::validate::{self, Kind, Rejection};

/// Reviews carry the object and, on updates, its old version: room for two of the largest
/// objects etcd stores (1.5 MiB each) with JSON overhead.
const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// The router serving every kind's path.
pub fn router(metrics: Arc<WebhookMetrics>) -> Router {
    let mut router = Router::new();
    for kind in Kind::ALL {
        router = router.route(
            kind.path(),
            post(
                move |State(metrics): State<Arc<WebhookMetrics>>, body: Bytes| async move {
                    let _in_flight = metrics.start(kind.path());
                    let started = Instant::now();
                    let review = review(kind, &body);
                    metrics.finished(kind.path(), 200, started.elapsed());
                    (
                        [(CONTENT_TYPE, "application/json")],
                        serde_json::to_vec(&review).unwrap_or_default(),
                    )
                        .into_response()
                },
            ),
        );
    }
    router
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(metrics)
}

/// The answer to the review in `body`, which the API server posted to `kind`'s path.
pub fn review(kind: Kind, body: &[u8]) -> AdmissionReview<DynamicObject> {
    let review: AdmissionReview<DynamicObject> = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => {
            return AdmissionResponse::invalid(format!("cannot decode AdmissionReview: {error}"))
                .into_review();
        }
    };
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(request) => request,
        Err(_) => {
            return AdmissionResponse::invalid("AdmissionReview without a request").into_review();
        }
    };
    let mut response = AdmissionResponse::from(&request);
    let object = match (&request.operation, &request.object) {
        (Operation::Create | Operation::Update, Some(object)) => object,
        _ => return response.into_review(),
    };
    let verdict = serde_json::to_value(object)
        .map_err(|error| Rejection::Undecodable(error.to_string()))
        .and_then(|object| {
            // As controller-runtime, the warnings go with the verdict, allowed or not.
            let warnings = validate::warnings(kind, &object);
            response.warnings = Some(warnings).filter(|warnings| !warnings.is_empty());
            validate::check(kind, object)
        });
    match verdict {
        Ok(()) => response.into_review(),
        Err(rejection) => {
            let (message, reason, code) = match rejection {
                Rejection::Invalid(problems) => (problems.join("\n"), "Forbidden", 403),
                Rejection::Undecodable(message) => (message, "BadRequest", 400),
            };
            tracing::info!(
                kind = kind.name(),
                namespace = request.namespace.as_deref().unwrap_or_default(),
                name = %request.name,
                uid = %request.uid,
                %message,
                "denied"
            );
            deny(response, &message, reason, code).into_review()
        }
    }
}

/// `response`, refused with `message` under `reason` and HTTP-style `code`.
fn deny(
    mut response: AdmissionResponse,
    message: &str,
    reason: &str,
    code: u16,
) -> AdmissionResponse {
    response.allowed = false;
    response.result = Status::failure(message, reason).with_code(code);
    response
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn review_of(operation: &str, object: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "external-secrets.io", "version": "v1", "kind": "ExternalSecret"},
                "resource": {"group": "external-secrets.io", "version": "v1", "resource": "externalsecrets"},
                "name": "es",
                "namespace": "default",
                "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
                "oldObject": null,
                "dryRun": false,
            }
        }))
        .unwrap()
    }

    fn external_secret(spec: Value) -> Value {
        json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "es", "namespace": "default"},
            "spec": spec,
        })
    }

    fn answer_to(kind: Kind, body: &[u8]) -> Value {
        serde_json::to_value(review(kind, body)).unwrap()
    }

    #[test]
    fn allows_valid_objects_echoing_the_uid_and_version() {
        let spec = json!({"dataFrom": [{"extract": {"key": "k"}}]});
        let answer = answer_to(
            Kind::ExternalSecret,
            &review_of("CREATE", external_secret(spec)),
        );
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(
            answer["response"]["uid"],
            "705ab4f5-6393-11e8-b7cc-42010a800002"
        );
        assert_eq!(answer["response"]["allowed"], true);
    }

    #[test]
    fn denies_with_every_problem() {
        let spec = json!({"target": {"deletionPolicy": "Merge", "creationPolicy": "None"}});
        let answer = answer_to(
            Kind::ExternalSecret,
            &review_of("UPDATE", external_secret(spec)),
        );
        let response = &answer["response"];
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        assert_eq!(
            response["status"]["message"],
            "spec.target: deletionPolicy=Merge must not be used with creationPolicy=None. There \
             is no Secret to merge with\nspec: either data or dataFrom should be specified"
        );
    }

    /// Upstream `validateStore` (apis/externalsecrets/v1/secretstore_validator.go) adds
    /// `warnStoreUnmaintained` for providers registered NotMaintained (v2.9: the fake), even
    /// with the ignore annotation; maintained providers get no warning.
    #[test]
    fn stores_of_unmaintained_providers_are_allowed_with_upstreams_warning() {
        let store = |provider: Value| {
            json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "SecretStore",
                "metadata": {"name": "fake-store", "namespace": "default",
                    "annotations": {"external-secrets.io/ignore-maintenance-checks": "true"}},
                "spec": {"provider": provider},
            })
        };
        let fake = store(json!({"fake": {"data": [{"key": "k", "value": "v"}]}}));
        let answer = answer_to(Kind::SecretStore, &review_of("CREATE", fake));
        assert_eq!(answer["response"]["allowed"], true);
        assert_eq!(
            answer["response"]["warnings"],
            json!([
                "store fake-store isn't currently maintained. Please plan and prepare accordingly."
            ])
        );
        let webhook = store(json!({"webhook": {"url": "http://example.com", "result": {}}}));
        let answer = answer_to(Kind::SecretStore, &review_of("CREATE", webhook));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
        assert!(answer["response"]["warnings"].is_null(), "{answer}");
    }

    /// A provider's own `ValidateStore` warnings come first (here bitwarden's about a missing
    /// CA), and warnings go with a denial too, as controller-runtime answers.
    #[test]
    fn provider_warnings_are_returned_allowed_or_denied() {
        let store = |name: &str, provider: Value| {
            json!({
                "apiVersion": "external-secrets.io/v1",
                "kind": "SecretStore",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"provider": provider},
            })
        };
        let bitwarden = store(
            "bitwarden",
            json!({"bitwardensecretsmanager": {
                "bitwardenServerSDKURL": "https://bitwarden-sdk-server:9998",
                "organizationID": "org", "projectID": "project",
                "auth": {"secretRef": {"credentials": {"name": "token", "key": "token"}}},
            }}),
        );
        let answer = answer_to(Kind::SecretStore, &review_of("CREATE", bitwarden));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
        assert_eq!(
            answer["response"]["warnings"],
            json!([
                "Neither CA nor CA bundle is configured; user is expected to provide \
                 certificate information via volume mount."
            ])
        );
        let refused = json!({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
            "metadata": {"name": "fake-store", "namespace": "default"},
            "spec": {"provider": {"fake": {"data": []}}, "refreshInterval": -1}});
        let answer = answer_to(Kind::SecretStore, &review_of("CREATE", refused));
        assert_eq!(answer["response"]["allowed"], false, "{answer}");
        assert_eq!(
            answer["response"]["warnings"],
            json!([
                "store fake-store isn't currently maintained. Please plan and prepare accordingly."
            ])
        );
    }

    #[test]
    fn deletions_are_allowed() {
        let answer = answer_to(Kind::ExternalSecret, &review_of("DELETE", Value::Null));
        assert_eq!(answer["response"]["allowed"], true);
    }

    #[test]
    fn malformed_input_is_refused_as_a_bad_request() {
        let spec = json!({"target": {"creationPolicy": "Sometimes"}, "dataFrom": []});
        let answer = answer_to(
            Kind::ExternalSecret,
            &review_of("CREATE", external_secret(spec)),
        );
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["code"], 400);
        let answer = answer_to(Kind::ExternalSecret, b"{not json");
        assert_eq!(answer["response"]["allowed"], false);
        assert!(
            answer["response"]["status"]["message"]
                .as_str()
                .unwrap()
                .starts_with("cannot decode AdmissionReview")
        );
    }
}

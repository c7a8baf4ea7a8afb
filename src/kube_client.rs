//! The Kubernetes client the controllers use: kube's default stack plus client-go's request
//! counter (`rest_client_requests_total`, which upstream dashboards chart) and, when asked
//! for with `--client-qps`, a client-side rate limit.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::Context as _;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{Request, Response};
use kube::client::ClientBuilder;
use tower::limit::RateLimitLayer;
use tower::{Layer, Service};

use crate::metrics::{Metrics, RequestLabels, ResourceRequestLabels, classify_request};

/// Builds the client from the environment (in-cluster config or `KUBECONFIG`).
pub async fn client(metrics: Arc<Metrics>, qps: f32, burst: u32) -> anyhow::Result<kube::Client> {
    let config = kube::Config::infer()
        .await
        .context("loading the Kubernetes client configuration")?;
    let host = config
        .cluster_url
        .authority()
        .map(ToString::to_string)
        .unwrap_or_default();
    let builder = ClientBuilder::try_from(config).context("building the Kubernetes client")?;
    let limit = rate_limit(qps, burst);
    Ok(builder
        .with_layer(&tower::util::option_layer(limit))
        .with_layer(&CountRequests { metrics, host })
        .build())
}

/// A window of `burst` requests every `burst / qps` seconds: `qps` on average, up to `burst`
/// at once. `None` when `qps` is not positive (unlimited).
fn rate_limit(qps: f32, burst: u32) -> Option<RateLimitLayer> {
    if qps <= 0.0 || !qps.is_finite() {
        return None;
    }
    let burst = burst.max(1);
    let window = Duration::from_secs_f64(f64::from(burst) / f64::from(qps));
    Some(RateLimitLayer::new(u64::from(burst), window))
}

/// Counts every request by method and response code.
#[derive(Clone)]
struct CountRequests {
    metrics: Arc<Metrics>,
    host: String,
}

impl<S> Layer<S> for CountRequests {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Counted {
            inner,
            counter: self.clone(),
        }
    }
}

/// The service [`CountRequests`] wraps around the stack.
struct Counted<S> {
    inner: S,
    counter: CountRequests,
}

impl<S, B, R> Service<Request<B>> for Counted<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().to_string();
        let content_type = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok());
        let (verb, resource) = classify_request(
            &method,
            request.uri().path(),
            request.uri().query(),
            content_type,
        );
        let counter = self.counter.clone();
        self.inner
            .call(request)
            .map(move |result| {
                let code = match &result {
                    Ok(response) => response.status().as_u16().to_string(),
                    Err(_) => "<error>".to_owned(),
                };
                counter
                    .metrics
                    .count_api_request_by_resource(ResourceRequestLabels {
                        verb: verb.to_owned(),
                        resource,
                        code: code.clone(),
                    });
                counter.metrics.count_api_request(RequestLabels {
                    code,
                    host: counter.host,
                    method,
                });
                result
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_is_off_unless_qps_is_positive() {
        assert!(rate_limit(0.0, 100).is_none());
        assert!(rate_limit(-1.0, 100).is_none());
        assert!(rate_limit(50.0, 100).is_some());
    }

    #[tokio::test]
    async fn requests_are_counted_by_method_and_code() {
        let metrics = Arc::new(Metrics::default());
        let inner = tower::service_fn(|request: Request<()>| async move {
            let status = if request.uri().path() == "/missing" {
                404
            } else {
                200
            };
            Ok::<_, std::convert::Infallible>(Response::builder().status(status).body(()).unwrap())
        });
        let mut service = CountRequests {
            metrics: metrics.clone(),
            host: "api.test:6443".to_owned(),
        }
        .layer(inner);
        for path in ["/ok", "/api/v1/namespaces/a/secrets/db", "/missing"] {
            let request = Request::get(path).body(()).unwrap();
            tower::ServiceExt::ready(&mut service).await.unwrap();
            service.call(request).await.unwrap();
        }
        let text = metrics.encode();
        assert!(
            text.contains(
                r#"rest_client_requests_total{code="200",host="api.test:6443",method="GET"} 2"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"rest_client_requests_total{code="404",host="api.test:6443",method="GET"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"rest_client_requests_by_resource_total{verb="get",resource="secrets",code="200"} 1"#
            ),
            "{text}"
        );
    }
}

//! The HTTP(S) side: accepting connections (plain or TLS), serving HTTP/1.1 with hyper,
//! bearer-token authentication, and shutting everything down.

use crate::authz::Identity;
use crate::counters::RequestCounters;
use crate::errors::{ApiError, ApiResult};
use crate::routes;
use crate::state::State;
use crate::tokens::TokenIssuer;
use http::{HeaderMap, header};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

/// What every request handler shares.
pub(crate) struct Server {
    state: Mutex<State>,
    pub issuer: TokenIssuer,
    /// The static bearer token clients must present (none: no authentication).
    pub token: Option<String>,
    /// `http(s)://host:port`.
    pub base_url: String,
    /// `host:port`, for `/api`'s serverAddressByClientCIDRs.
    pub address: String,
    pub bookmark_interval: Duration,
    /// True while the server is down (shut down, or restarting); connections and watches end
    /// when it turns true.
    pub shutdown: watch::Receiver<bool>,
    /// Requests answered, by client, verb and resource.
    pub counters: RequestCounters,
    /// How long LIST requests of a resource (by plural) wait before they are answered.
    list_delays: Mutex<HashMap<String, Duration>>,
}

impl Server {
    pub(crate) fn new(
        state: State,
        issuer: TokenIssuer,
        token: Option<String>,
        base_url: String,
        address: String,
        bookmark_interval: Duration,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        Self {
            state: Mutex::new(state),
            issuer,
            token,
            base_url,
            address,
            bookmark_interval,
            shutdown,
            counters: RequestCounters::default(),
            list_delays: Mutex::new(HashMap::new()),
        }
    }

    /// Makes LIST requests of `plural` wait `delay` (zero: answer at once again).
    pub(crate) fn delay_lists(&self, plural: &str, delay: Duration) {
        let mut delays = self
            .list_delays
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if delay.is_zero() {
            delays.remove(plural);
        } else {
            delays.insert(plural.to_owned(), delay);
        }
    }

    /// How long a LIST of `plural` waits before it is answered.
    pub(crate) fn list_delay(&self, plural: &str) -> Duration {
        self.list_delays
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(plural)
            .copied()
            .unwrap_or_default()
    }

    /// The state, locked. Handlers never hold it across an await.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Accepts the static token (the admin), or a valid ServiceAccount token, which acts as
    /// its ServiceAccount (as kube-apiserver's service-account authenticator).
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> ApiResult<Identity> {
        let Some(expected) = &self.token else {
            return Ok(Identity::Admin);
        };
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(ApiError::unauthorized)?;
        if presented == expected {
            return Ok(Identity::Admin);
        }
        let (user, _) = self
            .lock()
            .review(
                &self.issuer,
                presented,
                &[self.issuer.audience().to_owned()],
            )
            .map_err(|_| ApiError::unauthorized())?;
        let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
        Ok(Identity::User {
            name: text(&user["username"]),
            groups: user["groups"]
                .as_array()
                .map(|groups| groups.iter().map(text).collect())
                .unwrap_or_default(),
        })
    }
}

/// Completes once the server is down (at once if it is already).
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await.is_ok();
}

/// Accepts connections until shutdown.
pub(crate) async fn serve(listener: TcpListener, server: Arc<Server>, tls: Option<TlsAcceptor>) {
    let mut shutdown = server.shutdown.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let (server, tls) = (server.clone(), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => match acceptor.accept(stream).await {
                            Ok(stream) => connection(stream, server).await,
                            Err(error) => tracing::debug!(%error, "TLS handshake failed"),
                        },
                        None => connection(stream, server).await,
                    }
                });
            }
            _ = stopped(&mut shutdown) => break,
        }
    }
}

async fn connection<I>(io: I, server: Arc<Server>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut shutdown = server.shutdown.clone();
    let service = hyper::service::service_fn(move |request| {
        let server = server.clone();
        async move { Ok::<_, Infallible>(routes::handle(server, request).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended with an error");
            }
        }
        _ = stopped(&mut shutdown) => {
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(1), connection).await;
        }
    }
}

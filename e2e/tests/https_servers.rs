//! The TLS servers of the `webhook` and `certcontroller` subcommands, run as the real binary:
//! metrics over HTTPS with `--metrics-secure` (certificate from `--metrics-cert-dir`, as
//! upstream's `webhook.metrics.listen.secure` and `certController.metrics.listen.secure`
//! chart values pass), and HTTP/2 only with `--enable-http2`. Upstream's commands
//! (cmd/controller/webhook.go, certcontroller.go) default the flag to false and then restrict
//! the webhook and secure metrics servers to `NextProtos: ["http/1.1"]` because of the HTTP/2
//! rapid-reset CVEs. A client offering `h2` and `http/1.1` must then get HTTP/1.1, one offering
//! only `h2` is refused, and one speaking HTTP/2 with prior knowledge gets no HTTP/2 answer;
//! with the flag, `h2` is negotiated and served.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use e2e::harness::test_certs::{CA_A, CERT_A, KEY_A, write_certificates};
use e2e::harness::{
    ComponentProcess, TestCluster, TestNamespace, WebhookProcess, eventually, free_local_address,
    http_status, unique_name, valid_external_secret_review,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

const WAIT: Duration = Duration::from_secs(60);
const H2: &[u8] = b"h2";
const HTTP11: &[u8] = b"http/1.1";
const REVIEW_PATH: &str = "/validate-external-secrets-io-v1-externalsecret";

/// A request: method, path, body (sent with `content-type: application/json` when not empty).
struct Call<'a> {
    method: &'a str,
    path: &'a str,
    body: Vec<u8>,
}

impl<'a> Call<'a> {
    fn get(path: &'a str) -> Self {
        Self {
            method: "GET",
            path,
            body: Vec::new(),
        }
    }
}

/// A TLS connection to `address` trusting only [`CA_A`] for `localhost`, offering `alpn`.
async fn connect(address: SocketAddr, alpn: &[&[u8]]) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(CA_A.as_bytes()).map_err(std::io::Error::other)?;
    roots.add(ca).map_err(std::io::Error::other)?;
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(std::io::Error::other)?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    let tcp = TcpStream::connect(address).await?;
    let name = ServerName::try_from("localhost").map_err(std::io::Error::other)?;
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
}

/// `call` over HTTP/1.1 on a new connection: the status code and body.
async fn http1(address: SocketAddr, call: &Call<'_>) -> anyhow::Result<(u16, String)> {
    let mut tls = connect(address, &[HTTP11]).await?;
    let head = format!(
        "{} {} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        call.method,
        call.path,
        call.body.len()
    );
    tls.write_all(head.as_bytes()).await?;
    tls.write_all(&call.body).await?;
    let mut response = String::new();
    tls.read_to_string(&mut response).await?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .context("malformed HTTP response")?;
    anyhow::ensure!(head.starts_with("HTTP/1.1 "), "not HTTP/1.1: {head}");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("no status code")?;
    Ok((status, body.to_owned()))
}

/// `call` over HTTP/2 on `tls` (whatever ALPN said): the status code and body, or why the
/// server did not answer in HTTP/2.
async fn http2(tls: TlsStream<TcpStream>, call: &Call<'_>) -> anyhow::Result<(u16, String)> {
    let (client, connection) = h2::client::handshake(tls).await?;
    let driver = tokio::spawn(connection);
    let answer = async {
        let mut client = client.ready().await?;
        let request = http::Request::builder()
            .method(call.method)
            .uri(format!("https://localhost{}", call.path))
            .header("content-type", "application/json")
            .body(())?;
        let (response, mut stream) = client.send_request(request, call.body.is_empty())?;
        if !call.body.is_empty() {
            stream.send_data(Bytes::from(call.body.clone()), true)?;
        }
        let response = tokio::time::timeout(WAIT, response)
            .await
            .context("no HTTP/2 response")??;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut text = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk?;
            let _ = body.flow_control().release_capacity(chunk.len());
            text.extend_from_slice(&chunk);
        }
        anyhow::Ok((status, String::from_utf8(text)?))
    }
    .await;
    driver.abort();
    answer
}

/// Checks what `address` speaks: HTTP/2 (`h2` negotiated and answered) exactly when
/// `http2_enabled`, HTTP/1.1 always; both answer `call` with 200 and a body containing
/// `expected`.
async fn check_versions(
    address: SocketAddr,
    call: &Call<'_>,
    http2_enabled: bool,
    expected: &str,
) -> anyhow::Result<()> {
    let offered = connect(address, &[H2, HTTP11]).await?;
    let negotiated = offered.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    if http2_enabled {
        assert_eq!(
            negotiated.as_deref(),
            Some(H2),
            "{address}: h2 not negotiated"
        );
        let (status, body) = http2(offered, call).await?;
        assert_eq!(status, 200, "{address} over HTTP/2: {body}");
        assert!(body.contains(expected), "{address} over HTTP/2: {body}");
    } else {
        assert_eq!(
            negotiated.as_deref(),
            Some(HTTP11),
            "{address}: h2 negotiated"
        );
        drop(offered);
        // Only h2 offered: no protocol in common, the handshake fails.
        assert!(
            connect(address, &[H2]).await.is_err(),
            "{address}: a client offering only h2 completed the handshake"
        );
        // HTTP/2 with prior knowledge, no ALPN: never answered in HTTP/2.
        let prior = connect(address, &[]).await?;
        assert!(
            http2(prior, call).await.is_err(),
            "{address}: answered HTTP/2 with prior knowledge"
        );
    }
    let (status, body) = http1(address, call).await?;
    assert_eq!(status, 200, "{address} over HTTP/1.1: {body}");
    assert!(body.contains(expected), "{address} over HTTP/1.1: {body}");
    Ok(())
}

/// A fresh directory holding [`CERT_A`] as `tls.crt`/`tls.key` (and `ca.crt`).
fn certificate_directory(prefix: &str) -> anyhow::Result<std::path::PathBuf> {
    let directory = std::env::temp_dir().join(format!(
        "eso-e2e-{prefix}-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&directory)?;
    write_certificates(&directory, CA_A, CERT_A, KEY_A)?;
    Ok(directory)
}

/// The webhook with `--metrics-secure` (the serving certificate's directory as
/// `--metrics-cert-dir`): admission reviews and metrics over HTTP/2 exactly when
/// `http2_enabled`.
async fn webhook_versions(http2_enabled: bool) -> anyhow::Result<()> {
    let directory = certificate_directory("https-webhook")?;
    let mut flags = vec![
        "--metrics-secure".to_owned(),
        format!("--metrics-cert-dir={}", directory.display()),
    ];
    if http2_enabled {
        flags.push("--enable-http2".to_owned());
    }
    let webhook = WebhookProcess::start_with(&directory, "localhost", &flags).await?;
    webhook.wait_ready().await?;
    let review = valid_external_secret_review();
    let admission = Call {
        method: "POST",
        path: REVIEW_PATH,
        body: serde_json::to_vec(&review)?,
    };
    let webhook_address = SocketAddr::from(([127, 0, 0, 1], webhook.port));
    let checks = async {
        check_versions(
            webhook_address,
            &admission,
            http2_enabled,
            "\"allowed\":true",
        )
        .await?;
        // The reviews above are counted, and the count is served over HTTPS only.
        let counted = format!(
            "controller_runtime_webhook_requests_total{{webhook=\"{REVIEW_PATH}\",code=\"200\"}}"
        );
        check_versions(
            webhook.metrics,
            &Call::get("/metrics"),
            http2_enabled,
            &counted,
        )
        .await?;
        assert!(
            http_status(webhook.metrics, "/metrics").await.is_err(),
            "metrics answered over plain HTTP"
        );
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(webhook.process.log()));
    checks?;
    webhook.process.stop().await?;
    Ok(())
}

#[tokio::test]
async fn webhook_and_its_https_metrics_speak_http1_only_by_default() -> anyhow::Result<()> {
    webhook_versions(false).await
}

#[tokio::test]
async fn webhook_and_its_https_metrics_offer_http2_with_the_flag() -> anyhow::Result<()> {
    webhook_versions(true).await
}

/// The cert controller with `--metrics-secure`: its reconcile metrics over HTTPS, HTTP/2
/// exactly when `http2_enabled`.
async fn cert_controller_versions(
    cluster: &TestCluster,
    namespace: &str,
    http2_enabled: bool,
) -> anyhow::Result<()> {
    let directory = certificate_directory("https-certcontroller")?;
    let metrics = free_local_address()?;
    let mut args = vec![
        "certcontroller".to_owned(),
        "--service-name=e2e-webhook".to_owned(),
        format!("--service-namespace={namespace}"),
        format!("--secret-name={}", unique_name("e2e-webhook-certs")),
        format!("--secret-namespace={namespace}"),
        // Nothing else in the cluster is touched: no CRD of that name, no configuration
        // with that label.
        format!("--crd-names={}.e2e.example.com", unique_name("none")),
        format!(
            "--webhook-config-selector=e2e-run={}",
            unique_name("https-certs")
        ),
        format!("--healthz-addr={}", free_local_address()?),
        format!("--metrics-addr={metrics}"),
        "--metrics-secure".to_owned(),
        format!("--metrics-cert-dir={}", directory.display()),
    ];
    if http2_enabled {
        args.push("--enable-http2".to_owned());
    }
    let mut controller = ComponentProcess::start(&args, Some(&cluster.kubeconfig))?;
    let succeeded =
        "controller_runtime_reconcile_total{controller=\"certcontroller\",result=\"success\"}";
    let checks = async {
        eventually(WAIT, "a successful pass in the HTTPS metrics", || {
            let running = controller.ensure_running();
            async move {
                running?;
                let answer = http1(metrics, &Call::get("/metrics")).await.ok();
                Ok(answer.filter(|(_, body)| body.contains(succeeded)))
            }
        })
        .await?;
        check_versions(metrics, &Call::get("/metrics"), http2_enabled, succeeded).await?;
        assert!(
            http_status(metrics, "/metrics").await.is_err(),
            "metrics answered over plain HTTP"
        );
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(controller.log()));
    checks?;
    controller.stop().await?;
    Ok(())
}

#[tokio::test]
async fn cert_controller_serves_metrics_over_https_with_http2_only_when_enabled()
-> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "https-certs").await?;
    for http2_enabled in [false, true] {
        cert_controller_versions(&cluster, &namespace.name, http2_enabled).await?;
    }
    namespace.delete().await
}

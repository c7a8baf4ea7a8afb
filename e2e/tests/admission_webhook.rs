//! The `webhook` subcommand as a process: admission reviews over HTTPS are allowed or denied
//! with the field named, `/readyz` waits for a certificate, and replacing the certificate
//! files swaps the served certificate without a restart. No cluster is involved.

use e2e::harness::{WebhookProcess, admission_review, eventually, http_status, post_review};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const EXTERNAL_SECRET_PATH: &str = "/validate-external-secrets-io-v1-externalsecret";

// Two CAs, each with a serving certificate for `localhost` valid until 9999 (generated once
// with rcgen; test-only keys).
const CA_A: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBhTCCASygAwIBAgIUCB/Hy2yMnHLKMZcmqR9/S0do+2MwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBBMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAgMR4wHAYDVQQDDBVlMmUgd2ViaG9vayB0ZXN0\n\
IENBIEEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQcH20y/fLB64gyJK4p5tSb\n\
96WGWpE3LryvIkWUwMr9IlP7GjvXz7QTUh3k2ZKulM01ni7eTZkF9vdUBWnR46pj\n\
o0IwQDAOBgNVHQ8BAf8EBAMCAoQwHQYDVR0OBBYEFIWM2ITvtHet4L+X50zxnopd\n\
fTfPMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgMJXaXVdsBf0X\n\
Xmh9RRFj/FNcPVZLwwcPbFI5vYSUzq4CIDxRVRORU4XWYdA7w0m8oWd0w4hbY5Zb\n\
PDNckPM2ImYg\n\
-----END CERTIFICATE-----\n\
";
const CERT_A: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBZDCCAQugAwIBAgIUArWU2wPJQZkKReoZ2n0FnmjXrCswCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBBMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcq\n\
hkjOPQIBBggqhkjOPQMBBwNCAARDohmDuty5XmiLcL1Yvhtv36dYXkNi8lQAsN0j\n\
iCFhOEDHT89iTbtHjRDc1O8wKkj/zadg/ggyInJgyF1DSgPUoy0wKzAUBgNVHREE\n\
DTALgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwID\n\
RwAwRAIgUwt9xAXKfSzoqCtBZpKtjOu5yyPjBEzyw6Tg2WfwVIwCIAlQrRu54PR3\n\
JJ6VEx2I520dntHQXAE+djbW70Cf458i\n\
-----END CERTIFICATE-----\n\
";
const KEY_A: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgp2zSsreR7kIaOiik\n\
arK3Qnx6vRLE43WMM2nZ+gGj5TuhRANCAARDohmDuty5XmiLcL1Yvhtv36dYXkNi\n\
8lQAsN0jiCFhOEDHT89iTbtHjRDc1O8wKkj/zadg/ggyInJgyF1DSgPU\n\
-----END PRIVATE KEY-----\n\
";
const CA_B: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBhjCCASygAwIBAgIUCeNvaoR+xOus62FOQie901cCeMQwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBCMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAgMR4wHAYDVQQDDBVlMmUgd2ViaG9vayB0ZXN0\n\
IENBIEIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATQnN5zoYItNBRK9OxuMSum\n\
4zN3DAqsKmWRw2DJQUdXIkhd0QbstGKHESdcPS7R8ThjKZV8yxrRXZRuCuDHZYoA\n\
o0IwQDAOBgNVHQ8BAf8EBAMCAoQwHQYDVR0OBBYEFAqoAvLL1VetQCtl5u3crOYm\n\
0fEVMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgF0OAKCyiZhxl\n\
1dRNoLC+TW+rLBymvYJKeDLt4UcZ2GECIQDnoFFRwXqZzchkh+CB8vtdwkc44Urb\n\
fX5xdUrb1NCtqA==\n\
-----END CERTIFICATE-----\n\
";
const CERT_B: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBZTCCAQugAwIBAgIUekijaPl1gdJaHVEoJMRsQ85NHTQwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBCMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcq\n\
hkjOPQIBBggqhkjOPQMBBwNCAARqP/4xAKIitdLYOALibxR7eG/lGc6aQhRGzxZL\n\
eKSTPz5d/VSlSr7O3al4/0ibaJmk1Oha+I+vMoT4QNrJa8xBoy0wKzAUBgNVHREE\n\
DTALgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwID\n\
SAAwRQIgJE/159QYzsz+btpNFuzCDNeDo2/IuR5Q9sUel9XgPaECIQCgbCQ75ZrD\n\
gme5vXsNzqQaDgNz168ZCJJ55QJ8BCI5PA==\n\
-----END CERTIFICATE-----\n\
";
const KEY_B: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg48t5LzDr/P7APWkT\n\
ztYJ1l+kszG4GlFW4+z9f7scFp+hRANCAARqP/4xAKIitdLYOALibxR7eG/lGc6a\n\
QhRGzxZLeKSTPz5d/VSlSr7O3al4/0ibaJmk1Oha+I+vMoT4QNrJa8xB\n\
-----END PRIVATE KEY-----\n\
";

/// Writes the files the webhook reads as a kubelet updates a Secret volume: each file
/// replaced atomically.
fn write_certificates(directory: &Path, ca: &str, cert: &str, key: &str) -> anyhow::Result<()> {
    for (name, content) in [("ca.crt", ca), ("tls.key", key), ("tls.crt", cert)] {
        let staged = directory.join(format!(".{name}.new"));
        std::fs::write(&staged, content)?;
        std::fs::rename(&staged, directory.join(name))?;
    }
    Ok(())
}

fn external_secret(target: Value) -> Value {
    let object = json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "es", "namespace": "default"},
        "spec": {"dataFrom": [{"extract": {"key": "config"}}], "target": target},
    });
    admission_review("ExternalSecret", "v1", "externalsecrets", object)
}

/// Whether a client trusting only `ca` accepts the served certificate.
async fn trusted_by(webhook: &WebhookProcess, directory: &Path, ca: &str) -> anyhow::Result<bool> {
    let client = webhook
        .client_trusting(directory, ca.as_bytes(), "localhost")
        .await?;
    let answer = post_review(&client, EXTERNAL_SECRET_PATH, &external_secret(json!({}))).await;
    Ok(answer.is_ok())
}

#[tokio::test]
async fn admission_webhook_validates_and_reloads_its_certificate() -> anyhow::Result<()> {
    let directory = std::env::temp_dir().join(format!(
        "eso-e2e-webhook-certs-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&directory)?;
    let webhook = WebhookProcess::start(&directory, "localhost").await?;

    // Serving, but not ready without a certificate.
    let (code, reason) = webhook.readiness().await?;
    assert_eq!(code, 503, "{reason}");
    assert!(reason.contains("no certificate loaded"), "{reason}");

    write_certificates(&directory, CA_A, CERT_A, KEY_A)?;
    webhook.wait_ready().await?;
    let client = webhook
        .client_trusting(&directory, CA_A.as_bytes(), "localhost")
        .await?;

    let valid = post_review(&client, EXTERNAL_SECRET_PATH, &external_secret(json!({}))).await?;
    assert_eq!(valid["allowed"], true, "{valid}");
    let delete_merged = json!({"deletionPolicy": "Delete", "creationPolicy": "Merge"});
    let invalid = post_review(
        &client,
        EXTERNAL_SECRET_PATH,
        &external_secret(delete_merged),
    )
    .await?;
    assert_eq!(invalid["allowed"], false, "{invalid}");
    assert_eq!(invalid["status"]["code"], 403);
    assert_eq!(
        invalid["status"]["message"],
        "spec.target: deletionPolicy=Delete must not be used when the controller doesn't own \
         the secret. Please set creationPolicy=Owner"
    );

    let store = json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": "two-providers"},
        "spec": {"provider": {
            "fake": {"data": []},
            "webhook": {"url": "http://example.com", "result": {}},
        }},
    });
    let denied = post_review(
        &client,
        "/validate-external-secrets-io-v1-clustersecretstore",
        &admission_review("ClusterSecretStore", "v1", "clustersecretstores", store),
    )
    .await?;
    assert_eq!(denied["allowed"], false, "{denied}");
    assert_eq!(
        denied["status"]["message"],
        "spec.provider: secret stores must only have exactly one backend specified, found 2"
    );

    let push_secret = json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "push", "namespace": "default"},
        "spec": {"secretStoreRefs": [{}], "selector": {"secret": {"name": "source"}}},
    });
    let denied = post_review(
        &client,
        "/validate-external-secrets-io-v1alpha1-pushsecret",
        &admission_review("PushSecret", "v1alpha1", "pushsecrets", push_secret),
    )
    .await?;
    assert_eq!(
        denied["status"]["message"],
        "spec.secretStoreRefs[0]: name or labelSelector is required"
    );

    // Only a client trusting the CA of the served certificate accepts it.
    assert!(!trusted_by(&webhook, &directory, CA_B).await?);

    // Replace the files: the new certificate is served without a restart.
    write_certificates(&directory, CA_B, CERT_B, KEY_B)?;
    eventually(WAIT, "the new certificate to be served", || async {
        Ok(trusted_by(&webhook, &directory, CA_B).await?.then_some(()))
    })
    .await
    .map_err(|error| error.context(webhook.process.log()))?;
    assert!(!trusted_by(&webhook, &directory, CA_A).await?);
    assert_eq!(webhook.readiness().await?.0, 200);

    let (code, metrics) = http_status(webhook.metrics, "/metrics").await?;
    assert_eq!(code, 200);
    let counter = format!(
        "controller_runtime_webhook_requests_total{{webhook=\"{EXTERNAL_SECRET_PATH}\",code=\"200\"}}"
    );
    assert!(metrics.contains(&counter), "{metrics}");

    let status = webhook.process.stop().await?;
    assert!(status.success(), "webhook exited with {status}");
    std::fs::remove_dir_all(&directory)?;
    Ok(())
}

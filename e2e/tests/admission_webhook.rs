//! The `webhook` subcommand as a process: admission reviews over HTTPS are allowed or denied
//! with the field named, `/readyz` waits for a certificate, and replacing the certificate
//! files swaps the served certificate without a restart. No cluster is involved.

use e2e::harness::test_certs::{CA_A, CA_B, CERT_A, CERT_B, KEY_A, KEY_B, write_certificates};
use e2e::harness::{WebhookProcess, admission_review, eventually, http_status, post_review};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const EXTERNAL_SECRET_PATH: &str = "/validate-external-secrets-io-v1-externalsecret";

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

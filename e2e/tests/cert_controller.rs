//! The `certcontroller` subcommand against the cluster under test: it writes the webhook's CA
//! and serving certificate into its Secret, injects the CA into the labelled
//! ValidatingWebhookConfiguration and a CRD's conversion webhook, and renews a broken serving
//! certificate with the same CA. The written certificate is then served by the `webhook`
//! subcommand and verified by a TLS client for the Service's DNS name.
//!
//! Safe on shared clusters: the controller only selects this run's webhook configurations (a
//! unique label), only touches this run's CRD, and the webhook configurations match no
//! request (no rules).

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::harness::{
    ComponentProcess, TestCluster, TestCrd, TestNamespace, WebhookProcess, eventually,
    free_local_address, http_status, is_not_found, post_review, unique_name,
    valid_external_secret_review,
};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[path = "cert_controller/fixtures.rs"]
mod fixtures;

use fixtures::{ca_bundles, certificates, conversion_crd, webhook_configuration};

const WAIT: Duration = Duration::from_secs(60);
const SERVICE: &str = "eso-webhook";
const SECRET: &str = "eso-webhook-certs";

#[tokio::test]
async fn cert_controller_writes_certificates_and_injects_the_ca() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "certs").await?;
    let run_label = unique_name("certs");
    let configurations: Api<ValidatingWebhookConfiguration> = Api::all(cluster.client.clone());
    let labelled_name = unique_name("e2e-validate");
    let unlabelled_name = unique_name("e2e-unlabelled");
    for (name, labelled) in [(&labelled_name, true), (&unlabelled_name, false)] {
        configurations
            .create(
                &PostParams::default(),
                &webhook_configuration(name, &run_label, labelled)?,
            )
            .await?;
    }
    let crd = TestCrd::create(&cluster, conversion_crd()).await?;

    let healthz = free_local_address()?;
    let args = [
        "certcontroller".to_owned(),
        format!("--service-name={SERVICE}"),
        format!("--service-namespace={}", namespace.name),
        format!("--secret-name={SECRET}"),
        format!("--secret-namespace={}", namespace.name),
        format!("--crd-names={}", crd.name),
        format!(
            "--webhook-config-selector=external-secrets.io/component=webhook,e2e-run={run_label}"
        ),
        "--crd-requeue-interval=1s".to_owned(),
        format!("--healthz-addr={healthz}"),
        format!("--metrics-addr={}", free_local_address()?),
    ];
    let mut controller = ComponentProcess::start(&args, Some(&cluster.kubeconfig))?;

    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let data = eventually(WAIT, "the certificate Secret", || {
        let running = controller.ensure_running();
        let secrets = secrets.clone();
        async move {
            running?;
            certificates(&secrets, SECRET).await
        }
    })
    .await?;
    let ca = data["ca.crt"].clone();
    assert!(String::from_utf8_lossy(&ca).starts_with("-----BEGIN CERTIFICATE-----"));

    // Our webhook of the labelled configuration gets the CA and the Service; nothing else.
    let labelled = eventually(
        WAIT,
        "the CA bundle in the webhook configuration",
        || async {
            let config = configurations.get(&labelled_name).await?;
            Ok((ca_bundles(&config)[0].as_deref() == Some(ca.as_slice())).then_some(config))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    let webhooks = labelled.webhooks.clone().unwrap_or_default();
    let service = webhooks[0].client_config.service.clone().unwrap();
    assert_eq!(
        (service.name.as_str(), service.namespace.as_str()),
        (SERVICE, namespace.name.as_str())
    );
    assert_eq!(
        webhooks[1].client_config.ca_bundle, None,
        "a webhook that is not ours"
    );
    assert_eq!(
        webhooks[1].client_config.service.as_ref().unwrap().name,
        "placeholder"
    );
    let unlabelled = configurations.get(&unlabelled_name).await?;
    assert_eq!(ca_bundles(&unlabelled), [None, None]);

    // The CRD's conversion webhook too: the controller writes it apart from the webhook
    // configuration, so it may land later (on a real cluster it does).
    let crds: Api<CustomResourceDefinition> = Api::all(cluster.client.clone());
    let client_config = eventually(
        WAIT,
        "the CA bundle in the CRD's conversion webhook",
        || async {
            let client_config = crds
                .get(&crd.name)
                .await?
                .spec
                .conversion
                .and_then(|conversion| conversion.webhook)
                .and_then(|webhook| webhook.client_config);
            Ok(client_config.filter(|config| {
                config.ca_bundle.as_ref().map(|bundle| bundle.0.as_slice()) == Some(ca.as_slice())
            }))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(client_config.service.unwrap().name, SERVICE);

    let (code, body) = http_status(healthz, "/readyz").await?;
    assert_eq!(code, 200, "{body}");

    // The written certificate serves the Service's name: the webhook accepts it (its readiness
    // verifies the chain for --dns-name) and a TLS client for that name trusts it.
    let dns_name = format!("{SERVICE}.{}.svc", namespace.name);
    serve_and_verify(&data, &dns_name).await?;

    // A broken serving certificate is renewed with the same CA: the bundle stays.
    let broken = json!({"data": {"tls.crt": "YnJva2Vu"}});
    secrets
        .patch(SECRET, &PatchParams::default(), &Patch::Merge(&broken))
        .await?;
    let renewed = eventually(WAIT, "the serving certificate to be renewed", || async {
        Ok(certificates(&secrets, SECRET)
            .await?
            .filter(|data| data["tls.crt"].as_slice() != b"broken"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(renewed["ca.crt"], ca, "the CA is kept");
    assert_ne!(renewed["tls.crt"], data["tls.crt"]);

    // A re-applied configuration without the bundle is fixed again.
    let mut cleared = configurations.get(&labelled_name).await?;
    for webhook in cleared.webhooks.iter_mut().flatten() {
        webhook.client_config.ca_bundle = None;
    }
    configurations
        .replace(&labelled_name, &PostParams::default(), &cleared)
        .await?;
    eventually(WAIT, "the CA bundle to be injected again", || async {
        let config = configurations.get(&labelled_name).await?;
        Ok((ca_bundles(&config)[0].as_deref() == Some(ca.as_slice())).then_some(()))
    })
    .await?;

    let status = controller.stop().await?;
    assert!(status.success(), "cert controller exited with {status}");
    for name in [&labelled_name, &unlabelled_name] {
        match configurations.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(error) if is_not_found(&error) => {}
            Err(error) => return Err(error.into()),
        }
    }
    crd.delete().await?;
    namespace.delete().await?;
    Ok(())
}

/// Serves the Secret's certificate with the `webhook` subcommand for `dns_name`: it must become
/// ready (its readiness verifies the chain to ca.crt for that name) and a TLS client trusting
/// only ca.crt and expecting that name must get an answer.
async fn serve_and_verify(data: &BTreeMap<String, Vec<u8>>, dns_name: &str) -> anyhow::Result<()> {
    let directory = std::env::temp_dir().join(format!(
        "eso-e2e-certcontroller-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&directory)?;
    for file in ["ca.crt", "tls.crt", "tls.key"] {
        std::fs::write(directory.join(file), &data[file])?;
    }
    let webhook = WebhookProcess::start(&directory, dns_name).await?;
    webhook.wait_ready().await?;
    let client = webhook
        .client_trusting(&directory, &data["ca.crt"], dns_name)
        .await?;
    let review = valid_external_secret_review();
    let answer = post_review(
        &client,
        "/validate-external-secrets-io-v1-externalsecret",
        &review,
    )
    .await
    .map_err(|error| error.context(webhook.process.log()))?;
    assert_eq!(answer["allowed"], true, "{answer}");
    webhook.process.stop().await?;
    std::fs::remove_dir_all(&directory)?;
    Ok(())
}

//! The gcpsm provider's default credentials (a store without `auth`), as Google's libraries find
//! them: the service-account key file `GOOGLE_APPLICATION_CREDENTIALS` names (its tokens from the
//! token endpoint fake), else the metadata server at `GCE_METADATA_HOST` (the metadata server
//! fake). Both read the process environment, so this binary holds one test that sets it step
//! by step.

#![cfg(feature = "gcpsm")]

mod support;

use std::sync::Arc;

use contract_fakes::google_metadata::MetadataServer;
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{ErrorKind, SecretsClient};
use serde_json::json;
use support::gcp::{Project, cloudbox, endpoints, key_file, token_endpoint};

#[tokio::test]
async fn key_file_then_metadata_server() {
    let project = Project::fresh();
    project.seed("default", b"found by default", &[]);
    let spec = serde_json::from_value(json!({"projectID": project.id})).unwrap();
    let client = || {
        project.client_with(
            &spec,
            Arc::new(MemorySecretSource::default()),
            endpoints(&cloudbox().url, &cloudbox().url),
        )
    };
    let tokens = token_endpoint().await;
    let metadata = MetadataServer::start().await.unwrap();
    let key_path = std::env::temp_dir().join(format!("{}-key.json", project.id));
    std::fs::write(&key_path, key_file(&tokens.token_uri())).unwrap();

    // SAFETY: this binary's only test; nothing else reads the environment concurrently.
    unsafe {
        std::env::set_var("GOOGLE_APPLICATION_CREDENTIALS", &key_path);
        std::env::set_var("GCE_METADATA_HOST", metadata.host());
    }
    let from_key = client().await.unwrap();
    let value = from_key
        .get_secret(&RemoteRef::new("default"))
        .await
        .unwrap();
    assert_eq!(value.expose(), b"found by default");
    assert_eq!(
        tokens.issued(),
        1,
        "the key file wins over the metadata server"
    );
    assert_eq!(metadata.issued(), 0);

    // A named file that cannot be read is an error, not a fall-back.
    // SAFETY: as above.
    unsafe {
        std::env::set_var(
            "GOOGLE_APPLICATION_CREDENTIALS",
            key_path.with_extension("missing"),
        )
    };
    let error = client().await.err().expect("refused");
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(
        error
            .message()
            .starts_with("unable to get credentials: cannot read GOOGLE_APPLICATION_CREDENTIALS"),
        "{error}"
    );

    // SAFETY: as above.
    unsafe { std::env::remove_var("GOOGLE_APPLICATION_CREDENTIALS") };
    let from_metadata = client().await.unwrap();
    let value = from_metadata
        .get_secret(&RemoteRef::new("default"))
        .await
        .unwrap();
    assert_eq!(value.expose(), b"found by default");
    assert_eq!(
        metadata.issued(),
        1,
        "the metadata server's token (Metadata-Flavor sent)"
    );
    let sent = metadata.server.requests();
    assert_eq!(
        sent[0].query.as_deref(),
        Some("scopes=https://www.googleapis.com/auth/cloud-platform")
    );
    std::fs::remove_file(&key_path).unwrap();
}

//! The custom resources as the API server hands them to the controllers: any JSON decodes into
//! each kind or is refused, without a panic.
#![no_main]

use external_secrets_crds::v1::{ClusterSecretStore, ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<ExternalSecret>(data);
    let _ = serde_json::from_slice::<SecretStore>(data);
    let _ = serde_json::from_slice::<ClusterSecretStore>(data);
    let _ = serde_json::from_slice::<PushSecret>(data);
});

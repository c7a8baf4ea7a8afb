//! An AdmissionReview as the API server posts it to the validating webhook: decoded, turned
//! into a request, and its object read as the kind it claims.
#![no_main]

use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionReview};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(review) = serde_json::from_slice::<AdmissionReview<DynamicObject>>(data) else {
        return;
    };
    let Ok(request): Result<AdmissionRequest<DynamicObject>, _> = review.try_into() else {
        return;
    };
    if let Some(object) = request.object {
        if let Ok(value) = serde_json::to_value(&object) {
            let _ = serde_json::from_value::<ExternalSecret>(value.clone());
            let _ = serde_json::from_value::<SecretStore>(value);
        }
    }
});

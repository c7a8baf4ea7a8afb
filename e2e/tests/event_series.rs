//! A failure that repeats is one Event whose series counts up (client-go's correlator, as
//! upstream's recorder sends it), not one Event per occurrence. Cluster-agnostic: the
//! controller watches the test namespace only.

mod support;

use e2e::harness::eventually;
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use support::{Setup, WAIT, external_secret};

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_failure_counts_up_one_event() -> anyhow::Result<()> {
    let setup = Setup::start("event-series", &[]).await?;
    let missing = json!({"data": [{"secretKey": "gone", "remoteRef": {"key": "/not/there"}}]});
    setup
        .api::<ExternalSecret>()
        .create(
            &PostParams::default(),
            &external_secret("failing", "store", missing)?,
        )
        .await?;
    let events: Api<Event> = setup.api();
    let failures = |list: Vec<Event>| -> Vec<Event> {
        list.into_iter()
            .filter(|event| {
                event.reason.as_deref() == Some("UpdateFailed")
                    && event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("failing")
            })
            .collect()
    };
    // The retries with backoff fail again within the wait: the series reaches 2.
    let counted = eventually(WAIT, "a failure series of two", || async {
        let found = failures(events.list(&ListParams::default()).await?.items);
        let count = found
            .iter()
            .filter_map(|event| event.series.as_ref().map(|series| series.count))
            .max();
        Ok(count
            .filter(|count| *count >= 2)
            .map(|count| (count, found.len())))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    let (count, objects) = counted;
    assert_eq!(
        objects, 1,
        "{count} failures in a series are one Event object"
    );
    let event = failures(events.list(&ListParams::default()).await?.items)
        .pop()
        .expect("the series' Event");
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("external-secrets")
    );
    let series = event.series.expect("a series");
    assert!(
        series.last_observed_time.0 >= event.event_time.expect("eventTime").0,
        "the series' last occurrence is not before the first"
    );
    setup.finish().await
}

//! Upstream's fake provider test cases, plus the memory rules of this implementation.

use super::*;
use crate::error::ErrorKind;
use crate::request::ConversionStrategy;
use external_secrets_crds::v1::FakeProviderData;

fn data(entries: &[(&str, &str, Option<&str>)]) -> FakeProvider {
    FakeProvider {
        data: entries
            .iter()
            .map(|(key, value, version)| FakeProviderData {
                key: (*key).to_owned(),
                value: (*value).to_owned(),
                version: version.map(str::to_owned),
            })
            .collect(),
        validation_result: None,
    }
}

fn client(entries: &[(&str, &str, Option<&str>)]) -> FakeClient {
    FakeBackend::new()
        .new_client(&StoreId::secret_store("default", "fake"), &data(entries))
        .unwrap()
}

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

#[test]
fn validate_store_reports_the_first_incomplete_entry() {
    assert!(validate_store(&data(&[])).is_ok());
    let error = validate_store(&data(&[("", "", Some("v1"))])).unwrap_err();
    assert_eq!(error.message(), "key must be set in data 0");
    let error = validate_store(&data(&[("/foo", "", Some("v1"))])).unwrap_err();
    assert_eq!(error.message(), "at least one value must be set in data 0");
    assert!(validate_store(&data(&[("/foo", "bar", Some("v1"))])).is_ok());
}

#[tokio::test]
async fn get_secret() {
    let empty = client(&[]);
    let error = empty
        .get_secret(&RemoteRef::new("/foo").with_version("v2"))
        .await
        .unwrap_err();
    assert!(error.is_not_found());

    let versions = client(&[
        ("/foo", "bar2", Some("v2")),
        ("junk", "xxxxx", None),
        ("/foo", "bar1", Some("v1")),
    ]);
    let value = versions
        .get_secret(&RemoteRef::new("/foo").with_version("v2"))
        .await
        .unwrap();
    assert_eq!(text(value), "bar2");
    // No version asked: only an entry without version matches.
    assert!(
        versions
            .get_secret(&RemoteRef::new("/foo"))
            .await
            .unwrap_err()
            .is_not_found()
    );

    let properties = client(&[
        ("junk", "xxxxx", None),
        ("/foo", r#"{"p1":"bar","p2":"bar2"}"#, None),
    ]);
    let value = properties
        .get_secret(&RemoteRef::new("/foo").with_property("p2"))
        .await
        .unwrap();
    assert_eq!(text(value), "bar2");
    let error = properties
        .get_secret(&RemoteRef::new("/foo").with_property("p3"))
        .await
        .unwrap_err();
    assert!(error.is_not_found());
}

#[tokio::test]
async fn get_secret_map() {
    let error = client(&[])
        .get_secret_map(&RemoteRef::new("/foo").with_version("v2"))
        .await
        .unwrap_err();
    assert!(error.is_not_found());

    let one = client(&[("/bar", r#"{"john":"doe"}"#, Some("v1"))]);
    let map = one
        .get_secret_map(&RemoteRef::new("/bar").with_version("v1"))
        .await
        .unwrap();
    assert_eq!(texts(map), [("john".into(), "doe".into())]);

    let two = client(&[("/bar", r#"{"john":"doe", "foo": "bar"}"#, Some("v3"))]);
    let map = two
        .get_secret_map(&RemoteRef::new("/bar").with_version("v3"))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [("foo".into(), "bar".into()), ("john".into(), "doe".into())]
    );

    let invalid = client(&[("/bar", "---------", Some("v3"))]);
    let error = invalid
        .get_secret_map(&RemoteRef::new("/bar").with_version("v3"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidData);
    assert!(
        error.message().starts_with("unable to unmarshal secret: "),
        "{error}"
    );
    let quoted = client(&[("/bar", r#""hunter2-s3cr3t""#, None)]);
    let error = quoted
        .get_secret_map(&RemoteRef::new("/bar"))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "unable to unmarshal secret: a value of the wrong type at line 1 column 16",
        "the value is never quoted"
    );

    let versions = client(&[
        ("john", "doe", Some("v2")),
        ("junk", r#"{"junk":"ok"}"#, None),
        ("/foo", r#"{"foo":"bar","baz":"bang"}"#, Some("v1")),
        ("/foo", r#"{"foo":"bar","baz":"bang"}"#, Some("v2")),
    ]);
    let map = versions
        .get_secret_map(&RemoteRef::new("/foo").with_version("v2"))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [("baz".into(), "bang".into()), ("foo".into(), "bar".into())]
    );

    let nested = client(&[("/n", r#"{"s":"x","n":1,"o":{"a":true}}"#, None)]);
    let map = nested.get_secret_map(&RemoteRef::new("/n")).await.unwrap();
    assert_eq!(
        texts(map),
        [
            ("n".into(), "1".into()),
            ("o".into(), r#"{"a":true}"#.into()),
            ("s".into(), "x".into())
        ]
    );
}

#[tokio::test]
async fn get_all_secrets() {
    let map = client(&[])
        .get_all_secrets(&Find::by_name("some-key"))
        .await
        .unwrap();
    assert!(map.is_empty());

    let plain = client(&[
        ("some-key1", "some-value1", None),
        ("some-key2", "some-value2", None),
        ("another-key1", "another-value1", None),
    ]);
    let map = plain
        .get_all_secrets(&Find::by_name("some-key.*"))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [
            ("some-key1".into(), "some-value1".into()),
            ("some-key2".into(), "some-value2".into())
        ]
    );

    let versioned = client(&[
        ("some-key1", "some-value1-version1", Some("1")),
        ("some-key1", "some-value1-version2", Some("2")),
        ("some-key2", "some-value2-version1", Some("1")),
        ("some-key2", "some-value2-version2", Some("2")),
        ("some-key2", "some-value2-version3", Some("3")),
        ("another-key1", "another-value1-version1", Some("1")),
        ("another-key1", "another-value1-version2", Some("2")),
    ]);
    let map = versioned
        .get_all_secrets(&Find::by_name("some-key.*"))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [
            ("some-key1".into(), "some-value1-version2".into()),
            ("some-key2".into(), "some-value2-version3".into())
        ]
    );

    let by_path = Find {
        path: Some("some-path".into()),
        ..Find::default()
    };
    let error = client(&[]).get_all_secrets(&by_path).await.unwrap_err();
    assert!(
        error.message().contains("unsupported find operator"),
        "{error}"
    );
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);

    let error = client(&[])
        .get_all_secrets(&Find::by_name("("))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("could not compile find.name.regexp [(]")
    );
}

#[tokio::test]
async fn get_all_secrets_converts_names() {
    let slashes = client(&[("/a/b", "1", None)]);
    let mut find = Find::by_name("^/a");
    let map = slashes.get_all_secrets(&find).await.unwrap();
    assert_eq!(texts(map), [("_a_b".into(), "1".into())]);
    find.conversion_strategy = ConversionStrategy::Unicode;
    let map = slashes.get_all_secrets(&find).await.unwrap();
    assert_eq!(texts(map), [("_U002f_a_U002f_b".into(), "1".into())]);
}

fn push(secret_value: &str, remote_key: &str) -> PushRequest {
    let secret = [("secret-key".to_owned(), SecretValue::from(secret_value))].into();
    PushRequest::single(secret, "secret-key", remote_key)
}

#[tokio::test]
async fn push_secret() {
    let empty = client(&[]);
    empty
        .push_secret(&push("my-secret-value", "/foo"))
        .await
        .unwrap();
    let value = empty.get_secret(&RemoteRef::new("/foo")).await.unwrap();
    assert_eq!(text(value), "my-secret-value");
    // A pushed value may be pushed again.
    empty.push_secret(&push("second", "/foo")).await.unwrap();
    assert_eq!(
        text(empty.get_secret(&RemoteRef::new("/foo")).await.unwrap()),
        "second"
    );

    let existing = client(&[("/foo", "bar2", None)]);
    let error = existing
        .push_secret(&push("my-secret-value", "/foo"))
        .await
        .unwrap_err();
    assert_eq!(error.message(), "key already exists");
    assert_eq!(error.kind(), ErrorKind::AlreadyExists);
}

#[tokio::test]
async fn secret_exists() {
    let empty = client(&[]);
    assert!(
        !empty
            .secret_exists(&PushRemoteRef::new("/foo"))
            .await
            .unwrap()
    );
    let existing = client(&[("/foo", "bar", None)]);
    assert!(
        existing
            .secret_exists(&PushRemoteRef::new("/foo"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn pushed_values_survive_a_store_change_and_only_they_can_be_deleted() {
    let backend = FakeBackend::new();
    let store = StoreId::secret_store("default", "fake");
    let first = backend
        .new_client(&store, &data(&[("spec", "v", None)]))
        .unwrap();
    first.push_secret(&push("pushed", "/pushed")).await.unwrap();

    let second = backend
        .new_client(&store, &data(&[("other", "w", None)]))
        .unwrap();
    assert_eq!(
        text(second.get_secret(&RemoteRef::new("/pushed")).await.unwrap()),
        "pushed"
    );
    assert!(
        second
            .get_secret(&RemoteRef::new("spec"))
            .await
            .unwrap_err()
            .is_not_found()
    );

    second
        .delete_secret(&PushRemoteRef::new("/pushed"))
        .await
        .unwrap();
    second
        .delete_secret(&PushRemoteRef::new("other"))
        .await
        .unwrap();
    second
        .delete_secret(&PushRemoteRef::new("never-there"))
        .await
        .unwrap();
    assert!(
        second
            .get_secret(&RemoteRef::new("/pushed"))
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        second
            .secret_exists(&PushRemoteRef::new("other"))
            .await
            .unwrap()
    );

    // Another store starts empty.
    let elsewhere = backend
        .new_client(&StoreId::secret_store("team", "fake"), &data(&[]))
        .unwrap();
    assert!(
        !elsewhere
            .secret_exists(&PushRemoteRef::new("other"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn validation_result_is_configurable() {
    let backend = FakeBackend::new();
    let store = StoreId::cluster_secret_store("fake");
    let mut spec = data(&[]);
    assert_eq!(
        backend
            .new_client(&store, &spec)
            .unwrap()
            .validate()
            .await
            .unwrap(),
        ValidationResult::Ready
    );
    // Upstream fake.go `Validate`: a configured non-Ready result comes with
    // "unable to validate", so Unknown is the undetermined kind.
    spec.validation_result = Some(1);
    assert_eq!(
        backend
            .new_client(&store, &spec)
            .unwrap()
            .validate()
            .await
            .unwrap(),
        ValidationResult::Undetermined("unable to validate".to_owned())
    );
    spec.validation_result = Some(2);
    let error = backend
        .new_client(&store, &spec)
        .unwrap()
        .validate()
        .await
        .unwrap_err();
    assert_eq!(error.message(), "unable to validate");
}

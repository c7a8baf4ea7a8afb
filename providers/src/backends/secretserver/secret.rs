//! Secret Server's secret and template models as upstream's SDK (`tss-sdk-go` v3) holds them.
//!
//! Reading follows Go's `encoding/json`: keys match case-insensitively (the REST API answers
//! `folderId`, `items`, `itemValue`; the SDK's fields are `FolderID`, `Items`, `ItemValue`) and
//! `null` leaves a field at its zero value. Writing gives the SDK's field names in its order,
//! which is both the body the SDK sends on create/update and the whole-secret JSON upstream
//! returns without `property`.

use std::collections::HashMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{ProviderError, Result};

/// A secret (upstream's `server.Secret`).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Secret {
    /// Its name (unique within a folder only).
    pub name: String,
    /// The folder holding it.
    #[serde(rename = "FolderID")]
    pub folder_id: i64,
    /// Its id.
    #[serde(rename = "ID")]
    pub id: i64,
    #[serde(rename = "SiteID")]
    site_id: i64,
    /// The template it was made from.
    #[serde(rename = "SecretTemplateID")]
    pub secret_template_id: i64,
    #[serde(rename = "SecretPolicyID", skip_serializing_if = "is_zero")]
    secret_policy_id: i64,
    #[serde(rename = "PasswordTypeWebScriptID", skip_serializing_if = "is_zero")]
    password_type_web_script_id: i64,
    #[serde(rename = "LauncherConnectAsSecretID")]
    launcher_connect_as_secret_id: i64,
    check_out_interval_minutes: i64,
    active: bool,
    checked_out: bool,
    check_out_enabled: bool,
    auto_change_enabled: bool,
    check_out_change_password_enabled: bool,
    delay_indexing: bool,
    enable_inherit_permissions: bool,
    enable_inherit_secret_policy: bool,
    proxy_enabled: bool,
    requires_comment: bool,
    session_recording_enabled: bool,
    web_launcher_requires_incognito_mode: bool,
    /// Its fields, in the template's order.
    #[serde(rename = "Items")]
    pub fields: Vec<SecretField>,
}

/// One field (item) of a secret (upstream's `server.SecretField`).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SecretField {
    #[serde(rename = "ItemID")]
    item_id: i64,
    /// The template field it fills.
    #[serde(rename = "FieldID")]
    pub field_id: i64,
    /// Set when a file is attached.
    #[serde(rename = "FileAttachmentID")]
    pub file_attachment_id: i64,
    /// The field's display name.
    pub field_name: String,
    /// The field's short name.
    pub slug: String,
    field_description: String,
    /// The attached file's name.
    pub filename: String,
    /// The value (a file field's: its content once downloaded; bytes, as Go strings are).
    #[serde(serialize_with = "lossy_text")]
    pub item_value: Vec<u8>,
    /// Whether the field holds a file.
    pub is_file: bool,
    is_notes: bool,
    is_password: bool,
}

/// A secret template (upstream's `server.SecretTemplate`), as far as pushes need it.
#[derive(Debug, Clone, Default)]
pub struct Template {
    /// Its fields.
    pub fields: Vec<TemplateField>,
}

/// One field of a template.
#[derive(Debug, Clone, Default)]
pub struct TemplateField {
    /// Its id (a secret field's `FieldID`).
    pub id: i64,
    /// Its slug.
    pub slug: String,
    /// Its name.
    pub name: String,
    /// Whether it holds a file.
    pub is_file: bool,
}

/// One record of a search answer: enough to pick a secret before fetching it.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The secret's id.
    pub id: i64,
    /// The folder holding it.
    pub folder_id: i64,
}

impl Secret {
    /// A new secret for a create request.
    pub fn new(name: String, folder_id: i64, template_id: i64, fields: Vec<SecretField>) -> Self {
        Self {
            name,
            folder_id,
            secret_template_id: template_id,
            fields,
            ..Self::default()
        }
    }

    /// Parses an API answer (`action` names it in errors, which never quote the body).
    pub fn parse(body: &[u8], action: &str) -> Result<Self> {
        let object = object(body, action)?;
        let fields = match object.get("items") {
            Some(Value::Array(items)) => items.iter().map(SecretField::from_value).collect(),
            _ => Vec::new(),
        };
        Ok(Self {
            name: text(&object, "name"),
            folder_id: int(&object, "folderid"),
            id: int(&object, "id"),
            site_id: int(&object, "siteid"),
            secret_template_id: int(&object, "secrettemplateid"),
            secret_policy_id: int(&object, "secretpolicyid"),
            password_type_web_script_id: int(&object, "passwordtypewebscriptid"),
            launcher_connect_as_secret_id: int(&object, "launcherconnectassecretid"),
            check_out_interval_minutes: int(&object, "checkoutintervalminutes"),
            active: flag(&object, "active"),
            checked_out: flag(&object, "checkedout"),
            check_out_enabled: flag(&object, "checkoutenabled"),
            auto_change_enabled: flag(&object, "autochangeenabled"),
            check_out_change_password_enabled: flag(&object, "checkoutchangepasswordenabled"),
            delay_indexing: flag(&object, "delayindexing"),
            enable_inherit_permissions: flag(&object, "enableinheritpermissions"),
            enable_inherit_secret_policy: flag(&object, "enableinheritsecretpolicy"),
            proxy_enabled: flag(&object, "proxyenabled"),
            requires_comment: flag(&object, "requirescomment"),
            session_recording_enabled: flag(&object, "sessionrecordingenabled"),
            web_launcher_requires_incognito_mode: flag(&object, "weblauncherrequiresincognitomode"),
            fields,
        })
    }

    /// The secret as upstream returns it without `property`: Go's encoding of the SDK struct.
    pub fn to_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|failure| {
            ProviderError::invalid_data(format!(
                "encoding secret: {}",
                crate::redact::json_error(&failure)
            ))
        })
    }
}

impl SecretField {
    /// A field filling template field `field_id` with `value`.
    pub fn with_value(field_id: i64, slug: String, value: Vec<u8>) -> Self {
        Self {
            field_id,
            slug,
            item_value: value,
            ..Self::default()
        }
    }

    /// Whether `name` is this field's slug or name (upstream's match).
    pub fn is_named(&self, name: &str) -> bool {
        self.slug == name || self.field_name == name
    }

    fn from_value(value: &Value) -> Self {
        let Some(object) = value.as_object().map(lowercase_keys) else {
            return Self::default();
        };
        Self {
            item_id: int(&object, "itemid"),
            field_id: int(&object, "fieldid"),
            file_attachment_id: int(&object, "fileattachmentid"),
            field_name: text(&object, "fieldname"),
            slug: text(&object, "slug"),
            field_description: text(&object, "fielddescription"),
            filename: text(&object, "filename"),
            item_value: text(&object, "itemvalue").into_bytes(),
            is_file: flag(&object, "isfile"),
            is_notes: flag(&object, "isnotes"),
            is_password: flag(&object, "ispassword"),
        }
    }
}

impl Template {
    /// Parses an API answer.
    pub fn parse(body: &[u8], action: &str) -> Result<Self> {
        let object = object(body, action)?;
        let fields = match object.get("fields") {
            Some(Value::Array(fields)) => fields
                .iter()
                .filter_map(Value::as_object)
                .map(lowercase_keys)
                .map(|field| TemplateField {
                    id: int(&field, "secrettemplatefieldid"),
                    slug: text(&field, "fieldslugname"),
                    name: text(&field, "name"),
                    is_file: flag(&field, "isfile"),
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(Self { fields })
    }

    /// The field `property` names: by slug, else by name (upstream's `findTemplateFieldID`);
    /// without a property, the first field.
    pub fn field(&self, property: Option<&str>) -> Option<&TemplateField> {
        match property {
            None => self.fields.first(),
            Some(property) => self
                .fields
                .iter()
                .find(|field| field.slug == property)
                .or_else(|| self.fields.iter().find(|field| field.name == property)),
        }
    }
}

/// The records of a search answer (`{"records": [...]}`).
pub fn parse_search(body: &[u8], action: &str) -> Result<Vec<Summary>> {
    let object = object(body, action)?;
    Ok(match object.get("records") {
        Some(Value::Array(records)) => records
            .iter()
            .filter_map(Value::as_object)
            .map(lowercase_keys)
            .map(|record| Summary {
                id: int(&record, "id"),
                folder_id: int(&record, "folderid"),
            })
            .collect(),
        _ => Vec::new(),
    })
}

type Object = HashMap<String, Value>;

/// The JSON object of an answer, keys lowercased (Go matches them case-insensitively).
fn object(body: &[u8], action: &str) -> Result<Object> {
    let value: Value = serde_json::from_slice(body).map_err(|failure| {
        ProviderError::invalid_data(format!(
            "{action}: unexpected response: {}",
            crate::redact::json_error(&failure)
        ))
    })?;
    match value {
        Value::Object(map) => Ok(lowercase_keys(&map)),
        _ => Err(ProviderError::invalid_data(format!(
            "{action}: unexpected response: not a JSON object"
        ))),
    }
}

fn lowercase_keys(map: &serde_json::Map<String, Value>) -> Object {
    map.iter()
        .map(|(key, value)| (key.to_lowercase(), value.clone()))
        .collect()
}

fn int(object: &Object, key: &str) -> i64 {
    object.get(key).and_then(Value::as_i64).unwrap_or_default()
}

fn text(object: &Object, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn flag(object: &Object, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or_default()
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// Bytes as a JSON string, invalid UTF-8 replaced (as Go's encoder does).
fn lossy_text<S: Serializer>(bytes: &[u8], serializer: S) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&String::from_utf8_lossy(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_apis_camel_case_and_writes_the_sdks_names() {
        let answer = br#"{"id":7,"name":"db","folderId":3,"secretTemplateId":6003,
            "secretPolicyId":null,"active":true,"items":[{"itemId":1,"fieldId":108,
            "fileAttachmentId":null,"fieldName":"Password","slug":"password",
            "fieldDescription":"","filename":null,"itemValue":"p<w>","isFile":false,
            "isNotes":false,"isPassword":true}]}"#;
        let secret = Secret::parse(answer, "get").unwrap();
        assert_eq!((secret.id, secret.folder_id), (7, 3));
        assert!(secret.fields[0].is_named("Password") && secret.fields[0].is_named("password"));
        let json = String::from_utf8(secret.to_json().unwrap()).unwrap();
        assert_eq!(
            json,
            r#"{"Name":"db","FolderID":3,"ID":7,"SiteID":0,"SecretTemplateID":6003,"LauncherConnectAsSecretID":0,"CheckOutIntervalMinutes":0,"Active":true,"CheckedOut":false,"CheckOutEnabled":false,"AutoChangeEnabled":false,"CheckOutChangePasswordEnabled":false,"DelayIndexing":false,"EnableInheritPermissions":false,"EnableInheritSecretPolicy":false,"ProxyEnabled":false,"RequiresComment":false,"SessionRecordingEnabled":false,"WebLauncherRequiresIncognitoMode":false,"Items":[{"ItemID":1,"FieldID":108,"FileAttachmentID":0,"FieldName":"Password","Slug":"password","FieldDescription":"","Filename":"","ItemValue":"p<w>","IsFile":false,"IsNotes":false,"IsPassword":true}]}"#
        );
    }

    #[test]
    fn bad_answers_are_errors_without_the_body() {
        let error = Secret::parse(br#"{"name": "hunter2""#, "get").unwrap_err();
        assert!(!error.message().contains("hunter2"), "{error}");
        assert!(Secret::parse(b"[]", "get").is_err());
    }

    #[test]
    fn template_fields_are_found_by_slug_then_name() {
        let template = Template::parse(
            br#"{"id":1,"fields":[{"secretTemplateFieldId":10,"fieldSlugName":"user","name":"Username"},
                {"secretTemplateFieldId":11,"fieldSlugName":"key","name":"Private Key","isFile":true}]}"#,
            "template",
        )
        .unwrap();
        assert_eq!(template.field(None).unwrap().id, 10);
        assert_eq!(template.field(Some("Private Key")).unwrap().id, 11);
        assert!(template.field(Some("key")).unwrap().is_file);
        assert!(template.field(Some("nope")).is_none());
    }
}

//! The JSON bodies of the 1Password Connect API that this backend reads and writes: vaults,
//! item summaries and full items with their fields, sections and files. Unknown fields of an
//! item are kept (`rest`) so that an update sends back everything Connect returned.

use serde::{Deserialize, Serialize};

/// A vault (`GET /v1/vaults/{id}` or an entry of the list).
#[derive(Debug, Clone, Deserialize)]
pub struct Vault {
    /// The vault's id.
    pub id: String,
}

/// The vault an item belongs to.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ItemVault {
    /// The vault's id.
    pub id: String,
}

/// One field of an item.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Field {
    /// Connect's id of the field (absent on fields this backend creates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The field's label: the `property` of a remote ref.
    #[serde(default)]
    pub label: String,
    /// The field's value.
    #[serde(default)]
    pub value: String,
    /// The field type (`CONCEALED` for pushed values).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Everything else Connect sent (purpose, section, ...), sent back unchanged.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

/// One file attached to an item.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct File {
    /// The file name: the `property` of a `file/` remote ref.
    #[serde(default)]
    pub name: String,
    /// Where Connect serves the file's bytes.
    #[serde(default)]
    pub content_path: String,
    /// Everything else Connect sent, sent back unchanged.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

/// An item: a summary from a list (no fields) or a full item.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Item {
    /// Connect's id (absent when creating).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The title: the `key` of a remote ref.
    #[serde(default)]
    pub title: String,
    /// The vault the item is in.
    #[serde(default)]
    pub vault: ItemVault,
    /// The item category (`DOCUMENT` items default properties to files).
    #[serde(default)]
    pub category: String,
    /// The item's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The item's fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
    /// The item's files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<File>,
    /// The item's sections (kept to decide whether an emptied item is deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<serde_json::Value>,
    /// Everything else Connect sent, sent back unchanged.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl Item {
    /// How many fields carry `label` (upstream refuses a label that is not unique).
    pub fn count_label(&self, label: &str) -> usize {
        self.fields
            .iter()
            .filter(|field| field.label == label)
            .count()
    }

    /// Whether a section is only the empty placeholder Connect adds (treated as no section).
    pub fn has_real_sections(&self) -> bool {
        match self.sections.as_slice() {
            [] => false,
            [only] => {
                let empty = |name: &str| {
                    only.get(name)
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .is_empty()
                };
                !(empty("id") && empty("label"))
            }
            _ => true,
        }
    }
}

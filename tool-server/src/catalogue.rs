//! The operation catalogue: every operation an agent may call, with its
//! description and JSON input schema, in the shape MCP `tools/list` and
//! `session_info` publish. The schemas are generated from the arguments
//! structs ([`crate::Operation`]'s table names each one's), then given the
//! bounds every argument shares, which the validator enforces whatever a
//! schema says. The validator, `session_info`, the CLI and the MCP adapter all
//! read this table.

use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::operation::Operation;

/// Longest accepted string argument, in characters (Unicode scalar values).
pub const MAX_STRING_CHARS: usize = 64_000;
/// Largest accepted absolute value of a numeric argument.
pub const MAX_NUMBER: f64 = 1_000_000.0;
/// Most items an array argument may hold (the fewest is one).
pub const MAX_ARRAY_ITEMS: usize = 100;
/// Array items must be strictly shorter than this many characters.
pub const MAX_ITEM_CHARS: usize = 256;

/// One catalogue entry. Serializes as `{name, description, inputSchema}`,
/// the shape MCP `tools/list` and `session_info` publish.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The typed operation.
    pub operation: Operation,
    /// What the operation does and returns, written for an LLM agent.
    pub description: &'static str,
    /// `{type:"object", properties, required, additionalProperties:false}`.
    pub input_schema: Value,
    /// Arguments of which at least one must be present (empty when none).
    /// Kept out of the schema because several agent APIs refuse top-level
    /// `anyOf`; the validator enforces it and the description states it.
    pub requires_one_of: &'static [&'static str],
}

impl ToolSpec {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        self.operation.name()
    }

    /// The schema's `properties` object.
    pub fn properties(&self) -> &Map<String, Value> {
        static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        self.input_schema.get("properties").and_then(Value::as_object).unwrap_or(&EMPTY)
    }

    /// The schema's `required` argument names.
    pub fn required(&self) -> impl Iterator<Item = &str> {
        self.input_schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    }
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ToolSpec", 3)?;
        s.serialize_field("name", self.name())?;
        s.serialize_field("description", self.description)?;
        s.serialize_field("inputSchema", &self.input_schema)?;
        s.end()
    }
}

/// The catalogue entry for `operation`.
pub fn tool_spec(operation: Operation) -> &'static ToolSpec {
    // AGENT_TOOLS is built from Operation::ALL, which lists variants in
    // declaration order, so the discriminant is the index.
    &AGENT_TOOLS[operation as usize]
}

/// Every callable operation, in `Operation::ALL` order.
pub static AGENT_TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            // One flat object per operation: agents' APIs take no `$ref`s.
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    Operation::ALL
        .iter()
        .map(|&operation| ToolSpec {
            operation,
            description: operation.description(),
            input_schema: input_schema(operation, operation.args_schema(&mut generator).to_value()),
            requires_one_of: operation.requires_one_of(),
        })
        .collect()
});

/// `{type:"object", properties, required, additionalProperties}` from what
/// schemars generated: its title and the struct's doc dropped, `required`
/// stated even when empty, and each property published as [`property`] says.
fn input_schema(operation: Operation, generated: Value) -> Value {
    let Value::Object(mut generated) = generated else { return generated };
    let mut properties = match generated.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    for (name, schema) in &mut properties {
        property(schema);
        if let Some((_, description)) = operation.property_descriptions().iter().find(|(p, _)| p == name) {
            schema["description"] = json!(description);
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": generated.remove("required").unwrap_or_else(|| json!([])),
        "additionalProperties": generated.remove("additionalProperties").unwrap_or(Value::Bool(true)),
    })
}

/// One argument's schema as published: absent, never `null` (the validator
/// refuses `null` for an optional argument); a choice as a plain `enum`; no
/// `format`s; and the bounds every argument of its type shares.
fn property(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    // `Option<T>` fields: `"type": ["string", "null"]`, or `anyOf: [T, {"type": "null"}]`.
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            object.insert("type".into(), single);
        }
    }
    if let Some(Value::Array(any_of)) = object.remove("anyOf") {
        if let Some(Value::Object(inner)) = any_of.into_iter().find(|s| s["type"] != "null") {
            // The field's own description wins over its type's.
            for (key, value) in inner {
                object.entry(key).or_insert(value);
            }
        }
    }
    // A choice whose variants carry docs comes as `oneOf` of `const`s.
    if let Some(Value::Array(one_of)) = object.get("oneOf") {
        let names: Option<Vec<Value>> = one_of.iter().map(|variant| variant.get("const").cloned()).collect();
        if let Some(names) = names {
            object.remove("oneOf");
            object.insert("type".into(), json!("string"));
            object.insert("enum".into(), Value::Array(names));
        }
    }
    object.remove("format");
    // A lower bound of the field's own (`exclusiveMinimum`, a count's `minimum`) stands.
    match object.get("type").and_then(Value::as_str) {
        Some("string") if !object.contains_key("enum") => {
            object.insert("maxLength".into(), json!(MAX_STRING_CHARS));
        }
        Some(kind @ ("number" | "integer")) => {
            if kind == "number" && !object.contains_key("minimum") && !object.contains_key("exclusiveMinimum") {
                object.insert("minimum".into(), json!(-MAX_NUMBER));
            }
            object.entry("maximum").or_insert(json!(MAX_NUMBER));
        }
        Some("array") => {
            if let Some(items) = object.get_mut("items").and_then(Value::as_object_mut) {
                items.insert("maxLength".into(), json!(MAX_ITEM_CHARS - 1));
            }
            object.insert("minItems".into(), json!(1));
            object.insert("maxItems".into(), json!(MAX_ARRAY_ITEMS));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for op in Operation::ALL {
            assert!(seen.insert(op.name()), "duplicate {op}");
            assert_eq!(Operation::from_name(op.name()), Some(*op));
        }
        assert_eq!(Operation::ALL.len(), 28);
        assert_eq!(Operation::from_name("nope"), None);
        let names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(Operation::NAMES, names.as_slice());
    }

    #[test]
    fn every_schema_is_a_closed_object_whose_required_args_exist() {
        assert_eq!(AGENT_TOOLS.len(), Operation::ALL.len());
        for (spec, op) in AGENT_TOOLS.iter().zip(Operation::ALL) {
            assert_eq!(spec.operation, *op);
            assert_eq!(tool_spec(*op).name(), op.name());
            let schema = &spec.input_schema;
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            for name in spec.required().chain(spec.requires_one_of.iter().copied()) {
                assert!(spec.properties().contains_key(name), "{op}: {name}");
            }
            for (name, prop) in spec.properties() {
                assert!(prop["description"].as_str().is_some_and(|d| !d.is_empty()), "{op}.{name}");
            }
            assert!(spec.description.len() > 40, "{op} needs a useful description");
        }
    }

    #[test]
    fn the_published_catalogue_is_pinned() {
        // Every name, description and schema as `tools/list` and `session_info`
        // publish them, so a change in the structs or in schemars shows here.
        // After a deliberate change: PIN_CATALOGUE=1 cargo test -p tool-server pinned
        let published = serde_json::to_string_pretty(&*AGENT_TOOLS).unwrap();
        let pinned = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/catalogue.json");
        if std::env::var_os("PIN_CATALOGUE").is_some() {
            std::fs::write(pinned, format!("{published}\n")).unwrap();
        }
        let expected = std::fs::read_to_string(pinned).unwrap();
        let line = published.lines().zip(expected.lines()).position(|(a, b)| a != b).map(|i| i + 1);
        assert!(published == expected.trim_end(), "the catalogue differs from {pinned} (first at line {line:?})");
    }

    #[test]
    fn serializes_in_mcp_shape() {
        let v = serde_json::to_value(tool_spec(Operation::CanvasMove)).unwrap();
        assert_eq!(v["name"], "canvas_move");
        assert_eq!(v["inputSchema"]["required"], json!(["nodeId", "x", "y"]));
        assert_eq!(v.as_object().unwrap().len(), 3);
    }

    #[test]
    fn classifies_surfaces() {
        assert!(Operation::BrowserType.is_browser());
        assert!(!Operation::TerminalRead.is_browser());
        assert!(Operation::GuideRead.is_direct());
        assert!(!Operation::CanvasList.is_direct());
        assert!(Operation::CanvasGroup.is_canvas());
        assert!(!Operation::StickyOpen.is_canvas());
    }
}

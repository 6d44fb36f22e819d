//! `validate_tool_request`: turns an untrusted `{operation, args}` JSON value
//! into a [`ToolRequest`], driven by the catalogue's input schemas plus the
//! global limits on strings, numbers and arrays.

use serde_json::{Map, Value};
use thiserror::Error;

use crate::catalogue::{tool_spec, MAX_ARRAY_ITEMS, MAX_ITEM_CHARS, MAX_NUMBER, MAX_STRING_CHARS};
use crate::operation::{Operation, ToolRequest};

/// Why a request was rejected. Messages name the offending argument; names
/// echoed from input are truncated and escaped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    /// The request is not a JSON object.
    #[error("Request must be a JSON object {{operation, args}}")]
    NotAnObject,
    /// The request has a top-level key other than `operation` and `args`.
    #[error("Unknown request field {0}")]
    UnknownField(String),
    /// `operation` is absent.
    #[error("Request is missing operation")]
    MissingOperation,
    /// `operation` is not a string.
    #[error("operation must be a string")]
    OperationNotString,
    /// `operation` names nothing in the catalogue.
    #[error("Unknown operation {0}")]
    UnknownOperation(String),
    /// `args` is present but not an object.
    #[error("args must be a JSON object")]
    ArgsNotObject,
    /// A required argument is absent.
    #[error("{operation} requires argument {argument}")]
    MissingArgument {
        /// The operation.
        operation: &'static str,
        /// The argument.
        argument: String,
    },
    /// None of a set of alternative arguments is present.
    #[error("{operation} requires one of: {options}")]
    MissingOneOf {
        /// The operation.
        operation: &'static str,
        /// The alternatives, comma-separated.
        options: String,
    },
    /// An argument the schema does not declare.
    #[error("{operation} does not accept argument {argument}")]
    UnknownArgument {
        /// The operation.
        operation: &'static str,
        /// The argument (escaped, truncated).
        argument: String,
    },
    /// An argument of the wrong JSON type.
    #[error("{argument} must be {expected}")]
    WrongType {
        /// The argument.
        argument: String,
        /// The expected type, with article ("a string").
        expected: &'static str,
    },
    /// A number that is NaN or infinite.
    #[error("{argument} must be a finite number")]
    NotFinite {
        /// The argument.
        argument: String,
    },
    /// A number beyond ±`MAX_NUMBER`.
    #[error("{argument} must be between -1000000 and 1000000")]
    OutOfRange {
        /// The argument.
        argument: String,
    },
    /// A number below the schema's minimum.
    #[error("{argument} must be {bound}")]
    BelowMinimum {
        /// The argument.
        argument: String,
        /// The bound in words ("at least 1", "greater than 0").
        bound: String,
    },
    /// A string longer than `MAX_STRING_CHARS` characters.
    #[error("{argument} must be at most 64000 characters")]
    StringTooLong {
        /// The argument.
        argument: String,
    },
    /// A string containing U+0000.
    #[error("{argument} must not contain NUL characters")]
    ContainsNul {
        /// The argument (or `name[index]` for an array item).
        argument: String,
    },
    /// A string outside the schema's enum.
    #[error("{argument} must be one of: {allowed}")]
    NotInEnum {
        /// The argument.
        argument: String,
        /// The allowed values, comma-separated.
        allowed: String,
    },
    /// An array with too few or too many items.
    #[error("{argument} must contain 1 to 100 items")]
    ArrayLength {
        /// The argument.
        argument: String,
    },
    /// An array item that is not a string.
    #[error("{argument}[{index}] must be a string")]
    ItemNotString {
        /// The argument.
        argument: String,
        /// The item's position.
        index: usize,
    },
    /// An array item of `MAX_ITEM_CHARS` characters or more.
    #[error("{argument}[{index}] must be shorter than 256 characters")]
    ItemTooLong {
        /// The argument.
        argument: String,
        /// The item's position.
        index: usize,
    },
    /// The schema itself uses a type this validator does not implement (a
    /// catalogue bug, caught by the catalogue tests).
    #[error("{argument} has an unsupported schema")]
    UnsupportedSchema {
        /// The argument.
        argument: String,
    },
}

impl ValidationError {
    /// The error body's `code`: the request's shape, or one of its arguments.
    pub fn code(&self) -> crate::error::ErrorCode {
        use crate::error::ErrorCode;
        match self {
            ValidationError::NotAnObject
            | ValidationError::UnknownField(_)
            | ValidationError::MissingOperation
            | ValidationError::OperationNotString
            | ValidationError::UnknownOperation(_)
            | ValidationError::ArgsNotObject => ErrorCode::InvalidRequest,
            _ => ErrorCode::InvalidArgument,
        }
    }
}

/// Validates an untrusted request against the catalogue.
///
/// `args` may be omitted for operations without required arguments.
pub fn validate_tool_request(raw: &Value) -> Result<ToolRequest, ValidationError> {
    let object = raw.as_object().ok_or(ValidationError::NotAnObject)?;
    if let Some(key) = object.keys().find(|k| *k != "operation" && *k != "args") {
        return Err(ValidationError::UnknownField(echo(key)));
    }
    let name = match object.get("operation") {
        None => return Err(ValidationError::MissingOperation),
        Some(Value::String(name)) => name,
        Some(_) => return Err(ValidationError::OperationNotString),
    };
    let operation = Operation::from_name(name).ok_or_else(|| ValidationError::UnknownOperation(echo(name)))?;
    let empty = Map::new();
    let args = match object.get("args") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(args)) => args,
        Some(_) => return Err(ValidationError::ArgsNotObject),
    };

    let spec = tool_spec(operation);
    let properties = spec.properties();
    // Unknown arguments first: a misspelt required argument then reads as
    // "does not accept X" rather than the less helpful "requires Y".
    for key in args.keys() {
        if !properties.contains_key(key) {
            return Err(ValidationError::UnknownArgument { operation: operation.name(), argument: echo(key) });
        }
    }
    for required in spec.required() {
        if !args.contains_key(required) {
            return Err(ValidationError::MissingArgument {
                operation: operation.name(),
                argument: required.to_owned(),
            });
        }
    }
    if !spec.requires_one_of.is_empty() && !spec.requires_one_of.iter().any(|k| args.contains_key(*k)) {
        return Err(ValidationError::MissingOneOf {
            operation: operation.name(),
            options: spec.requires_one_of.join(", "),
        });
    }
    for (key, value) in args {
        // Every key was checked against `properties` above.
        if let Some(schema) = properties.get(key) {
            check_value(key, schema, value)?;
        }
    }
    Ok(ToolRequest { operation, args: args.clone() })
}

fn check_value(argument: &str, schema: &Value, value: &Value) -> Result<(), ValidationError> {
    let wrong = |expected| ValidationError::WrongType { argument: argument.to_owned(), expected };
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => {
            let text = value.as_str().ok_or_else(|| wrong("a string"))?;
            check_string(argument, text)?;
            if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
                if !allowed.iter().any(|a| a.as_str() == Some(text)) {
                    let allowed: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
                    return Err(ValidationError::NotInEnum {
                        argument: argument.to_owned(),
                        allowed: allowed.join(", "),
                    });
                }
            }
            Ok(())
        }
        Some(kind @ ("number" | "integer")) => {
            let number =
                value.as_f64().ok_or_else(|| wrong(if kind == "integer" { "an integer" } else { "a number" }))?;
            // serde_json cannot hold NaN or infinities, but a Value built in
            // process could come from elsewhere in future; keep the rule explicit.
            if !number.is_finite() {
                return Err(ValidationError::NotFinite { argument: argument.to_owned() });
            }
            if number.abs() > MAX_NUMBER {
                return Err(ValidationError::OutOfRange { argument: argument.to_owned() });
            }
            if kind == "integer" && number.fract() != 0.0 {
                return Err(wrong("an integer"));
            }
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                if number < min {
                    return Err(ValidationError::BelowMinimum {
                        argument: argument.to_owned(),
                        bound: format!("at least {min}"),
                    });
                }
            }
            if let Some(min) = schema.get("exclusiveMinimum").and_then(Value::as_f64) {
                if number <= min {
                    return Err(ValidationError::BelowMinimum {
                        argument: argument.to_owned(),
                        bound: format!("greater than {min}"),
                    });
                }
            }
            Ok(())
        }
        Some("boolean") => value.as_bool().map(|_| ()).ok_or_else(|| wrong("a boolean")),
        Some("array") => {
            let items = value.as_array().ok_or_else(|| wrong("an array of strings"))?;
            if items.is_empty() || items.len() > MAX_ARRAY_ITEMS {
                return Err(ValidationError::ArrayLength { argument: argument.to_owned() });
            }
            for (index, item) in items.iter().enumerate() {
                let text = item
                    .as_str()
                    .ok_or_else(|| ValidationError::ItemNotString { argument: argument.to_owned(), index })?;
                if text.chars().count() >= MAX_ITEM_CHARS {
                    return Err(ValidationError::ItemTooLong { argument: argument.to_owned(), index });
                }
                if text.contains('\0') {
                    return Err(ValidationError::ContainsNul { argument: format!("{argument}[{index}]") });
                }
            }
            Ok(())
        }
        _ => Err(ValidationError::UnsupportedSchema { argument: argument.to_owned() }),
    }
}

fn check_string(argument: &str, text: &str) -> Result<(), ValidationError> {
    // Cheap byte bound first: a string of at most MAX chars has at most 4*MAX bytes.
    if text.len() > MAX_STRING_CHARS && text.chars().count() > MAX_STRING_CHARS {
        return Err(ValidationError::StringTooLong { argument: argument.to_owned() });
    }
    if text.contains('\0') {
        return Err(ValidationError::ContainsNul { argument: argument.to_owned() });
    }
    Ok(())
}

/// Renders an untrusted name for an error message: escaped and at most 64 characters.
fn echo(name: &str) -> String {
    const LIMIT: usize = 64;
    let mut out: String = name.chars().take(LIMIT).flat_map(char::escape_debug).collect();
    if name.chars().nth(LIMIT).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejects(raw: Value) -> String {
        match validate_tool_request(&raw) {
            Ok(req) => panic!("accepted {raw}: {req:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn accepts(raw: Value) -> ToolRequest {
        validate_tool_request(&raw).unwrap_or_else(|e| panic!("rejected {raw}: {e}"))
    }

    fn call(operation: &str, args: Value) -> Value {
        json!({"operation": operation, "args": args})
    }

    fn repeat(c: char, n: usize) -> String {
        std::iter::repeat_n(c, n).collect()
    }

    fn ids(n: usize) -> Value {
        Value::Array((0..n).map(|i| json!(format!("n{i}"))).collect())
    }

    #[test]
    fn table() {
        // (request, Ok(()) to accept or Err(exact message))
        let cases: Vec<(Value, Result<(), &str>)> = vec![
            // shape
            (json!("canvas_list"), Err("Request must be a JSON object {operation, args}")),
            (json!([1]), Err("Request must be a JSON object {operation, args}")),
            (json!(null), Err("Request must be a JSON object {operation, args}")),
            (json!({"args": {}}), Err("Request is missing operation")),
            (json!({"operation": 7}), Err("operation must be a string")),
            (json!({"operation": "rm_rf"}), Err("Unknown operation rm_rf")),
            (json!({"operation": "canvas_list", "id": 1}), Err("Unknown request field id")),
            (json!({"operation": "canvas_list", "args": []}), Err("args must be a JSON object")),
            (json!({"operation": "canvas_list"}), Ok(())),
            (json!({"operation": "canvas_list", "args": null}), Ok(())),
            // required / unknown
            (call("canvas_move", json!({"nodeId": "a", "x": 1})), Err("canvas_move requires argument y")),
            (call("guide_read", json!({})), Err("guide_read requires argument topic")),
            (call("canvas_list", json!({"nodeId": "a"})), Err("canvas_list does not accept argument nodeId")),
            (
                call("canvas_move", json!({"nodeId": "a", "x": 1, "y": 2, "z": 3})),
                Err("canvas_move does not accept argument z"),
            ),
            (call("canvas_group", json!({"nodeIds": ["a"]})), Ok(())),
            (call("canvas_group", json!({"nodeIds": ["a"], "title": "T"})), Ok(())),
            (call("browser_click", json!({"nodeId": "b"})), Err("browser_click requires one of: selector, ref")),
            (call("browser_click", json!({"nodeId": "b", "ref": "e3"})), Ok(())),
            (call("browser_click", json!({"nodeId": "b", "selector": "#go"})), Ok(())),
            // primitive types
            (call("canvas_move", json!({"nodeId": 5, "x": 1, "y": 2})), Err("nodeId must be a string")),
            (call("canvas_move", json!({"nodeId": "a", "x": "NaN", "y": 2})), Err("x must be a number")),
            (call("canvas_move", json!({"nodeId": "a", "x": "Infinity", "y": 2})), Err("x must be a number")),
            (call("canvas_move", json!({"nodeId": "a", "x": null, "y": 2})), Err("x must be a number")),
            (call("canvas_move", json!({"nodeId": "a", "x": true, "y": 2})), Err("x must be a number")),
            (call("browser_inspect", json!({"nodeId": "b", "screenshot": "yes"})), Err("screenshot must be a boolean")),
            (call("browser_inspect", json!({"nodeId": "b", "screenshot": true})), Ok(())),
            (call("browser_inspect", json!({"nodeId": "b", "page": 0})), Err("page must be at least 1")),
            (call("browser_inspect", json!({"nodeId": "b", "within": 7})), Err("within must be a string")),
            (call("browser_inspect", json!({"nodeId": "b", "page": 3, "within": "e7"})), Ok(())),
            (call("terminal_read", json!({"nodeId": "t", "maxChars": 1.5})), Err("maxChars must be an integer")),
            (call("terminal_read", json!({"nodeId": "t", "maxChars": 2000.0})), Ok(())),
            (call("terminal_read", json!({"nodeId": "t", "maxChars": 0})), Err("maxChars must be at least 1")),
            (call("terminal_read", json!({"nodeId": "t", "maxChars": 1})), Ok(())),
            (
                call("canvas_resize", json!({"nodeId": "a", "width": 0, "height": 5})),
                Err("width must be greater than 0"),
            ),
            (call("canvas_resize", json!({"nodeId": "a", "width": 0.5, "height": 5})), Ok(())),
            // number magnitude, both sides of the bound
            (call("canvas_move", json!({"nodeId": "a", "x": 1_000_000, "y": -1_000_000})), Ok(())),
            (
                call("canvas_move", json!({"nodeId": "a", "x": 1_000_000.000_001, "y": 0})),
                Err("x must be between -1000000 and 1000000"),
            ),
            (
                call("canvas_move", json!({"nodeId": "a", "x": 0, "y": -1_000_000.000_001})),
                Err("y must be between -1000000 and 1000000"),
            ),
            (
                call("canvas_move", json!({"nodeId": "a", "x": 1e300, "y": 0})),
                Err("x must be between -1000000 and 1000000"),
            ),
            (
                call("canvas_move", json!({"nodeId": "a", "x": u64::MAX, "y": 0})),
                Err("x must be between -1000000 and 1000000"),
            ),
            // strings: length in characters, NUL
            (call("sticky_open", json!({"text": repeat('a', 64_000)})), Ok(())),
            (call("sticky_open", json!({"text": repeat('a', 64_001)})), Err("text must be at most 64000 characters")),
            (call("sticky_open", json!({"text": repeat('é', 64_000)})), Ok(())),
            (call("sticky_open", json!({"text": repeat('😀', 64_000)})), Ok(())),
            (call("sticky_open", json!({"text": repeat('😀', 64_001)})), Err("text must be at most 64000 characters")),
            (call("sticky_open", json!({"text": "a\u{0}b"})), Err("text must not contain NUL characters")),
            (call("sticky_open", json!({"text": ""})), Ok(())),
            // arrays: 0/1/100/101 items, 255/256-char items, item types, NUL
            (call("canvas_select", json!({"nodeIds": ids(0)})), Err("nodeIds must contain 1 to 100 items")),
            (call("canvas_select", json!({"nodeIds": ids(1)})), Ok(())),
            (call("canvas_select", json!({"nodeIds": ids(100)})), Ok(())),
            (call("canvas_select", json!({"nodeIds": ids(101)})), Err("nodeIds must contain 1 to 100 items")),
            (call("canvas_select", json!({"nodeIds": [repeat('x', 255)]})), Ok(())),
            (
                call("canvas_select", json!({"nodeIds": ["ok", repeat('x', 256)]})),
                Err("nodeIds[1] must be shorter than 256 characters"),
            ),
            (call("canvas_select", json!({"nodeIds": [repeat('ß', 255)]})), Ok(())),
            (call("canvas_select", json!({"nodeIds": ["a", 3]})), Err("nodeIds[1] must be a string")),
            (call("canvas_select", json!({"nodeIds": ["a\u{0}"]})), Err("nodeIds[0] must not contain NUL characters")),
            (call("canvas_select", json!({"nodeIds": "a"})), Err("nodeIds must be an array of strings")),
            // enums
            (call("guide_read", json!({"topic": "overview"})), Ok(())),
            (
                call("guide_read", json!({"topic": "secrets"})),
                Err("topic must be one of: overview, browser, terminal, canvas, context, artifacts"),
            ),
            (
                call("guide_read", json!({"topic": "Overview"})),
                Err("topic must be one of: overview, browser, terminal, canvas, context, artifacts"),
            ),
            (call("agent_launch", json!({"agent": "openclaude"})), Ok(())),
            (
                call("agent_launch", json!({"agent": "gpt"})),
                Err("agent must be one of: claude, codex, gemini, grok, openclaude, custom"),
            ),
            (call("artifact_open", json!({"path": "/p/a.rs", "view": "diff"})), Ok(())),
            (
                call("artifact_open", json!({"path": "/p/a.rs", "view": "hex"})),
                Err("view must be one of: editor, diff"),
            ),
            (call("artifact_open", json!({"path": "/p/a.rs", "view": 1})), Err("view must be a string")),
        ];
        for (raw, expected) in cases {
            match expected {
                Ok(()) => {
                    accepts(raw);
                }
                Err(message) => assert_eq!(rejects(raw.clone()), message, "for {raw}"),
            }
        }
    }

    #[test]
    fn echoed_names_are_escaped_and_truncated() {
        let long = repeat('k', 500);
        let message = rejects(call("canvas_list", json!({ long.clone(): 1 })));
        assert!(message.len() < 150, "{message}");
        assert!(message.ends_with('…'));
        let message = rejects(json!({"operation": "a\nb\u{1b}[31m"}));
        assert_eq!(message, "Unknown operation a\\nb\\u{1b}[31m");
    }

    #[test]
    fn every_operation_accepts_its_minimal_arguments() {
        // Build a minimal valid call for each schema; proves no schema uses a
        // type the validator cannot check.
        for spec in crate::AGENT_TOOLS.iter() {
            let mut args = Map::new();
            for name in spec.required().chain(spec.requires_one_of.iter().copied().take(1)) {
                let prop = &spec.properties()[name];
                let value = match prop["type"].as_str().unwrap() {
                    "string" => prop.get("enum").map_or(json!("v"), |e| e[0].clone()),
                    "number" | "integer" => json!(10),
                    "boolean" => json!(true),
                    "array" => json!(["n1"]),
                    other => panic!("{other}"),
                };
                args.insert(name.to_owned(), value);
            }
            let request = accepts(json!({"operation": spec.name(), "args": args}));
            assert_eq!(request.operation, spec.operation);
        }
    }

    #[test]
    fn typed_accessors_read_arguments() {
        let request = accepts(call("canvas_group", json!({"nodeIds": ["a", "b"], "title": "T"})));
        assert_eq!(request.strings_arg("nodeIds"), Some(vec!["a", "b"]));
        assert_eq!(request.str_arg("title"), Some("T"));
        assert_eq!(request.number_arg("title"), None);
        let request = accepts(call("browser_inspect", json!({"nodeId": "b", "screenshot": false, "maxChars": 9})));
        assert_eq!(request.bool_arg("screenshot"), Some(false));
        assert_eq!(request.number_arg("maxChars"), Some(9.0));
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"operation": "browser_inspect", "args": {"nodeId": "b", "screenshot": false, "maxChars": 9}})
        );
    }
}

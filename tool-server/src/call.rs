//! [`ToolCall`]: a validated request as a typed value, one variant per
//! operation with an arguments struct each. The validator
//! ([`crate::validate_tool_request`]) stays the gate and writes every error
//! message; [`ToolCall::from_request`] then deserializes the checked map, so a
//! failure there is a catalogue bug (the tests below build a maximal and a
//! minimal request from every schema and prove the structs and schemas agree).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::choices::ArtifactChoice;
use crate::guides::GuideTopic;
use crate::operation::Operation;
use crate::validate::ToolRequest;
use agent_vocab::AgentKind;

/// An arguments struct: its wire field names, in declaration order (what the
/// drift tests compare with the catalogue schema's `properties`).
pub trait ToolArgs: Serialize + for<'de> Deserialize<'de> {
    /// The JSON names of every field.
    const FIELDS: &'static [&'static str];
}

/// Serializes a whole `f64` as a JSON integer, so a number an agent sent as
/// `10` reads back as `10` (JSON does not tell `10` from `10.0`, serde_json does).
fn number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    // The validator bounds |x| <= 1,000,000, well inside i64's exact range.
    if value.fract() == 0.0 && value.abs() <= 9_007_199_254_740_992.0 {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// Reads a schema `integer` (the validator accepts `10.0` as one) as a count.
fn count<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<f64>::deserialize(deserializer)?;
    match value {
        None => Ok(None),
        Some(n) if n.fract() == 0.0 && n >= 0.0 => Ok(Some(n as u64)),
        Some(n) => Err(serde::de::Error::custom(format!("{n} is not a count"))),
    }
}

macro_rules! args_struct {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $wire:literal => $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                #[serde(rename = $wire)]
                pub $field: $ty,
            )*
        }

        impl ToolArgs for $name {
            const FIELDS: &'static [&'static str] = &[$($wire),*];
        }
    };
}

args_struct! {
    /// Operations without arguments (`canvas_list`, `browser_list`, `context_read`).
    NoArgs {}
}

args_struct! {
    /// `session_info`.
    SessionInfoArgs {
        /// The calling adapter (`claude-mcp`, `codex-mcp`, …).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "adapter" => adapter: Option<String>,
    }
}

args_struct! {
    /// `guide_read`.
    GuideReadArgs {
        /// Which guide.
        "topic" => topic: GuideTopic,
    }
}

args_struct! {
    /// `agent_status`.
    AgentStatusArgs {
        /// Only this agent node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "nodeId" => node_id: Option<String>,
    }
}

args_struct! {
    /// Operations on one node (`browser_claim`, `browser_screenshot`, `terminal_interrupt`, `terminal_close`).
    NodeArgs {
        /// The node.
        "nodeId" => node_id: String,
    }
}

args_struct! {
    /// Operations on a set of nodes (`canvas_select`).
    NodesArgs {
        /// The nodes.
        "nodeIds" => node_ids: Vec<String>,
    }
}

args_struct! {
    /// `canvas_move`.
    MoveArgs {
        /// The node.
        "nodeId" => node_id: String,
        /// New left edge, canvas units.
        #[serde(serialize_with = "number")]
        "x" => x: f64,
        /// New top edge, canvas units.
        #[serde(serialize_with = "number")]
        "y" => y: f64,
    }
}

args_struct! {
    /// `canvas_resize`.
    ResizeArgs {
        /// The node.
        "nodeId" => node_id: String,
        /// New width, canvas units.
        #[serde(serialize_with = "number")]
        "width" => width: f64,
        /// New height, canvas units.
        #[serde(serialize_with = "number")]
        "height" => height: f64,
    }
}

args_struct! {
    /// `canvas_group`.
    GroupArgs {
        /// The nodes to group.
        "nodeIds" => node_ids: Vec<String>,
        /// The frame's label.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "title" => title: Option<String>,
    }
}

args_struct! {
    /// `sticky_open`.
    StickyArgs {
        /// The note's text.
        "text" => text: String,
    }
}

args_struct! {
    /// `artifact_open`.
    ArtifactArgs {
        /// Absolute path inside the project folder.
        "path" => path: String,
        /// Editor (default) or diff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "view" => view: Option<ArtifactChoice>,
    }
}

args_struct! {
    /// `browser_open`.
    UrlArgs {
        /// The address to load.
        "url" => url: String,
    }
}

args_struct! {
    /// `browser_transfer`.
    TransferArgs {
        /// The browser node.
        "nodeId" => node_id: String,
        /// The agent node that becomes the owner.
        "agentNodeId" => agent_node_id: String,
    }
}

args_struct! {
    /// `browser_navigate`.
    NavigateArgs {
        /// The browser node.
        "nodeId" => node_id: String,
        /// The address to load.
        "url" => url: String,
    }
}

args_struct! {
    /// `browser_inspect`.
    InspectArgs {
        /// The browser node.
        "nodeId" => node_id: String,
        /// CSS selector of the subtree to read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "selector" => selector: Option<String>,
        /// Cap on the returned text.
        #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
        "maxChars" => max_chars: Option<u64>,
        /// Also capture the viewport.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "screenshot" => screenshot: Option<bool>,
        /// Ref of the element (a landmark, a list, an iframe) whose subtree to read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "within" => within: Option<String>,
        /// Page of the element list (1-based).
        #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
        "page" => page: Option<u64>,
    }
}

args_struct! {
    /// `browser_click`.
    ClickArgs {
        /// The browser node.
        "nodeId" => node_id: String,
        /// CSS selector of the element.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "selector" => selector: Option<String>,
        /// Element ref from `browser_inspect`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "ref" => element_ref: Option<String>,
    }
}

args_struct! {
    /// `browser_type`.
    TypeArgs {
        /// The browser node.
        "nodeId" => node_id: String,
        /// Text to type.
        "text" => text: String,
        /// CSS selector of the element.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "selector" => selector: Option<String>,
        /// Element ref from `browser_inspect`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "ref" => element_ref: Option<String>,
    }
}

args_struct! {
    /// `terminal_open`.
    TerminalOpenArgs {
        /// Command typed into the new shell.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "command" => command: Option<String>,
        /// The node's title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "title" => title: Option<String>,
    }
}

args_struct! {
    /// `terminal_read`.
    ReadArgs {
        /// The terminal node.
        "nodeId" => node_id: String,
        /// Cap on the returned characters.
        #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
        "maxChars" => max_chars: Option<u64>,
    }
}

args_struct! {
    /// `terminal_submit` and `terminal_input`.
    NodeTextArgs {
        /// The terminal node.
        "nodeId" => node_id: String,
        /// The text to send.
        "text" => text: String,
    }
}

args_struct! {
    /// `terminal_external`.
    ExternalArgs {
        /// Shell command to run.
        "command" => command: String,
        /// Window title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "title" => title: Option<String>,
    }
}

args_struct! {
    /// `agent_launch`.
    AgentLaunchArgs {
        /// Which agent CLI (a launchable kind: the schema's enum leaves out `external`).
        "agent" => agent: AgentKind,
        /// The node's title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "title" => title: Option<String>,
        /// Initial prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        "text" => text: Option<String>,
    }
}

impl Serialize for GuideTopic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GuideTopic {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        GuideTopic::from_name(&name).ok_or_else(|| serde::de::Error::unknown_variant(&name, GuideTopic::NAMES))
    }
}

/// A validated request whose arguments could not be typed: a catalogue bug
/// (its schema and its arguments struct disagree).
#[derive(Debug, Error)]
#[error("{operation} arguments do not match their type: {source}")]
pub struct CallError {
    /// The operation.
    pub operation: Operation,
    /// What serde said.
    #[source]
    pub source: serde_json::Error,
}

macro_rules! calls {
    ($($variant:ident($args:ty),)*) => {
        /// One accepted operation with its typed arguments.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolCall {
            $(
                #[doc = concat!("The `", stringify!($variant), "` operation.")]
                $variant($args),
            )*
        }

        impl ToolCall {
            /// The operation.
            pub fn operation(&self) -> Operation {
                match self {
                    $(ToolCall::$variant(_) => Operation::$variant,)*
                }
            }

            /// The arguments as JSON (absent optional arguments left out).
            pub fn args(&self) -> Map<String, Value> {
                let value = match self {
                    $(ToolCall::$variant(args) => serde_json::to_value(args),)*
                };
                match value {
                    Ok(Value::Object(map)) => map,
                    // Every arguments struct serializes as an object of plain values.
                    _ => Map::new(),
                }
            }

            /// Types a validated request (taking its checked arguments, not a copy).
            pub fn from_request(request: ToolRequest) -> Result<ToolCall, CallError> {
                let ToolRequest { operation, args } = request;
                let args = Value::Object(args);
                let typed = match operation {
                    $(Operation::$variant => serde_json::from_value(args).map(ToolCall::$variant),)*
                };
                typed.map_err(|source| CallError { operation, source })
            }

            /// The wire field names of `operation`'s arguments struct.
            pub fn fields(operation: Operation) -> &'static [&'static str] {
                match operation {
                    $(Operation::$variant => <$args as ToolArgs>::FIELDS,)*
                }
            }
        }
    };
}

calls! {
    SessionInfo(SessionInfoArgs),
    GuideRead(GuideReadArgs),
    AgentStatus(AgentStatusArgs),
    CanvasList(NoArgs),
    CanvasSelect(NodesArgs),
    CanvasMove(MoveArgs),
    CanvasResize(ResizeArgs),
    CanvasGroup(GroupArgs),
    StickyOpen(StickyArgs),
    ArtifactOpen(ArtifactArgs),
    BrowserOpen(UrlArgs),
    BrowserList(NoArgs),
    BrowserClaim(NodeArgs),
    BrowserTransfer(TransferArgs),
    BrowserNavigate(NavigateArgs),
    BrowserInspect(InspectArgs),
    BrowserClick(ClickArgs),
    BrowserType(TypeArgs),
    BrowserScreenshot(NodeArgs),
    TerminalOpen(TerminalOpenArgs),
    TerminalRead(ReadArgs),
    TerminalSubmit(NodeTextArgs),
    TerminalInput(NodeTextArgs),
    TerminalInterrupt(NodeArgs),
    TerminalExternal(ExternalArgs),
    TerminalClose(NodeArgs),
    AgentLaunch(AgentLaunchArgs),
    ContextRead(NoArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{ToolSpec, AGENT_TOOLS};
    use crate::validate::validate_tool_request;
    use serde_json::json;
    use std::collections::BTreeSet;

    /// A valid value for one schema property (the enum's `index`th value, wrapping).
    fn sample(prop: &Value, index: usize) -> Value {
        match prop["type"].as_str() {
            Some("string") => match prop.get("enum").and_then(Value::as_array) {
                Some(values) => values[index % values.len()].clone(),
                None => json!(format!("v{index}")),
            },
            // 10.0: the validator accepts a whole float as an integer, so must the types.
            Some("number") => json!(2.5),
            Some("integer") => json!(10.0),
            Some("boolean") => json!(true),
            Some("array") => json!(["n1", "n2"]),
            other => panic!("unsupported schema type {other:?}"),
        }
    }

    fn request(spec: &ToolSpec, names: &[&str], index: usize) -> Value {
        let args: Map<String, Value> =
            names.iter().map(|name| ((*name).to_owned(), sample(&spec.properties()[*name], index))).collect();
        json!({"operation": spec.name(), "args": args})
    }

    fn typed(raw: &Value) -> Result<ToolCall, String> {
        let request = validate_tool_request(raw).map_err(|e| format!("validator: {e}"))?;
        ToolCall::from_request(request).map_err(|e| e.to_string())
    }

    #[test]
    fn every_struct_declares_exactly_its_schema_properties() {
        for spec in AGENT_TOOLS.iter() {
            let fields: BTreeSet<&str> = ToolCall::fields(spec.operation).iter().copied().collect();
            let properties: BTreeSet<&str> = spec.properties().keys().map(String::as_str).collect();
            assert_eq!(fields, properties, "{}: struct fields vs schema properties", spec.operation);
        }
    }

    #[test]
    fn a_maximal_request_types_and_round_trips_for_every_operation() {
        for spec in AGENT_TOOLS.iter() {
            let all: Vec<&str> = spec.properties().keys().map(String::as_str).collect();
            // Every enum value of every enum property, one request each.
            let variants = spec
                .properties()
                .values()
                .filter_map(|p| p.get("enum"))
                .map(|e| e.as_array().map_or(0, Vec::len))
                .max()
                .unwrap_or(1);
            for index in 0..variants {
                let raw = request(spec, &all, index);
                let call = typed(&raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
                assert_eq!(call.operation(), spec.operation);
                let args = Value::Object(call.args());
                // Floats compare by value: 10.0 and 10 are one JSON number.
                for (name, sent) in raw["args"].as_object().unwrap() {
                    let back = &args[name];
                    match (sent.as_f64(), back.as_f64()) {
                        (Some(a), Some(b)) => assert_eq!(a, b, "{}.{name}", spec.operation),
                        _ => assert_eq!(sent, back, "{}.{name}", spec.operation),
                    }
                }
                assert_eq!(args.as_object().unwrap().len(), all.len(), "{}: {args}", spec.operation);
            }
        }
    }

    #[test]
    fn exactly_the_schema_required_arguments_are_required_by_the_struct() {
        for spec in AGENT_TOOLS.iter() {
            let required: Vec<&str> = spec.required().collect();
            let mut minimal = required.clone();
            minimal.extend(spec.requires_one_of.iter().copied().take(1));
            let raw = request(spec, &minimal, 0);
            typed(&raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            // A required argument the struct took as optional would still type.
            for missing in &required {
                let mut args = request(spec, &minimal, 0)["args"].as_object().unwrap().clone();
                args.remove(*missing);
                let request = ToolRequest { operation: spec.operation, args };
                assert!(ToolCall::from_request(request).is_err(), "{}: {missing} must be required", spec.operation);
            }
        }
    }

    #[test]
    fn the_enums_are_the_schema_enums() {
        let topic = &crate::tool_spec(Operation::GuideRead).properties()["topic"]["enum"];
        assert_eq!(topic, &json!(GuideTopic::NAMES));
        let agent = &crate::tool_spec(Operation::AgentLaunch).properties()["agent"]["enum"];
        let launchable: Vec<&str> = AgentKind::LAUNCHABLE.iter().map(|k| k.as_str()).collect();
        assert_eq!(agent, &json!(launchable));
        let view = &crate::tool_spec(Operation::ArtifactOpen).properties()["view"]["enum"];
        assert_eq!(view, &json!(ArtifactChoice::NAMES));
        for name in launchable {
            let kind: AgentKind = serde_json::from_value(json!(name)).unwrap();
            assert_eq!(kind.as_str(), name);
        }
        assert!(serde_json::from_value::<AgentKind>(json!("gpt")).is_err());
    }

    #[test]
    fn drift_is_caught() {
        // A struct field the schema lacks, or a schema property the struct lacks,
        // fails the typing of a request that uses it.
        let extra = ToolRequest {
            operation: Operation::CanvasMove,
            args: json!({"nodeId": "a", "x": 1, "y": 2, "z": 3}).as_object().unwrap().clone(),
        };
        let e = ToolCall::from_request(extra).unwrap_err();
        assert!(e.to_string().contains("unknown field `z`"), "{e}");
        let short = ToolRequest {
            operation: Operation::CanvasMove,
            args: json!({"nodeId": "a", "x": 1}).as_object().unwrap().clone(),
        };
        assert!(ToolCall::from_request(short).unwrap_err().to_string().contains("missing field `y`"));
    }

    #[test]
    fn whole_numbers_read_back_as_integers() {
        let call = typed(&json!({"operation": "canvas_move", "args": {"nodeId": "t1", "x": 10, "y": -5.5}})).unwrap();
        assert_eq!(Value::Object(call.args()), json!({"nodeId": "t1", "x": 10, "y": -5.5}));
        let call = typed(&json!({"operation": "terminal_read", "args": {"nodeId": "t", "maxChars": 9.0}})).unwrap();
        assert_eq!(call, ToolCall::TerminalRead(ReadArgs { node_id: "t".into(), max_chars: Some(9) }));
        let call = typed(&json!({"operation": "canvas_group", "args": {"nodeIds": ["a"]}})).unwrap();
        assert_eq!(Value::Object(call.args()), json!({"nodeIds": ["a"]}));
    }
}

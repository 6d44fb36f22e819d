//! The arguments struct of every operation. Each derives `Deserialize` (how a
//! checked request is typed) and `JsonSchema` (the catalogue's `inputSchema`):
//! a field's wire name, whether it is required, its type and its description
//! (the doc comment, published verbatim) are declared once, here. The bounds
//! every argument shares are added by the catalogue; a field states only its own.

use agent_vocab::AgentKind;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize, Serializer};

use crate::guides::GuideTopic;

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

/// `agent_launch`'s choices: the kinds the app launches, so never `external`.
fn launchable_agents(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = AgentKind::LAUNCHABLE.iter().map(|kind| kind.as_str()).collect();
    json_schema!({"type": "string", "enum": names})
}

/// The views `artifact_open` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactChoice {
    /// The user's editor.
    Editor,
    /// Changes against HEAD.
    Diff,
}

/// Operations without arguments (`canvas_list`, `browser_list`, `context_read`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `session_info`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionInfoArgs {
    /// Name of the calling adapter, e.g. claude-mcp or codex-mcp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
}

/// `guide_read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuideReadArgs {
    /// Which guide to read.
    pub topic: GuideTopic,
}

/// `agent_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentStatusArgs {
    /// Only report this agent node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
}

/// Operations on one node (`browser_claim`, `browser_screenshot`, `terminal_interrupt`, `terminal_close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeArgs {
    /// Id of the terminal node.
    pub node_id: String,
}

/// Operations on a set of nodes (`canvas_select`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodesArgs {
    /// Ids of the nodes to select (from canvas_list).
    pub node_ids: Vec<String>,
}

/// `canvas_move`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveArgs {
    /// Id of the node to move.
    pub node_id: String,
    /// New left edge, canvas units.
    #[serde(serialize_with = "number")]
    pub x: f64,
    /// New top edge, canvas units.
    #[serde(serialize_with = "number")]
    pub y: f64,
}

/// `canvas_resize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResizeArgs {
    /// Id of the node to resize.
    pub node_id: String,
    /// New width, canvas units.
    #[serde(serialize_with = "number")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub width: f64,
    /// New height, canvas units.
    #[serde(serialize_with = "number")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub height: f64,
}

/// `canvas_group`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupArgs {
    /// Ids of the nodes to group.
    pub node_ids: Vec<String>,
    /// Label shown on the group frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `sticky_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StickyArgs {
    /// Note contents (plain text or Markdown).
    pub text: String,
}

/// `artifact_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactArgs {
    /// Absolute path of a file inside the project folder.
    pub path: String,
    /// editor (default) or diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ArtifactChoice>,
}

/// `browser_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UrlArgs {
    /// Address to load (http or https).
    pub url: String,
}

/// `browser_transfer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferArgs {
    /// Id of the browser node you own.
    pub node_id: String,
    /// Id of the agent node that becomes the owner.
    pub agent_node_id: String,
}

/// `browser_navigate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NavigateArgs {
    /// Id of the browser node.
    pub node_id: String,
    /// Address to load (http or https).
    pub url: String,
}

/// `browser_inspect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InspectArgs {
    /// Id of the browser node.
    pub node_id: String,
    /// CSS selector of the subtree to read (top document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Cap on returned text, in characters (default 2000; none on later pages).
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_chars: Option<u64>,
    /// Also return a PNG of the viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<bool>,
    /// Ref of the element whose subtree to read (a landmark, an iframe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// Page of the element list, from 1 (150 elements a page).
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub page: Option<u64>,
}

/// `browser_click`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClickArgs {
    /// Id of the browser node.
    pub node_id: String,
    /// CSS selector of the element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Element ref from browser_inspect.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
}

/// `browser_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TypeArgs {
    /// Id of the browser node.
    pub node_id: String,
    /// Text to type.
    pub text: String,
    /// CSS selector of the element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Element ref from browser_inspect.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
}

/// `terminal_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalOpenArgs {
    /// Shell command to run in it; a plain shell when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Title shown on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `terminal_read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadArgs {
    /// Id of the terminal node.
    pub node_id: String,
    /// Cap on returned characters.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_chars: Option<u64>,
}

/// `terminal_submit` and `terminal_input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeTextArgs {
    /// Id of the terminal node.
    pub node_id: String,
    /// Command line to submit.
    pub text: String,
}

/// `terminal_external`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalArgs {
    /// Shell command to run.
    pub command: String,
    /// Window title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `agent_launch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentLaunchArgs {
    /// Which agent CLI to start.
    // The schema lists the launchable kinds only; the validator refuses `external` by it.
    #[schemars(schema_with = "launchable_agents")]
    pub agent: AgentKind,
    /// Title shown on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Initial prompt for the new agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

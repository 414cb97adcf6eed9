//! A router's commands as MCP tool descriptions, from their compile-time
//! schemas.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};

use crate::ipc::IpcRouter;
use crate::tool::ToolSchema;

/// Every command of `router` as a tool, sorted by name.
pub(super) fn tools(router: &IpcRouter) -> Vec<Tool> {
    router
        .commands()
        .map(|command| tool(&command.schema))
        .collect()
}

/// One command as a tool: its name, its description (the doc comment's
/// paragraphs), its JSON Schema as `inputSchema`, its answer's
/// (`#[ipc(output_schema)]`) as `outputSchema`, and its behaviour hints
/// (`#[ipc(read_only)]`, ...) as `annotations`.
pub(super) fn tool(schema: &ToolSchema) -> Tool {
    let mut description = schema.description.to_string();
    if !schema.long_description.is_empty() {
        description.push_str("\n\n");
        description.push_str(&schema.long_description);
    }
    let input: JsonObject = match schema.json_schema() {
        serde_json::Value::Object(object) => object,
        // `json_schema` always gives an object; an empty one accepts any.
        _ => JsonObject::new(),
    };
    let mut tool = Tool::new(schema.name.to_string(), description, Arc::new(input));
    tool.output_schema = schema
        .output_schema
        .as_ref()
        .map(|output| Arc::new(output.schema.clone()));
    let hints = schema.annotations;
    if !hints.is_empty() {
        // MCP takes an unstated `destructiveHint` and `openWorldHint` as
        // true: a command that states any hint states all four.
        tool.annotations = Some(ToolAnnotations::from_raw(
            None,
            Some(hints.read_only),
            Some(hints.destructive),
            Some(hints.idempotent),
            Some(hints.open_world),
        ));
    }
    tool
}

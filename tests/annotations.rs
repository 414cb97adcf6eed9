//! `#[ipc(read_only)]`, `#[ipc(destructive)]`, `#[ipc(idempotent)]` and
//! `#[ipc(open_world)]` through the derive: each flag in the schema a
//! command publishes, in the manifest's JSON (and nothing there when no flag
//! is set), in what the source scanner reads, and in the reference.

use std::path::PathBuf;

use gangway::IpcCommand;
use gangway::ipc::IpcRouter;
use gangway::tool::{Annotations, Manifest, ToolSchema};
use serde::Serialize;

/// Fetch a page.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String, read_only, open_world)]
struct Fetch {
    #[ipc(positional)]
    url: String,
}

/// Delete a file.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String, destructive)]
#[ipc(idempotent)]
struct Remove {
    #[ipc(positional)]
    path: String,
}

/// Count the lines.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = u64)]
struct Count {}

/// Look something up, twice over.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "lookup", read_only, idempotent, response = String)]
struct Lookup {}

impl Fetch {
    async fn handle(&mut self) -> String {
        self.url.clone()
    }
}

impl Remove {
    async fn handle(&mut self) -> String {
        self.path.clone()
    }
}

impl Count {
    async fn handle(&mut self) -> u64 {
        0
    }
}

impl Lookup {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

fn hints<C: IpcCommand>() -> Annotations {
    C::SCHEMA.expect("the derive emits a schema").annotations
}

#[test]
fn the_derive_sets_each_flag_in_the_schema() {
    let none = Annotations::default();
    assert_eq!(hints::<Fetch>(), none.read_only().open_world());
    assert_eq!(hints::<Remove>(), none.destructive().idempotent());
    assert_eq!(hints::<Lookup>(), none.read_only().idempotent());
    assert_eq!(hints::<Count>(), none);
    assert!(hints::<Count>().is_empty());
    let fetch = Fetch::SCHEMA.unwrap();
    assert!(fetch.annotations.read_only && fetch.annotations.open_world);
    assert!(!fetch.annotations.destructive && !fetch.annotations.idempotent);
    assert_eq!(
        fetch.renamed("get").annotations,
        fetch.annotations,
        "an alias keeps the hints"
    );
}

fn router() -> IpcRouter {
    IpcRouter::new()
        .register(Fetch { url: String::new() })
        .register(Remove {
            path: String::new(),
        })
        .register(Count {})
        .register(Lookup {})
}

#[test]
fn the_manifest_json_carries_the_flags_that_are_set() {
    let manifest = router().manifest();
    let json = serde_json::to_string(&manifest).unwrap();
    assert!(
        json.contains(r#""annotations":{"read_only":true,"open_world":true}"#),
        "{json}"
    );
    assert!(
        json.contains(r#""annotations":{"destructive":true,"idempotent":true}"#),
        "{json}"
    );
    assert!(
        json.contains(r#""annotations":{"read_only":true,"idempotent":true}"#),
        "{json}"
    );
    let value = serde_json::to_value(&manifest).unwrap();
    let count = value["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "count")
        .unwrap();
    assert!(
        count.get("annotations").is_none(),
        "no flag, no key: {count}"
    );
    let back: Manifest = serde_json::from_str(&json).unwrap();
    assert_eq!(back, manifest);
}

#[test]
fn a_manifest_without_annotations_reads_as_no_hints() {
    let schema: ToolSchema =
        serde_json::from_str(r#"{"name":"old","description":"","params":[]}"#).unwrap();
    assert!(schema.annotations.is_empty());
}

#[test]
fn the_scanner_reads_the_flags_from_source() {
    let source = r#"
        /// Fetch a page.
        #[derive(Clone, Serialize, IpcCommand)]
        #[ipc(response = String, read_only, open_world)]
        struct Fetch {
            #[ipc(positional)]
            url: String,
        }

        /// Count the lines.
        #[derive(Clone, Serialize, IpcCommand)]
        #[ipc(response = u64)]
        struct Count {}
    "#;
    let file: syn::File = syn::parse_str(source).unwrap();
    let report = gangway_codegen::scan::scan_files(&[(PathBuf::from("lib.rs"), file)]).unwrap();
    let fetch = report.manifest.command("fetch").unwrap();
    assert_eq!(
        fetch,
        Fetch::SCHEMA.unwrap(),
        "the scan and the derive agree"
    );
    assert!(
        report
            .manifest
            .command("count")
            .unwrap()
            .annotations
            .is_empty()
    );
    let json = serde_json::to_string(&report.manifest).unwrap();
    assert!(
        json.contains(r#""annotations":{"read_only":true,"open_world":true}"#),
        "{json}"
    );
}

#[test]
fn the_reference_shows_the_hints() {
    let text = gangway_codegen::render::Renderer::new()
        .reference(&router().manifest())
        .unwrap();
    assert!(
        text.contains("Fetch a page.\n\n*Hints: read-only, open world*\n"),
        "{text}"
    );
    assert!(
        text.contains("Delete a file.\n\n*Hints: destructive, idempotent*\n"),
        "{text}"
    );
    assert!(
        text.contains("## `count`\n\nCount the lines.\n\n```sh"),
        "{text}"
    );
}

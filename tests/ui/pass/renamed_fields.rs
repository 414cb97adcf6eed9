//! serde's renames are the wire and CLI names.
use gangway::IpcCommand;

/// Fetch a page.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[serde(rename_all = "camelCase")]
#[ipc(name = "fetch-page", response = String)]
struct FetchPage {
    #[ipc(positional)]
    page_url: String,
    #[serde(rename = "timeout")]
    timeout_seconds: Option<u32>,
    follow_redirects: bool,
    r#type: Option<String>,
}

impl FetchPage {
    async fn handle(&mut self) -> String {
        self.page_url.clone()
    }
}

fn main() {
    let schema = FetchPage::SCHEMA.unwrap();
    assert_eq!(schema.name, "fetch-page");
    let names: Vec<(&str, &str)> = schema.params.iter().map(|p| (&*p.name, &*p.long)).collect();
    assert_eq!(
        names,
        [
            ("pageUrl", "page-url"),
            ("timeout", "timeout"),
            ("followRedirects", "follow-redirects"),
            ("type", "type"),
        ]
    );
}

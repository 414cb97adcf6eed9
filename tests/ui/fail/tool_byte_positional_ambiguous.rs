use gangway::tool::tool;

#[tool]
struct Put {
    /// Raw bytes, then a name: which word is which?
    data: Vec<u8>,
    name: String,
}

#[tool]
struct Store {
    /// Any number of keys, then raw bytes.
    keys: Vec<String>,
    data: Vec<u8>,
}

fn main() {}

//! What the `#[derive(IpcCommand)]` tests share: MessagePack params as a
//! client sends them, and the commands most tests drive (`WebSearch`, with
//! arguments of every kind and host state; `Put`, with bytes; `Tune`, with
//! serde's names, aliases and decoders).

// Each test file uses a part.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway::{ArgEnum, IpcCommand};
use serde::{Deserialize, Serialize};

pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).unwrap()
}

/// A map of arguments, as a client sends them.
pub fn params(pairs: &[(&str, rmp_value::Value)]) -> Vec<u8> {
    let map: BTreeMap<&str, &rmp_value::Value> = pairs.iter().map(|(k, v)| (*k, v)).collect();
    encode(&map)
}

/// Just enough of a dynamic MessagePack value to write test params.
pub mod rmp_value {
    use serde::Serialize;

    #[derive(Serialize)]
    #[serde(untagged)]
    pub enum Value {
        Str(String),
        Int(i64),
        Float(f64),
        Bool(bool),
        List(Vec<Value>),
        Bin(#[serde(with = "bin")] Vec<u8>),
        Nil(Option<()>),
    }

    mod bin {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }

    pub fn s(text: &str) -> Value {
        Value::Str(text.to_owned())
    }
    pub fn i(n: i64) -> Value {
        Value::Int(n)
    }
}

/// A map written in exactly this key order (a `BTreeMap` would sort it).
pub fn ordered_params(pairs: &[(&str, rmp_value::Value)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    rmp::encode::write_map_len(&mut bytes, pairs.len() as u32).unwrap();
    for (key, value) in pairs {
        bytes.extend(encode(key));
        bytes.extend(encode(value));
    }
    bytes
}

pub struct Registry {
    calls: AtomicUsize,
}

/// Search the web and print the top results.
///
/// Results come from the host's search client.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "web_search", response = Vec<String>)]
pub struct WebSearch {
    /// What to search for.
    #[ipc(positional)]
    pub query: String,
    /// How many results to print.
    #[ipc(short = 'n')]
    #[serde(default = "ten")]
    pub limit: u32,
    /// Print more detail.
    pub verbose: bool,
    /// Only results from these sites.
    #[serde(rename = "site")]
    pub sites: Vec<String>,
    /// Text piped in on standard input, used as extra context.
    #[ipc(stdin)]
    pub context: Option<String>,
    /// Host state: never read from a request, kept across calls.
    #[ipc(state)]
    #[serde(skip)]
    pub registry: Arc<Registry>,
}

pub fn ten() -> u32 {
    10
}

impl WebSearch {
    pub fn new(registry: Arc<Registry>) -> Self {
        WebSearch {
            query: String::new(),
            limit: 0,
            verbose: false,
            sites: Vec::new(),
            context: None,
            registry,
        }
    }

    async fn handle(&mut self) -> Vec<String> {
        self.registry.calls.fetch_add(1, Ordering::SeqCst);
        (1..=self.limit)
            .map(|n| format!("{} {n}", self.query))
            .collect()
    }
}

pub fn registry() -> Arc<Registry> {
    Arc::new(Registry {
        calls: AtomicUsize::new(0),
    })
}

/// Store bytes.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = usize)]
pub struct Put {
    #[ipc(positional)]
    pub key: String,
    #[ipc(stdin)]
    pub data: Vec<u8>,
    pub extra: Option<Vec<u8>>,
}

impl Put {
    async fn handle(&mut self) -> usize {
        self.data.len()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ArgEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Speed {
    VeryFast,
    Slow,
}

/// Tune things.
#[derive(Clone, Serialize, IpcCommand)]
#[serde(rename_all = "camelCase")]
#[ipc(response = String)]
pub struct Tune {
    /// How fast.
    #[ipc(default = Speed::Slow, default_text = "slow")]
    pub speed: Speed,
    /// Up to this many.
    #[serde(alias = "max")]
    pub max_items: Option<u64>,
    /// Scale factor.
    #[ipc(default = 1.5)]
    pub scale_factor: f64,
    /// Where.
    #[ipc(default = "/tmp")]
    pub work_dir: std::path::PathBuf,
    /// Parsed by hand.
    #[serde(deserialize_with = "parse_csv", default)]
    pub tags: Vec<String>,
}

pub fn parse_csv<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let text = String::deserialize(d)?;
    Ok(text.split(',').map(str::to_owned).collect())
}

impl Tune {
    async fn handle(&mut self) -> String {
        format!("{:?}", self.speed)
    }
}

pub fn tune() -> Tune {
    Tune {
        speed: Speed::VeryFast,
        max_items: Some(1),
        scale_factor: 0.0,
        work_dir: "/".into(),
        tags: vec![],
    }
}

//! Binding shell words to a 6-argument tool: gangway's binder
//! (`parse_words`, then `Tool::bind`: flagify, argv, clap) beside the floor
//! of clap's own `try_parse_from` on the same argv.
//!
//! Run with `cargo bench --bench binder`; compare the two medians.

use clap::{Parser, ValueEnum};
use divan::{Bencher, black_box};
use gangway::tool::{Tool, tool};

fn main() {
    divan::main();
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Plain,
    Json,
}

/// Search files.
#[tool]
#[derive(Debug)]
struct Grep {
    /// What to look for.
    pattern: String,
    /// Where to look.
    paths: Vec<std::path::PathBuf>,
    /// Ignore case.
    #[arg(short, long)]
    ignore_case: bool,
    /// Stop after this many.
    #[arg(short, long, default_value_t = 10)]
    max_count: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Plain)]
    format: Format,
    /// Lines of context.
    #[arg(short = 'C', long, default_value_t = 0)]
    context: i32,
}

const ARGV: &[&str] = &[
    "-i",
    "-m",
    "5",
    "--format",
    "json",
    "--context",
    "3",
    "needle",
    "a.rs",
    "b.rs",
];

#[divan::bench(sample_count = 200, sample_size = 200)]
fn floor_clap_try_parse_from(bencher: Bencher) {
    bencher.bench_local(|| {
        Grep::try_parse_from(std::iter::once("grep").chain(black_box(ARGV).iter().copied()))
            .unwrap()
    });
}

#[divan::bench(sample_count = 200, sample_size = 200)]
fn gangway_parse_words_and_bind(bencher: Bencher) {
    // The schema is built once, on first use, as in a running host.
    let _ = Grep::schema();
    bencher.bench_local(|| Grep::bind_words(black_box(ARGV)).unwrap());
}

#[divan::bench(sample_count = 200, sample_size = 200)]
fn gangway_parse_words_only(bencher: Bencher) {
    let schema = Grep::schema();
    bencher.bench_local(|| schema.parse_words(black_box(ARGV)).unwrap());
}

//! The templates compiled into gangway-codegen are the workspace's
//! `templates/`, byte for byte: the package reads them through the
//! `codegen/templates` symlink (so `cargo package` carries a copy), and the
//! top-level folder stays the single source.

use std::fs;
use std::path::{Path, PathBuf};

use gangway_codegen::render::{REFERENCE_TEMPLATE, WRAPPER_TEMPLATE};

/// Every template compiled in, by file name.
const COMPILED: &[(&str, &str)] = &[
    ("wrapper.sh.hbs", WRAPPER_TEMPLATE),
    ("reference.md.hbs", REFERENCE_TEMPLATE),
];

fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's `templates/`, or `None` for a packaged copy of the crate
/// built outside the workspace (whose `templates/` is a plain folder).
fn source_dir() -> Option<PathBuf> {
    let dir = package_dir().join("../templates");
    dir.is_dir().then_some(dir)
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

#[test]
fn the_package_templates_folder_links_to_the_workspace_one() {
    let Some(source) = source_dir() else {
        eprintln!("not in the workspace: no top-level templates/ to compare with");
        return;
    };
    let link = package_dir().join("templates");
    let target = fs::read_link(&link)
        .unwrap_or_else(|error| panic!("{} is not a symlink: {error}", link.display()));
    assert_eq!(target, Path::new("../templates"));
    assert_eq!(
        fs::canonicalize(&link).unwrap(),
        fs::canonicalize(&source).unwrap()
    );
}

#[test]
fn every_top_level_template_is_reachable_through_the_package() {
    let Some(source) = source_dir() else {
        eprintln!("not in the workspace: no top-level templates/ to compare with");
        return;
    };
    let names = file_names(&source);
    assert!(!names.is_empty(), "templates/ is empty");
    assert_eq!(names, file_names(&package_dir().join("templates")));
    for name in &names {
        assert_eq!(
            read(&source.join(name)),
            read(&package_dir().join("templates").join(name)),
            "templates/{name} differs from codegen/templates/{name}"
        );
    }
}

#[test]
fn the_compiled_templates_are_the_files_byte_for_byte() {
    let dir = source_dir().unwrap_or_else(|| package_dir().join("templates"));
    for (name, compiled) in COMPILED {
        assert_eq!(
            compiled.as_bytes(),
            read(&dir.join(name)),
            "the compiled {name} is not {}",
            dir.join(name).display()
        );
    }
}

#[test]
fn every_template_file_is_compiled_in() {
    let dir = source_dir().unwrap_or_else(|| package_dir().join("templates"));
    let mut compiled: Vec<&str> = COMPILED.iter().map(|(name, _)| *name).collect();
    compiled.sort_unstable();
    assert_eq!(
        file_names(&dir),
        compiled,
        "a template in templates/ that codegen does not compile in is never used"
    );
}
